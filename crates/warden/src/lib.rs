//! Warden decides, before an AI agent runs a tool, whether the call may run.
//!
//! Guardrail providers are sandboxed WebAssembly components behind one WIT
//! contract (`wit/`); the interaction policy stays native. A provider only gives
//! an opinion: the host combines them, strictest first, and decides. Every
//! provider failure is a classified deny unless the operator set that provider
//! to fail open.
//!
//! This crate is the library: load a configuration, judge calls, swap the
//! policy while calls are being judged. It starts no async runtime, opens no
//! socket and links no database; the daemon (`warden-server`) and the
//! approval gate (`warden-approval`) are built on it. [`Warden::evaluate`]
//! gives a call every check the daemon gives it, the approval list
//! (`hitl_approval.tools`) included: a listed tool answers `ask` where a human
//! can be asked and `deny` where nobody can, and the embedder makes the pause.
//! It is the one way to judge a call. The rest of [`Warden`] is the service
//! API every face (the daemon, the CLI, the Python module) is built on:
//! [`Warden::reload`], [`Warden::providers`], [`Warden::health`],
//! [`Warden::refusal`], each returning a `warden-types` answer. Loading fails
//! with [`Error`], which says what failed.
//!
//! One configuration file serves every face, each section read by the crate
//! that owns it. [`Config`] is the library's sections (providers, permissions,
//! triage, the approval list, signing, the data directory); the approval store
//! (`warden_approval::StoreConfig`: `hitl_approval.durability`) and the daemon
//! (`warden_server::Config`: `server:`, `decision_log:`) read theirs from the
//! same text, and the daemon's config holds the library's as a field.
//! [`Config::parse`] and [`Config::load`] skip the faces' sections
//! ([`config::FACE_SECTIONS`]) and take the reason-redaction patterns from
//! `decision_log.redact`; [`Config::parse_own`] is told which top-level
//! sections belong to someone else. Either way a key nobody owns is refused,
//! naming the key and its line.
//!
//! ```no_run
//! use warden::{Caller, Config, ToolCall, Warden};
//!
//! let warden = Warden::new(&Config::embedded())?;
//! let call = ToolCall::new("bash", serde_json::json!({"command": "git status"}));
//! let evaluation = warden.evaluate(&call, Caller::Agent)?;
//! println!("{} {:?}", evaluation.verdict, evaluation.reasons);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod approval_list;
mod builtin;
pub mod bundle;
mod candidate;
pub mod client_attested;
mod combine;
pub mod config;
mod data_dir;
pub mod decision_log;
mod error;
mod gate;
mod guest_call;
mod pipeline;
mod registry;
pub mod shadow;
pub mod signing;
pub mod vectors;

pub use approval_list::{ApprovalList, Listed};
pub use builtin::BUILTINS;
pub use config::{Config, ConfigError};
pub use error::Error;
pub use pipeline::{APPROVAL_STAGE, INTAKE_STAGE, PERMISSIONS_STAGE, Warden};
#[allow(deprecated)]
pub use pipeline::{evaluate, evaluate_alone};
pub use registry::{ProviderSet, Snapshot};
pub use shadow::{Shadow, ShadowCounts, ShadowJudgment, ShadowOutcome};
pub use warden_runtime::engine::{EngineError, EngineOptions};
pub use warden_runtime::provider::{FailureKind, LoadError, ProviderFailure};
pub use warden_types::admin::{Health, ProviderList, ReloadReport};
pub use warden_types::{
    CallContext, Caller, Cause, Decision, Evaluation, InteractionMode, ProviderRef, Reason,
    RequestError, RuleRef, SourcePosition, StageReport, ToolCall, Verdict, codes,
};

/// Builds the process-wide WebAssembly engine with `options` (the pooling
/// allocator, the guest stack), for an embedder that must choose them; call it
/// before the first [`Warden::new`]. Without it, the first load starts the
/// engine with the defaults. A failure is an error, never a panic: providers
/// then fail to load, each with the reason.
pub fn configure_engine(options: EngineOptions) -> Result<(), EngineError> {
    warden_runtime::engine::SandboxEngine::configure(options).map(drop)
}
