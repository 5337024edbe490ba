//! The approval routes' wire types: a model response as a harness sends it,
//! what the approval gate answers (per call run / denied / pending, the run's
//! state, the pending approval), a human's answer (a resume, a grant) and its
//! resolution, and a run's interaction policy. The daemon, the Rust client and
//! the OpenAPI document all use these, so they cannot drift apart.
//!
//! Only what serde and the request limits need lives here; what needs the
//! pipeline, the permission rules or the store (judging, rewriting surfaces,
//! checking a grant's rule) stays in `warden-approval`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::admin::TokenInfo;
use crate::decision::Reason;
use crate::error::ApprovalError;
use crate::evaluation::InteractionMode;
pub use crate::message::{AiMessage, ModelToolCall};
use crate::request::{CallContext, MAX_INPUT_DEPTH, RequestError, depth};
pub use crate::resolved::{ApprovalStatus, ResolvedBy};

/// The largest model response accepted, in bytes.
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;
/// The largest resume body accepted, in bytes.
pub const MAX_RESUME_BYTES: usize = 4 << 20;
/// The longest message a human may attach to a rejection, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// The longest thread or run id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// The longest grant, in minutes: a day.
pub const MAX_GRANT_MINUTES: u64 = 24 * 60;

/// A model response as a harness sends it: the AI message's tool calls (with
/// their other surfaces) and the run's context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ModelResponse {
    /// The AI message: its tool calls and the other surfaces that mention them.
    pub message: AiMessage,
    /// The run's context (thread, run, interaction mode, ...); keys the caller may not set are
    /// dropped with a notice.
    #[serde(default)]
    pub context: CallContext,
}

impl ModelResponse {
    /// Parses a request body strictly: an unknown key, a wrong type or an
    /// oversized body is refused naming where.
    pub fn from_json(body: &[u8]) -> Result<ModelResponse, ApprovalError> {
        Ok(parse_body(body, MAX_RESPONSE_BYTES)?)
    }
}

/// The state of the run that sent the message.
///
/// Neither state is finished: `waiting_for_input` is not a success and not a
/// failure, and no "is this run done" check may treat it as completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// The run goes on: it runs the calls marked `run` and answers the others
    /// with their notes.
    Running,
    /// The run is paused until a human answers its pending approval. It must
    /// run nothing from this message until the resume result says what runs.
    WaitingForInput,
}

impl RunState {
    /// The state as the wire spells it (`running`, `waiting_for_input`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::WaitingForInput => "waiting_for_input",
        }
    }
}

/// What becomes of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool may run, with `args`.
    Run,
    /// The tool must not run; `note` is what the model is told.
    Denied,
    /// Waiting for a human's decision on `request_id`.
    Pending,
}

impl CallStatus {
    /// The status as the wire spells it (`run`, `denied`, `pending`).
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Run => "run",
            CallStatus::Denied => "denied",
            CallStatus::Pending => "pending",
        }
    }
}

/// A human's decision on one pending call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Run the call as the model asked.
    Approve,
    /// Do not run the call; the model is told why.
    Reject,
    /// Run the call with the human's arguments, judged again first.
    Edit,
}

/// The verdict on one call of the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CallOutcome {
    /// The call's position in the message as the harness sent it.
    pub index: usize,
    /// The model's tool call id; null when the message gave none.
    pub id: Option<String>,
    /// The tool's name, as the model called it.
    pub name: String,
    /// Whether the call runs, is denied, or waits for a human.
    pub status: CallStatus,
    /// The call was removed from every surface of the message, because no
    /// answer could be matched to it by id.
    pub removed: bool,
    /// For a pending call, and for a call a human answered: the id the human's
    /// decision names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The human's decision, once answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionKind>,
    /// The arguments the tool runs with (edited ones after an edit).
    pub args: Value,
    /// For a denied call: the visible note, naming the tool and the reason (the
    /// content of the tool message that answers it, or for a removed call, the
    /// text the harness shows in its place).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Why: every stage's reasons, the deciding one first.
    pub reasons: Vec<Reason>,
    /// The stage whose opinion decided (`provider:<name>`, `approval`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// One call waiting for a human.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApprovalRequest {
    /// The id a human's decision names (`req_…`), unique within its approval.
    pub request_id: String,
    /// The model's tool call id; null when the message gave none.
    pub tool_call_id: Option<String>,
    /// The tool's name, as the model called it.
    pub tool_name: String,
    /// The arguments the call would run with.
    pub args: Value,
    /// Why it needs a human (the approval list entry, or the stage that asked).
    pub reasons: Vec<Reason>,
}

/// The gate's answer to one model response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GateOutcome {
    /// The thread the message belongs to.
    pub thread_id: String,
    /// The run that sent the message.
    pub run_id: String,
    /// Whether the run goes on or waits for a human.
    pub run_state: RunState,
    /// The approval a human must answer, when the run paused.
    pub approval_id: Option<String>,
    /// The calls waiting for a human, each with its `request_id`.
    pub requests: Vec<ApprovalRequest>,
    /// Every call of the message, in order.
    pub calls: Vec<CallOutcome>,
    /// The message with every removed call gone from every surface.
    pub message: AiMessage,
    /// The interaction mode the calls were judged under.
    pub interaction_mode: InteractionMode,
    /// The provider set that judged the calls.
    pub generation: u64,
    /// Remarks on the whole request (context keys that were ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Reason>,
}

/// The answer to a resume (or a clear): what every call of the paused message
/// does now, and the rewritten message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Resolution {
    /// The approval that was answered.
    pub approval_id: String,
    /// The thread that paused.
    pub thread_id: String,
    /// The run that paused.
    pub run_id: String,
    /// What resolved it: a resume, a clear or an expiry.
    pub resolved_by: ResolvedBy,
    /// The human who answered (or cleared); absent for an expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The token that relayed the human's answer, when a harness did: then
    /// `reviewer` is the name it gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    /// Whose word the answer is: a human's (the console, the API, a relay),
    /// or an MCP client's own (an elicitation it answered), which proves no
    /// human saw the call.
    #[serde(default, skip_serializing_if = "AnsweredBy::is_human")]
    pub answered_by: AnsweredBy,
    /// True when this is the stored answer to an earlier, identical resume
    /// (same idempotency key, same body): nothing was consumed again, and a
    /// harness must not run its calls a second time.
    #[serde(default)]
    pub replayed: bool,
    /// Identifies this consumption of the approval; a failed hand-off restores
    /// the approval with it.
    pub consumption_id: String,
    /// When it was resolved (RFC 3339, UTC).
    pub resolved_at: String,
    /// `running` once resolved: no call is pending any more.
    pub run_state: RunState,
    /// Every call of the paused message, in order; none is pending.
    pub calls: Vec<CallOutcome>,
    /// The message with edits applied and removed calls gone.
    pub message: AiMessage,
}

/// Whose word answered an approval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum AnsweredBy {
    /// A human: an approver in the console or the API, or a relay naming one.
    #[default]
    Human,
    /// An MCP client, answering Warden's elicitation: the client's word
    /// only (a hook or an auto-accept may have answered). It may approve only
    /// where the operator's `mcp.client_attested` allows it for the tool.
    ClientAttested,
}

impl AnsweredBy {
    /// Whether a human answered (the default, left out of the JSON).
    pub fn is_human(&self) -> bool {
        *self == AnsweredBy::Human
    }
}

/// One approval as listed: its requests as a human answers them, and whether it
/// can take per-call decisions at all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApprovalView {
    /// The approval's id (`apr_…`), unique in the store.
    pub approval_id: String,
    /// The principal (token) whose thread paused.
    pub principal: String,
    /// The thread that paused.
    pub thread_id: String,
    /// The run that paused.
    pub run_id: String,
    /// Pending, or how it was resolved.
    pub status: ApprovalStatus,
    /// `waiting_for_input` while pending; absent once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_state: Option<RunState>,
    /// When the run paused (RFC 3339, UTC).
    pub created_at: String,
    /// When it expires unanswered (`hitl_approval.expire_after`); absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The calls waiting for a human (also kept once resolved).
    pub requests: Vec<ApprovalRequest>,
    /// Why this pause cannot take per-call decisions (a pause stored by an older
    /// release with a null or shared id). It resolves by an all-reject or by
    /// `warden approvals clear`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
    /// How it was resolved, once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// A pause of a run, or one MCP call's ask.
    #[serde(default)]
    pub kind: ApprovalKind,
    /// When the identical retry of an MCP call read its answer (RFC 3339,
    /// UTC): no other retry can use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed_at: Option<String>,
}

/// What an approval answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ApprovalKind {
    /// A run paused on the tool-calls route; its resume answers the run.
    #[default]
    Pause,
    /// One MCP call asked through `warden mcp` (`POST /v1/mcp/asks`): bound to
    /// the principal, the tool and the digest of the arguments; its answer is
    /// read once, by the client's identical retry.
    McpCall,
}

/// `POST /v1/mcp/asks`: what became of one MCP call's ask.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum McpAskAnswer {
    /// The call waits for a human's answer to this approval.
    Pending {
        /// The approval a human answers.
        approval_id: String,
        /// The thread it is filed under (`mcp-<digest of the call>`).
        thread_id: String,
        /// Whether the MCP client's own answer (an elicitation) may approve
        /// this call (`mcp.client_attested`); absent (an older daemon): no.
        #[serde(default)]
        client_attested: bool,
        /// The console's page for this approval, where a signed-in approver
        /// answers it (`server.public_url`, else the address the daemon
        /// listens on); absent where the store has no console.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        console_url: Option<String>,
    },
    /// A human answered, and this request consumed the answer: no other
    /// request gets it (the next identical call is asked again).
    Answered {
        /// The answer: the call runs only if it is listed `run` with the very
        /// arguments asked about.
        resolution: Box<Resolution>,
    },
    /// Judged again when filed, the call did not wait: a standing grant lets
    /// it run, or nobody can be asked (a deny).
    Judged {
        /// The call's outcome.
        call: Box<CallOutcome>,
    },
}

/// `POST /v1/mcp/asks/attest`: an MCP client's own answer to a pending MCP
/// ask, given through an elicitation `warden mcp` sent it mid-call.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct McpAttestation {
    /// The pending approval the elicitation asked about.
    pub approval_id: String,
    /// The call it was asked for: the approval must be this call's (same
    /// tool, same canonical arguments, same principal).
    pub call: crate::request::ToolCall,
    /// Whether the client accepted and approved (false: declined, cancelled,
    /// or accepted without approving).
    pub approve: bool,
}

/// `GET /v1/threads/{thread_id}/approvals`: a thread's approvals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApprovalPage {
    /// The thread whose approvals these are.
    pub thread_id: String,
    /// Its approvals, oldest first.
    pub approvals: Vec<ApprovalView>,
}

/// A human's answer to a pending approval (the resume route's body): either a
/// decision for every pending request, or one all-reject.
///
/// ```json
/// {"decisions": [{"request_id": "req_…", "decision": "approve"},
///                {"request_id": "req_…", "decision": "reject", "message": "not on main"},
///                {"request_id": "req_…", "decision": "edit", "args": {"command": "git status"}}]}
/// {"reject_all": {"message": "wrong thread"}}
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ResumeRequest {
    /// One decision per pending request, each naming its `request_id` once; exclusive with
    /// `reject_all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<RequestDecision>>,
    /// Reject every pending request at once; exclusive with `decisions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_all: Option<RejectAll>,
    /// The run that carries the answered calls on, to which the journal
    /// attributes them. Default: the run that paused. Also the resume's
    /// idempotency key when no `Idempotency-Key` header is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The human who answered, named by a harness relaying the answer (a token
    /// with `relay: true`): a name its `reviewers:` grants, printable, at most
    /// 128 characters. An approver answers in its own name: absent, or its
    /// token's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The idempotency key (the daemon's `Idempotency-Key` header): the same
    /// resume again, with the same key and body, gets the stored answer back.
    /// Default: the resume's run id.
    #[serde(skip)]
    pub idempotency_key: Option<String>,
}

/// The decision on one pending request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RequestDecision {
    /// The pending request this decides (`req_…`).
    pub request_id: String,
    /// Approve, reject or edit.
    pub decision: DecisionKind,
    /// An edit's new arguments (a JSON object); judged again before the call runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// A rejection's message, shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// With an approval: allow the same call (or the calls a rule matches) in
    /// this thread (or for this agent) for some minutes, without asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantRequest>,
}

impl RequestDecision {
    fn new(request_id: impl Into<String>, decision: DecisionKind) -> Self {
        RequestDecision {
            request_id: request_id.into(),
            decision,
            args: None,
            message: None,
            grant: None,
        }
    }

    /// Approves the request.
    pub fn approve(request_id: impl Into<String>) -> Self {
        RequestDecision::new(request_id, DecisionKind::Approve)
    }

    /// Rejects the request, with a message for the model.
    pub fn reject(request_id: impl Into<String>, message: Option<String>) -> Self {
        RequestDecision {
            message,
            ..RequestDecision::new(request_id, DecisionKind::Reject)
        }
    }

    /// Runs the call with these arguments instead (judged again first).
    pub fn edit(request_id: impl Into<String>, args: Value) -> Self {
        RequestDecision {
            args: Some(args),
            ..RequestDecision::new(request_id, DecisionKind::Edit)
        }
    }

    /// With an approval: a standing grant for the same call.
    pub fn with_grant(mut self, grant: GrantRequest) -> Self {
        self.grant = Some(grant);
        self
    }
}

/// Reject every pending request at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RejectAll {
    /// Why, told to the model with every rejected call; at most 4096 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ResumeRequest {
    /// Parses a resume body strictly, naming where it is wrong, and checks what
    /// needs no policy (a grant's rule is checked by the gate).
    pub fn from_json(body: &[u8]) -> Result<ResumeRequest, ApprovalError> {
        let request: ResumeRequest =
            parse_body(body, MAX_RESUME_BYTES).map_err(ApprovalError::in_answer)?;
        request.check()?;
        Ok(request)
    }

    /// A decision per request.
    pub fn decide(decisions: Vec<RequestDecision>) -> Self {
        ResumeRequest {
            decisions: Some(decisions),
            ..ResumeRequest::default()
        }
    }

    /// A decision per request (the client's name for [`ResumeRequest::decide`]).
    pub fn decisions(decisions: Vec<RequestDecision>) -> Self {
        ResumeRequest::decide(decisions)
    }

    /// One all-reject.
    pub fn reject_all(message: Option<String>) -> Self {
        ResumeRequest {
            reject_all: Some(RejectAll { message }),
            ..ResumeRequest::default()
        }
    }

    /// Attributes the resume to this run.
    pub fn by_run(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// Attributes the resume to this run (the client's name for [`ResumeRequest::by_run`]).
    pub fn run(self, run_id: impl Into<String>) -> Self {
        self.by_run(run_id)
    }

    /// Names the human who answered (for a relay token).
    pub fn reviewer(mut self, name: impl Into<String>) -> Self {
        self.reviewer = Some(name.into());
        self
    }

    /// Sets the idempotency key.
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Sets the idempotency key (the client's name for [`ResumeRequest::with_key`]).
    pub fn idempotency_key(self, key: impl Into<String>) -> Self {
        self.with_key(key)
    }

    /// What the body must satisfy before it is matched against a pause. A
    /// grant's rule is only checked for its minutes here: parsing the rule
    /// needs the permission engine, which the gate runs (`check_resume`).
    pub fn check(&self) -> Result<(), ApprovalError> {
        let invalid = |field: String, message: &str| ApprovalError::InvalidDecision {
            field,
            message: message.to_string(),
        };
        if self.decisions.is_some() == self.reject_all.is_some() {
            return Err(invalid(
                "<body>".into(),
                "give either `decisions` (one per pending request) or `reject_all`",
            ));
        }
        if let Some(run_id) = &self.run_id {
            check_id("run_id", run_id)?;
        }
        if let Some(reviewer) = &self.reviewer {
            check_id("reviewer", reviewer).map_err(ApprovalError::in_answer)?;
        }
        if let Some(key) = &self.idempotency_key {
            check_id("Idempotency-Key", key).map_err(ApprovalError::in_answer)?;
        }
        if let Some(RejectAll { message: Some(m) }) = &self.reject_all
            && m.len() > MAX_MESSAGE_BYTES
        {
            return Err(invalid("reject_all.message".into(), "is too long"));
        }
        for (i, d) in self.decisions.iter().flatten().enumerate() {
            let at = |field: &str| format!("decisions[{i}].{field}");
            match (d.decision, &d.args) {
                (DecisionKind::Edit, None) => {
                    return Err(invalid(at("args"), "an edit needs the new arguments"));
                }
                (DecisionKind::Edit, Some(args)) => check_args(&at("args"), args)?,
                (_, Some(_)) => return Err(invalid(at("args"), "only an edit carries arguments")),
                (_, None) => {}
            }
            if let Some(grant) = &d.grant {
                if d.decision != DecisionKind::Approve {
                    return Err(invalid(at("grant"), "only an approval carries a grant"));
                }
                grant.check(&at("grant"))?;
            }
            match &d.message {
                Some(_) if d.decision != DecisionKind::Reject => {
                    return Err(invalid(at("message"), "only a rejection carries a message"));
                }
                Some(m) if m.len() > MAX_MESSAGE_BYTES => {
                    return Err(invalid(at("message"), "is too long"));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/clear`: rejects a
/// pending approval as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ClearRequest {
    /// Why, for the journal and the model.
    #[serde(default)]
    pub reason: Option<String>,
    /// The human, when a relay token clears.
    #[serde(default)]
    pub reviewer: Option<String>,
}

/// `POST /v1/grants/{grant_id}/revoke`: the human, when a relay token revokes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RevokeRequest {
    /// The human, when a relay token revokes; an approver revokes in its own name.
    #[serde(default)]
    pub reviewer: Option<String>,
}

/// Where a grant holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum GrantScope {
    /// The approved call's thread only.
    Thread,
    /// Every thread of the principal (the agent's token) that made the call.
    Agent,
}

/// What an approver asks for with an `approve` decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    /// `thread` (the default) or `agent`.
    #[serde(default = "thread_scope")]
    pub scope: GrantScope,
    /// How long it holds, from 1 to 1440 minutes.
    pub minutes: u64,
    /// A permission rule (`Bash(git push *)`) the approved call matches;
    /// absent: exactly the approved call (its tool and canonical arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

fn thread_scope() -> GrantScope {
    GrantScope::Thread
}

impl GrantRequest {
    /// What the request must satisfy on its own, but for its rule's syntax
    /// (the permission engine's); `at` names it in the body.
    pub fn check(&self, at: &str) -> Result<(), ApprovalError> {
        if !(1..=MAX_GRANT_MINUTES).contains(&self.minutes) {
            return Err(ApprovalError::InvalidDecision {
                field: format!("{at}.minutes"),
                message: format!("{} is out of range 1..={MAX_GRANT_MINUTES}", self.minutes),
            });
        }
        Ok(())
    }
}

/// What a grant allows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GrantTarget {
    /// Exactly this call: the tool, and the SHA-256 of its canonical arguments.
    Call {
        /// The tool's name.
        tool: String,
        /// The hex SHA-256 of the arguments' canonical JSON (RFC 8785).
        args_sha256: String,
    },
    /// The calls this permission rule matches.
    Rule {
        /// The permission rule, as the approver wrote it (`Bash(git push *)`).
        rule: String,
    },
}

/// A standing grant, as stored and listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Grant {
    /// The grant's id, as `GET /v1/grants` lists it and the revoke route names it.
    pub grant_id: String,
    /// The principal whose calls it allows.
    pub principal: String,
    /// The thread it holds on; `None` for every thread of the principal.
    pub thread_id: Option<String>,
    /// The calls it allows.
    pub target: GrantTarget,
    /// The approval it was given with, and who gave it.
    pub approval_id: String,
    /// The human who approved with it.
    pub granted_by: String,
    /// When it was given (RFC 3339, UTC).
    pub created_at: String,
    /// When it stops holding (RFC 3339, UTC); the same instant as `expires_at_ms`.
    pub expires_at: String,
    /// Milliseconds since the epoch, for the store's comparisons.
    pub expires_at_ms: i64,
    /// When it was revoked, and by whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    /// Who revoked it (the human, or the token's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_by: Option<String>,
}

/// `GET /v1/grants`: the standing grants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GrantList {
    /// The grants asked for: those that hold, or also the expired and revoked ones.
    pub grants: Vec<Grant>,
}

/// The question of `POST /v1/interaction`: the run's context, and the tools
/// the harness would offer.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct InteractionQuery {
    /// The run's context, as a call would carry it.
    #[serde(default)]
    pub context: CallContext,
    /// The harness's tools; absent: only the withheld ones are listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// What a tool under `hitl_approval` does in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ListedTools {
    /// It waits for a human's approval.
    Pause,
    /// It runs unapproved (`non_interactive: allow` in an unattended run).
    Run,
    /// It is denied.
    Deny,
}

/// What happens to a sandbox network request that needs a human's approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NetworkRequests {
    /// Put it to the human in front of the run.
    AskHuman,
    /// Deny it without asking anyone.
    Deny,
}

/// A run's resolved interaction policy (`warden interaction`; the daemon adds
/// who asked, [`InteractionAnswer`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// The document's `InteractionReport` is the daemon's answer, with the caller.
#[cfg_attr(feature = "schema", schemars(rename = "InteractionPolicy"))]
pub struct InteractionReport {
    /// The interaction mode the run is in.
    pub mode: InteractionMode,
    /// A human can be asked during this run: an ask pauses rather than denies.
    pub can_ask_human: bool,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_no_human: Option<String>,
    /// What a tool under `hitl_approval` does.
    pub approval_listed_tools: ListedTools,
    /// The harness's tools the agent should be offered (when it sent them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_tools: Option<Vec<String>>,
    /// Tools the agent must not be offered in this run (`ask_clarification`
    /// where nobody can answer).
    pub withheld_tools: Vec<String>,
    /// What becomes of a sandbox network request that needs a human.
    pub network_requests: NetworkRequests,
    /// For the agent's system prompt.
    pub guidance: String,
    /// Context keys the caller may not set, which were ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_keys: Vec<String>,
}

/// `GET`/`POST /v1/interaction`: the run's interaction policy, and who asked
/// (so that a harness knows whether its token may set the mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "InteractionReport"))]
pub struct InteractionAnswer {
    /// The resolved policy, flattened into the answer's object.
    #[serde(flatten)]
    pub report: InteractionReport,
    /// The token that asked: its name and role.
    pub caller: TokenInfo,
}

/// Parses a JSON body with the key path in its errors.
pub fn parse_body<T: serde::de::DeserializeOwned>(
    body: &[u8],
    limit: usize,
) -> Result<T, RequestError> {
    if body.len() > limit {
        return Err(RequestError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value: T = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        body_error(path, err.into_inner())
    })?;
    deserializer
        .end()
        .map_err(|err| body_error(".".into(), err))?;
    Ok(value)
}

fn body_error(path: String, err: serde_json::Error) -> RequestError {
    let message = err.to_string();
    let message = match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    if err.is_syntax() || err.is_eof() {
        RequestError::Syntax {
            message,
            line: err.line(),
            column: err.column(),
        }
    } else {
        RequestError::Field {
            field: if path == "." { "<body>".into() } else { path },
            message,
        }
    }
}

/// A thread, run or reviewer id: not empty, not too long, no control characters.
pub fn check_id(field: &str, id: &str) -> Result<(), RequestError> {
    let problem = if id.is_empty() {
        Some("must not be empty".to_string())
    } else if id.len() > MAX_ID_BYTES {
        Some(format!(
            "is {} bytes; the limit is {MAX_ID_BYTES}",
            id.len()
        ))
    } else if id.chars().any(char::is_control) {
        Some("must not contain control characters".to_string())
    } else {
        None
    };
    match problem {
        Some(message) => Err(RequestError::Field {
            field: field.to_string(),
            message,
        }),
        None => Ok(()),
    }
}

/// Arguments a human wrote in an edit: an object, no deeper than a call's.
pub fn check_args(field: &str, args: &Value) -> Result<(), ApprovalError> {
    let message = if !args.is_object() {
        "must be a JSON object"
    } else if depth(args) > MAX_INPUT_DEPTH {
        "nests too deeply"
    } else {
        return Ok(());
    };
    Err(ApprovalError::InvalidDecision {
        field: field.to_string(),
        message: message.to_string(),
    })
}

/// The answer reads as the report it carries (`answer.mode`, ...).
impl std::ops::Deref for InteractionAnswer {
    type Target = InteractionReport;

    fn deref(&self) -> &InteractionReport {
        &self.report
    }
}
