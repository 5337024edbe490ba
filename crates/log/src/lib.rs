//! Warden's decision log: one JSON line per decision, for audits and incident
//! review. A record names the call (decision, thread, run and tool-call ids,
//! tool name), the outcome (verdict, reasons capped at 500 characters, policy
//! id) and what judged it (every stage, with provider digests, duration, fuel
//! and failure detail). Tool arguments are left out unless the operator opts
//! in, field by field; the fields logged are redacted first, by the one
//! redactor (`warden_policy::redact`) that also cleans reason messages when
//! they are made. The caller's ids and the tool name are logged with only
//! their secret-shaped parts replaced: an id without a secret is logged as it
//! is, one with a secret keeps the rest, for tracing.
//!
//! With `fsync: interval` (the default) a call never waits for the disk: its
//! line goes into a buffer, written out by a background thread every
//! `fsync_interval_ms` (20 by default) and at shutdown, and synced by another
//! right after (a slow disk delays the sync, never the next write). With
//! `fsync: always` the answer waits until its line is synced.
//!
//! The crate sits below the library, so that every face (the daemon, the
//! library, the Python module) writes the same lines:
//! - [`config`]: the `decision_log:` section;
//! - [`arguments`]: which arguments are logged, redacted and capped;
//! - [`record`]: the shapes of the lines;
//! - [`writer`]: the group-commit JSON-lines writer;
//! - [`log`]: the log, which puts them together.
//!
//! ```
//! use warden_log::{DecisionLog, DecisionLogConfig};
//! # let dir = tempfile::tempdir().unwrap();
//! let log = DecisionLog::open(&DecisionLogConfig::default(), dir.path()).unwrap();
//! assert!(log.path().unwrap().ends_with("decisions.jsonl"));
//! ```

#![deny(missing_docs)]

pub mod arguments;
pub mod config;
pub mod error;
pub mod log;
pub mod record;
pub mod writer;

pub use arguments::{ArgumentPolicy, MAX_LOGGED_CHARS, REDACTED, cap};
pub use config::{DEFAULT_FSYNC_INTERVAL_MS, DecisionLogConfig, Fsync};
pub use error::DecisionLogError;
pub use log::DecisionLog;
pub use record::{
    DecisionLine, GateCallRecord, GateContext, LoggedReason, LoggedStage, Requester,
    new_decision_id, status_verdict,
};
pub use writer::JsonLines;
