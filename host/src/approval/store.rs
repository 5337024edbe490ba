//! Where pending approvals live between a pause and its resume, and the
//! append-only journal of what happened to them. The trait is what the gate
//! needs from any backing store: one embedded SQLite file now
//! ([`super::sqlite::SqliteApprovalStore`]), a shared server database for several
//! Warden instances later. Its two writes that matter are conditional: at most
//! one pending approval per thread, and consumption as a compare-and-swap.

use serde::{Deserialize, Serialize};

use super::message::AiMessage;
use super::outcome::{CallOutcome, CallStatus, DecisionKind, Resolution};
use crate::request::{CallContext, Caller};

/// Where an approval is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a human; its run is `waiting_for_input`.
    Pending,
    /// Consumed by a resume.
    Resumed,
    /// Rejected as a whole by an operator.
    Cleared,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Resumed => "resumed",
            ApprovalStatus::Cleared => "cleared",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            ApprovalStatus::Pending,
            ApprovalStatus::Resumed,
            ApprovalStatus::Cleared,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

/// One request of a pending approval: the id a human's decision names, and the
/// call it answers. The gate recomputes this mapping from the stored message
/// before any decision applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRequest {
    pub request_id: String,
    /// The call's id in the stored message. A pause written by an older release
    /// may hold a null or shared id here: such a pause can only be rejected.
    pub tool_call_id: Option<String>,
    pub tool_name: String,
}

/// A pause, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    pub status: ApprovalStatus,
    /// Bumped by every change of status; part of the compare-and-swap.
    pub version: u64,
    pub created_at: String,
    /// Who sent the paused message; an edited call is judged again as this caller.
    pub caller: Caller,
    /// The run's context, without its runtime-only keys.
    pub context: CallContext,
    /// The AI message as it stood at the pause (removed calls already gone).
    pub message: AiMessage,
    /// The request-id mapping the pause handed out.
    pub requests: Vec<StoredRequest>,
    /// The gate's verdict on every call at the pause.
    pub calls: Vec<CallOutcome>,
    /// Identifies the submitted response, so that a retried submission gets the
    /// same answer instead of a conflict.
    pub response_digest: String,
    /// The provider set that judged the calls at the pause.
    #[serde(default)]
    pub generation: u64,
    /// Set once resolved (by a resume or a clear).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
}

/// The compare-and-swap of a consumption: the approval must still be pending,
/// at this version, with this request mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected<'a> {
    pub approval_id: &'a str,
    pub version: u64,
    pub requests_digest: &'a str,
}

/// What happened, for the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A run paused for approval.
    Paused,
    /// A resume consumed the approval.
    Resumed,
    /// A failed hand-off put a consumed approval back to pending.
    Restored,
    /// An operator rejected the whole pause.
    Cleared,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Restored => "restored",
            EventKind::Cleared => "cleared",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::Restored,
            EventKind::Cleared,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// One journal entry. Arguments are never journalled, only their digests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalEvent {
    /// Assigned by the store, in order.
    #[serde(default)]
    pub seq: u64,
    pub at: String,
    pub kind: EventKind,
    pub thread_id: String,
    pub approval_id: String,
    /// The run the event is attributed to: the paused run, or the resume run
    /// that adopts the calls it answers.
    pub run_id: String,
    /// Who acted, for operator actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub calls: Vec<JournalledCall>,
}

/// A call as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalledCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: String,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionKind>,
    pub codes: Vec<String>,
    /// SHA-256 of the arguments the call runs with (or was refused with).
    pub args_sha256: String,
}

/// Which approvals to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub thread_id: Option<String>,
    /// Resolved approvals too, not only pending ones.
    pub include_resolved: bool,
}

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("cannot open the approval store {path}: {message}")]
    Open { path: String, message: String },
    #[error(
        "the approval store {path} has schema version {found}; this Warden understands up to {supported}"
    )]
    Schema {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("approval store: {0}")]
    Database(String),
    #[error("approval store: record {approval_id} is unreadable: {message}")]
    Corrupt {
        approval_id: String,
        message: String,
    },
    #[error(
        "approval store: approval {approval_id} cannot be restored: its thread has another pending approval"
    )]
    RestoreBlocked { approval_id: String },
}

/// The backing store of pending approvals.
pub trait ApprovalStore: Send + Sync {
    /// Stores a new pending approval and its `paused` event together. Returns
    /// false, storing nothing, when its thread already has a pending approval.
    fn insert(&self, record: &ApprovalRecord, event: &ApprovalEvent) -> Result<bool, StoreError>;

    fn get(&self, approval_id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// The pending approval of a thread, if any (there is at most one).
    fn pending_on_thread(&self, thread_id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Approvals, oldest first.
    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// The compare-and-swap: marks the approval resolved (resumed or cleared, as
    /// `resolution` says) and journals `event`, in one transaction, only if it is
    /// still pending, at `expected.version`, with `expected.requests_digest`.
    /// Returns false, changing nothing, when it was not.
    fn resolve(
        &self,
        expected: &Expected<'_>,
        resolution: &Resolution,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError>;

    /// Puts a resumed approval back to pending, only if it is still resolved by
    /// exactly this consumption, and journals `event`. Returns false, changing
    /// nothing, when it was not.
    fn restore(
        &self,
        approval_id: &str,
        consumption_id: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError>;

    /// The journal, oldest first; one thread's, or all.
    fn events(&self, thread_id: Option<&str>) -> Result<Vec<ApprovalEvent>, StoreError>;
}

/// The digest that binds a consumption to the request mapping it validated.
pub fn requests_digest(requests: &[StoredRequest]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for r in requests {
        hash.update(r.request_id.as_bytes());
        hash.update([0]);
        match &r.tool_call_id {
            Some(id) => {
                hash.update([1]);
                hash.update(id.as_bytes());
            }
            None => hash.update([2]),
        }
        hash.update([0]);
        hash.update(r.tool_name.as_bytes());
        hash.update([0xff]);
    }
    hex::encode(hash.finalize())
}
