//! What the approval gate answers: per call run / denied / pending, the rewritten
//! message, the run's state, and the pending approval a human must answer. These
//! are the bodies of the daemon's tool-calls, approvals and resume routes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::AiMessage;
use crate::decision::Reason;
use crate::policy::interaction::InteractionMode;

/// The state of the run that sent the message.
///
/// Neither state is finished: `waiting_for_input` is not a success and not a
/// failure, and no "is this run done" check may treat it as completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::WaitingForInput => "waiting_for_input",
        }
    }
}

/// What becomes of one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool may run, with `args`.
    Run,
    /// The tool must not run; `note` is what the model is told.
    Denied,
    /// Waiting for a human's decision on `request_id`.
    Pending,
}

/// A human's decision on one pending call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Approve,
    Reject,
    Edit,
}

/// The verdict on one call of the message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// The call's position in the message as the harness sent it.
    pub index: usize,
    pub id: Option<String>,
    pub name: String,
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
    pub reasons: Vec<Reason>,
    /// The stage whose opinion decided (`provider:<name>`, `approval`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// One call waiting for a human.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    pub request_id: String,
    pub tool_call_id: Option<String>,
    pub tool_name: String,
    pub args: Value,
    /// Why it needs a human (the approval list entry, or the stage that asked).
    pub reasons: Vec<Reason>,
}

/// The gate's answer to one model response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    pub thread_id: String,
    pub run_id: String,
    pub run_state: RunState,
    /// The approval a human must answer, when the run paused.
    pub approval_id: Option<String>,
    /// The calls waiting for a human, each with its `request_id`.
    pub requests: Vec<ApprovalRequest>,
    /// Every call of the message, in order.
    pub calls: Vec<CallOutcome>,
    /// The message with every removed call gone from every surface.
    pub message: AiMessage,
    pub interaction_mode: InteractionMode,
    /// The provider set that judged the calls.
    pub generation: u64,
    /// Remarks on the whole request (context keys that were ignored).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Reason>,
}

/// How a pending approval was resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ResolvedBy {
    /// A resume, attributed to the run that carries the paused calls on.
    Resume { run_id: String },
    /// An operator's clear (`warden approvals clear`, the clear route, the
    /// console's reject-all): every pending call rejected.
    Clear {
        actor: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Nobody answered within `hitl_approval.expire_after`: every pending call
    /// rejected, so that the run can go on.
    Expiry {
        /// The configured wait, as written (`30m`).
        after: String,
    },
}

impl ResolvedBy {
    /// The status an approval resolved this way has.
    pub fn status(&self) -> super::store::ApprovalStatus {
        use super::store::ApprovalStatus;
        match self {
            ResolvedBy::Resume { .. } => ApprovalStatus::Resumed,
            ResolvedBy::Clear { .. } => ApprovalStatus::Cleared,
            ResolvedBy::Expiry { .. } => ApprovalStatus::Expired,
        }
    }
}

/// The answer to a resume (or a clear): what every call of the paused message
/// does now, and the rewritten message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub approval_id: String,
    pub thread_id: String,
    /// The run that paused.
    pub run_id: String,
    pub resolved_by: ResolvedBy,
    /// The human who answered (or cleared); absent for an expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The token that relayed the human's answer, when a harness did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    /// True when this is the stored answer to an earlier, identical resume
    /// (same idempotency key, same body): nothing was consumed again, and a
    /// harness must not run its calls a second time.
    #[serde(default)]
    pub replayed: bool,
    /// Identifies this consumption of the approval; a failed hand-off restores
    /// the approval with it.
    pub consumption_id: String,
    pub resolved_at: String,
    pub run_state: RunState,
    /// Every call of the paused message, in order; none is pending.
    pub calls: Vec<CallOutcome>,
    /// The message with edits applied and removed calls gone.
    pub message: AiMessage,
}
