//! Human approval: the approval gate over one model response, the pause of a
//! run for a human, its resume (or an operator's clear), and the durable store
//! that keeps pauses across restarts.
//!
//! ```no_run
//! use std::sync::Arc;
//! use warden_host::approval::{ApprovalGate, ModelResponse, ResumeRequest, Reviewer, RunRef};
//! use warden_host::{Caller, Config, Warden};
//!
//! let config = Config::embedded();
//! let warden = Arc::new(Warden::new(&config)?);
//! let gate = ApprovalGate::open(warden, &config.data_dir(), config.hitl_approval.durability)?;
//! let response = ModelResponse::from_json(br#"{"message": {"tool_calls": [
//!     {"id": "call_1", "name": "bash", "args": {"command": "git push"}}]}}"#)?;
//! let outcome = gate.submit(&RunRef::new("thread-1", "run-1"), &response, Caller::Agent)?;
//! if let Some(approval_id) = &outcome.approval_id {
//!     // ... a human looks at outcome.requests, then:
//!     let alice = Reviewer::human("alice");
//!     let resolution = gate.resume(&alice, "thread-1", Some(approval_id), &ResumeRequest::reject_all(None))?;
//!     println!("{:?}", resolution.calls);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod command;
pub mod config;
pub mod error;
pub mod gate;
pub mod grant;
pub mod interaction;
pub mod list;
pub mod listed;
pub mod message;
pub mod origin;
pub mod outcome;
pub mod purge;
pub mod resume;
pub mod sqlite;
pub mod store;
pub mod surfaces;

pub use config::{HitlApproval, NonInteractive, NotifyHook};
pub use error::{ApprovalError, ErrorBody, Mismatch, PendingRequest};
pub use gate::{ApprovalGate, ApprovalView, ModelResponse, RunRef};
pub use grant::{Grant, GrantFilter, GrantRequest, GrantScope, GrantTarget};
pub use interaction::{InteractionQuery, InteractionReport, ListedTools};
pub use list::ApprovalList;
pub use listed::{Listed, listed};
pub use message::{AiMessage, ModelToolCall, Unaddressable};
pub use origin::{Reach, RunOrigin};
pub use outcome::{
    ApprovalRequest, CallOutcome, CallStatus, DecisionKind, GateOutcome, Resolution, ResolvedBy,
    RunState,
};
pub use resume::{Authority, RejectAll, RequestDecision, ResumeRequest, Reviewer};
pub use sqlite::{Durability, SqliteApprovalStore};
pub use store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind, Inserted,
    JournalFilter, LOCAL_PRINCIPAL, ListFilter, ResumeKey, StoreError, StoredRequest,
};
pub use surfaces::{Surface, SurfaceMismatch};

/// Reason codes and the stage name of the approval gate.
pub mod codes {
    /// The stage name in `decided_by`.
    pub const STAGE: &str = "approval";
    /// A listed tool waits for a human.
    pub const APPROVAL_REQUIRED: &str = "warden.approval_required";
    /// A listed tool in a run where nobody can approve it: denied.
    pub const APPROVAL_UNAVAILABLE: &str = "warden.approval_unavailable";
    /// A listed tool ran unapproved in an unattended run (`non_interactive: allow`).
    pub const APPROVAL_WAIVED: &str = "warden.approval_waived";
    /// A human approved the call.
    pub const APPROVAL_GRANTED: &str = "warden.approval_granted";
    /// A human approved the call with new arguments.
    pub const APPROVAL_EDITED: &str = "warden.approval_edited";
    /// A human (or an operator's clear) rejected the call.
    pub const APPROVAL_REJECTED: &str = "warden.approval_rejected";
    /// The model's call was malformed in a way the harness's context reveals
    /// (a malformed timestamp, an unknown interaction mode).
    pub const INVALID_CALL: &str = "warden.invalid_call";
    /// The raw payload or the content blocks hold a call the call list does
    /// not (another id, name or arguments): every call of the message is denied.
    pub const SURFACE_MISMATCH: &str = "warden.surface_mismatch";
    /// A model response asks for more calls than `MAX_TOOL_CALLS`: none runs.
    pub const TOO_MANY_CALLS: &str = "warden.too_many_calls";
    /// `/v1/evaluate` on a thread that waits for a human: denied until the
    /// approval is answered.
    pub const APPROVAL_PENDING: &str = "warden.approval_pending";
    /// The principal has as many approvals pending as its quota allows: the
    /// calls that would have waited for a human are denied.
    pub const APPROVAL_QUOTA_EXCEEDED: &str = "warden.approval_quota_exceeded";
    /// Nobody answered within `hitl_approval.expire_after`: rejected.
    pub const APPROVAL_EXPIRED: &str = "warden.approval_expired";
    /// A call of a paused message that nobody was asked about, which would now
    /// need a human (judged again at resume): denied, since nobody approved it.
    pub const APPROVAL_NOT_ASKED: &str = "warden.approval_not_asked";
    /// A call allowed by a standing grant instead of waiting for a human.
    pub const APPROVAL_GRANT: &str = super::grant::GRANTED;
}
