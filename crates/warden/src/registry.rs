//! The live policy: the ordered set of loaded providers together with the native
//! settings loaded from the same configuration, swapped atomically. Every call
//! runs on exactly one snapshot, old or new, never on none.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use arc_swap::{ArcSwap, ArcSwapOption};

use crate::approval_list::config::HitlApproval;
use crate::approval_list::{ApprovalList, Listed};
use crate::client_attested::ClientAttestedList;
use crate::config::{Config, ConfigFile, Guardrails, Mode, Role};
use crate::error::Error;
use crate::gate::Suite;
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

/// Loads a provider and puts it through the reload gate (see `gate`): its
/// own vectors (`vectors:`) and, when its `wasm:` names a bundle directory,
/// the bundle's (the bundle verified first, see `bundle`) run against it, as
/// configured, before it may join a set; a failing vector refuses it.
fn load_provider(
    spec: &warden_runtime::spec::ProviderSpec,
    sources: &Sources<'_>,
    fail_closed: bool,
) -> Result<Provider, LoadError> {
    // Read before the build is compiled: a missing file fails fast.
    let own = spec
        .vectors
        .as_ref()
        .map(|file| crate::gate::read(&spec.name, &sources.base_dir.join(file)))
        .transpose()?;
    let (provider, bundled) = load_component(spec, sources, fail_closed)?;
    for suite in bundled.iter().chain(own.iter()) {
        crate::gate::check(&provider, suite)?;
    }
    Ok(provider)
}

/// Loads a provider's component, verifying it first when `wasm:` names a
/// bundle directory; with the bundle's vectors and their path.
fn load_component(
    spec: &warden_runtime::spec::ProviderSpec,
    sources: &Sources<'_>,
    fail_closed: bool,
) -> Result<(Provider, Option<Suite>), LoadError> {
    let dir = sources.base_dir.join(&spec.wasm);
    let refused = |message: String| LoadError::Bundle {
        provider: spec.name.clone(),
        path: dir.display().to_string(),
        message,
    };
    if spec.wasm.starts_with("builtin:") || !crate::bundle::is_bundle(&dir) {
        if spec.trust.is_some() {
            // A key that verifies nothing would read as a check that passed.
            return Err(refused(
                "is not a bundle (no bundle.json), and `trust:` applies to bundles only: \
                 pin a component with `sha256:`"
                    .into(),
            ));
        }
        return Ok((Provider::load(spec, sources, fail_closed)?, None));
    }
    let verified = crate::bundle::verify(
        &dir,
        spec.trust.as_ref(),
        spec.sha256.as_deref(),
        time::OffsetDateTime::now_utc(),
    )
    .map_err(|err| refused(err.to_string()))?;
    let mut component = spec.clone();
    component.wasm = verified.component.display().to_string();
    component.sha256 = Some(verified.statement.component_sha256.clone());
    let provider = Provider::load(&component, sources, fail_closed)?;
    let suite = Suite {
        path: dir.join(crate::bundle::VECTORS),
        vectors: verified.vectors,
    };
    Ok((provider, Some(suite)))
}

/// Numbers provider sets in the order they were loaded, process-wide.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// The providers of one configuration, in order.
pub struct ProviderSet {
    /// `mode: live`, in order.
    providers: Vec<Provider>,
    /// `mode: shadow`, in order.
    shadows: Vec<Provider>,
    /// Every provider's place in the configured order: `Live(i)` is
    /// `providers[i]`, `Shadow(i)` is `shadows[i]`.
    order: Vec<Place>,
    generation: u64,
    loaded_at: SystemTime,
}

#[derive(Clone, Copy)]
enum Place {
    Live(usize),
    Shadow(usize),
}

impl ProviderSet {
    /// Loads every provider of the configuration; the first that cannot be
    /// loaded fails the whole set.
    pub fn load(config: &Config) -> Result<ProviderSet, LoadError> {
        let guardrails = &config.guardrails;
        let artifacts = ArtifactCache::in_data_dir(&config.data_dir());
        let (mut providers, mut shadows, mut order) = (Vec::new(), Vec::new(), Vec::new());
        for spec in guardrails
            .providers
            .iter()
            .filter(|spec| spec.role == Role::Guardrail)
        {
            // A shadow goes through the same gate and limits as a live one.
            let provider =
                load_provider(spec, &sources(config, &artifacts), guardrails.fail_closed)?;
            match spec.mode {
                Mode::Live => {
                    order.push(Place::Live(providers.len()));
                    providers.push(provider);
                }
                Mode::Shadow => {
                    order.push(Place::Shadow(shadows.len()));
                    shadows.push(provider);
                }
            }
        }
        Ok(ProviderSet {
            providers,
            shadows,
            order,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            loaded_at: SystemTime::now(),
        })
    }

    /// The live providers (`mode: live`), in the order they run.
    pub fn providers(&self) -> &[Provider] {
        &self.providers
    }

    /// The shadow providers (`mode: shadow`), in order: judged after the
    /// answer, never in it.
    pub fn shadows(&self) -> &[Provider] {
        &self.shadows
    }

    /// Every provider in the configured order, with its index among the live
    /// ones (`None` for a shadow).
    pub(crate) fn in_order(&self) -> impl Iterator<Item = (&Provider, Option<usize>)> {
        self.order.iter().map(|place| match *place {
            Place::Live(i) => (&self.providers[i], Some(i)),
            Place::Shadow(i) => (&self.shadows[i], None),
        })
    }

    /// This set's number: larger means loaded later.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When this set was loaded.
    pub fn loaded_at(&self) -> SystemTime {
        self.loaded_at
    }

    /// Every provider (live or shadow) that could not be configured, with why.
    pub fn unhealthy(
        &self,
    ) -> impl Iterator<Item = (&Provider, &warden_runtime::provider::ProviderFailure)> {
        self.providers
            .iter()
            .chain(&self.shadows)
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
    /// `mcp.client_attested`, compiled.
    pub(crate) client_attested: ClientAttestedList,
    /// The shadow configuration (`shadow:`), while it judges.
    pub(crate) shadowing: Shadowing,
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
    /// providers and the classifier (when `guardrails.enabled`). The native
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
            .filter(|_| self.guardrails.enabled)
            .map_or(Duration::ZERO, |c| c.limits().worst_case());
        providers + classifier
    }

    /// The longest a shadow judgment takes on one call: the sum of the
    /// shadow providers' (`mode: shadow`) worst cases, or the shadow
    /// configuration's [`Snapshot::worst_case`].
    pub fn shadow_worst_case(&self) -> Duration {
        let providers: Duration = self
            .providers
            .shadows()
            .iter()
            .map(|p| p.limits().worst_case())
            .sum();
        let candidate = self
            .shadowing
            .current()
            .map_or(Duration::ZERO, |set| set.snapshot.worst_case());
        providers + candidate
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
            // `guardrails.enabled: false` turns the classifier off with the
            // providers, as DeerFlow's flag turns off its guardrail: loaded
            // (a broken one is found now, not when the flag flips back) but
            // never consulted. The native core (permissions, the detector) stays on.
            triage: Triage::new(
                &config.triage,
                classifier
                    .clone()
                    .filter(|_| config.guardrails.enabled)
                    .map(|c| Arc::new(Sandboxed(c)) as Arc<dyn Classify>),
            ),
            classifier,
            providers: ProviderSet::load(config)?,
            signer,
            approval_list: ApprovalList::new(&config.hitl_approval),
            hitl_approval: config.hitl_approval.clone(),
            client_attested: ClientAttestedList::new(&config.mcp),
            shadowing: Shadowing::load(config)?,
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

    /// Whether an MCP client's own answer to an elicitation may approve this
    /// call (`mcp.client_attested`; unset: not for a call `hitl_approval.tools`
    /// names, yes for any other ask).
    pub fn client_attested_may_approve(&self, call: &ToolCall) -> bool {
        let listed = self
            .approval_list
            .requires_approval(call, &self.permissions)
            .is_some();
        self.client_attested.allows(&call.tool_name, listed)
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

    /// The same for the length of one call, without a count of its own: the
    /// snapshot's reference count is one word that every thread judging on
    /// this Warden would otherwise write twice per call, and the cache line
    /// that holds it would then move between their cores each time
    /// (measured: a second thread judging beside a first slowed the first by
    /// a fifth; docs/benchmarks.md).
    pub(crate) fn pinned(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.live.load()
    }

    /// Makes `next` (a new set, a shadow set's candidate, or one kept for a
    /// rollback) live in one atomic step; returns the previous snapshot.
    pub(crate) fn swap(&self, next: Arc<Snapshot>) -> Arc<Snapshot> {
        self.live.swap(next)
    }
}

/// A candidate configuration, loaded, judging beside the live set.
pub(crate) struct ShadowSet {
    /// The candidate, loaded and configured like a live set.
    pub(crate) snapshot: Arc<Snapshot>,
    /// The candidate's file as it was read (what a promotion records).
    pub(crate) file: ConfigFile,
    /// The candidate's `guardrails.passport`, for the log lines of the
    /// calls it judges once promoted.
    pub(crate) passport: Option<String>,
    /// When it stops judging.
    until: SystemTime,
    /// The share of the calls it judges.
    sample: f64,
    /// Calls offered to it so far, for the sample.
    seen: AtomicU64,
}

/// The live set's shadow configuration, if any: unloaded (dropped, its
/// instances with it) by the first call that finds it ended.
pub(crate) struct Shadowing {
    set: ArcSwapOption<ShadowSet>,
    /// `shadow.until` as configured, for the answer to a promotion refused
    /// after it.
    until: Option<SystemTime>,
}

impl Shadowing {
    /// Loads the candidate `live` names, if it names one; a candidate that
    /// cannot be read, parsed, loaded or configured refuses the live set too.
    /// One whose `until` has passed is loaded (so that it is checked) and then
    /// dropped at once: it judges nothing.
    pub(crate) fn load(live: &Config) -> Result<Shadowing, Error> {
        let Some(shadow) = &live.shadow else {
            return Ok(Shadowing {
                set: ArcSwapOption::empty(),
                until: None,
            });
        };
        let until = SystemTime::from(shadow.until);
        let path = live.base_dir.join(&shadow.config);
        let refused = |source: Error| Error::Shadow {
            path: path.display().to_string(),
            source: Box::new(source),
        };
        let file = ConfigFile::read(&path)?;
        let candidate = live.candidate(&file)?;
        let snapshot = Snapshot::load(&candidate).map_err(refused)?;
        snapshot.check_healthy().map_err(refused)?;
        let set = ShadowSet {
            snapshot: Arc::new(snapshot),
            passport: candidate.guardrails.passport.clone(),
            file,
            until,
            sample: shadow.sample,
            seen: AtomicU64::new(0),
        };
        let shadowing = Shadowing {
            set: ArcSwapOption::from_pointee(set),
            until: Some(until),
        };
        // Ended already: checked, and unloaded now.
        shadowing.current();
        Ok(shadowing)
    }

    /// The shadow set, unless there is none or it ended (then it is unloaded,
    /// once, and the end is logged). The clock is read only when there is a
    /// set: every live call asks.
    pub(crate) fn current(&self) -> Option<Arc<ShadowSet>> {
        let set = self.set.load_full()?;
        if SystemTime::now() < set.until {
            return Some(set);
        }
        if self.set.swap(None).is_some() {
            tracing::info!(
                config = %set.file.name,
                until = %warden_policy::clock::rfc3339(set.until),
                "the shadow configuration ended: it judges no more calls and is unloaded"
            );
        }
        None
    }

    /// Why there is no shadow set to promote.
    pub(crate) fn absent(&self) -> String {
        match self.until {
            Some(until) => format!(
                "the shadow configuration ended at {} (its `until`) and was unloaded",
                warden_policy::clock::rfc3339(until)
            ),
            None => "the live set has no shadow configuration (`shadow:`)".into(),
        }
    }
}

impl ShadowSet {
    /// Whether this call is in the sample: evenly spread, `sample` of the
    /// calls offered (every call at 1.0, none at 0.0), with no randomness so
    /// that a test or an operator can count on it.
    pub(crate) fn sampled(&self) -> bool {
        let n = self.seen.fetch_add(1, Ordering::Relaxed) as f64;
        ((n + 1.0) * self.sample).floor() > (n * self.sample).floor()
    }
}
