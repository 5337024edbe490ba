//! The types every side of Warden shares: the tool call and its context, who
//! is calling, verdicts and reasons, the evaluation and its stage reports, the
//! approval routes' bodies, the admin and health answers, the error body, and
//! every reason code the host emits. The daemon sends these, the Rust and
//! Python clients read them, and the OpenAPI document is generated from them
//! (the `schema` feature derives their JSON Schemas).
//!
//! serde only, so that it builds for `wasm32-wasip2` and a provider can use
//! the codes.

#![deny(missing_docs)]

pub mod admin;
pub mod approval;
pub mod call_formats;
pub mod call_listing;
pub mod caller;
pub mod cause;
pub mod codes;
pub mod decision;
pub mod error;
pub mod evaluation;
pub mod message;
pub mod request;
pub mod resolved;
pub mod strict_json;
pub mod surfaces;
pub mod text;
pub mod tools;

pub use caller::{Asserts, Attribution, Caller};
pub use cause::{Cause, ProviderRef, RuleRef, SourcePosition};
pub use decision::{Decision, OnError, Reason, Verdict};
pub use error::{ApprovalError, ErrorBody, ErrorDetail, Mismatch, PendingRequest, StoreError};
pub use evaluation::{
    ClassifierReport, DecisionRecord, Evaluation, HumanReach, InteractionMode, Risk, StageReport,
};
pub use request::{CallContext, RequestError, ToolCall};
