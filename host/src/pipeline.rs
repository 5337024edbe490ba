//! One tool call through Warden: validate, resolve the interaction policy, the
//! native permission engine, the providers in order (a deny ends the chain),
//! risk triage (which may only raise), combine (the strictest verdict wins),
//! turn an ask that no human can answer into a deny, and report what every
//! stage said.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::decision::{Decision, Reason, StageOpinion, Verdict, combine};
use crate::policy::interaction::{InteractionMode, RunInteractionPolicy};
use crate::policy::triage::ClassifierReport;
use crate::provider::{GuestCall, GuestInteractionMode, LoadError};
use crate::registry::{Registry, Snapshot};
use crate::request::{Caller, RequestError, ToolCall};
use crate::signing::{DecisionRecord, RecordFacts};

/// The reason code added when a caller sent internal-only context keys.
pub const CONTEXT_KEYS_DROPPED: &str = "warden.context_keys_dropped";
/// The reason code of an ask turned into a deny because nobody can be asked.
pub const ASK_UNAVAILABLE: &str = "warden.ask_unavailable";
/// The reason code of a clarification question in a run where nobody can answer.
pub const CLARIFICATION_UNAVAILABLE: &str = "warden.clarification_unavailable";

/// Warden: the live policy and the entry point for judging tool calls.
pub struct Warden {
    registry: Registry,
}

/// The answer for one tool call.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub verdict: Verdict,
    /// `verdict == allow`, for harnesses that only look at a boolean.
    pub allow: bool,
    pub reasons: Vec<Reason>,
    pub policy_id: Option<String>,
    pub metadata: Map<String, Value>,
    /// The stage whose opinion decided: `provider:<name>`, ...
    pub decided_by: Option<String>,
    pub interaction_mode: InteractionMode,
    /// What every stage that ran said, in order.
    pub stages: Vec<StageReport>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<DecisionRecord>,
    /// The provider set that judged the call.
    pub generation: u64,
    pub duration_us: u64,
}

/// One stage's contribution, for the caller and the audit log.
#[derive(Clone, Debug, Serialize)]
pub struct StageReport {
    pub stage: String,
    pub verdict: Verdict,
    pub codes: Vec<String>,
    pub duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<&'static str>,
    /// Triage: what the risk classifier said, and whether from its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierReport>,
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
    /// Loads everything the configuration names.
    pub fn new(config: &Config) -> Result<Warden, LoadError> {
        Ok(Warden {
            registry: Registry::new(Snapshot::load(config)?),
        })
    }

    /// The live policy.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Judges one tool call. An error means the request itself was refused
    /// (malformed, or an unknown interaction mode); every other outcome,
    /// including every provider failure, is a decision.
    pub fn evaluate(&self, call: &ToolCall, caller: Caller) -> Result<Evaluation, RequestError> {
        let snapshot = self.registry.current();
        evaluate(&snapshot, call, caller)
    }

    /// The snapshot currently serving calls.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.registry.current()
    }
}

/// Judges one call on one snapshot.
pub fn evaluate(
    snapshot: &Snapshot,
    call: &ToolCall,
    caller: Caller,
) -> Result<Evaluation, RequestError> {
    let started = Instant::now();
    call.validate()?;
    let interaction = RunInteractionPolicy::resolve(&call.context, caller)?;
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
    if worst != Verdict::Deny {
        let t = Instant::now();
        let native = permissions.evaluate(&canonical);
        worst = record("permissions".into(), native, t, StageExtra::default());
    }

    // The providers, in order; a deny ends the chain.
    let providers = snapshot.providers.providers();
    if worst != Verdict::Deny && snapshot.guardrails.enabled && !providers.is_empty() {
        let guest_call = guest_call(snapshot, call, interaction.mode);
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
        let (raised, report) = snapshot.triage.assess(&canonical, &call.tool_input, worst);
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

    let (decision, decided_by) = combine(&opinions);
    let mut verdict = decision.verdict;
    let mut reasons = decision.reasons;
    // Autonomy never silently escalates: an ask that cannot reach a human is a deny.
    if verdict == Verdict::Ask
        && let Some(why) = interaction.why_no_human()
    {
        verdict = Verdict::Deny;
        reasons.insert(0, ask_unavailable(&why));
    }
    if let Some(message) = interaction.dropped_keys_message() {
        reasons.push(Reason::new(CONTEXT_KEYS_DROPPED, message));
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
    })
}

/// The reason an ask becomes a deny when nobody can answer it.
pub fn ask_unavailable(why: &str) -> Reason {
    Reason::new(
        ASK_UNAVAILABLE,
        format!("the call needs a human's approval, but {why}: denied"),
    )
}

/// The call as providers see it. With a passport configured, the call is
/// attributed to it (as DeerFlow does).
fn guest_call(snapshot: &Snapshot, call: &ToolCall, mode: InteractionMode) -> GuestCall {
    provider_call(call, snapshot.guardrails.passport.as_deref(), mode)
}

/// The call as a provider sees it, attributed to `passport` when one is set.
pub fn provider_call(call: &ToolCall, passport: Option<&str>, mode: InteractionMode) -> GuestCall {
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
        user_id: ctx.user_id.clone(),
        user_role: ctx.user_role.clone(),
        oauth_provider: ctx.oauth_provider.clone(),
        oauth_id: ctx.oauth_id.clone(),
        is_subagent: ctx.is_subagent,
        timestamp: call.timestamp(),
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
