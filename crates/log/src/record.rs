//! The shapes of the log's lines: one per judged call ([`DecisionLine`]), and
//! one per call of a model response the approval gate judged or a resume
//! answered ([`GateCallRecord`]). Their fields, names and order are the log's
//! format: auditors' tools read them, so they change only with a deprecation.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};
use warden_policy::clock::now_rfc3339;
use warden_policy::redact::Redactor;
use warden_types::approval::{CallOutcome, CallStatus, DecisionKind};
use warden_types::cause::Cause;
use warden_types::decision::Verdict;
use warden_types::request::ToolCall;
use warden_types::{Caller, DecisionRecord, Evaluation, HumanReach, InteractionMode};

use crate::arguments::{ArgumentPolicy, cap};
use crate::attribution::LoggedAttribution;
use crate::replay::facts::ReplayFacts;

/// Who asked, as the log records it.
#[derive(Clone, Debug, Serialize)]
pub struct Requester<'a> {
    /// The name of the token the caller presented.
    pub token: &'a str,
    /// The token's role (`evaluate`, `approver`, `admin`, ...).
    pub role: &'a str,
}

/// One line of the decision log: one judged call.
#[derive(Debug, Serialize)]
pub struct DecisionLine<'a> {
    /// The decision's id: the signed record's when signed, else a UUIDv7.
    pub decision_id: &'a str,
    /// When the line was made (RFC 3339, UTC).
    pub time: String,
    /// The time the call was judged at: the host's, or an internal caller's.
    pub judged_at: &'a str,
    /// The caller's `context.timestamp`, recorded whether or not it was believed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_timestamp: Option<&'a str>,
    /// The caller's thread id, secrets redacted.
    pub thread_id: Option<Cow<'a, str>>,
    /// The caller's run id, secrets redacted.
    pub run_id: Option<Cow<'a, str>>,
    /// The model's id of the call, secrets redacted.
    pub tool_call_id: Option<Cow<'a, str>>,
    /// The caller's agent id, secrets redacted.
    pub agent_id: Option<Cow<'a, str>>,
    /// The tool's name, secrets redacted.
    pub tool_name: Cow<'a, str>,
    /// `allow`, `ask` or `deny`.
    pub verdict: &'static str,
    /// Why, codes and messages capped.
    pub reasons: Vec<LoggedReason>,
    /// The policy that decided, if one did.
    pub policy_id: Option<&'a str>,
    /// The stage whose opinion decided.
    pub decided_by: Option<&'a str>,
    /// What decided, by name: the stage, the rule with its file and line, the
    /// provider's name, version and digest, the passport.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<&'a Cause>,
    /// The run's interaction mode, as resolved from its context.
    pub interaction_mode: InteractionMode,
    /// Whether a human could be asked, as the pipeline applied it (`pause`,
    /// `unattended`, `never`): an agent's run whose harness cannot resume is
    /// `interactive` by mode and `never` here. Absent for a request refused
    /// before its context was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reach: Option<&'static str>,
    /// The provider set that judged the call.
    pub generation: u64,
    /// What every stage that ran said, in order.
    pub stages: Vec<LoggedStage<'a>>,
    /// The time the whole pipeline took.
    pub duration_us: u64,
    /// Fuel used by all providers together.
    pub fuel_used: u64,
    /// The first provider failure's detail code, if any.
    pub error_detail: Option<&'a str>,
    /// The shadow providers' judgment of the call (`mode: shadow`), when the
    /// live set has any: what the answer would have been with them live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<LoggedShadow>,
    /// The MCP server a gateway judged the call for, secrets redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<Cow<'a, str>>,
    /// What the MCP client claimed to be (`clientInfo`), secrets redacted: a
    /// claim, never authority.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_client_claimed: Option<Cow<'a, str>>,
    /// The caller's W3C trace context, secrets redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<Cow<'a, str>>,
    /// Who asked, when the call came through the daemon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Requester<'a>>,
    /// Who the call is attributed to, as honoured and, where the trust rules
    /// dropped or replaced a field, as claimed (see [`crate::attribution`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attribution: Option<LoggedAttribution<'a>>,
    /// The node that judged the call (`server.node_name`, default the host name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_name: Option<&'a str>,
    /// The SHA-256 of the configuration file whose load made `generation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<&'a str>,
    /// The arguments the operator opted in, redacted and capped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// What `warden replay` needs beside `arguments` to judge the call again:
    /// the context as the pipeline believed it, and which arguments were left
    /// out, redacted, cut or logged as JSON text. Logged with the arguments
    /// only (through [`DecisionLine::for_replay`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayFacts>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<&'a DecisionRecord>,
}

/// A reason as logged: code and message capped at
/// [`MAX_LOGGED_CHARS`](crate::MAX_LOGGED_CHARS).
#[derive(Debug, Serialize)]
pub struct LoggedReason {
    /// The reason code.
    pub code: String,
    /// The message, cleaned.
    pub message: String,
}

/// A shadow judgment, as logged: its verdict always, and its deciding stage
/// and reasons where they differ from the live answer's.
#[derive(Debug, Serialize)]
pub struct LoggedShadow {
    /// `judged`, or `shed` (the shadow queue was full, or the judgment waited
    /// in it too long: not judged).
    pub outcome: &'static str,
    /// Whether the verdict, the deciding stage or the reason codes differ
    /// from the live answer's; absent when shed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differs: Option<bool>,
    /// The shadow verdict; absent when shed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<&'static str>,
    /// The stage whose opinion decided the shadow verdict, where it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The shadow reasons, capped, where they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasons: Option<Vec<LoggedReason>>,
}

impl LoggedShadow {
    /// A shadow judgment that was shed.
    pub fn shed() -> Self {
        LoggedShadow {
            outcome: "shed",
            differs: None,
            verdict: None,
            decided_by: None,
            reasons: None,
        }
    }

    /// A shadow judgment made: `verdict`, and where `differs` the deciding
    /// stage and the reasons (cleaned when made; capped here).
    pub fn judged(
        verdict: Verdict,
        differs: bool,
        decided_by: Option<&str>,
        reasons: &[warden_types::decision::Reason],
    ) -> Self {
        LoggedShadow {
            outcome: "judged",
            differs: Some(differs),
            verdict: Some(verdict.as_str()),
            decided_by: decided_by.filter(|_| differs).map(str::to_string),
            reasons: differs.then(|| {
                reasons
                    .iter()
                    .map(|r| LoggedReason {
                        code: cap(&r.code),
                        message: cap(&r.message),
                    })
                    .collect()
            }),
        }
    }
}

/// What one stage said, as logged.
#[derive(Debug, Serialize)]
pub struct LoggedStage<'a> {
    /// `permissions`, `provider:<name>`, ...
    pub stage: &'a str,
    /// The stage's verdict.
    pub verdict: &'static str,
    /// The provider's component digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<&'a str>,
    /// The time the stage took.
    pub duration_us: u64,
    /// The fuel the provider used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
    /// The provider failure's detail code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<&'a str>,
}

impl<'a> DecisionLine<'a> {
    /// The record of one evaluated call; `arguments` as the policy allows,
    /// the caller's ids and the tool name cleaned by `redactor`.
    pub fn new(
        decision_id: &'a str,
        call: &'a ToolCall,
        evaluation: &'a Evaluation,
        caller: Option<Requester<'a>>,
        arguments: Option<Map<String, Value>>,
        redactor: &Redactor,
    ) -> Self {
        let ctx = &call.context;
        let id = |id: &'a Option<String>| id.as_deref().map(|id| redactor.redact(id));
        DecisionLine {
            decision_id,
            time: now_rfc3339(),
            judged_at: &evaluation.judged_at,
            call_timestamp: ctx.timestamp.as_deref(),
            thread_id: id(&ctx.thread_id),
            run_id: id(&ctx.run_id),
            tool_call_id: id(&call.tool_call_id),
            agent_id: id(&ctx.agent_id),
            tool_name: redactor.redact(&call.tool_name),
            verdict: evaluation.verdict.as_str(),
            reasons: evaluation
                .reasons
                .iter()
                .map(|r| LoggedReason {
                    code: cap(&r.code),
                    message: cap(&r.message),
                })
                .collect(),
            policy_id: evaluation.policy_id.as_deref(),
            decided_by: evaluation.decided_by.as_deref(),
            cause: evaluation.cause.as_ref(),
            interaction_mode: evaluation.interaction_mode,
            reach: evaluation.reach.map(HumanReach::as_str),
            generation: evaluation.generation,
            stages: evaluation
                .stages
                .iter()
                .map(|s| LoggedStage {
                    stage: &s.stage,
                    verdict: s.verdict.as_str(),
                    digest: s.digest.as_deref(),
                    duration_us: s.duration_us,
                    fuel_used: s.fuel_used,
                    error_detail: s.error_detail.as_deref(),
                })
                .collect(),
            duration_us: evaluation.duration_us,
            fuel_used: evaluation.stages.iter().filter_map(|s| s.fuel_used).sum(),
            error_detail: evaluation
                .stages
                .iter()
                .find_map(|s| s.error_detail.as_deref()),
            shadow: None,
            mcp_server: id(&ctx.mcp_server),
            mcp_client_claimed: id(&ctx.mcp_client),
            traceparent: id(&ctx.traceparent),
            caller,
            attribution: None,
            node_name: None,
            config_sha256: None,
            arguments,
            replay: None,
            decision_record: evaluation.decision_record.as_ref(),
        }
    }

    /// This line with what replay needs, when its arguments are logged: the
    /// context `caller` had believed (see [`ReplayFacts`]) and what the
    /// argument policy left out or changed.
    pub fn for_replay(mut self, call: &ToolCall, caller: Caller, policy: &ArgumentPolicy) -> Self {
        self.replay = policy.replay_facts(call, caller);
        self
    }
}

/// One call of a model response, as the approval gate judged it
/// (`source: tool-calls`) or as a resume answered it (`source: resume`).
#[derive(Debug, Serialize)]
pub struct GateCallRecord<'a> {
    /// A new UUIDv7 per line.
    pub decision_id: String,
    /// When the line was made (RFC 3339, UTC).
    pub time: String,
    /// `tool-calls` or `resume`.
    pub source: &'static str,
    /// The thread, secrets redacted.
    pub thread_id: Cow<'a, str>,
    /// The run the calls are attributed to, secrets redacted.
    pub run_id: Cow<'a, str>,
    /// The model's id of the call, secrets redacted.
    pub tool_call_id: Option<Cow<'a, str>>,
    /// The tool's name, secrets redacted.
    pub tool_name: Cow<'a, str>,
    /// `allow` (the tool runs), `ask` (it waits for a human) or `deny`.
    pub verdict: &'static str,
    /// The approval that holds the call, for a call a human is asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<&'a str>,
    /// The id a human's decision on the call names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<&'a str>,
    /// The human's decision, once answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_decision: Option<DecisionKind>,
    /// Who answered (approved, rejected, edited or cleared), for a resume's
    /// calls: an approver's name, or the name a relay gave (see `relayed_by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<Cow<'a, str>>,
    /// The token that relayed the human's answer, when a harness did: then
    /// `reviewer` is the name it gave, one its `reviewers:` grants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<&'a str>,
    /// Why, codes and messages capped, a human's message redacted.
    pub reasons: Vec<LoggedReason>,
    /// The stage whose opinion decided.
    pub decided_by: Option<&'a str>,
    /// What decided, by name: for a call a human answered, the stage and the
    /// human (`approver`, as `reviewer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
    /// The provider set that judged the call (its digests are in `swaps.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// Who asked, when the call came through the daemon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Requester<'a>>,
    /// The node that wrote the line (`server.node_name`, default the host name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_name: Option<&'a str>,
    /// The SHA-256 of the configuration file whose load made `generation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<&'a str>,
    /// The arguments the operator opted in, redacted and capped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
}

/// What the lines of one model response's calls share.
#[derive(Clone, Debug)]
pub struct GateContext<'a> {
    /// `tool-calls` (the gate judged) or `resume` (a human answered).
    pub source: &'static str,
    /// The thread of the calls.
    pub thread_id: &'a str,
    /// The run they are attributed to.
    pub run_id: &'a str,
    /// The approval that holds the calls, if any.
    pub approval_id: Option<&'a str>,
    /// The provider set that judged them, when the gate did.
    pub generation: Option<u64>,
    /// Who asked.
    pub caller: Option<Requester<'a>>,
}

impl<'a> GateCallRecord<'a> {
    /// The line of one call, its ids, name and arguments cleaned by `policy`.
    pub fn new(context: &GateContext<'a>, call: &'a CallOutcome, policy: &ArgumentPolicy) -> Self {
        let redactor = policy.redactor();
        GateCallRecord {
            decision_id: new_decision_id(),
            time: now_rfc3339(),
            source: context.source,
            thread_id: redactor.redact(context.thread_id),
            run_id: redactor.redact(context.run_id),
            tool_call_id: call.id.as_deref().map(|id| redactor.redact(id)),
            tool_name: redactor.redact(&call.name),
            verdict: status_verdict(call.status).as_str(),
            approval_id: context.approval_id.filter(|_| call.request_id.is_some()),
            request_id: call.request_id.as_deref(),
            human_decision: call.decision,
            reviewer: None,
            relayed_by: None,
            // The pipeline's reasons are clean already; a human's rejection
            // message is cleaned here.
            reasons: call
                .reasons
                .iter()
                .map(|r| LoggedReason {
                    code: cap(&r.code),
                    message: cap(&policy.redact(&r.message)),
                })
                .collect(),
            decided_by: call.decided_by.as_deref(),
            cause: None,
            generation: context.generation,
            caller: context.caller.clone(),
            node_name: None,
            config_sha256: None,
            arguments: policy.arguments_of(&call.name, &call.args),
        }
    }
}

/// The verdict a gate call's status means.
pub fn status_verdict(status: CallStatus) -> Verdict {
    match status {
        CallStatus::Run => Verdict::Allow,
        CallStatus::Pending => Verdict::Ask,
        CallStatus::Denied => Verdict::Deny,
    }
}

/// A new decision id: a UUIDv7, so that ids sort by time.
pub fn new_decision_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
