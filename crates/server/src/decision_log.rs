//! The decision log moved to the `warden-log` crate (issue 26), below the
//! library, so that the daemon, the library and the Python module write the
//! same lines. These are its old paths, kept for one minor version; each
//! warns when used.

/// Moved: [`warden_log::MAX_LOGGED_CHARS`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::MAX_LOGGED_CHARS")]
pub const MAX_LOGGED_CHARS: usize = warden_log::MAX_LOGGED_CHARS;

/// Moved: [`warden_log::REDACTED`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::REDACTED")]
pub const REDACTED: &str = warden_log::REDACTED;

/// Moved: [`warden_log::DEFAULT_FSYNC_INTERVAL_MS`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::DEFAULT_FSYNC_INTERVAL_MS")]
pub const DEFAULT_FSYNC_INTERVAL_MS: u64 = warden_log::DEFAULT_FSYNC_INTERVAL_MS;

/// Moved: [`warden_log::DecisionLogConfig`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::DecisionLogConfig")]
pub type DecisionLogConfig = warden_log::DecisionLogConfig;

/// Moved: [`warden_log::Fsync`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::Fsync")]
pub type Fsync = warden_log::Fsync;

/// Moved: [`warden_log::DecisionLogError`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::DecisionLogError")]
pub type DecisionLogError = warden_log::DecisionLogError;

/// Moved: [`warden_log::ArgumentPolicy`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::ArgumentPolicy")]
pub type ArgumentPolicy = warden_log::ArgumentPolicy;

/// Moved: [`warden_log::Requester`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::Requester")]
pub type Requester<'a> = warden_log::Requester<'a>;

/// Moved: [`warden_log::DecisionLine`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::DecisionLine")]
pub type DecisionLine<'a> = warden_log::DecisionLine<'a>;

/// Moved: [`warden_log::LoggedReason`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::LoggedReason")]
pub type LoggedReason = warden_log::LoggedReason;

/// Moved: [`warden_log::LoggedStage`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::LoggedStage")]
pub type LoggedStage<'a> = warden_log::LoggedStage<'a>;

/// Moved: [`warden_log::GateCallRecord`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::GateCallRecord")]
pub type GateCallRecord<'a> = warden_log::GateCallRecord<'a>;

/// Moved: [`warden_log::DecisionLog`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::DecisionLog")]
pub type DecisionLog = warden_log::DecisionLog;

/// Moved: [`warden_log::JsonLines`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::JsonLines")]
pub type JsonLines = warden_log::JsonLines;

/// Moved: [`warden_log::cap`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::cap")]
pub fn cap(text: &str) -> String {
    warden_log::cap(text)
}

/// Moved: [`warden_log::status_verdict`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::status_verdict")]
pub fn status_verdict(status: warden_types::approval::CallStatus) -> warden_types::Verdict {
    warden_log::status_verdict(status)
}

/// Moved: [`warden_log::new_decision_id`].
#[deprecated(note = "moved to the warden-log crate: use warden_log::new_decision_id")]
pub fn new_decision_id() -> String {
    warden_log::new_decision_id()
}
