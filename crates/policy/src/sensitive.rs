//! Sensitive paths: the shared list (`warden_analysis::sensitive`, which the
//! OAP provider uses too), with the operator's additions. Dropping the
//! defaults takes an explicit, loudly named setting.

use serde::Deserialize;

pub use warden_analysis::sensitive::{Access, DEFAULT_SENSITIVE_PATHS, SensitivePaths};

/// The `permissions.sensitive_paths` block.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensitivePathsConfig {
    /// Patterns added to the defaults.
    #[serde(default)]
    pub add: Vec<String>,
    /// Drops the built-in patterns, leaving only `add`. Credentials and keys
    /// are then reachable by any tool call the rules allow.
    #[serde(default)]
    pub unsafe_drop_defaults: bool,
}

/// The compiled list of a config.
pub fn compile(config: &SensitivePathsConfig) -> Result<SensitivePaths, String> {
    if config.unsafe_drop_defaults {
        tracing::warn!(
            "permissions.sensitive_paths.unsafe_drop_defaults is set: the built-in credential and key paths are NOT protected"
        );
    }
    SensitivePaths::new(&config.add, config.unsafe_drop_defaults)
}
