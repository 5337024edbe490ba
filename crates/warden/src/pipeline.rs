//! One tool call through Warden: validate, resolve the interaction policy, the
//! native permission engine, the providers in order (a deny ends the chain),
//! risk triage (which may only raise), combine (the strictest verdict wins),
//! turn an ask that no human can answer into a deny, and report what every
//! stage said.

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use serde_json::Map;
use warden_policy::interaction::{InteractionMode, RunInteractionPolicy};
use warden_policy::origin::{Reach, RunOrigin};
use warden_policy::trust::{self, Admitted};
use warden_runtime::provider::{GuestCall, GuestInteractionMode, Provider};
use warden_types::Caller;
use warden_types::ClassifierReport;
use warden_types::admin::{
    Health, Limits, PoolUsage, ProviderDigest, ProviderList, ProviderStatus, ReloadReport,
};
use warden_types::decision::{Decision, Reason, Verdict};

use crate::combine::{StageOpinion, combine};
use warden_types::request::{RequestError, ToolCall};

use warden_types::codes::{ASK_UNAVAILABLE, CLARIFICATION_UNAVAILABLE, CONTEXT_KEYS_DROPPED};
use warden_types::{Evaluation, StageReport};

use crate::approval_list::Listed;
use crate::config::Config;
use crate::error::Error;
use crate::registry::{ProviderSet, Registry, Snapshot};
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
}

/// What a stage adds to its report beyond its decision.
#[derive(Default)]
struct StageExtra {
    digest: Option<String>,
    fuel_used: Option<u64>,
    error_detail: Option<&'static str>,
    classifier: Option<ClassifierReport>,
}

impl Warden {
    /// Loads everything the configuration names. A provider that loads but
    /// refuses its configuration does not fail this (it denies every call as a
    /// provider failure, and [`Snapshot::unhealthy`] names it); use
    /// [`Warden::new_healthy`] to refuse it, as the daemon does.
    pub fn new(config: &Config) -> Result<Warden, Error> {
        Ok(Warden {
            registry: Registry::new(Snapshot::load(config)?),
            reloading: Mutex::new(()),
        })
    }

    /// As [`Warden::new`], refusing a provider set with a provider that could
    /// not be configured ([`Error::Unhealthy`]): how the daemon and the Python
    /// module start.
    pub fn new_healthy(config: &Config) -> Result<Warden, Error> {
        let snapshot = Snapshot::load(config)?;
        snapshot.check_healthy()?;
        Ok(Warden {
            registry: Registry::new(snapshot),
            reloading: Mutex::new(()),
        })
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
        judge(&self.registry.current(), call, caller, Alone::Yes)
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
        let next = Snapshot::load(config)?;
        next.check_healthy()?;
        let providers = digests(&next.providers);
        let generation = next.providers.generation();
        let previous = self.registry.swap(next);
        Ok(ReloadReport {
            generation,
            previous_generation: previous.providers.generation(),
            providers,
            previous_providers: digests(&previous.providers),
            config_sha256: config_sha256.to_string(),
            duration_ms: (started.elapsed().as_secs_f64() * 1e6).round() / 1e3,
            warnings: Vec::new(),
        })
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
        }
    }

    /// That a provider set serves, as `GET /healthz` answers.
    pub fn health(&self) -> Health {
        let snapshot = self.registry.current();
        Health {
            status: "ok".to_string(),
            generation: snapshot.providers.generation(),
            providers: snapshot.providers.providers().len() as u64,
        }
    }

    /// The snapshot currently serving calls.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.current()
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
    judge(snapshot, call, caller, Alone::Yes)
}

/// The deprecated free form of [`Warden::evaluate`], on one snapshot.
#[deprecated(since = "0.2.0", note = "use Warden::evaluate")]
pub fn evaluate_alone(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
) -> Result<Evaluation, RequestError> {
    judge(snapshot, call, caller, Alone::Yes)
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
        judge(self, call, caller, Alone::No)
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
            interaction_mode: InteractionMode::Interactive,
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

fn judge(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
    alone: Alone,
) -> Result<Evaluation, RequestError> {
    let started = Instant::now();
    if let Err(err) = call.validate() {
        return match err.refusal_code() {
            Some(code) => Ok(snapshot.refusal(code, &err.to_string())),
            None => Err(err),
        };
    }
    let interaction = RunInteractionPolicy::resolve(&call.context, caller)?;
    let admitted = trust::admit(call, caller);
    let mut opinions: Vec<StageOpinion> = Vec::new();
    let mut stages: Vec<StageReport> = Vec::new();
    let mut record = |stage: String, decision: Decision, t: Instant, extra: StageExtra| {
        stages.push(StageReport {
            stage: stage.clone(),
            verdict: decision.verdict,
            codes: decision.reasons.iter().map(|r| r.code.clone()).collect(),
            duration_us: micros(t),
            digest: extra.digest,
            fuel_used: extra.fuel_used,
            error_detail: extra.error_detail.map(std::borrow::Cow::Borrowed),
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
    if worst != Verdict::Deny {
        let t = Instant::now();
        let (native, explicit) = permissions.judge(&canonical);
        ruled = explicit;
        worst = record("permissions".into(), native, t, StageExtra::default());
    }

    // The providers, in order; a deny ends the chain.
    let providers = snapshot.providers.providers();
    if worst != Verdict::Deny && snapshot.guardrails.enabled && !providers.is_empty() {
        let guest_call = guest_call(snapshot, call, &admitted, interaction.mode);
        for provider in providers {
            let t = Instant::now();
            let (decision, extra) = match provider.evaluate(&guest_call) {
                Ok(opinion) => (
                    opinion.decision,
                    StageExtra {
                        fuel_used: Some(opinion.fuel_used),
                        ..StageExtra::default()
                    },
                ),
                Err(failure) => {
                    tracing::warn!(provider = provider.name(), %failure, "provider failed");
                    (
                        failure.to_decision(provider.name(), provider.on_error()),
                        StageExtra {
                            error_detail: Some(failure.kind.code()),
                            ..StageExtra::default()
                        },
                    )
                }
            };
            let extra = StageExtra {
                digest: Some(provider.digest().to_string()),
                ..extra
            };
            worst = worst.max(record(
                format!("provider:{}", provider.name()),
                decision,
                t,
                extra,
            ));
            if worst == Verdict::Deny {
                break;
            }
        }
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
    if alone == Alone::Yes {
        let t = Instant::now();
        let reach = Reach::of(&interaction, RunOrigin::resolve(&call.context, caller)?);
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
    let decision_record = snapshot.signer.as_ref().map(|signer| {
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
    Ok(Evaluation {
        verdict,
        allow: verdict == Verdict::Allow,
        reasons,
        policy_id: decision.policy_id,
        metadata: decision.metadata,
        decided_by,
        interaction_mode: interaction.mode,
        stages,
        decision_record,
        generation: snapshot.providers.generation(),
        duration_us: micros(started),
        judged_at: admitted.judged_at,
    })
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

/// The call as a provider sees it: the context as `admitted` (`trust::admit`)
/// believes it, attributed to `passport` when one is set.
pub(crate) fn provider_call(
    call: &ToolCall,
    admitted: &Admitted,
    passport: Option<&str>,
    mode: InteractionMode,
) -> GuestCall {
    let ctx = &call.context;
    GuestCall {
        tool_name: call.tool_name.clone(),
        tool_input: call.tool_input.to_string(),
        agent_id: passport
            .map(str::to_string)
            .or_else(|| ctx.agent_id.clone()),
        thread_id: ctx.thread_id.clone(),
        run_id: ctx.run_id.clone(),
        tool_call_id: call.tool_call_id.clone(),
        user_id: admitted.user_id.map(str::to_string),
        user_role: admitted.user_role.map(str::to_string),
        oauth_provider: admitted.oauth_provider.map(str::to_string),
        oauth_id: admitted.oauth_id.map(str::to_string),
        is_subagent: ctx.is_subagent,
        timestamp: admitted.judged_at.clone(),
        interaction_mode: match mode {
            InteractionMode::Interactive => GuestInteractionMode::Interactive,
            InteractionMode::Scheduled => GuestInteractionMode::Scheduled,
            InteractionMode::Webhook => GuestInteractionMode::Webhook,
            InteractionMode::Autonomous => GuestInteractionMode::Autonomous,
        },
    }
}

fn micros(since: Instant) -> u64 {
    since.elapsed().as_micros() as u64
}

/// `t` as RFC 3339, UTC.
fn rfc3339(t: SystemTime) -> String {
    warden_policy::clock::rfc3339(t)
}
