//! One tool call through Warden: validate, resolve the interaction policy, the
//! native permission engine, the providers in order (a deny ends the chain),
//! risk triage (which may only raise), combine (the strictest verdict wins),
//! turn an ask that no human can answer into a deny, and report what every
//! stage said.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime};

use arc_swap::ArcSwap;
use serde_json::Map;
use warden_log::{ArgumentPolicy, DecisionLog, Generation, Generations};
use warden_policy::interaction::{InteractionMode, RunInteractionPolicy};
use warden_policy::origin::{Reach, RunOrigin};
use warden_policy::trust::{self, Admitted};
use warden_runtime::provider::{GuestCall, Provider};
use warden_types::Caller;
use warden_types::ClassifierReport;
use warden_types::admin::{
    Health, Limits, PoolUsage, ProviderDigest, ProviderList, ProviderStatus, ReloadReport,
};
use warden_types::cause::{Cause, ProviderRef, RuleRef};
use warden_types::decision::{Decision, Reason, Verdict};

use crate::combine::{StageOpinion, combine};
use warden_types::request::{RequestError, ToolCall};

use warden_types::codes::{ASK_UNAVAILABLE, CLARIFICATION_UNAVAILABLE, CONTEXT_KEYS_DROPPED};
use warden_types::{Evaluation, StageReport};

use crate::approval_list::Listed;
use crate::config::{Config, ConfigFile};
use crate::error::Error;
use crate::guest_call::provider_call;
use crate::registry::{ProviderSet, Registry, Snapshot};
use crate::shadow::{
    Handed, HandedOpinion, Judging, Shadow, ShadowCounts, ShadowJudgment, ShadowQueue,
};
use crate::signing::RecordFacts;

/// The stage name of the approval list in `decided_by` and the stage reports.
pub const APPROVAL_STAGE: &str = "approval";

/// Warden: the live policy and the entry point for judging tool calls.
///
/// One API under every face: the daemon, the CLI and the Python module call
/// these methods, and an embedder calls the same ones.
pub struct Warden {
    registry: Registry,
    /// Reloads run one at a time.
    reloading: Mutex<()>,
    /// The shadow judgments' queue and thread, started with the first.
    shadows: OnceLock<ShadowQueue<ShadowWork>>,
    /// The set a promotion replaced, for [`Warden::rollback`]; a reload
    /// forgets it.
    previous: Mutex<Option<Arc<Snapshot>>>,
    /// What the recent generations were loaded from, each recorded before it
    /// serves: a decision's log line names its own generation's.
    generations: ArcSwap<Generations>,
    /// The decision log the library writes, once the embedder asks for it.
    log: OnceLock<Arc<DecisionLog>>,
}

/// What one provider said on a call: the same as what a live call hands its
/// shadow judgment, which reuses it instead of asking the provider again.
pub(crate) type ProviderOpinion = HandedOpinion<Decision>;

/// Which providers a judgment runs through.
#[derive(Clone, Copy)]
enum Chain<'a> {
    /// The live providers, each asked.
    Live,
    /// The live and the shadow providers in their configured order, as if
    /// all were live: the live ones' opinions taken from the live judgment
    /// of the same call (the chain stops at the first deny, so every live
    /// provider it reaches gave one), the shadow ones asked.
    Shadowed(&'a [ProviderOpinion]),
}

/// What a stage adds to its report beyond its decision.
#[derive(Default)]
struct StageExtra {
    digest: Option<String>,
    fuel_used: Option<u64>,
    error_detail: Option<Cow<'static, str>>,
    classifier: Option<ClassifierReport>,
}

impl Warden {
    /// Loads everything the configuration names. A provider that loads but
    /// refuses its configuration does not fail this (it denies every call as a
    /// provider failure, and [`Snapshot::unhealthy`] names it); use
    /// [`Warden::new_healthy`] to refuse it, as the daemon does.
    pub fn new(config: &Config) -> Result<Warden, Error> {
        Ok(Warden::serving(Snapshot::load(config)?, config))
    }

    /// A Warden serving `snapshot`, loaded from `config`.
    fn serving(snapshot: Snapshot, config: &Config) -> Warden {
        let generations =
            Generations::default().with(snapshot.generation(), loaded_from(config, None));
        Warden {
            registry: Registry::new(snapshot),
            reloading: Mutex::new(()),
            shadows: OnceLock::new(),
            previous: Mutex::new(None),
            generations: ArcSwap::from_pointee(generations),
            log: OnceLock::new(),
        }
    }

    /// As [`Warden::new`], refusing a provider set with a provider that could
    /// not be configured ([`Error::Unhealthy`]): how the daemon and the Python
    /// module start.
    pub fn new_healthy(config: &Config) -> Result<Warden, Error> {
        let snapshot = Snapshot::load(config)?;
        snapshot.check_healthy()?;
        Ok(Warden::serving(snapshot, config))
    }

    /// Judges one tool call, with every check a lone call gets, as the daemon's
    /// `POST /v1/evaluate` does: the pipeline, then the approval list
    /// (`hitl_approval.tools`), whose listed tools ask where a human can be
    /// asked and are denied where nobody can. A listed tool is never allowed
    /// here: it asks (`warden.approval_required`) where a human can be asked,
    /// and the harness makes the pause (the tool-calls route, or its
    /// middleware); in a run that cannot pause it follows
    /// `hitl_approval.non_interactive`. An ask in a run whose origin shows no
    /// approvals (IM, extension, MCP notification) is a deny.
    ///
    /// An error means the harness's part of the request was refused (its
    /// context: an unknown interaction mode, a malformed timestamp); everything
    /// an agent's model controls (the tool name, the arguments, their depth,
    /// the call's id) and every provider failure gets a decision.
    ///
    /// ```
    /// use warden::{Caller, Config, ToolCall, Verdict, Warden};
    ///
    /// let mut config = Config::embedded();
    /// config.hitl_approval.tools = vec!["bash".into()];
    /// let warden = Warden::new(&config)?;
    /// let call = ToolCall::new("bash", serde_json::json!({"command": "git status"}));
    /// let evaluation = warden.evaluate(&call, Caller::Agent)?;
    /// assert_eq!(evaluation.verdict, Verdict::Ask); // bash needs a human's approval
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn evaluate(&self, call: &ToolCall, caller: Caller) -> Result<Evaluation, RequestError> {
        self.judge_live(call, caller, false)
            .map(|(evaluation, _)| evaluation)
    }

    /// As [`Warden::evaluate`], with the call's shadow judgment when the
    /// live set has providers with `mode: shadow`, or a shadow configuration
    /// (`shadow:`) that has not ended and has this call in its sample (the
    /// whole candidate judges the call then): it is queued once the
    /// answer is decided (or shed at once when the queue is full), runs on
    /// the shadow thread, and never changes the answer. Say what to do with
    /// its outcome with [`Shadow::then`] (the daemon writes the call's log
    /// line then); a dropped handle still counts it ([`Warden::shadow_counts`]).
    pub fn evaluate_shadowed(
        &self,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<(Evaluation, Option<Shadow>), RequestError> {
        self.judge_live(call, caller, true)
    }

    /// A call judged live, its shadow judgment queued; the handle of the
    /// latter when `handle` asks for it. Without it and without a decision
    /// log, nobody will read the outcome: only the counts see it, and
    /// nothing is made for it.
    fn judge_live(
        &self,
        call: &ToolCall,
        caller: Caller,
        handle: bool,
    ) -> Result<(Evaluation, Option<Shadow>), RequestError> {
        let snapshot = self.registry.pinned();
        let judged = judge(&snapshot, call, caller, Alone::Yes, Chain::Live)?;
        let listen = handle || self.log.get().is_some();
        let shadow = self.shadow_of(&snapshot, call, caller, &judged, listen);
        let evaluation = judged.evaluation;
        if let Some(log) = self.log.get() {
            use crate::decision_log::record;
            match &shadow {
                None => {
                    let known = self.generations.load();
                    let generation = known.get(evaluation.generation);
                    let passport = snapshot.guardrails.passport.as_deref();
                    record(log, passport, generation, call, &evaluation, caller, None);
                }
                // The line waits for the shadow's outcome and records both:
                // what it names is copied for it.
                Some(shadow) => {
                    let passport = snapshot.guardrails.passport.clone();
                    let generation = self.generation(evaluation.generation);
                    let (log, call, evaluation) = (log.clone(), call.clone(), evaluation.clone());
                    shadow.observe(move |outcome| {
                        let (passport, generation) = (passport.as_deref(), generation.as_ref());
                        let shadow = Some(outcome);
                        record(
                            &log,
                            passport,
                            generation,
                            &call,
                            &evaluation,
                            caller,
                            shadow,
                        );
                    });
                }
            }
        }
        Ok((evaluation, shadow))
    }

    /// The call's shadow judgment, queued, when it has one; its handle with
    /// `listen`.
    fn shadow_of(
        &self,
        snapshot: &Arc<Snapshot>,
        call: &ToolCall,
        caller: Caller,
        judged: &Judged,
        listen: bool,
    ) -> Option<Shadow> {
        let evaluation = &judged.evaluation;
        // A call refused at intake reached no provider: nothing to compare.
        if evaluation.decided_by.as_deref() == Some(INTAKE_STAGE) {
            return None;
        }
        // A shadow configuration: the whole candidate judges the call.
        // Else the shadow providers, beside what the live ones said.
        let set = match snapshot.shadowing.current() {
            Some(set) if !set.sampled() => return None,
            Some(set) => Some(set),
            None if snapshot.providers.shadows().is_empty() || !snapshot.guardrails.enabled => {
                return None;
            }
            None => None,
        };
        let reused = set.is_none();
        // The live providers' opinions, in order, each beside its stage's
        // report (what `record` pushed to both at once).
        let asked = judged
            .opinions
            .iter()
            .zip(&evaluation.stages)
            .filter(move |(opinion, _)| reused && opinion.stage.starts_with("provider:"))
            .map(|(opinion, report)| HandedOpinion {
                decision: &opinion.decision,
                fuel_used: report.fuel_used,
                error_detail: report.error_detail.clone(),
            });
        let base = match &set {
            Some(set) => &set.snapshot,
            None => snapshot,
        };
        let queue = self.shadows.get_or_init(ShadowQueue::start);
        // Made only when the queue has room for it.
        queue.submit(listen, judged.started, base, |text| {
            let input_text = judged.input_text.as_deref();
            crate::shadow::hand(text, call, input_text, evaluation, asked).ok()?;
            Some(ShadowWork { reused, caller })
        })
    }

    /// Writes every call judged through [`Warden::evaluate`] (the approval
    /// gate's `evaluate` and the Python module's go through it), with its
    /// shadow judgment where it has one (the line then waits for it, as the
    /// daemon's does), and the calls of the approval gate's model responses
    /// and resumes, to the decision log that `config`'s `decision_log:`
    /// section describes, in its data directory: the daemon's writer and lines (hash chain, signed
    /// checkpoints, rotation), which `warden log verify` checks. Each line
    /// names its caller's attribution, the generation's configuration digest
    /// and the node (the host name; [`DecisionLog::set_node_name`] through
    /// [`Warden::decision_log`] to change it). A disabled section
    /// (`enabled: false`) writes nothing. Once per Warden: a second call is
    /// refused.
    ///
    /// ```
    /// use warden::{Caller, Config, ToolCall, Warden};
    /// # let dir = tempfile::tempdir()?;
    /// let mut config = Config::embedded();
    /// config.set_data_dir(dir.path());
    /// let warden = Warden::new(&config)?;
    /// warden.log_decisions(&config)?;
    /// warden.evaluate(&ToolCall::new("read_file", serde_json::json!({"path": "a.txt"})), Caller::Agent)?;
    /// let log = warden.decision_log().unwrap();
    /// log.flush();
    /// assert!(log.path().unwrap().ends_with("decisions.jsonl"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn log_decisions(&self, config: &Config) -> Result<(), Error> {
        let log = crate::decision_log::open(config)?;
        self.log.set(Arc::new(log)).map_err(|_| Error::Policy {
            message: "this Warden already writes a decision log".into(),
        })
    }

    /// The decision log this Warden writes, once [`Warden::log_decisions`]
    /// opened it.
    pub fn decision_log(&self) -> Option<&DecisionLog> {
        self.log.get().map(Arc::as_ref)
    }

    /// Waits until every shadow judgment queued so far is judged or shed and
    /// its outcome handed on (the daemon's held log lines written), for at
    /// most the longest that can take: [`crate::shadow::MAX_QUEUE_WAIT`] and
    /// one judgment's worst case. Whether they all were. For a shutdown.
    pub fn settle_shadows(&self) -> bool {
        let Some(queue) = self.shadows.get() else {
            return true;
        };
        let snapshot = self.registry.current();
        let bound =
            crate::shadow::MAX_QUEUE_WAIT + snapshot.worst_case() + snapshot.shadow_worst_case();
        queue.settle(bound)
    }

    /// How many shadow judgments were made, shed, and differed from the live
    /// answer (by transition), since this Warden started.
    pub fn shadow_counts(&self) -> ShadowCounts {
        self.shadows
            .get()
            .map(ShadowQueue::counts)
            .unwrap_or_default()
    }

    /// The same as [`Warden::evaluate`], which now applies the approval list
    /// itself.
    #[deprecated(
        since = "0.2.0",
        note = "use Warden::evaluate, which now applies the approval list as this did"
    )]
    pub fn evaluate_alone(
        &self,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Evaluation, RequestError> {
        self.evaluate(call, caller)
    }

    /// The deny decision for a request refused before any stage could judge
    /// it (malformed by the agent's model: its size, JSON, depth, names, ids),
    /// `decided_by: intake`; the reason is `code` with `message`. It carries
    /// no signed record: there is no well-formed call to bind one to.
    pub fn refusal(&self, code: &str, message: &str) -> Evaluation {
        self.registry.current().refusal(code, message)
    }

    /// Loads `config` (whose file had the SHA-256 `config_sha256`) and swaps
    /// it in atomically: calls in flight finish on the snapshot they started
    /// with, new calls see the new one. A set with a provider that could not
    /// be configured is refused ([`Error::Unhealthy`]); on any error the
    /// running snapshot keeps serving. Reloads run one at a time. The report
    /// has no `warnings`: what needs a restart is the caller's to say.
    pub fn reload(&self, config: &Config, config_sha256: &str) -> Result<ReloadReport, Error> {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let next = Arc::new(Snapshot::load(config)?);
        next.check_healthy()?;
        let generation = next.providers.generation();
        // The library's log takes the new argument policy with the set.
        let arguments =
            match self.log.get() {
                Some(_) => Some(ArgumentPolicy::new(&config.decision_log).map_err(|err| {
                    Error::Policy {
                        message: format!("{}: decision_log: {err}", config.source),
                    }
                })?),
                None => None,
            };
        let facts = loaded_from(config, Some(config_sha256));
        self.generations
            .rcu(|known| known.with(generation, facts.clone()));
        let previous = self.registry.swap(next.clone());
        // What a promotion replaced is no longer one step back.
        *self.previous.lock().unwrap_or_else(|e| e.into_inner()) = None;
        if let (Some(log), Some(arguments)) = (self.log.get(), arguments) {
            log.set_policy(arguments);
        }
        Ok(swap_report(&next, &previous, config_sha256, started))
    }

    /// Makes the live set's shadow configuration (`shadow:`) live, in the
    /// one atomic swap a reload makes: the candidate already loaded, gated
    /// and configured (and warm) is what serves next, with nothing loaded
    /// again. The set it replaces is kept for [`Warden::rollback`]. Refused
    /// ([`Error::NoShadow`]) when there is no shadow configuration or it
    /// ended. The answer's `config_sha256` is the candidate file's; the
    /// file as it was read comes with it, for a face that records the
    /// promotion.
    pub fn promote(&self) -> Result<(ReloadReport, ConfigFile), Error> {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let current = self.registry.current();
        let set = current.shadowing.current().ok_or_else(|| Error::NoShadow {
            message: current.shadowing.absent(),
        })?;
        let facts = Generation {
            config_sha256: Some(set.file.sha256.clone()),
            passport: set.passport.clone(),
        };
        self.generations
            .rcu(|known| known.with(set.snapshot.providers.generation(), facts.clone()));
        let previous = self.registry.swap(set.snapshot.clone());
        let report = swap_report(&set.snapshot, &previous, &set.file.sha256, started);
        *self.previous.lock().unwrap_or_else(|e| e.into_inner()) = Some(previous);
        Ok((report, set.file.clone()))
    }

    /// Makes the set the last promotion replaced live again, in one atomic
    /// swap; refused ([`Error::NothingToRollBack`]) when there was no
    /// promotion since the last load or reload. The answer's `config_sha256`
    /// is empty: the set restored is the one loaded before.
    pub fn rollback(&self) -> Result<ReloadReport, Error> {
        let _one_at_a_time = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let started = Instant::now();
        let restored = self
            .previous
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or(Error::NothingToRollBack)?;
        let replaced = self.registry.swap(restored.clone());
        Ok(swap_report(&restored, &replaced, "", started))
    }

    /// The file of the live set's shadow configuration, as it was read: what
    /// [`Warden::promote`] would make live now; [`Error::NoShadow`] when
    /// there is none or it ended.
    pub fn shadow_candidate(&self) -> Result<ConfigFile, Error> {
        let current = self.registry.current();
        match current.shadowing.current() {
            Some(set) => Ok(set.file.clone()),
            None => Err(Error::NoShadow {
                message: current.shadowing.absent(),
            }),
        }
    }

    /// Whether [`Warden::rollback`] has a set to go back to.
    pub fn can_roll_back(&self) -> bool {
        self.previous
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The live provider set, as `GET /v1/admin/providers` lists it.
    pub fn providers(&self) -> ProviderList {
        let snapshot = self.registry.current();
        let set = &snapshot.providers;
        ProviderList {
            generation: set.generation(),
            loaded_at: rfc3339(set.loaded_at()),
            enabled: snapshot.guardrails.enabled,
            providers: set.providers().iter().map(provider_status).collect(),
            config_sha256: self.config_sha256_of(set.generation()),
            node_name: None,
        }
    }

    /// That a provider set serves, as `GET /healthz` answers.
    pub fn health(&self) -> Health {
        let snapshot = self.registry.current();
        Health {
            status: "ok".to_string(),
            generation: snapshot.providers.generation(),
            providers: snapshot.providers.providers().len() as u64,
            config_sha256: self.config_sha256_of(snapshot.providers.generation()),
            node_name: None,
        }
    }

    /// What `generation` was loaded from (the configuration's SHA-256, the
    /// passport), while it is among the last 16 loaded.
    pub fn generation(&self, generation: u64) -> Option<Generation> {
        self.generations.load().get(generation).cloned()
    }

    fn config_sha256_of(&self, generation: u64) -> Option<String> {
        self.generation(generation)
            .and_then(|facts| facts.config_sha256)
    }

    /// The snapshot currently serving calls.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.current()
    }

    /// The longest one judgement can take under the live configuration
    /// ([`Snapshot::worst_case`]), read without holding the snapshot, so
    /// that a caller asking on every call shares no count with other threads.
    pub fn worst_case(&self) -> std::time::Duration {
        self.registry.pinned().worst_case()
    }
}

/// What a swap from `previous` to `next` reports.
fn swap_report(
    next: &Snapshot,
    previous: &Snapshot,
    config_sha256: &str,
    started: Instant,
) -> ReloadReport {
    ReloadReport {
        generation: next.providers.generation(),
        previous_generation: previous.providers.generation(),
        providers: digests(&next.providers),
        previous_providers: digests(&previous.providers),
        config_sha256: config_sha256.to_string(),
        duration_ms: (started.elapsed().as_secs_f64() * 1e6).round() / 1e3,
        warnings: Vec::new(),
    }
}

/// What a generation loaded from `config` was loaded from; `sha256` when
/// the caller read the file itself (a reload), else the config's own.
fn loaded_from(config: &Config, sha256: Option<&str>) -> Generation {
    Generation {
        config_sha256: sha256
            .filter(|sha256| !sha256.is_empty())
            .map(str::to_string)
            .or_else(|| config.sha256.clone()),
        passport: config.guardrails.passport.clone(),
    }
}

/// `[{name, digest}]` of a provider set, as a reload reports it.
fn digests(set: &ProviderSet) -> Vec<ProviderDigest> {
    set.providers()
        .iter()
        .map(|p| ProviderDigest {
            name: p.name().to_string(),
            digest: p.digest().to_string(),
        })
        .collect()
}

/// A provider as the admin answer lists it (the wire type counts in `u64`
/// where the runtime counts in `usize`).
fn provider_status(p: &Provider) -> ProviderStatus {
    let limits = p.limits();
    let usage = p.pool_usage();
    ProviderStatus {
        name: p.name().to_string(),
        provider: p.info().name.clone(),
        version: p.info().version.clone(),
        digest: p.digest().to_string(),
        source: p.source().to_string(),
        limits: Limits {
            timeout_ms: limits.timeout_ms,
            fuel: limits.fuel,
            configure_timeout_ms: limits.configure_timeout_ms,
            configure_fuel: limits.configure_fuel,
            memory_mb: limits.memory_mb,
            max_input_bytes: limits.max_input_bytes as u64,
            max_output_bytes: limits.max_output_bytes as u64,
            pool_size: limits.pool_size as u64,
        },
        on_error: p.on_error(),
        loaded_since: rfc3339(p.loaded_at()),
        pool: PoolUsage {
            capacity: usage.capacity as u64,
            live: usage.live as u64,
            idle: usage.idle as u64,
        },
    }
}

/// The deprecated free form of [`Warden::evaluate`], on one snapshot.
#[deprecated(since = "0.2.0", note = "use Warden::evaluate")]
pub fn evaluate(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
) -> Result<Evaluation, RequestError> {
    judge(snapshot, call, caller, Alone::Yes, Chain::Live).map(|j| j.evaluation)
}

/// The deprecated free form of [`Warden::evaluate`], on one snapshot.
#[deprecated(since = "0.2.0", note = "use Warden::evaluate")]
pub fn evaluate_alone(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
) -> Result<Evaluation, RequestError> {
    judge(snapshot, call, caller, Alone::Yes, Chain::Live).map(|j| j.evaluation)
}

impl Snapshot {
    /// For the approval gate (`warden-approval`) only: judges one call of a
    /// model response without the approval list, which the gate applies
    /// itself because it makes the pause (and lets standing grants answer
    /// it). Anywhere else a listed tool would be allowed here: call
    /// [`Warden::evaluate`].
    pub fn evaluate_in_response(
        &self,
        call: &ToolCall,
        caller: Caller,
    ) -> Result<Evaluation, RequestError> {
        judge(self, call, caller, Alone::No, Chain::Live).map(|j| j.evaluation)
    }

    /// For the approval gate (`warden-approval`): the reason an ask becomes a
    /// deny when nobody can answer it (`why`).
    pub fn ask_unavailable(why: &str) -> Reason {
        ask_unavailable(why)
    }

    /// The call as a provider of this snapshot sees it, for the benchmarks
    /// that time a provider alone; not an API.
    #[doc(hidden)]
    pub fn provider_call(
        &self,
        call: &ToolCall,
        caller: Caller,
        mode: InteractionMode,
    ) -> GuestCall {
        guest_call(self, call, &trust::admit(call, caller), mode)
    }

    /// See [`Warden::refusal`].
    pub(crate) fn refusal(&self, code: &str, message: &str) -> Evaluation {
        let reason = Reason::new(code, message);
        Evaluation {
            verdict: Verdict::Deny,
            allow: false,
            reasons: vec![reason.clone()],
            policy_id: None,
            metadata: Map::new(),
            decided_by: Some(INTAKE_STAGE.into()),
            cause: None,
            interaction_mode: InteractionMode::Interactive,
            reach: None,
            stages: vec![StageReport {
                stage: INTAKE_STAGE.into(),
                verdict: Verdict::Deny,
                codes: vec![reason.code],
                duration_us: 0,
                digest: None,
                fuel_used: None,
                error_detail: None,
                classifier: None,
            }],
            decision_record: None,
            generation: self.providers.generation(),
            duration_us: 0,
            judged_at: warden_policy::clock::now_rfc3339(),
        }
    }
}

/// Whether the call comes alone (and the approval list applies here).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Alone {
    Yes,
    No,
}

/// A call's shadow judgment, run on the shadow thread, on the live
/// snapshot (its shadow providers counted as live, beside the live
/// providers' opinions, which are not asked again) or on a shadow
/// configuration's candidate (all of it).
pub(crate) struct ShadowWork {
    /// Whether the live providers' opinions are reused: the live snapshot.
    reused: bool,
    caller: Caller,
}

impl Judging for ShadowWork {
    type Base = Snapshot;

    /// The call judged again and compared with the live answer; `None` if it
    /// could not be (it was, live: not expected).
    fn judge(self, snapshot: &Snapshot, text: &[u8]) -> Option<ShadowJudgment> {
        let Handed {
            call,
            live,
            opinions,
        } = Handed::read(text)?;
        let chain = match self.reused {
            true => Chain::Shadowed(&opinions),
            false => Chain::Live,
        };
        let shadow = judge(snapshot, &call, self.caller, Alone::Yes, chain).ok()?;
        Some(crate::shadow::judgment(&live, shadow.evaluation))
    }
}

/// A provider's opinion on a call, its failure made a decision as its
/// `on_error` says.
fn ask_provider(provider: &Provider, guest_call: &GuestCall) -> ProviderOpinion {
    match provider.evaluate(guest_call) {
        Ok(opinion) => ProviderOpinion {
            decision: opinion.decision,
            fuel_used: Some(opinion.fuel_used),
            error_detail: None,
        },
        Err(failure) => {
            tracing::warn!(provider = provider.name(), %failure, "provider failed");
            ProviderOpinion {
                decision: failure.to_decision(provider.name(), provider.on_error()),
                fuel_used: None,
                error_detail: Some(Cow::Borrowed(failure.kind.code())),
            }
        }
    }
}

/// The providers a chain runs through, in order, each with the opinion it
/// already gave on this call (a live one, in a shadow judgment).
fn chain_of<'a>(
    snapshot: &'a Snapshot,
    chain: Chain<'a>,
) -> Vec<(&'a Provider, Option<&'a ProviderOpinion>)> {
    let set = &snapshot.providers;
    match chain {
        Chain::Live => set.providers().iter().map(|p| (p, None)).collect(),
        Chain::Shadowed(known) => set
            .in_order()
            .map(|(p, live)| (p, live.and_then(|i| known.get(i))))
            .collect(),
    }
}

/// A call judged, and what its shadow judgment reuses.
struct Judged {
    evaluation: Evaluation,
    /// Every stage's opinion, in order (the providers' among them).
    opinions: Vec<StageOpinion>,
    /// The call's `tool_input` as JSON, when the providers were given it.
    input_text: Option<String>,
    /// When the judgment began.
    started: Instant,
}

/// Judges one call through `chain`.
fn judge(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
    alone: Alone,
    chain: Chain<'_>,
) -> Result<Judged, RequestError> {
    let started = Instant::now();
    if let Err(err) = call.validate() {
        return match err.refusal_code() {
            Some(code) => Ok(Judged {
                evaluation: snapshot.refusal(code, &err.to_string()),
                opinions: Vec::new(),
                input_text: None,
                started,
            }),
            None => Err(err),
        };
    }
    let interaction = RunInteractionPolicy::resolve(&call.context, caller)?;
    let admitted = trust::admit(call, caller);
    // Room for every stage a call can pass (interaction, permissions, the
    // providers, triage, the approval list): no growing on the way.
    let room = snapshot.providers.providers().len() + 4;
    let mut opinions: Vec<StageOpinion> = Vec::with_capacity(room);
    let mut stages: Vec<StageReport> = Vec::with_capacity(room);
    let mut record = |stage: String, decision: Decision, t: Instant, extra: StageExtra| {
        stages.push(StageReport {
            stage: stage.clone(),
            verdict: decision.verdict,
            codes: decision.reasons.iter().map(|r| r.code.clone()).collect(),
            duration_us: micros(t),
            digest: extra.digest,
            fuel_used: extra.fuel_used,
            error_detail: extra.error_detail,
            classifier: extra.classifier,
        });
        let verdict = decision.verdict;
        opinions.push(StageOpinion { stage, decision });
        verdict
    };

    // A question nobody can answer is not asked: the agent is told what to do instead.
    let mut worst = Verdict::Allow;
    if !interaction.offers_tool(&call.tool_name) {
        let decision = Decision::deny(
            CLARIFICATION_UNAVAILABLE,
            interaction.suppressed_clarification(),
        );
        worst = record(
            "interaction".into(),
            decision,
            started,
            StageExtra::default(),
        );
    }

    // The native permission engine: nothing after it can loosen its deny.
    let permissions = &snapshot.permissions;
    let canonical = permissions.canonical(call);
    // Whether an explicit rule decided: triage's advisory findings then stand aside.
    let mut ruled = false;
    // The rules each stage that has rules decided by, for the cause.
    let mut rules_of: Vec<(String, Vec<RuleRef>)> = Vec::new();
    if worst != Verdict::Deny {
        let t = Instant::now();
        let judgment = permissions.judge_attributed(&canonical);
        ruled = judgment.explicit;
        rules_of.push((PERMISSIONS_STAGE.into(), judgment.rules));
        worst = record(
            PERMISSIONS_STAGE.into(),
            judgment.decision,
            t,
            StageExtra::default(),
        );
    }

    // The providers, in order; a deny ends the chain.
    let providers = chain_of(snapshot, chain);
    let mut input_text = None;
    if worst != Verdict::Deny && snapshot.guardrails.enabled && !providers.is_empty() {
        let guest_call = guest_call(snapshot, call, &admitted, interaction.mode);
        for (provider, known) in providers {
            let t = Instant::now();
            let mut opinion = match known {
                Some(opinion) => opinion.clone(),
                None => ask_provider(provider, &guest_call),
            };
            let stage = format!("provider:{}", provider.name());
            if let Some(rule) = place_provider_rule(provider, &mut opinion.decision) {
                rules_of.push((stage.clone(), vec![rule]));
            }
            let extra = StageExtra {
                digest: Some(provider.digest().to_string()),
                fuel_used: opinion.fuel_used,
                error_detail: opinion.error_detail,
                classifier: None,
            };
            worst = worst.max(record(stage, opinion.decision, t, extra));
            if worst == Verdict::Deny {
                break;
            }
        }
        input_text = Some(guest_call.tool_input);
    }

    // Risk triage: may only raise the verdict.
    if worst != Verdict::Deny {
        let t = Instant::now();
        let (raised, report) = snapshot
            .triage
            .assess(&canonical, &call.tool_input, worst, ruled);
        // Reported when it raised the verdict or consulted its classifier; a
        // stage with nothing to add keeps the verdict and gives no reason.
        if raised.is_some() || report.classifier.is_some() {
            let decision = raised.unwrap_or_else(|| Decision::new(worst, Vec::new()));
            let extra = StageExtra {
                classifier: report.classifier,
                ..StageExtra::default()
            };
            record("triage".into(), decision, t, extra);
        }
    }

    let (decision, mut decided_by) = combine(&opinions);
    let mut verdict = decision.verdict;
    let mut reasons = decision.reasons;
    // Autonomy never silently escalates: an ask that cannot reach a human is a deny.
    if verdict == Verdict::Ask
        && let Some(why) = interaction.why_no_human()
    {
        verdict = Verdict::Deny;
        reasons.insert(0, ask_unavailable(&why));
    }
    let reach = Reach::of(&interaction, RunOrigin::resolve(&call.context, caller)?);
    if alone == Alone::Yes {
        let t = Instant::now();
        let approval = match (verdict, &reach) {
            (Verdict::Ask, Reach::Unattended(why)) => {
                verdict = Verdict::Deny;
                reasons.insert(0, ask_unavailable(why));
                None
            }
            (Verdict::Allow, _) => snapshot.listed(call, &reach),
            _ => None,
        };
        if let Some(listed) = approval {
            let stage_verdict = match listed {
                Listed::Pause(reason) => {
                    reasons = vec![reason];
                    Verdict::Ask
                }
                Listed::Waived(reason) => {
                    reasons.push(reason);
                    Verdict::Allow
                }
                Listed::Unavailable(reason) => {
                    reasons = vec![reason];
                    Verdict::Deny
                }
            };
            verdict = stage_verdict;
            decided_by = Some(APPROVAL_STAGE.into());
            stages.push(StageReport {
                stage: APPROVAL_STAGE.into(),
                verdict,
                codes: reasons.iter().map(|r| r.code.clone()).collect(),
                duration_us: micros(t),
                digest: None,
                fuel_used: None,
                error_detail: None,
                classifier: None,
            });
        }
    }
    if let Some(message) = interaction.dropped_keys_message() {
        reasons.push(Reason::new(CONTEXT_KEYS_DROPPED, message));
    }
    reasons.extend(admitted.notice());
    // Made safe to write out here, once: the answer, the log and a signed
    // record then say the same.
    for reason in &mut reasons {
        reason.message = snapshot
            .redactor
            .reason_message(&reason.message, &call.tool_input);
    }
    // A shadow judgment is compared, never answered: nothing to sign.
    let signer = match chain {
        Chain::Live => snapshot.signer.as_ref(),
        Chain::Shadowed(_) => None,
    };
    let decision_record = signer.map(|signer| {
        signer.sign(RecordFacts {
            policy_id: decision.policy_id.clone(),
            agent_id: snapshot
                .guardrails
                .passport
                .clone()
                .or_else(|| call.context.agent_id.clone()),
            passport: opinions
                .iter()
                .map(|o| &o.decision.metadata)
                .find(|m| m.contains_key("passport_digest")),
            verdict,
            reasons: reasons.clone(),
            tool_name: &call.tool_name,
            tool_input: &call.tool_input,
            tool_call_id: call.tool_call_id.clone(),
        })
    });
    let cause = decided_by
        .as_deref()
        .map(|stage| cause_of(snapshot, stage, &decision.metadata, &mut rules_of));
    let evaluation = Evaluation {
        verdict,
        allow: verdict == Verdict::Allow,
        reasons,
        policy_id: decision.policy_id,
        metadata: decision.metadata,
        decided_by,
        cause,
        interaction_mode: interaction.mode,
        reach: Some(reach.kind()),
        stages,
        decision_record,
        generation: snapshot.providers.generation(),
        duration_us: micros(started),
        judged_at: admitted.judged_at,
    };
    Ok(Judged {
        evaluation,
        opinions,
        input_text,
        started,
    })
}

/// The native permission engine's stage name.
pub const PERMISSIONS_STAGE: &str = "permissions";

/// A provider names the rule of its configuration that decided in its
/// decision's metadata: `rule` (its text or id) and `rule_pointer` (a JSON
/// pointer into the configuration it was given, such as `/rules/3`). The
/// host, which knows where that configuration is written, adds
/// `rule_source` (`file:line`) and returns the rule for the cause.
fn place_provider_rule(provider: &Provider, decision: &mut Decision) -> Option<RuleRef> {
    let text = decision.metadata.get("rule")?.as_str()?.to_string();
    let at = decision
        .metadata
        .get("rule_pointer")
        .and_then(|p| p.as_str())
        .and_then(|pointer| provider.config_source(pointer));
    if let Some(at) = &at {
        decision
            .metadata
            .insert("rule_source".into(), at.to_string().into());
    }
    Some(RuleRef::new(text, at.as_ref()))
}

/// What decided, by name: the deciding stage, its rules, the provider (name,
/// version, digest) when a provider decided, the passport it judged by.
fn cause_of(
    snapshot: &Snapshot,
    stage: &str,
    metadata: &Map<String, serde_json::Value>,
    rules_of: &mut [(String, Vec<RuleRef>)],
) -> Cause {
    let rules = rules_of
        .iter_mut()
        .find(|(s, _)| s == stage)
        .map(|(_, rules)| std::mem::take(rules))
        .unwrap_or_default();
    let provider = stage.strip_prefix("provider:").and_then(|name| {
        let set = &snapshot.providers;
        let provider = set
            .providers()
            .iter()
            .chain(set.shadows())
            .find(|p| p.name() == name)?;
        Some(ProviderRef {
            name: name.to_string(),
            version: provider.info().version.clone(),
            digest: provider.digest().to_string(),
        })
    });
    Cause {
        stage: stage.to_string(),
        rules,
        provider,
        passport_id: metadata
            .get("passport_id")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        approver: None,
    }
}

/// The stage that refuses what a request cannot be judged on (malformed by
/// the agent's model: its size, JSON, depth, names, ids).
pub const INTAKE_STAGE: &str = "intake";

/// The reason an ask becomes a deny when nobody can answer it.
fn ask_unavailable(why: &str) -> Reason {
    Reason::new(
        ASK_UNAVAILABLE,
        format!("the call needs a human's approval, but {why}: denied"),
    )
}

/// The call as providers see it. With a passport configured, the call is
/// attributed to it (as DeerFlow does).
fn guest_call(
    snapshot: &Snapshot,
    call: &ToolCall,
    admitted: &Admitted,
    mode: InteractionMode,
) -> GuestCall {
    provider_call(
        call,
        admitted,
        snapshot.guardrails.passport.as_deref(),
        mode,
    )
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// `t` as RFC 3339, UTC.
fn rfc3339(t: SystemTime) -> String {
    warden_policy::clock::rfc3339(t)
}
