//! The configuration file as the daemon reads it: the library's sections
//! (`warden::Config`: providers, permissions, triage, approvals, signing) and
//! the daemon's own (`server:`, and `decision_log:` beyond `redact`), from one
//! file. The library refuses unknown top-level keys; this refuses unknown keys
//! inside the daemon's sections, each error naming the file, the key and the
//! line.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use warden::config::{ConfigError, Limits, OnError};

use crate::ServerConfig;
use crate::decision_log::DecisionLogConfig;

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
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let base_dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Config::parse(&text, &path.display().to_string(), base_dir)
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
