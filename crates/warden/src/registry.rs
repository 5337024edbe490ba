//! The live policy: the ordered set of loaded providers together with the native
//! settings loaded from the same configuration, swapped atomically. Every call
//! runs on exactly one snapshot, old or new, never on none.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;

use crate::approval_list::ApprovalList;
use crate::config::{Config, Guardrails, Role};
use crate::signing::Signer;
use warden_policy::permissions::PermissionEngine;
use warden_policy::redact::Redactor;
use warden_policy::triage::{Assessment, Classify, ClassifyError, Triage};
use warden_runtime::artifact_cache::ArtifactCache;
use warden_runtime::provider::{Classifier, LoadError, Provider, Sources};
use warden_types::OnError;

/// Where the configuration's components come from: its directory, the
/// shipped providers, and the compiled cache in its data directory.
fn sources<'a>(config: &'a Config, artifacts: &'a ArtifactCache) -> Sources<'a> {
    Sources {
        base_dir: &config.base_dir,
        builtins: crate::builtin::BUILTINS,
        artifacts: Some(artifacts),
    }
}

/// The sandboxed classifier component, as triage sees a classifier.
struct Sandboxed(Arc<Classifier>);

impl Classify for Sandboxed {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn on_error(&self) -> Option<OnError> {
        self.0.on_error()
    }

    fn classify(
        &self,
        tool_name: &str,
        canonical_input: &str,
    ) -> Result<(Assessment, bool), ClassifyError> {
        self.0
            .classify(tool_name, canonical_input)
            .map(|(a, cached)| {
                let assessment = Assessment {
                    risk: a.risk,
                    reason: a.reason,
                };
                (assessment, cached)
            })
            .map_err(|failure| ClassifyError {
                code: failure.kind.code(),
                message: failure.message,
            })
    }
}

/// Numbers provider sets in the order they were loaded, process-wide.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// The providers of one configuration, in order.
pub struct ProviderSet {
    providers: Vec<Provider>,
    generation: u64,
    loaded_at: SystemTime,
}

impl ProviderSet {
    /// Loads every provider of the configuration; the first that cannot be
    /// loaded fails the whole set.
    pub fn load(config: &Config) -> Result<ProviderSet, LoadError> {
        let guardrails = &config.guardrails;
        let artifacts = ArtifactCache::in_data_dir(&config.data_dir());
        let providers = guardrails
            .providers
            .iter()
            .filter(|spec| spec.role == Role::Guardrail)
            .map(|spec| Provider::load(spec, &sources(config, &artifacts), guardrails.fail_closed))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProviderSet {
            providers,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            loaded_at: SystemTime::now(),
        })
    }

    /// The providers, in the order they run.
    pub fn providers(&self) -> &[Provider] {
        &self.providers
    }

    /// This set's number: larger means loaded later.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When this set was loaded.
    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }

    /// Every provider that could not be configured, with why.
    pub fn unhealthy(
        &self,
    ) -> impl Iterator<Item = (&Provider, &warden_runtime::provider::ProviderFailure)> {
        self.providers
            .iter()
            .filter_map(|p| p.health().err().map(|f| (p, f)))
    }
}

/// Everything a call is judged with, loaded from one configuration.
pub struct Snapshot {
    /// `guardrails:` as configured.
    pub guardrails: Guardrails,
    /// The native permission engine.
    pub permissions: PermissionEngine,
    /// Risk triage, after the permission engine and the providers.
    pub triage: Triage,
    /// The risk classifier (`role: classifier`), which triage consults.
    pub classifier: Option<Arc<Classifier>>,
    /// The providers (`role: guardrail`), in order.
    pub providers: ProviderSet,
    /// Signs decision records, when the configuration names a key.
    pub signer: Option<Arc<Signer>>,
    /// `hitl_approval`, compiled: which calls need a human.
    pub approval_list: ApprovalList,
    /// Cleans reason messages when they are made (`decision_log.redact` and
    /// the built-in patterns).
    pub redactor: Redactor,
    /// `hitl_approval` as configured: quotas, who may approve.
    pub hitl_approval: crate::hitl::HitlApproval,
}

impl Snapshot {
    /// Every component (provider or classifier) that could not be configured,
    /// by name, with why.
    pub fn unhealthy(&self) -> Vec<(&str, &warden_runtime::provider::ProviderFailure)> {
        let mut out: Vec<_> = self
            .providers
            .unhealthy()
            .map(|(p, f)| (p.name(), f))
            .collect();
        if let Some(c) = &self.classifier
            && let Err(f) = c.health()
        {
            out.push((c.name(), f));
        }
        out
    }

    /// The longest one judgement can take under this snapshot: the sum of the
    /// worst cases (`Limits::worst_case`: the wait for an instance, configuring
    /// a new one, the call) of every component a call can run through, the
    /// providers (when `guardrails.enabled`) and the classifier. The native
    /// stages, whose work grows with the call's size within the request
    /// limits, are not counted. A host that must not wait past some budget (an
    /// event loop, for `warden.Warden` in Python) decides by this.
    pub fn worst_case(&self) -> Duration {
        let providers: Duration = if self.guardrails.enabled {
            self.providers
                .providers()
                .iter()
                .map(|p| p.limits().worst_case())
                .sum()
        } else {
            Duration::ZERO
        };
        let classifier = self
            .classifier
            .as_ref()
            .map_or(Duration::ZERO, |c| c.limits().worst_case());
        providers + classifier
    }

    /// Loads everything a configuration names; the first failure fails the load.
    pub fn load(config: &Config) -> Result<Snapshot, LoadError> {
        let signer = match &config.signing {
            Some(s) => Some(Arc::new(Signer::load(
                &config.base_dir.join(&s.key),
                &s.kid,
                s.expires_in,
            )?)),
            None => None,
        };
        let permissions = match &config.permissions {
            // Validated with the config: a failure here is a programming error,
            // and still refuses the load.
            Some(p) => PermissionEngine::new(p).map_err(|(at, message)| LoadError::Policy {
                message: format!("permissions.{at}: {message}"),
            })?,
            None => PermissionEngine::default(),
        };
        let classifier = config
            .guardrails
            .providers
            .iter()
            .find(|spec| spec.role == Role::Classifier)
            .map(|spec| {
                let artifacts = ArtifactCache::in_data_dir(&config.data_dir());
                Classifier::load(spec, &sources(config, &artifacts)).map(Arc::new)
            })
            .transpose()?;
        let redactor =
            Redactor::new(&config.decision_log.redact).map_err(|err| LoadError::Policy {
                message: err.to_string(),
            })?;
        Ok(Snapshot {
            redactor,
            guardrails: config.guardrails.clone(),
            permissions,
            triage: Triage::new(
                &config.triage,
                classifier
                    .clone()
                    .map(|c| Arc::new(Sandboxed(c)) as Arc<dyn Classify>),
            ),
            classifier,
            providers: ProviderSet::load(config)?,
            signer,
            approval_list: ApprovalList::new(&config.hitl_approval),
            hitl_approval: config.hitl_approval.clone(),
        })
    }
}

/// The live snapshot, replaced atomically.
pub struct Registry {
    live: ArcSwap<Snapshot>,
}

impl Registry {
    /// The live policy, starting at `snapshot`.
    pub fn new(snapshot: Snapshot) -> Self {
        Registry {
            live: ArcSwap::from_pointee(snapshot),
        }
    }

    /// The snapshot a call should run on; it stays valid for the whole call
    /// even if a swap happens meanwhile.
    pub fn current(&self) -> Arc<Snapshot> {
        self.live.load_full()
    }

    /// Makes `next` live and returns the previous snapshot.
    pub fn swap(&self, next: Snapshot) -> Arc<Snapshot> {
        self.live.swap(Arc::new(next))
    }
}
