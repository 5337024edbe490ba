//! Human approval: the approval gate over one model response, the pause of a
//! run for a human, its resume (or an operator's clear), and the durable store
//! that keeps pauses across restarts.
//!
//! ```no_run
//! use std::sync::Arc;
//! use warden_host::approval::{ApprovalGate, ModelResponse, ResumeRequest, RunRef};
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
//!     let resolution = gate.resume("thread-1", Some(approval_id), &ResumeRequest::reject_all(None))?;
//!     println!("{:?}", resolution.calls);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod command;
pub mod config;
pub mod error;
pub mod gate;
pub mod list;
pub mod message;
pub mod origin;
pub mod outcome;
pub mod resume;
pub mod sqlite;
pub mod store;

pub use config::{HitlApproval, NonInteractive};
pub use error::{ApprovalError, ErrorBody, Mismatch, PendingRequest};
pub use gate::{ApprovalGate, ApprovalView, ModelResponse, RunRef};
pub use list::ApprovalList;
pub use message::{AiMessage, ModelToolCall, Unaddressable};
pub use origin::{Reach, RunOrigin};
pub use outcome::{
    ApprovalRequest, CallOutcome, CallStatus, DecisionKind, GateOutcome, Resolution, ResolvedBy,
    RunState,
};
pub use resume::{RejectAll, RequestDecision, ResumeRequest};
pub use sqlite::{Durability, SqliteApprovalStore};
pub use store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind, ListFilter,
    StoreError, StoredRequest,
};

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
    /// The model's call was malformed (empty name, arguments not an object, ...).
    pub const INVALID_CALL: &str = "warden.invalid_call";
}
