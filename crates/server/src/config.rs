//! The configuration file as the daemon reads it: the library's sections
//! (`warden::Config`: providers, permissions, triage, approvals, signing) and
//! the daemon's own (`server:`, and `decision_log:` beyond `redact`), from one
//! file. The library refuses unknown top-level keys; this refuses unknown keys
//! inside the daemon's sections, each error naming the file, the key and the
//! line.

use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use warden::config::ConfigFile;
pub use warden::config::{ConfigError, Limits, OnError};

use warden_log::DecisionLogConfig;

use crate::auth::TokenSpec;
use crate::limits::HttpLimits;
use crate::proxies::TrustedProxies;

/// The daemon's whole configuration: the library's, and the daemon's sections.
/// It dereferences to the library's, which is what a call is judged with.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// What the library reads (`warden::Config`).
    pub core: warden::Config,
    /// The daemon (`warden serve`): address, tokens, request limits.
    pub server: ServerConfig,
    /// The daemon's decision log.
    pub decision_log: DecisionLogConfig,
}

/// The daemon's sections of the file; the library checked the rest.
#[derive(Deserialize)]
struct DaemonSections {
    #[serde(default)]
    server: ServerConfig,
    #[serde(default)]
    decision_log: DecisionLogConfig,
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
        Config {
            core: warden::Config::embedded(),
            ..Config::default()
        }
    }

    /// Parses and validates configuration text; `file` names it in errors and
    /// `base_dir` anchors its relative paths.
    pub fn parse(text: &str, file: &str, base_dir: PathBuf) -> Result<Config, ConfigError> {
        let core = warden::Config::parse(text, file, base_dir)?;
        let sections: DaemonSections = warden::config::parse_yaml(text, file)?;
        sections
            .server
            .check()
            .map_err(|(key, message)| core.invalid(format!("server.{key}"), message))?;
        Ok(Config {
            core,
            server: sections.server,
            decision_log: sections.decision_log,
        })
    }
}

impl From<warden::Config> for Config {
    /// The library's configuration with the daemon's defaults.
    fn from(core: warden::Config) -> Self {
        Config {
            core,
            ..Config::default()
        }
    }
}

impl Deref for Config {
    type Target = warden::Config;

    fn deref(&self) -> &warden::Config {
        &self.core
    }
}

impl DerefMut for Config {
    fn deref_mut(&mut self) -> &mut warden::Config {
        &mut self.core
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
        }
    }
}

impl ServerConfig {
    /// Checks what parsing cannot; on error, the key under `server` and why.
    pub fn check(&self) -> Result<(), (String, String)> {
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
