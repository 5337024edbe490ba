//! The `decision_log:` section of the configuration file: whether and where
//! decisions are logged, which arguments, what else is redacted, and when a
//! line reaches the disk.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The default of `decision_log.fsync_interval_ms`.
pub const DEFAULT_FSYNC_INTERVAL_MS: u64 = 20;

/// The `decision_log:` block of the configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DecisionLogConfig {
    /// False: no decision is logged.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The log file, relative to the data directory.
    #[serde(default = "default_path")]
    pub path: PathBuf,
    /// Tool arguments to log, opted in field by field: tool name (or `*` for
    /// every tool) to the top-level argument names kept. Absent: none.
    #[serde(default)]
    pub arguments: BTreeMap<String, Vec<String>>,
    /// Extra regular expressions whose matches are replaced by `[REDACTED]` in
    /// logged arguments and reason messages, after the built-in ones (tokens,
    /// keys, passwords).
    #[serde(default)]
    pub redact: Vec<String>,
    /// When a decision reaches the disk: `interval` (the default) or `always`.
    #[serde(default)]
    pub fsync: Fsync,
    /// With `fsync: interval`, how often the lines are written out and synced:
    /// the most a kill -9 or a power cut can lose.
    #[serde(default = "default_fsync_interval")]
    pub fsync_interval_ms: u64,
}

/// When the decision log's lines reach the disk.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    /// Written out and synced every `fsync_interval_ms`: a kill -9 or a power
    /// cut loses at most the decisions of the last interval.
    #[default]
    Interval,
    /// An answer is sent only once its line is written and synced: nothing
    /// answered is lost, at the price of waiting for the disk (one sync
    /// serves every answer waiting at that moment).
    Always,
}

impl Default for DecisionLogConfig {
    fn default() -> Self {
        DecisionLogConfig {
            enabled: true,
            path: default_path(),
            arguments: BTreeMap::new(),
            redact: Vec::new(),
            fsync: Fsync::default(),
            fsync_interval_ms: default_fsync_interval(),
        }
    }
}

fn default_fsync_interval() -> u64 {
    DEFAULT_FSYNC_INTERVAL_MS
}

fn yes() -> bool {
    true
}

fn default_path() -> PathBuf {
    PathBuf::from("decisions.jsonl")
}
