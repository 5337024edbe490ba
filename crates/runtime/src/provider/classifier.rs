//! A risk classifier: a component exporting the contract's `classifier` world,
//! consulted by risk triage. It sees only the tool name and the canonical
//! arguments, answers low or high risk with a reason (never a decision), runs
//! under the same sandbox limits as a provider, and is asked at most once per
//! call signature: its answers are cached.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::{
    FailureKind, LoadError, ProviderFailure, Sandbox, Sources, impl_world, load_component,
};
use crate::spec::{Limits, ProviderSpec};
use warden_types::OnError;
use warden_types::Risk;

/// Host bindings for the classifier world.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "risk-classifier",
    });
}

use bindings::exports::warden::guardrail::classifier as wit;
use bindings::{RiskClassifier, RiskClassifierPre};

/// Answers kept per classifier; past this the oldest are forgotten.
const CACHE_ENTRIES: usize = 4096;

/// A classifier's opinion of a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Assessment {
    /// Low or high.
    pub risk: Risk,
    /// Why, in the classifier's words (at most `max_output_bytes`).
    pub reason: String,
}

/// A loaded classifier.
pub struct Classifier {
    name: String,
    digest: String,
    on_error: Option<OnError>,
    sandbox: Sandbox<RiskClassifier>,
    cache: Mutex<AnswerCache>,
    calls: AtomicU64,
    hits: AtomicU64,
}

#[derive(Default)]
struct AnswerCache {
    answers: HashMap<[u8; 32], Assessment>,
    order: VecDeque<[u8; 32]>,
}

impl_world!(
    RiskClassifier,
    RiskClassifierPre,
    warden_guardrail_classifier
);

impl Classifier {
    /// Loads a classifier.
    pub fn load(spec: &ProviderSpec, sources: &Sources<'_>) -> Result<Classifier, LoadError> {
        let (config, _) =
            spec.resolve(sources.base_dir)
                .map_err(|source| LoadError::ConfigFile {
                    provider: spec.name.clone(),
                    source,
                })?;
        let (component, compiled) = load_component(
            &spec.name,
            &spec.wasm,
            spec.sha256.as_deref(),
            "classifier",
            sources,
        )?;
        let sandbox = Sandbox::new(
            &spec.name,
            &compiled.component,
            spec.limits,
            spec.instance,
            config.to_string(),
        )?;
        Ok(Classifier {
            name: spec.name.clone(),
            digest: component.sha256,
            on_error: spec.on_error,
            sandbox,
            cache: Mutex::new(AnswerCache::default()),
            calls: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        })
    }

    /// The classifier's name in the config.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The component's SHA-256, hex.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// What a failed classification means: `deny` denies, anything else asks
    /// (triage's `failure_verdict`); `allow` is refused when the configuration loads.
    pub fn on_error(&self) -> Option<OnError> {
        self.on_error
    }

    /// Its sandbox limits, as configured.
    pub fn limits(&self) -> &Limits {
        self.sandbox.limits()
    }

    /// Ok when the classifier could be configured; otherwise why not.
    pub fn health(&self) -> Result<(), &ProviderFailure> {
        self.sandbox.health()
    }

    /// Calls into the guest so far, and answers served from the cache.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.calls.load(Ordering::Relaxed),
            self.hits.load(Ordering::Relaxed),
        )
    }

    /// Assesses a call; the second value is true when the answer came from the
    /// cache. Failures are not cached: the next identical call asks again.
    pub fn classify(
        &self,
        tool_name: &str,
        canonical_input: &str,
    ) -> Result<(Assessment, bool), ProviderFailure> {
        let key: [u8; 32] = Sha256::new()
            .chain_update(tool_name.as_bytes())
            .chain_update([0])
            .chain_update(canonical_input.as_bytes())
            .finalize()
            .into();
        if let Some(answer) = self.lock().answers.get(&key).cloned() {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok((answer, true));
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        let max_output = self.sandbox.limits().max_output_bytes;
        let (answer, _fuel) = self.sandbox.call(
            tool_name.len() + canonical_input.len(),
            |guest, store| {
                guest
                    .warden_guardrail_classifier()
                    .call_classify(store, tool_name, canonical_input)
            },
            |raw: wit::Assessment| {
                if raw.reason.len() > max_output {
                    return Err(ProviderFailure::new(
                        FailureKind::InvalidDecision,
                        format!(
                            "the assessment's reason is {} bytes; the limit is {max_output}",
                            raw.reason.len()
                        ),
                    ));
                }
                Ok(Assessment {
                    risk: match raw.risk {
                        wit::Risk::Low => Risk::Low,
                        wit::Risk::High => Risk::High,
                    },
                    reason: raw.reason,
                })
            },
        )?;
        let mut cache = self.lock();
        if cache.order.len() >= CACHE_ENTRIES
            && let Some(oldest) = cache.order.pop_front()
        {
            cache.answers.remove(&oldest);
        }
        if cache.answers.insert(key, answer.clone()).is_none() {
            cache.order.push_back(key);
        }
        Ok((answer, false))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, AnswerCache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
