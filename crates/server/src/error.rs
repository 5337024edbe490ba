//! Why the daemon could not start, or a reload could not apply a file.

use std::net::SocketAddr;

use crate::auth::TokenError;
use crate::config::ConfigError;
use warden_approval::StoreError;
use warden_log::DecisionLogError;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The library refused the configuration: a provider, the signing key, a
    /// policy section, the data directory.
    #[error(transparent)]
    Warden(#[from] warden::Error),
    #[error(transparent)]
    Tokens(#[from] TokenError),
    #[error("{0}")]
    Limits(String),
    #[error(transparent)]
    Log(#[from] DecisionLogError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{config}: no token is configured under server.tokens, so nobody could call the daemon; add one, e.g.\n  server:\n    tokens:\n      - {{name: my-agent, role: agent, token_env: WARDEN_AGENT_TOKEN}}"
    )]
    NoTokens { config: String },
    #[error("{0}")]
    Notify(String),
    #[error("cannot start the judging threads: {0}")]
    Workers(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot watch the config file {path}: {message}")]
    Watch { path: String, message: String },
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}
