//! The `decision_log:` section of the configuration file: whether and where
//! decisions are logged, which arguments, what else is redacted, and when a
//! line reaches the disk.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The default of `decision_log.fsync_interval_ms`.
pub const DEFAULT_FSYNC_INTERVAL_MS: u64 = 20;
/// The default of `decision_log.checkpoint_every`.
pub const DEFAULT_CHECKPOINT_EVERY: u64 = 1000;

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
    /// Each line carries the hash of the one before it, and checkpoints
    /// (signed with `signing.key` where one is configured) are added: a
    /// tamper-evident trail that `warden log verify` checks.
    #[serde(default = "yes")]
    pub chain: bool,
    /// With `chain`, the lines between two checkpoints (0: checkpoints only
    /// when the log is closed): the most lines a cut at the end of the log
    /// can remove unseen, while the log is open.
    #[serde(default = "default_checkpoint_every")]
    pub checkpoint_every: u64,
    /// With `chain`, the file each checkpoint is also appended to, relative to
    /// the data directory (default: the log's path and `.checkpoints`), for
    /// the operator to ship elsewhere.
    #[serde(default)]
    pub checkpoints: Option<PathBuf>,
    /// When the log file is rotated (default: never).
    #[serde(default)]
    pub rotate: RotateConfig,
}

/// `decision_log.rotate`: when the log file is renamed beside itself and a new
/// one started (whichever comes first; neither: never).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RotateConfig {
    /// Once the file holds this many bytes (at least 4096).
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Once the file is this many seconds old (counted from when the daemon
    /// opened or started it; at least 1).
    #[serde(default)]
    pub max_age_s: Option<u64>,
}

impl DecisionLogConfig {
    /// The checkpoint file, relative to the data directory.
    pub fn checkpoints_path(&self) -> PathBuf {
        self.checkpoints.clone().unwrap_or_else(|| {
            let mut name = self.path.clone().into_os_string();
            name.push(".checkpoints");
            PathBuf::from(name)
        })
    }
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
            chain: true,
            checkpoint_every: DEFAULT_CHECKPOINT_EVERY,
            checkpoints: None,
            rotate: RotateConfig::default(),
        }
    }
}

fn default_fsync_interval() -> u64 {
    DEFAULT_FSYNC_INTERVAL_MS
}

fn default_checkpoint_every() -> u64 {
    DEFAULT_CHECKPOINT_EVERY
}

fn yes() -> bool {
    true
}

fn default_path() -> PathBuf {
    PathBuf::from("decisions.jsonl")
}
