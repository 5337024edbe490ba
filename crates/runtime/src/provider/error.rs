//! Why a provider could not be loaded at all.

/// Why a provider could not be loaded at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The component file could not be read.
    #[error("provider '{provider}': cannot read {path}: {source}")]
    Read {
        /// The provider's name in the config.
        provider: String,
        /// The component's path.
        path: String,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// `builtin:<name>` names no provider shipped in the binary.
    #[error("provider '{provider}': there is no shipped provider '{name}' (shipped: {shipped})")]
    UnknownBuiltin {
        /// The provider's name in the config.
        provider: String,
        /// The name after `builtin:`.
        name: String,
        /// The shipped providers' names, comma-separated.
        shipped: String,
    },
    /// The component is not the one the config pins (`sha256`).
    #[error(
        "provider '{provider}': SHA-256 mismatch for {path}: expected {expected}, actual {actual}"
    )]
    DigestMismatch {
        /// The provider's name in the config.
        provider: String,
        /// The component's path.
        path: String,
        /// The pinned SHA-256, hex.
        expected: String,
        /// The file's SHA-256, hex.
        actual: String,
    },
    /// The bytes are not a WebAssembly component wasmtime can compile.
    #[error("provider '{provider}': {path} is not a valid WebAssembly component: {message}")]
    Compile {
        /// The provider's name in the config.
        provider: String,
        /// Where the component came from (its path, or `builtin:<name>`).
        path: String,
        /// wasmtime's message.
        message: String,
    },
    /// The component imports an interface Warden does not grant (files, sockets, http, ...).
    #[error(
        "provider '{provider}': the component imports `{import}`, which Warden does not grant to providers"
    )]
    ForbiddenImport {
        /// The provider's name in the config.
        provider: String,
        /// The import, as the component names it.
        import: String,
    },
    /// The component does not export the guardrail contract, or a version this host does not speak.
    #[error("provider '{provider}': {message}")]
    Contract {
        /// The provider's name in the config.
        provider: String,
        /// What it exports instead, or how the types differ.
        message: String,
    },
    /// The WebAssembly engine could not be started (`EngineError`).
    #[error("provider '{provider}': {message}")]
    Engine {
        /// The provider's name in the config.
        provider: String,
        /// Why the engine could not start.
        message: String,
    },
    /// The host functions could not be linked to the component.
    #[error("provider '{provider}': cannot link the component: {message}")]
    Link {
        /// The provider's name in the config.
        provider: String,
        /// wasmtime's message.
        message: String,
    },
    /// A `config_files` entry could not be read or parsed.
    #[error("provider '{provider}': {source}")]
    ConfigFile {
        /// The provider's name in the config.
        provider: String,
        /// Which entry, and why.
        source: crate::spec::ConfigFileError,
    },
    /// The component's `warden:manifest` section could not be read.
    #[error("provider '{provider}': {path}: {source}")]
    Manifest {
        /// The provider's name in the config.
        provider: String,
        /// Where the component came from.
        path: String,
        /// What is wrong with the section.
        source: crate::manifest::ManifestError,
    },
    /// The provider's `config:` breaks the schema its manifest gives (or
    /// that schema is unusable).
    #[error("provider '{provider}': {source}")]
    ConfigSchema {
        /// The provider's name in the config.
        provider: String,
        /// Which field, and what the schema wanted.
        source: crate::config_schema::SchemaError,
    },
    /// A provider bundle does not verify (signature, digest, key, contract);
    /// its vectors failing is [`LoadError::Vectors`].
    #[error("provider '{provider}': bundle {path}: {message}")]
    Bundle {
        /// The provider's name in the config.
        provider: String,
        /// The bundle's directory.
        path: String,
        /// What did not verify.
        message: String,
    },
    /// The reload gate refused the build: its vectors file (`vectors:`, or a
    /// bundle's) could not be read, or a vector's answer is not the expected
    /// one. The message names the vector.
    #[error("provider '{provider}': vectors {path}: {message}")]
    Vectors {
        /// The provider's name in the config.
        provider: String,
        /// The vectors file.
        path: String,
        /// Which vector failed and how, or why the file is unusable.
        message: String,
    },
}
