//! A provider as the operator configures it: the component, its pin, its
//! configuration, its role and its sandbox limits (`guardrails.providers[]`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use warden_types::OnError;

use crate::input_file::{self, InputKind};
use crate::source_map::SourceMap;

/// One provider: a component, its pin, its configuration and its limits.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSpec {
    /// A unique name, used in reasons, metrics and the audit log.
    pub name: String,
    /// `builtin:<name>` for a shipped provider, or a path to a `.wasm` component
    /// (relative to this file).
    pub wasm: String,
    /// The component's expected SHA-256 (hex). When set, any other bytes are refused.
    #[serde(default)]
    pub sha256: Option<String>,
    /// Passed to the provider's `configure` as JSON.
    #[serde(default = "empty_object")]
    pub config: Value,
    /// Files (JSON, or YAML for any other extension; relative to this file)
    /// read whenever the provider is loaded, so on every reload, and put
    /// into `config` under their key: `{passport: passport.json}`.
    #[serde(default)]
    pub config_files: std::collections::BTreeMap<String, PathBuf>,
    /// The sandbox limits (`limits:`); absent keys take their defaults.
    #[serde(default)]
    pub limits: Limits,
    /// What this provider's failures mean: `deny` or `allow` (fail open, for
    /// advisory providers only). Absent: as `guardrails.fail_closed` says.
    #[serde(default)]
    pub on_error: Option<OnError>,
    /// `warm` (default): instances are configured once and reused.
    /// `fresh`: a new instance for every call, nothing carries over between calls.
    #[serde(default)]
    pub instance: InstanceMode,
    /// The publisher keys a bundle (`wasm:` naming a bundle directory) may be
    /// signed with, and the revoked ones; instead of, or as well as, `sha256`.
    #[serde(default)]
    pub trust: Option<Trust>,
    /// Conformance vectors (JSON Lines, as `warden test` reads them; relative
    /// to this file) the build must pass before a set holding it goes live:
    /// the reload gate. A bundle's own vectors go through the same gate.
    #[serde(default)]
    pub vectors: Option<PathBuf>,
    /// `guardrail` (default): runs in the provider chain. `classifier`: exports
    /// the classifier world and is consulted by risk triage only.
    #[serde(default)]
    pub role: Role,
    /// `live` (default): its opinion counts. `shadow`: judged like a live one,
    /// under the same limits, on the same calls, after the answer is decided,
    /// and never changes it; the decision log records what it would have
    /// changed.
    #[serde(default)]
    pub mode: Mode,
    /// Where each value of `config` is written in the configuration file
    /// (by JSON pointer under `config`): filled by the configuration's
    /// loader, never read from the file. Empty: no positions.
    #[serde(skip)]
    pub config_sources: SourceMap,
}

/// Whether a provider's opinion counts (`mode:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Its opinion decides, with the others'.
    #[default]
    Live,
    /// Its opinion is recorded beside the answer, never in it.
    Shadow,
}

/// Whose signature a provider bundle may carry (`trust:`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trust {
    /// The publishers' keys a bundle may be signed with.
    #[serde(default)]
    pub publisher_keys: Vec<PublisherKey>,
    /// Keys no bundle is accepted from any more (`ed25519:<base64>`).
    #[serde(default)]
    pub revoked: Vec<String>,
}

/// One trusted publisher key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublisherKey {
    /// `ed25519:` and the base64 of the 32-byte public key, as `warden bundle`
    /// prints it.
    pub key: String,
    /// When the key stops being trusted (RFC 3339); absent: never.
    #[serde(default)]
    pub expires: Option<String>,
}

/// What a component is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Runs in the provider chain and gives a decision on every call.
    #[default]
    Guardrail,
    /// Exports the classifier world; consulted by risk triage only.
    Classifier,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// The largest file `config_files` may name.
pub const MAX_CONFIG_FILE_BYTES: u64 = InputKind::ConfigFile.limit();

/// Why a provider's config file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("config_files.{key}: {path}: {message}")]
pub struct ConfigFileError {
    /// The `config_files` key.
    pub key: String,
    /// The file's path, as resolved.
    pub path: String,
    /// Why it could not be read or parsed.
    pub message: String,
}

impl ProviderSpec {
    /// The provider's configuration with every `config_files` entry read
    /// (relative to `base_dir`) and put in under its key.
    pub fn resolved_config(&self, base_dir: &Path) -> Result<Value, ConfigFileError> {
        self.resolved_config_with_sources(base_dir)
            .map(|(config, _)| config)
    }

    /// As [`ProviderSpec::resolved_config`], with where each value is
    /// written: `config`'s in the configuration file, each file's in that
    /// file, by JSON pointer into the resolved config.
    pub fn resolved_config_with_sources(
        &self,
        base_dir: &Path,
    ) -> Result<(Value, SourceMap), ConfigFileError> {
        self.resolve(base_dir)
            .map(|(config, sources)| (config.into_owned(), sources))
    }

    /// As [`ProviderSpec::resolved_config_with_sources`], borrowing the
    /// configuration where no file is put in (a policy of thousands of
    /// rules is not copied to be loaded).
    pub fn resolve(&self, base_dir: &Path) -> Result<(Cow<'_, Value>, SourceMap), ConfigFileError> {
        let mut sources = self.config_sources.clone();
        let mut config = Cow::Borrowed(&self.config);
        for (key, file) in &self.config_files {
            let path = base_dir.join(file);
            let error = |message: String| ConfigFileError {
                key: key.clone(),
                path: path.display().to_string(),
                message,
            };
            let text = input_file::read_to_string(&path, InputKind::ConfigFile)
                .map_err(|e| error(e.to_string()))?;
            let json = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"));
            let value: Value = if json {
                serde_json::from_str(&text).map_err(|e| error(format!("invalid JSON: {e}")))?
            } else {
                serde_norway::from_str(&text).map_err(|e| error(format!("invalid YAML: {e}")))?
            };
            if let Value::Object(map) = config.to_mut() {
                map.insert(key.clone(), value);
            }
            sources.graft(key, SourceMap::of_yaml(&text, &path.display().to_string()));
        }
        Ok((config, sources))
    }
}

/// How instances are reused between calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InstanceMode {
    /// Instances are configured once and reused, kept warm in the pool.
    #[default]
    Warm,
    /// A new instance for every call: nothing carries over between calls.
    Fresh,
}

/// Per-provider sandbox limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Wall-clock time for one call, including the wait for a free instance.
    pub timeout_ms: u64,
    /// WebAssembly fuel (roughly, instructions) for one call.
    pub fuel: u64,
    /// Wall-clock time for `configure`: loading the config into a new
    /// instance. Apart from `timeout_ms` so that a large policy can load
    /// while every call stays tightly bounded.
    pub configure_timeout_ms: u64,
    /// WebAssembly fuel for `configure`, apart from `fuel` for the same reason.
    pub configure_fuel: u64,
    /// The most linear memory one instance may have.
    pub memory_mb: u64,
    /// The largest request (tool name, arguments and attribution) the provider is given.
    pub max_input_bytes: usize,
    /// The largest decision the provider may return.
    pub max_output_bytes: usize,
    /// The most instances alive at once; a call waits for one at most `timeout_ms`.
    pub pool_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_ms: 100,
            fuel: 100_000_000,
            // Enough for the rules provider to load 10,000 rules of every
            // condition kind, with room to spare.
            configure_timeout_ms: 2_000,
            configure_fuel: 2_000_000_000,
            memory_mb: 64,
            max_input_bytes: 256 * 1024,
            max_output_bytes: 64 * 1024,
            pool_size: 4,
        }
    }
}

impl Limits {
    /// Ranges that keep a provider both useful and contained.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let range = |field: &'static str, value: u64, lo: u64, hi: u64| {
            if value < lo || value > hi {
                Err((field, format!("{value} is out of range {lo}..={hi}")))
            } else {
                Ok(())
            }
        };
        range("timeout_ms", self.timeout_ms, 1, 60_000)?;
        range("fuel", self.fuel, 1_000, 1 << 50)?;
        range(
            "configure_timeout_ms",
            self.configure_timeout_ms,
            1,
            600_000,
        )?;
        range("configure_fuel", self.configure_fuel, 1_000, 1 << 50)?;
        range("memory_mb", self.memory_mb, 1, 4096)?;
        range("max_input_bytes", self.max_input_bytes as u64, 64, 64 << 20)?;
        range(
            "max_output_bytes",
            self.max_output_bytes as u64,
            64,
            16 << 20,
        )?;
        range("pool_size", self.pool_size as u64, 1, 256)?;
        Ok(())
    }

    /// `timeout_ms` as a duration.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms)
    }

    /// `configure_timeout_ms` as a duration.
    pub fn configure_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.configure_timeout_ms)
    }

    /// The longest one call into the component can take under these limits:
    /// the wait for a free instance (up to `timeout_ms`), then, when the pool
    /// has no warm one, making and configuring a new one (up to
    /// `configure_timeout_ms`), and the call itself, each of those two stopped
    /// at the epoch tick after its own deadline. A host that must not wait
    /// longer than some budget (an event loop) decides by this, not by
    /// `timeout_ms`.
    pub fn worst_case(&self) -> std::time::Duration {
        let in_guest = |timeout: std::time::Duration| {
            crate::engine::EPOCH_TICK
                .saturating_mul(crate::engine::SandboxEngine::ticks_for(timeout) as u32)
        };
        let timeout = self.timeout();
        timeout
            .saturating_add(in_guest(self.configure_timeout()))
            .saturating_add(in_guest(timeout))
    }

    /// `memory_mb` in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.memory_mb as usize) << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_worst_case_of_a_call_counts_the_wait_the_configure_and_the_call() {
        let limits = Limits {
            timeout_ms: 1,
            configure_timeout_ms: 1,
            ..Limits::default()
        };
        // 1 ms waiting for an instance, then 2 ticks (1 ms and the tick after
        // it) each for configuring a new one and for the call.
        assert_eq!(limits.worst_case(), Duration::from_millis(5));
        let limits = Limits {
            timeout_ms: 100,
            configure_timeout_ms: 2_000,
            ..Limits::default()
        };
        assert_eq!(
            limits.worst_case(),
            Duration::from_millis(100 + 2_001 + 101)
        );
    }
}
