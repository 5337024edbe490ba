//! The record of a promotion in the data directory ([`PROMOTION_FILE`]),
//! and what a start or a reload does with it: serve the recorded candidate
//! while the config file keeps the digest it was promoted over, else drop the
//! record (the file wins). Promotion itself is `promotion`'s.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use warden::config::ConfigFile;

use crate::config::Config;
use crate::error::ServeError;

/// The record of a promotion, in the data directory.
pub const PROMOTION_FILE: &str = "promotion.json";

/// What [`PROMOTION_FILE`] holds.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) promoted_at: String,
    /// Who promoted, as the swap log names them.
    pub(crate) by: String,
    /// The config file's SHA-256 at the promotion: the record holds while
    /// the file has it.
    pub(crate) config_sha256: String,
    /// The candidate's file, its directory anchoring its relative paths.
    pub(crate) candidate: String,
    pub(crate) candidate_sha256: String,
    /// The candidate's text as promoted: a later edit of its file does not
    /// change what a restart serves.
    pub(crate) candidate_text: String,
}

/// Replaces `config.core` with the promoted candidate when the data
/// directory records a promotion over a file with `digest`; removes a record
/// the file no longer matches. For the start and every reload.
pub(crate) fn apply(config: &mut Config, digest: &str, data_dir: &Path) -> Result<(), ServeError> {
    let path = data_dir.join(PROMOTION_FILE);
    let Some(record) = read(&path)? else {
        return Ok(());
    };
    if record.config_sha256 != digest {
        tracing::warn!(
            record = %path.display(),
            promoted_at = %record.promoted_at,
            "the config file changed since the promotion: the file wins, the promotion record is removed"
        );
        remove(&path).map_err(|message| failed(&path, message))?;
        return Ok(());
    }
    let candidate = Path::new(&record.candidate);
    let file = ConfigFile {
        text: record.candidate_text,
        name: record.candidate.clone(),
        base_dir: candidate
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        sha256: record.candidate_sha256,
    };
    config.core = config.core.candidate(&file)?;
    tracing::info!(
        candidate = %record.candidate,
        promoted_at = %record.promoted_at,
        by = %record.by,
        "serving the promoted candidate (the config file is unchanged since the promotion)"
    );
    Ok(())
}

pub(crate) fn read(path: &Path) -> Result<Option<Record>, ServeError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| failed(path, format!("not a promotion record: {e}"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failed(path, e.to_string())),
    }
}

pub(crate) fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
    }
}

pub(crate) fn failed(path: &Path, message: String) -> ServeError {
    ServeError::Promotion {
        path: path.display().to_string(),
        message,
    }
}
