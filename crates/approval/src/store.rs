//! Where pending approvals live between a pause and its resume, and the
//! append-only journal of what happened to them. The trait is what the gate
//! needs from any backing store: one embedded SQLite file now
//! ([`super::sqlite::SqliteApprovalStore`]), a shared server database for several
//! Warden instances later. Its two writes that matter are conditional: at most
//! one pending approval per thread, and consumption as a compare-and-swap.
//!
//! Threads are scoped by principal (the name of the token that paused them):
//! agent A's `thread-1` and agent B's `thread-1` are two threads, so that no
//! agent can block another's thread by pausing an id it guessed.

use serde::{Deserialize, Serialize};

use super::grant::{Grant, GrantFilter};
use warden_types::Caller;
pub use warden_types::approval::ApprovalKind;
pub use warden_types::approval::ApprovalStatus;
use warden_types::approval::{CallOutcome, CallStatus, DecisionKind, Resolution};
pub use warden_types::error::StoreError;
use warden_types::message::AiMessage;
use warden_types::request::CallContext;

/// One request of a pending approval: the id a human's decision names, and the
/// call it answers. The gate recomputes this mapping from the stored message
/// before any decision applies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRequest {
    /// The id a human's decision names.
    pub request_id: String,
    /// The call's id in the stored message. A pause written by an older release
    /// may hold a null or shared id here: such a pause can only be rejected.
    pub tool_call_id: Option<String>,
    /// The tool the call runs.
    pub tool_name: String,
}

/// A pause, as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The approval's id.
    pub approval_id: String,
    /// The name of the token (or the local user) that paused it; its thread
    /// belongs to this principal.
    pub principal: String,
    /// The thread the pause holds.
    pub thread_id: String,
    /// The run that paused.
    pub run_id: String,
    /// Pending, or how it was resolved.
    pub status: ApprovalStatus,
    /// Bumped by every change of status; part of the compare-and-swap.
    pub version: u64,
    /// When it paused, RFC 3339.
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
    /// The idempotency key and body digest of the resume that consumed it: the
    /// same resume again gets the stored resolution back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_key: Option<ResumeKey>,
    /// When it expires unanswered (milliseconds since the epoch), under
    /// `hitl_approval.expire_after`; never when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<i64>,
    /// A pause of a run, or one MCP call's ask.
    #[serde(default)]
    pub kind: ApprovalKind,
    /// When a retry consumed its answer (RFC 3339): an MCP call's answer is
    /// read once ([`ApprovalStore::consume`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumed_at: Option<String>,
}

impl ApprovalRecord {
    /// Whether it is still pending at `now_ms` but past its expiry.
    pub fn is_overdue(&self, now_ms: i64) -> bool {
        self.status == ApprovalStatus::Pending && self.expires_at_ms.is_some_and(|at| at <= now_ms)
    }
}

/// What identifies a resume: its idempotency key, and a digest of what it
/// asked (the decisions, the run, the reviewer and the relay).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeKey {
    /// The idempotency key the caller sent.
    pub key: String,
    /// SHA-256 of what the resume asked.
    pub digest: String,
}

/// What became of an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserted {
    /// The approval is pending.
    Paused,
    /// Its thread already had a pending approval; nothing was stored.
    ThreadBusy,
    /// Its principal already had this many pending approvals, the quota;
    /// nothing was stored.
    OverQuota {
        /// How many approvals the principal has pending.
        pending: u64,
    },
}

/// The compare-and-swap of a consumption: the approval must still be pending,
/// at this version, with this request mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected<'a> {
    /// The approval consumed.
    pub approval_id: &'a str,
    /// The version read before the decision.
    pub version: u64,
    /// The digest of the request mapping read before the decision.
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
    /// Nobody answered in time: rejected as a whole.
    Expired,
    /// An approver gave a standing grant with an approval.
    Granted,
    /// An approver revoked a standing grant.
    Revoked,
    /// The identical retry of an MCP call read the answer, once.
    Consumed,
}

impl EventKind {
    /// The kind as the journal spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Restored => "restored",
            EventKind::Cleared => "cleared",
            EventKind::Expired => "expired",
            EventKind::Granted => "granted",
            EventKind::Revoked => "revoked",
            EventKind::Consumed => "consumed",
        }
    }

    /// The kind the journal spelled `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        [
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::Restored,
            EventKind::Cleared,
            EventKind::Expired,
            EventKind::Granted,
            EventKind::Revoked,
            EventKind::Consumed,
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
    /// When it happened, RFC 3339.
    pub at: String,
    /// What happened.
    pub kind: EventKind,
    /// The principal whose thread it is.
    #[serde(default = "legacy_principal")]
    pub principal: String,
    /// The thread.
    pub thread_id: String,
    /// The approval.
    pub approval_id: String,
    /// The run the event is attributed to: the paused run, or the resume run
    /// that adopts the calls it answers.
    pub run_id: String,
    /// The human who answered (approved, rejected, edited) or cleared.
    #[serde(default, alias = "actor", skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The token that relayed the human's answer, when a harness did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
    /// The note the human gave, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The calls, as they stood after the event.
    pub calls: Vec<JournalledCall>,
}

/// A call as the journal keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournalledCall {
    /// The request id a decision names, for a call that waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The model's id for the call.
    pub tool_call_id: Option<String>,
    /// The tool.
    pub tool_name: String,
    /// Run, denied or pending.
    pub status: CallStatus,
    /// What the human decided about it, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionKind>,
    /// The reason codes of its outcome.
    pub codes: Vec<String>,
    /// SHA-256 of the arguments the call runs with (or was refused with).
    pub args_sha256: String,
}

/// The principal of pauses made before principals existed, and of the
/// command line and in-process callers.
pub const LOCAL_PRINCIPAL: &str = "local";

fn legacy_principal() -> String {
    LOCAL_PRINCIPAL.to_string()
}

/// Which approvals to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only this principal's (all principals' when `None`).
    pub principal: Option<String>,
    /// Only this thread's approvals.
    pub thread_id: Option<String>,
    /// Resolved approvals too, not only pending ones.
    pub include_resolved: bool,
}

/// Which journal entries to read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JournalFilter {
    /// Only this principal's threads (all when `None`).
    pub principal: Option<String>,
    /// Only this thread's entries.
    pub thread_id: Option<String>,
    /// Only entries before this sequence number (for paging back).
    pub before_seq: Option<u64>,
    /// The newest `limit` entries (all when `None`), still oldest first.
    pub limit: Option<usize>,
}

impl JournalFilter {
    /// Every entry of the threads with this id.
    pub fn thread(thread_id: impl Into<String>) -> Self {
        JournalFilter {
            thread_id: Some(thread_id.into()),
            ..JournalFilter::default()
        }
    }
}

/// The backing store of pending approvals.
pub trait ApprovalStore: Send + Sync {
    /// Stores a new pending approval and its `paused` event together, unless
    /// its thread already has a pending approval or its principal has `quota`
    /// pending ones (then nothing is stored).
    fn insert(
        &self,
        record: &ApprovalRecord,
        event: &ApprovalEvent,
        quota: Option<u64>,
    ) -> Result<Inserted, StoreError>;

    /// The approval with this id, if any.
    fn get(&self, approval_id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// The pending approval of a principal's thread, if any (there is at most one).
    fn pending_on_thread(
        &self,
        principal: &str,
        thread_id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Approvals, oldest first.
    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// The compare-and-swap: marks the approval resolved (resumed, cleared or
    /// expired, as `resolution` says) with the resume's `key`, stores the
    /// `grants` given with it, and journals `events` (the resolution's first),
    /// in one transaction, only if it is still pending, at `expected.version`,
    /// with `expected.requests_digest`. Returns false, changing nothing, when
    /// it was not.
    fn resolve(
        &self,
        expected: &Expected<'_>,
        resolution: &Resolution,
        key: Option<&ResumeKey>,
        grants: &[Grant],
        events: &[ApprovalEvent],
    ) -> Result<bool, StoreError>;

    /// Replaces the arguments of approvals resolved at or before `before_ms`
    /// by their digests ([`super::purge`]), so that they leave the disk;
    /// returns how many were purged.
    fn purge_resolved(&self, before_ms: i64) -> Result<usize, StoreError>;

    /// Pending approvals whose expiry is at or before `now_ms`, oldest first.
    fn overdue(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// The grants of `principal` live at `now_ms` on `thread_id` (those for
    /// that thread and those for every thread of the principal).
    fn live_grants(
        &self,
        principal: &str,
        thread_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Vec<Grant>, StoreError>;

    /// Grants, newest first: live ones, or all.
    fn grants(&self, filter: &GrantFilter, now_ms: i64) -> Result<Vec<Grant>, StoreError>;

    /// Revokes a live grant and journals `event`; `None` when there is no such
    /// grant, the grant as it was when it had already ended.
    fn revoke_grant(
        &self,
        grant_id: &str,
        revoked_by: &str,
        now_ms: i64,
        event: &ApprovalEvent,
    ) -> Result<Option<Grant>, StoreError>;

    /// Puts a resumed approval back to pending, only if it is still resolved by
    /// exactly this consumption, and journals `event`. Returns false, changing
    /// nothing, when it was not.
    fn restore(
        &self,
        approval_id: &str,
        consumption_id: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError>;

    /// The compare-and-swap of a one-use answer: marks the resolved approval
    /// consumed at `at` (RFC 3339) and journals `event`, in one transaction,
    /// only if it is resolved and not consumed yet. Returns false, changing
    /// nothing, when it was not: of two retries, in one process or in two,
    /// exactly one gets true.
    fn consume(
        &self,
        approval_id: &str,
        at: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError>;

    /// The journal entries the filter selects, oldest first.
    fn events(&self, filter: &JournalFilter) -> Result<Vec<ApprovalEvent>, StoreError>;

    /// Everything this store holds, row for row, each table oldest first
    /// ([`crate::transfer`]).
    fn export(&self) -> Result<crate::transfer::Contents, StoreError>;

    /// Writes `contents` into this store in one transaction, only if the
    /// store holds no approval, journal entry or grant yet: otherwise
    /// returns what it holds, writing nothing.
    fn import(
        &self,
        contents: &crate::transfer::Contents,
    ) -> Result<Result<(), crate::transfer::Occupied>, StoreError>;

    /// True when this store knows, without asking its database, that the
    /// principal's thread has no pending approval ([`crate::waiting`]):
    /// evaluate's check of a thread may then skip the lookup. False (ask)
    /// whenever it does not know for sure.
    fn known_free(&self, _principal: &str, _thread_id: &str) -> bool {
        false
    }

    /// True when this store can tell at once, without waiting for a lock, a
    /// round trip or a write, that the principal's thread has no pending
    /// approval. A caller that must not wait (the daemon judging on one of
    /// its async threads) asks this first, and takes the long way
    /// ([`ApprovalStore::pending_on_thread`], on a thread that may wait) when
    /// it is false. By default what [`ApprovalStore::known_free`] knows.
    fn free_at_once(&self, principal: &str, thread_id: &str) -> bool {
        self.known_free(principal, thread_id)
    }

    /// How the daemons sharing this store tell each other of pauses; `None`
    /// for a store one daemon owns (SQLite's), where there is no one to tell.
    fn announcer(&self) -> Option<std::sync::Arc<dyn crate::announce::Announcer>> {
        None
    }
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

/// Milliseconds since the epoch, as the store keeps times it compares.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
