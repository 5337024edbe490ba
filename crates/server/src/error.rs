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
    /// The config file cannot be read or is not valid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The library refused the configuration: a provider, the signing key, a
    /// policy section, the data directory.
    #[error(transparent)]
    Warden(#[from] warden::Error),
    /// `server.tokens` cannot be used.
    #[error(transparent)]
    Tokens(#[from] TokenError),
    /// `server.limits` holds a value that cannot be used.
    #[error("{0}")]
    Limits(String),
    /// The decision log cannot be opened.
    #[error(transparent)]
    Log(#[from] DecisionLogError),
    /// The approval store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{config}: no token is configured under server.tokens, so nobody could call the daemon; add one, e.g.\n  server:\n    tokens:\n      - {{name: my-agent, role: agent, token_env: WARDEN_AGENT_TOKEN}}"
    )]
    /// No token is configured, so nobody could call the daemon.
    NoTokens {
        /// The config file's path.
        config: String,
    },
    /// `server.notify` cannot be used.
    #[error("{0}")]
    Notify(String),
    /// The node name given on the command line (`--node-name`) cannot name
    /// a node.
    #[error("--node-name {0}")]
    NodeName(String),
    /// The judging pool's threads could not be started.
    #[error("cannot start the judging threads: {0}")]
    Workers(std::io::Error),
    #[error("cannot listen on {addr}: {source}")]
    /// The listening address cannot be bound.
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why not.
        source: std::io::Error,
    },
    #[error("cannot watch the config file {path}: {message}")]
    /// The config file cannot be watched for changes.
    Watch {
        /// The config file's path.
        path: String,
        /// Why not.
        message: String,
    },
    /// The promotion record in the data directory cannot be read or removed.
    #[error(
        "promotion record {path}: {message} (remove the file to serve the config file as it is)"
    )]
    Promotion {
        /// The record's path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Serving failed after the daemon started.
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}
