//! The reload gate: a provider's conformance vectors run against the build
//! being loaded, as configured, before any set holding it may go live. A
//! vector whose answer differs refuses the provider, and so the whole set: on a
//! reload the previous set keeps serving. One gate for both sources of
//! vectors, the operator's (`vectors:` beside the pin) and a signed bundle's,
//! so a build that traps on `evaluate` (its pin right) never serves.

use std::path::{Path, PathBuf};

use warden_runtime::input_file::{self, InputKind};
use warden_runtime::provider::{LoadError, Provider};

use crate::vectors::{self, Vector};

/// The vectors a build must pass, with the file they came from.
pub(crate) struct Suite {
    /// The file, as refusals name it.
    pub(crate) path: PathBuf,
    /// Its vectors, in order.
    pub(crate) vectors: Vec<Vector>,
}

/// Reads and parses a vectors file for `provider`; an unreadable or malformed
/// file refuses the provider, naming the file (and the line).
pub(crate) fn read(provider: &str, path: &Path) -> Result<Suite, LoadError> {
    let refused = |message: String| LoadError::Vectors {
        provider: provider.to_string(),
        path: path.display().to_string(),
        message,
    };
    let text = input_file::read_to_string(path, InputKind::ConfigFile)
        .map_err(|err| refused(format!("cannot read: {err}")))?;
    let vectors = vectors::parse(&text, &path.display().to_string())
        .map_err(|err| refused(err.to_string()))?;
    Ok(Suite {
        path: path.to_path_buf(),
        vectors,
    })
}

/// Runs every vector against `provider`; the first whose answer is not the
/// expected one refuses it, naming the vector, its line and both answers.
pub(crate) fn check(provider: &Provider, suite: &Suite) -> Result<(), LoadError> {
    for vector in &suite.vectors {
        if let Some(mismatch) = vectors::check(provider, vector).mismatch {
            return Err(LoadError::Vectors {
                provider: provider.name().to_string(),
                path: suite.path.display().to_string(),
                message: format!(
                    "vector '{}' (line {}) fails: expected {}, got {}",
                    vector.name, vector.line, mismatch.expected, mismatch.actual
                ),
            });
        }
    }
    Ok(())
}
