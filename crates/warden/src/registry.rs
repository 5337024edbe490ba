//! The live policy: the ordered set of loaded providers together with the native
//! settings loaded from the same configuration, swapped atomically. Every call
//! runs on exactly one snapshot, old or new, never on none.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;

use crate::approval_list::config::HitlApproval;
use crate::approval_list::{ApprovalList, Listed};
use crate::config::{Config, Guardrails, Role};
use crate::error::Error;
use crate::signing::Signer;
use warden_policy::origin::Reach;
use warden_policy::permissions::PermissionEngine;
use warden_policy::redact::Redactor;
use warden_policy::triage::{Assessment, Classify, ClassifyError, Triage};
use warden_runtime::artifact_cache::ArtifactCache;
use warden_runtime::provider::{Classifier, LoadError, Provider, Sources};
use warden_types::{OnError, ToolCall};

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

/// Everything a call is judged with, loaded from one configuration: what a
/// swap replaces at once. Judge through [`crate::Warden::evaluate`]; the
/// accessors are for the faces (the daemon, the CLI, the Python module) and
/// the approval gate.
pub struct Snapshot {
    pub(crate) guardrails: Guardrails,
    pub(crate) permissions: PermissionEngine,
    pub(crate) triage: Triage,
    pub(crate) classifier: Option<Arc<Classifier>>,
    pub(crate) providers: ProviderSet,
    pub(crate) signer: Option<Arc<Signer>>,
    /// `hitl_approval`, compiled: which calls need a human.
    pub(crate) approval_list: ApprovalList,
    /// Cleans reason messages when they are made (`decision_log.redact` and
    /// the built-in patterns).
    pub(crate) redactor: Redactor,
    pub(crate) hitl_approval: HitlApproval,
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
    /// A provider that loads but refuses its configuration is not a failure
    /// here (see [`Snapshot::unhealthy`]); [`crate::Warden::reload`] refuses it.
    pub fn load(config: &Config) -> Result<Snapshot, Error> {
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
            Some(p) => PermissionEngine::new(p).map_err(|(at, message)| Error::Policy {
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
        let redactor = Redactor::new(&config.redact).map_err(|err| Error::Policy {
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

    /// The providers (`role: guardrail`), in order.
    pub fn providers(&self) -> &ProviderSet {
        &self.providers
    }

    /// `guardrails:` as configured.
    pub fn guardrails(&self) -> &Guardrails {
        &self.guardrails
    }

    /// `hitl_approval` as configured: quotas, who may approve, the store.
    pub fn hitl_approval(&self) -> &HitlApproval {
        &self.hitl_approval
    }

    /// `hitl_approval.tools`, compiled: which calls need a human.
    pub fn approval_list(&self) -> &ApprovalList {
        &self.approval_list
    }

    /// The native permission engine (the approval gate matches grants with
    /// its canonical calls; `warden demo` names its mode).
    pub fn permissions(&self) -> &PermissionEngine {
        &self.permissions
    }

    /// The approval list's answer for a call every stage allowed, wherever
    /// the call is judged (in a model response by the approval gate, or alone
    /// by [`crate::Warden::evaluate`]), or `None` when the call is not listed.
    pub fn listed(&self, call: &ToolCall, reach: &Reach) -> Option<Listed> {
        self.approval_list.listed(call, &self.permissions, reach)
    }

    /// The risk classifier (`role: classifier`), which triage consults.
    pub fn classifier(&self) -> Option<&Classifier> {
        self.classifier.as_deref()
    }

    /// Risk triage (the benchmarks time it alone).
    #[doc(hidden)]
    pub fn triage(&self) -> &Triage {
        &self.triage
    }

    /// What cleans reason messages when they are made (`decision_log.redact`
    /// and the built-in patterns): the approval gate's own reasons and the
    /// console's views go through it too.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The generation of this snapshot's provider set.
    pub fn generation(&self) -> u64 {
        self.providers.generation()
    }

    /// Fails with the first provider that refused its configuration: a set
    /// with one never serves.
    pub(crate) fn check_healthy(&self) -> Result<(), Error> {
        match self.providers.unhealthy().next() {
            Some((provider, failure)) => Err(Error::Unhealthy {
                provider: provider.name().to_string(),
                message: failure.to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// The live snapshot, replaced atomically.
pub(crate) struct Registry {
    live: ArcSwap<Snapshot>,
}

impl Registry {
    /// The live policy, starting at `snapshot`.
    pub(crate) fn new(snapshot: Snapshot) -> Self {
        Registry {
            live: ArcSwap::from_pointee(snapshot),
        }
    }

    /// The snapshot a call should run on; it stays valid for the whole call
    /// even if a swap happens meanwhile.
    pub(crate) fn current(&self) -> Arc<Snapshot> {
        self.live.load_full()
    }

    /// Makes `next` live and returns the previous snapshot.
    pub(crate) fn swap(&self, next: Snapshot) -> Arc<Snapshot> {
        self.live.swap(Arc::new(next))
    }
}
