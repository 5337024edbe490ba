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
//! - [`attribution`]: who a call is attributed to, as honoured and as claimed;
//! - [`stamp`]: the node's name and the configuration digest on every line;
//! - [`writer`]: the group-commit JSON-lines writer;
//! - [`chain`]: the hash chain and the signed checkpoints each line and the
//!   writer add (a tamper-evident trail), and [`verify`](mod@verify), which checks them;
//! - [`log`]: the log, which puts them together;
//! - [`replay`](mod@replay): a log's calls rebuilt and judged again against a
//!   candidate policy (`warden replay`), with the coverage and transitions.
//!
//! ```
//! use warden_log::{DecisionLog, DecisionLogConfig};
//! # let dir = tempfile::tempdir().unwrap();
//! let log = DecisionLog::open(&DecisionLogConfig::default(), dir.path()).unwrap();
//! assert!(log.path().unwrap().ends_with("decisions.jsonl"));
//! ```

#![deny(missing_docs)]

pub mod arguments;
pub mod attribution;
pub mod chain;
pub mod config;
pub mod error;
pub mod log;
pub mod record;
pub mod replay;
pub mod stamp;
pub mod verify;
pub mod writer;

pub use arguments::{ArgumentPolicy, MAX_LOGGED_CHARS, REDACTED, cap};
pub use attribution::{AttributionFields, CallerTrust, LoggedAttribution};
pub use chain::CheckpointKey;
pub use config::{
    DEFAULT_CHECKPOINT_EVERY, DEFAULT_FSYNC_INTERVAL_MS, DecisionLogConfig, Fsync, RotateConfig,
};
pub use error::DecisionLogError;
pub use log::{DecisionLog, LineFacts};
pub use record::{
    DecisionLine, GateCallRecord, GateContext, LoggedReason, LoggedShadow, LoggedStage, Requester,
    new_decision_id, status_verdict,
};
pub use replay::facts::ReplayFacts;
pub use stamp::{Generation, Generations, check_node_name, default_node_name, host_name};
pub use verify::{Report, verify};
pub use writer::{ChainOptions, JsonLines, Options, Rotation, Tap};
