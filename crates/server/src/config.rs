//! The configuration file as the daemon reads it, composed of the library's
//! sections (`warden::Config`: providers, permissions, triage, approvals,
//! signing), the approval store's (`hitl_approval.durability`) and the
//! daemon's own (`server:`, `decision_log:`), from one file.
//! The library reads its sections, skipping the daemon's, and refuses every
//! top-level key nobody owns; this reads the daemon's sections and refuses
//! unknown keys inside them, each error naming the file, the key and the line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use warden::config::ConfigFile;
pub use warden::config::{ConfigError, Limits, OnError};

use warden_approval::StoreConfig;
use warden_log::DecisionLogConfig;

use crate::auth::TokenSpec;
use crate::limits::HttpLimits;
use crate::proxies::TrustedProxies;
use crate::telemetry::TelemetryConfig;

/// The daemon's whole configuration: the library's, and the daemon's sections.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The library's sections (`warden::Config`): what a call is judged
    /// with. Its `redact` is `decision_log.redact`.
    pub core: warden::Config,
    /// The approval store's keys (`hitl_approval.durability`, `hitl_approval.store`).
    pub store: StoreConfig,
    /// The daemon (`warden serve`): address, tokens, request limits.
    pub server: ServerConfig,
    /// The daemon's decision log.
    pub decision_log: DecisionLogConfig,
    /// OpenTelemetry (`telemetry:`); off where absent.
    pub telemetry: Option<TelemetryConfig>,
}

/// The top-level sections of the file the daemon owns.
const DAEMON_SECTIONS: &[&str] = &["server", "decision_log", "telemetry"];

/// The daemon's sections of the file; the library checked the rest.
#[derive(Deserialize)]
struct DaemonSections {
    #[serde(default)]
    server: ServerConfig,
    #[serde(default)]
    decision_log: DecisionLogConfig,
    #[serde(default)]
    telemetry: Option<TelemetryConfig>,
}

impl Config {
    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::load_with_digest(path).map(|(config, _)| config)
    }

    /// As [`Config::load`], with the SHA-256 of the file's bytes: what a
    /// reload compares to tell a change from a second event for one save.
    pub fn load_with_digest(path: &Path) -> Result<(Config, String), ConfigError> {
        let file = ConfigFile::read(path)?;
        let config = Config::parse(&file.text, &file.name, file.base_dir)?;
        Ok((config, file.sha256))
    }

    /// The embedded default configuration (shipped providers only).
    pub fn embedded() -> Config {
        let store = StoreConfig::parse(warden::config::DEFAULT_CONFIG, "<embedded>")
            .expect("the embedded default configuration is valid");
        Config {
            store,
            ..Config::from(warden::Config::embedded())
        }
    }

    /// Parses and validates configuration text; `file` names it in errors and
    /// `base_dir` anchors its relative paths.
    pub fn parse(text: &str, file: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let (mut core, kept) =
            warden::Config::parse_own_keeping(text, file, base_dir, DAEMON_SECTIONS)?;
        let sections: DaemonSections = kept.read(text, file)?;
        sections
            .server
            .check()
            .map_err(|(key, message)| core.invalid(format!("server.{key}"), message))?;
        if let Some(telemetry) = &sections.telemetry {
            telemetry
                .check()
                .map_err(|(key, message)| core.invalid(format!("telemetry.{key}"), message))?;
        }
        core.redact = sections.decision_log.redact.clone();
        core.decision_log = sections.decision_log.clone();
        Ok(Config {
            core,
            store: StoreConfig::parse(text, file)?,
            server: sections.server,
            decision_log: sections.decision_log,
            telemetry: sections.telemetry,
        })
    }
}

impl From<warden::Config> for Config {
    /// The library's configuration with the daemon's defaults; the decision
    /// log redacts arguments with the patterns the library redacts reasons with.
    fn from(core: warden::Config) -> Self {
        let decision_log = DecisionLogConfig {
            redact: core.redact.clone(),
            ..DecisionLogConfig::default()
        };
        Config {
            core,
            decision_log,
            store: StoreConfig::default(),
            server: ServerConfig::default(),
            telemetry: None,
        }
    }
}

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";

/// The `server:` block of the configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The address to listen on.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Reload when the config file changes.
    #[serde(default = "yes")]
    pub watch_config: bool,
    /// Who may call, and as what.
    #[serde(default)]
    pub tokens: Vec<TokenSpec>,
    /// How much the daemon takes on, and for how long (`server.limits`).
    #[serde(default)]
    pub limits: HttpLimits,
    /// Where people reach this daemon (`https://warden.example.com`), for the
    /// links in notices and the console's cookies (`Secure` under https).
    #[serde(default)]
    pub public_url: Option<String>,
    /// Proxies whose `X-Forwarded-For` names the client (addresses or
    /// networks); none by default.
    #[serde(default)]
    pub trusted_proxies: TrustedProxies,
    /// This node's name, on every decision log line, `/healthz` and
    /// `/v1/admin/providers` (default: the host name).
    #[serde(default)]
    pub node_name: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: default_listen(),
            watch_config: true,
            tokens: Vec::new(),
            limits: HttpLimits::default(),
            public_url: None,
            trusted_proxies: TrustedProxies::default(),
            node_name: None,
        }
    }
}

impl ServerConfig {
    /// Checks what parsing cannot; on error, the key under `server` and why.
    pub fn check(&self) -> Result<(), (String, String)> {
        if let Some(name) = &self.node_name {
            warden_log::check_node_name(name)
                .map_err(|message| ("node_name".to_string(), format!("'{name}': {message}")))?;
        }
        if let Some(public) = &self.public_url {
            let url = url::Url::parse(public).map_err(|err| {
                (
                    "public_url".to_string(),
                    format!("'{public}' is not a URL: {err}"),
                )
            })?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err((
                    "public_url".into(),
                    format!("'{public}' must be an http:// or https:// URL with a host"),
                ));
            }
            if url.query().is_some() || url.fragment().is_some() {
                return Err((
                    "public_url".into(),
                    format!("'{public}' must not have a query or a fragment"),
                ));
            }
        }
        Ok(())
    }

    /// The node's name: `node_name`, else the host name; an error saying to
    /// set `node_name` where the host name cannot name the node.
    pub fn node_name(&self) -> Result<String, (String, String)> {
        match &self.node_name {
            Some(name) => Ok(name.clone()),
            None => warden_log::default_node_name().ok_or_else(|| {
                (
                    "node_name".to_string(),
                    "is not set and the host name cannot be read or is not a valid node name \
                     (ASCII letters, digits, '-', '_' and '.'): set it"
                        .to_string(),
                )
            }),
        }
    }

    /// `public_url` without a trailing slash, if set.
    pub fn public_base(&self) -> Option<String> {
        self.public_url
            .as_deref()
            .map(|u| u.trim_end_matches('/').to_string())
    }
}

fn default_listen() -> SocketAddr {
    DEFAULT_LISTEN.parse().expect("valid default address")
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, "serve.yaml", PathBuf::from("."))
    }

    #[test]
    fn one_file_configures_the_library_and_the_daemon() {
        let config = parse(
            "triage: {detector: true}\nserver:\n  listen: 127.0.0.1:9999\ndecision_log:\n  fsync: always\n  redact: ['acct-[0-9]+']\n",
        )
        .unwrap();
        assert!(config.core.triage.detector);
        assert_eq!(config.server.listen.port(), 9999);
        assert_eq!(config.decision_log.fsync, warden_log::Fsync::Always);
        // The library redacts reasons with the decision log's patterns.
        assert_eq!(config.core.redact, config.decision_log.redact);
        assert_eq!(config.core.redact, ["acct-[0-9]+"]);
    }

    #[test]
    fn a_typo_inside_server_is_refused_naming_its_path_and_line() {
        let err = parse("server:\n  listen: 127.0.0.1:9999\n  watch_confg: false\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("serve.yaml: server.watch_confg:"), "{err}");
        assert!(err.contains("unknown field `watch_confg`"), "{err}");
        assert!(err.contains("line 3"), "{err}");
    }

    #[test]
    fn a_typo_inside_decision_log_is_refused_naming_its_path_and_line() {
        let err = parse("decision_log:\n  redcat: [x]\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("serve.yaml: decision_log.redcat:"), "{err}");
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn an_unknown_top_level_key_is_refused_naming_it_and_its_line() {
        let err = parse("server: {}\nsever: {}\n").unwrap_err().to_string();
        assert!(
            err.starts_with("serve.yaml: sever: unknown field `sever`, expected one of"),
            "{err}"
        );
        assert!(err.contains("`server`, `decision_log`"), "{err}");
        assert!(err.ends_with("(line 2, column 1)"), "{err}");
    }

    #[test]
    fn telemetry_is_off_unless_configured_and_read_with_its_defaults() {
        assert_eq!(parse("server: {}\n").unwrap().telemetry, None);
        let config = parse("telemetry:\n  otlp_endpoint: http://127.0.0.1:4318\n").unwrap();
        let telemetry = config.telemetry.unwrap();
        assert_eq!(telemetry.service_name, "warden");
        assert_eq!((telemetry.sample_ratio, telemetry.logs), (1.0, false));
    }

    #[test]
    fn a_bad_telemetry_setting_is_refused_naming_its_key() {
        for (text, key) in [
            (
                "  otlp_endpoint: https://collector:4318\n",
                "telemetry.otlp_endpoint",
            ),
            (
                "  otlp_endpoint: http://c:4318\n  sample_ratio: 1.5\n",
                "telemetry.sample_ratio",
            ),
            (
                "  otlp_endpoint: http://c:4318\n  buffer: 0\n",
                "telemetry.buffer",
            ),
            (
                "  otlp_endpoint: http://c:4318\n  sampel_ratio: 1\n",
                "telemetry.sampel_ratio",
            ),
        ] {
            let err = parse(&format!("telemetry:\n{text}"))
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(&format!("serve.yaml: {key}:")), "{err}");
        }
    }

    #[test]
    fn the_embedded_default_is_valid_for_the_daemon() {
        let config = Config::embedded();
        assert!(!config.core.guardrails.providers.is_empty());
        assert_eq!(config.server, ServerConfig::default());
    }

    #[test]
    fn a_library_config_keeps_its_redaction_in_the_daemons_log() {
        let core = warden::Config {
            redact: vec!["acct-[0-9]+".into()],
            ..warden::Config::default()
        };
        assert_eq!(Config::from(core).decision_log.redact, ["acct-[0-9]+"]);
    }
}
