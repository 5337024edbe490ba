//! Human approval: the approval gate over one model response, the pause of a
//! run for a human, its resume (or an operator's clear), and the durable store
//! that keeps pauses across restarts.
//!
//! ```no_run
//! use std::sync::Arc;
//! use warden_approval::{ApprovalGate, ModelResponse, ResumeRequest, Reviewer, RunRef, StoreConfig};
//! use warden::config::ConfigFile;
//! use warden::{Caller, Config, Warden};
//!
//! // One file: the library reads its sections, the store its own.
//! let file = ConfigFile::read("warden.yaml".as_ref())?;
//! let config = Config::parse(&file.text, &file.name, file.base_dir)?;
//! let store = StoreConfig::parse(&file.text, &file.name)?;
//! let warden = Arc::new(Warden::new(&config)?);
//! let gate = ApprovalGate::open(warden, &config.data_dir(), store.durability)?;
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

#![deny(missing_docs)]

pub mod announce;
pub mod backend;
pub mod durability;
pub mod gate;
pub mod grant;
pub mod interaction;
pub mod journal;
#[cfg(feature = "sqlite")]
pub mod lease;
pub mod mcp_ask;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "postgres")]
pub mod postgres_tls;
pub mod postgres_url;
pub mod purge;
pub mod resume;
pub mod reviewer;
mod row;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod store;
pub mod transfer;
pub mod unjudged;
pub mod validate;
pub mod waiting;

#[cfg(feature = "postgres")]
pub use self::postgres::PostgresApprovalStore;
pub use durability::{Backend, Durability, StoreConfig};
pub use gate::{ApprovalGate, ApprovalView, ModelResponse, RunRef};
pub use grant::{Grant, GrantExt, GrantFilter, GrantRequest, GrantScope, GrantTarget};
pub use interaction::{InteractionQuery, InteractionReport, ListedTools};
pub use mcp_ask::{McpAsk, mcp_thread};
pub use resume::{RejectAll, RequestDecision, ResumeRequest};
pub use reviewer::{Authority, RelayNames, Reviewer};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteApprovalStore;
pub use store::{
    ApprovalEvent, ApprovalKind, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind,
    Inserted, JournalFilter, LOCAL_PRINCIPAL, ListFilter, ResumeKey, StoreError, StoredRequest,
};
pub use warden::ApprovalList;
pub use warden::Listed;
pub use warden::config::{HitlApproval, NonInteractive, NotifyHook};
pub use warden_policy::origin::{Reach, RunOrigin};
pub use warden_types::approval::{
    ApprovalRequest, CallOutcome, CallStatus, DecisionKind, GateOutcome, McpAskAnswer, Resolution,
    ResolvedBy, RunState,
};
pub use warden_types::error::{ApprovalError, ErrorBody, Mismatch, PendingRequest};
pub use warden_types::message::{AiMessage, ModelToolCall, Unaddressable};
pub use warden_types::surfaces::{Surface, SurfaceMismatch};
