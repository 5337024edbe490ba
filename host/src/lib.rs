//! Warden decides, before an AI agent runs a tool, whether the call may run.
//!
//! Guardrail providers are sandboxed WebAssembly components behind one WIT
//! contract (`wit/`); the interaction policy stays native. A provider only gives
//! an opinion: the host combines them, strictest first, and decides. Every
//! provider failure is a classified deny unless the operator set that provider
//! to fail open.
//!
//! ```no_run
//! use warden_host::{Caller, Config, ToolCall, Warden};
//!
//! let warden = Warden::new(&Config::embedded())?;
//! let call = ToolCall::new("bash", serde_json::json!({"command": "git status"}));
//! let evaluation = warden.evaluate(&call, Caller::Agent)?;
//! println!("{} {:?}", evaluation.verdict, evaluation.reasons);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod approval;
pub mod artifact_cache;
pub mod bench;
pub mod builtin;
pub mod cli;
pub mod config;
pub mod data_dir;
pub mod decision;
pub mod decision_log;
pub mod engine;
pub mod hook;
pub mod pipeline;
pub mod policy;
pub mod provider;
pub mod redact;
pub mod registry;
pub mod request;
pub mod scaffold;
pub mod server;
pub mod signing;
pub mod strict_json;
pub mod trust;
pub mod vectors;

pub use approval::{ApprovalError, ApprovalGate};
pub use config::{Config, ConfigError};
pub use decision::{Decision, Reason, Verdict};
pub use pipeline::{Evaluation, Warden};
pub use provider::{FailureKind, LoadError, ProviderFailure};
pub use request::{CallContext, Caller, RequestError, ToolCall};
