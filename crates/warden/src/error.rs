//! Why the library could not load a configuration or swap one in: one error
//! for every fallible call of the facade, each variant naming what failed.

use std::path::PathBuf;

use warden_runtime::provider::LoadError;

use crate::config::ConfigError;

/// Why [`crate::Warden::new`], [`crate::Warden::reload`] or
/// [`crate::Snapshot::load`] failed; nothing was swapped in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration was refused (its file, key and line).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A provider or the classifier could not be loaded (read, verified,
    /// compiled, linked): the error names it.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A provider loaded, but refused its configuration.
    #[error("provider '{provider}' could not be configured: {message}")]
    Unhealthy {
        /// The provider's name in the configuration.
        provider: String,
        /// What the provider said.
        message: String,
    },
    /// The decision-signing key (`signing.key`) could not be used.
    #[error("signing: {0}")]
    Signing(#[from] crate::signing::SigningError),
    /// A native policy section could not be compiled (`permissions`,
    /// `decision_log.redact`): the message names the key.
    #[error("{message}")]
    Policy {
        /// What failed, and where.
        message: String,
    },
    /// The data directory could not be created with owner-only permissions.
    #[error("cannot create the data directory {}: {source}", path.display())]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The shadow configuration's candidate (`shadow.config`) could not be
    /// loaded or configured: the source names the provider or the key.
    #[error("shadow configuration {path}: {source}")]
    Shadow {
        /// The candidate's file.
        path: String,
        /// Why.
        source: Box<Error>,
    },
    /// [`crate::Warden::promote`] found no shadow configuration to make live.
    #[error("nothing to promote: {message}")]
    NoShadow {
        /// Why (none configured, or it ended).
        message: String,
    },
    /// [`crate::Warden::rollback`] found no set to go back to.
    #[error("nothing to roll back: no promotion since the live set was loaded")]
    NothingToRollBack,
}
