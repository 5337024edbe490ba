//! What can go wrong setting up the decision log.

use warden_policy::redact::PatternError;

/// Why the decision log could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionLogError {
    /// A `decision_log.redact` pattern is not a valid regular expression.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// `decision_log.arguments` names an empty argument for `tool`.
    #[error("decision_log.arguments.{tool}: an argument name must not be empty")]
    EmptyField {
        /// The tool (or `*`) the empty name is listed under.
        tool: String,
    },
    /// `decision_log.fsync_interval_ms` is out of range.
    #[error("decision_log.fsync_interval_ms: {0} is out of range 1..=60000")]
    Interval(u64),
    /// `decision_log.rotate` or `checkpoint_every` holds a value out of range.
    #[error("decision_log.{key}: {value} is out of range ({range})")]
    Range {
        /// The key.
        key: &'static str,
        /// The value given.
        value: u64,
        /// The range allowed.
        range: &'static str,
    },
    /// The log file (or its directory, or a writer thread) could not be set up.
    #[error("cannot open the log {path}: {source}")]
    Open {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}
