//! Why a provider could not be loaded at all.

/// Why a provider could not be loaded at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    #[error("provider '{provider}': cannot read {path}: {source}")]
    Read {
        provider: String,
        path: String,
        source: std::io::Error,
    },
    #[error("provider '{provider}': there is no shipped provider '{name}' (shipped: {shipped})")]
    UnknownBuiltin {
        provider: String,
        name: String,
        shipped: String,
    },
    #[error(
        "provider '{provider}': SHA-256 mismatch for {path}: expected {expected}, actual {actual}"
    )]
    DigestMismatch {
        provider: String,
        path: String,
        expected: String,
        actual: String,
    },
    #[error("provider '{provider}': {path} is not a valid WebAssembly component: {message}")]
    Compile {
        provider: String,
        path: String,
        message: String,
    },
    #[error(
        "provider '{provider}': the component imports `{import}`, which Warden does not grant to providers"
    )]
    ForbiddenImport { provider: String, import: String },
    #[error("provider '{provider}': {message}")]
    Contract { provider: String, message: String },
    /// The WebAssembly engine could not be started (`EngineError`).
    #[error("provider '{provider}': {message}")]
    Engine { provider: String, message: String },
    #[error("provider '{provider}': cannot link the component: {message}")]
    Link { provider: String, message: String },
    #[error("provider '{provider}': {source}")]
    ConfigFile {
        provider: String,
        source: crate::spec::ConfigFileError,
    },
}
