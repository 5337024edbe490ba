//! The daemon's admin and health answers: a reload's report, the live provider
//! set with each provider's limits and pool, `/healthz`, and the token that
//! asked. The daemon builds them from its live state; the clients read them.

use serde::{Deserialize, Serialize};

use crate::decision::OnError;

/// A provider of a set, by name and component digest (the reload answer and
/// the swap audit log).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderDigest {
    /// The provider's name in the config.
    pub name: String,
    /// The component's SHA-256, hex.
    pub digest: String,
}

/// `POST /v1/admin/reload`: the answer to a successful reload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReloadReport {
    /// The generation now serving.
    pub generation: u64,
    /// The generation it replaced.
    pub previous_generation: u64,
    /// The set now serving.
    pub providers: Vec<ProviderDigest>,
    /// The set it replaced.
    pub previous_providers: Vec<ProviderDigest>,
    /// The SHA-256 of the config file that was applied.
    pub config_sha256: String,
    /// From the reload's start to the new set serving.
    pub duration_ms: f64,
    /// Changes that need a restart to take effect (they were not applied).
    pub warnings: Vec<String>,
}

/// A provider's sandbox limits, as configured (`limits:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Limits {
    /// Wall-clock time for one call, including the wait for a free instance.
    pub timeout_ms: u64,
    /// WebAssembly fuel (roughly, instructions) for one call.
    pub fuel: u64,
    /// Wall-clock time for `configure`, loading the config into a new
    /// instance. Absent (read as 0) from a daemon older than this limit.
    #[serde(default)]
    pub configure_timeout_ms: u64,
    /// WebAssembly fuel for `configure`. Absent (read as 0) from a daemon
    /// older than this limit.
    #[serde(default)]
    pub configure_fuel: u64,
    /// The most linear memory one instance may have.
    pub memory_mb: u64,
    /// The largest request the provider is given.
    pub max_input_bytes: u64,
    /// The largest decision the provider may return.
    pub max_output_bytes: u64,
    /// The most instances alive at once.
    pub pool_size: u64,
}

/// A provider's warm instances right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PoolUsage {
    /// The most instances the pool keeps (`pool_size`).
    pub capacity: u64,
    /// Instances alive now, idle or serving a call.
    pub live: u64,
    /// Instances alive and free for the next call.
    pub idle: u64,
}

/// A provider of the live set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderStatus {
    /// The name the config gives it.
    pub name: String,
    /// What the component says it is.
    pub provider: String,
    /// The version the component reports.
    pub version: String,
    /// The component's SHA-256, hex.
    pub digest: String,
    /// Where the component was loaded from.
    pub source: String,
    /// Its sandbox limits.
    pub limits: Limits,
    /// What its failure becomes.
    pub on_error: OnError,
    /// When this provider was loaded (RFC 3339, UTC).
    pub loaded_since: String,
    /// Its instance pool right now.
    pub pool: PoolUsage,
}

/// `GET /v1/admin/providers`: the live provider set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderList {
    /// The generation of the set serving; a later set has a larger one.
    pub generation: u64,
    /// When the set was loaded (RFC 3339, UTC).
    pub loaded_at: String,
    /// `guardrails.enabled`.
    pub enabled: bool,
    /// The providers, in the order the config lists them (the pipeline's order).
    pub providers: Vec<ProviderStatus>,
    /// The SHA-256 (hex) of the configuration the set was loaded from.
    /// Absent from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// The node serving (`server.node_name`, default the host name). Absent
    /// from older daemons and from the library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
}

/// `GET /healthz`: the daemon is up and has a provider set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// The generation of the set serving.
    pub generation: u64,
    /// How many providers the live set has.
    pub providers: u64,
    /// The SHA-256 (hex) of the configuration the set was loaded from.
    /// Absent from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// The node serving (`server.node_name`, default the host name). Absent
    /// from older daemons and from the library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
}

/// The token that asked, as the daemon knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TokenInfo {
    /// The token's name (the principal).
    pub token: String,
    /// `agent`, `internal`, `admin`, `approver`: only an internal token may set the mode.
    pub role: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_a_daemon_older_than_the_configure_limits_still_read() {
        let old = r#"{"timeout_ms": 100, "fuel": 100000000, "memory_mb": 64,
            "max_input_bytes": 262144, "max_output_bytes": 65536, "pool_size": 4}"#;
        let limits: Limits = serde_json::from_str(old).unwrap();
        assert_eq!((limits.timeout_ms, limits.configure_fuel), (100, 0));
    }
}
