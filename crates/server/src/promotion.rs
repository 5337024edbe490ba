//! Promotion and rollback (`POST /v1/admin/promote`, `POST
//! /v1/admin/rollback`): the live set's shadow configuration made live in
//! the one atomic swap a reload makes, and the set it replaced made live
//! again.
//!
//! Config files may be mounted read-only, so a promotion is recorded in the
//! data directory ([`PROMOTION_FILE`]: the candidate's text, and the digest of
//! the config file it was promoted over). A start or a reload serves the
//! recorded candidate while the config file keeps that digest; once the file
//! changes, the file wins and the record is removed (logged). With `write`,
//! the config file itself is rewritten instead (a temporary file in its
//! folder, renamed over it): the candidate's library sections and the file's
//! own `server:` and `decision_log:`; the record of the reload then holds the
//! new digest, so the watcher's event for the rename finds nothing changed.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};
use sha2::{Digest, Sha256};
use warden::config::ConfigFile;
use warden_policy::clock::now_rfc3339;

use crate::config::Config;
use crate::promotion_record::{PROMOTION_FILE, Record, remove};
use crate::reload::{ReloadError, ReloadReport, Trigger};
use crate::state::{Applied, DaemonState};

/// The config file's text before a promotion rewrote it (`write`), in the
/// data directory.
pub const PREVIOUS_CONFIG: &str = "promotion-previous.yaml";

/// The top-level sections a rewritten config file keeps from the live file:
/// the daemon's, and the data directory (fixed at start).
const KEPT_SECTIONS: &[&str] = &["server", "decision_log", "telemetry", "data_dir"];

/// Why a promotion or a rollback was refused; nothing changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromoteError {
    /// There is no shadow configuration, or it ended.
    #[error("{0}")]
    NoShadow(String),
    /// No promotion to undo.
    #[error("nothing to roll back: no promotion since the live set was loaded")]
    NothingToRollBack,
    /// The record or the config file could not be written.
    #[error("{0}")]
    Write(String),
    /// Rolling back after a restart reloads the config file, and that failed.
    #[error(transparent)]
    Reload(#[from] ReloadError),
}

impl PromoteError {
    /// The error code the admin routes answer with.
    pub fn code(&self) -> &'static str {
        match self {
            PromoteError::NoShadow(_) => "no_shadow",
            PromoteError::NothingToRollBack => "nothing_to_roll_back",
            PromoteError::Write(_) => "promote_failed",
            PromoteError::Reload(_) => "reload_failed",
        }
    }
}

impl DaemonState {
    /// Makes the live set's shadow configuration live (see the module), as
    /// `who` asked; with `write`, rewrites the config file so that the
    /// candidate is the config.
    pub fn promote(&self, who: &Trigger, write: bool) -> Result<ReloadReport, PromoteError> {
        let mut applied = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let candidate = self
            .warden
            .shadow_candidate()
            .map_err(|e| PromoteError::NoShadow(e.to_string()))?;
        let record_path = self.fixed.data_dir.join(PROMOTION_FILE);
        let mut warnings = Vec::new();
        // Recorded first: a promotion that cannot be recorded does not happen.
        let undo = if write {
            let previous = self.rewrite(&candidate, &mut applied)?;
            remove(&record_path).map_err(PromoteError::Write)?;
            warnings.push(format!(
                "{} now holds the candidate; its previous text is in {}",
                self.config_path.display(),
                previous.display()
            ));
            Some(previous)
        } else {
            let record = Record {
                promoted_at: now_rfc3339(),
                by: who.who(),
                config_sha256: applied.config_sha256.clone(),
                candidate: absolute(Path::new(&candidate.name)),
                candidate_sha256: candidate.sha256.clone(),
                candidate_text: candidate.text.clone(),
            };
            let json = serde_json::to_vec_pretty(&record)
                .map_err(|e| PromoteError::Write(e.to_string()))?;
            write_atomically(&record_path, &json).map_err(PromoteError::Write)?;
            None
        };
        let (mut report, _) = match self.warden.promote() {
            Ok(done) => done,
            Err(err) => {
                // The shadow ended in between: put back what was written.
                if let Some(previous) = &undo {
                    let text = std::fs::read(previous).unwrap_or_default();
                    let _ = write_atomically(&self.config_path, &text);
                    applied.config_sha256 = hex::encode(Sha256::digest(&text));
                }
                let _ = remove(&record_path);
                return Err(PromoteError::NoShadow(err.to_string()));
            }
        };
        applied.rewritten = undo;
        self.metrics.swapped(Some("promote"), report.generation);
        self.audit_swap("promote", who, &report);
        tracing::info!(
            who = %who.who(),
            old = report.previous_generation,
            new = report.generation,
            candidate = %candidate.name,
            write,
            "shadow configuration promoted"
        );
        report.warnings = warnings;
        Ok(report)
    }

    /// Makes the set the last promotion replaced live again and removes the
    /// promotion's record; after a restart (the replaced set is gone from
    /// memory) it reloads the config file instead.
    pub fn rollback(&self, who: &Trigger) -> Result<ReloadReport, PromoteError> {
        let mut applied = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        let record_path = self.fixed.data_dir.join(PROMOTION_FILE);
        let recorded = record_path.exists();
        if !self.warden.can_roll_back() {
            if !recorded {
                return Err(PromoteError::NothingToRollBack);
            }
            remove(&record_path).map_err(PromoteError::Write)?;
            let report = self.reload_locked(who, &mut applied)?;
            tracing::info!(who = %who.who(), "promotion rolled back: the config file serves");
            return Ok(report);
        }
        remove(&record_path).map_err(PromoteError::Write)?;
        let mut report = self
            .warden
            .rollback()
            .map_err(|_| PromoteError::NothingToRollBack)?;
        if let Some(previous) = applied.rewritten.take() {
            report.warnings.push(format!(
                "{} still holds the promoted candidate (rewritten at the promotion): restore it \
                 from {} or the next reload or restart serves the candidate again",
                self.config_path.display(),
                previous.display()
            ));
        }
        self.metrics.swapped(Some("rollback"), report.generation);
        self.audit_swap("rollback", who, &report);
        tracing::info!(
            who = %who.who(),
            old = report.previous_generation,
            new = report.generation,
            "promotion rolled back"
        );
        Ok(report)
    }

    /// Rewrites the config file as the candidate's library sections and the
    /// file's own [`KEPT_SECTIONS`], atomically; records its digest as
    /// applied (so the watcher does not reload it). Returns where the
    /// previous text was kept.
    fn rewrite(
        &self,
        candidate: &ConfigFile,
        applied: &mut Applied,
    ) -> Result<PathBuf, PromoteError> {
        let refused = |message: String| {
            PromoteError::Write(format!(
                "cannot rewrite {}: {message}",
                self.config_path.display()
            ))
        };
        let live = ConfigFile::read(&self.config_path).map_err(|e| refused(e.to_string()))?;
        if live.sha256 != applied.config_sha256 {
            return Err(refused(
                "it changed since it was loaded: reload it first, then promote".into(),
            ));
        }
        let same_folder = folder(&candidate.base_dir)
            .is_some_and(|c| folder(&live.base_dir).is_some_and(|l| c == l));
        if !same_folder {
            return Err(refused(format!(
                "the candidate {} is in another folder, so its relative paths would change \
                 meaning: move it beside the config file, or promote without write",
                candidate.name
            )));
        }
        let text = compose(&live.text, &candidate.text).map_err(refused)?;
        Config::parse(&text, &live.name, live.base_dir.clone())
            .map_err(|e| refused(format!("the rewritten file would not load: {e}")))?;
        let previous = self.fixed.data_dir.join(PREVIOUS_CONFIG);
        write_atomically(&previous, live.text.as_bytes()).map_err(refused)?;
        write_atomically(&self.config_path, text.as_bytes()).map_err(refused)?;
        applied.config_sha256 = hex::encode(Sha256::digest(text.as_bytes()));
        Ok(previous)
    }
}

/// The rewritten config file: the live file's [`KEPT_SECTIONS`] (in their
/// place) and every other section of the candidate's; the live file's
/// library sections and its `shadow:` go. Comments are not kept.
fn compose(live: &str, candidate: &str) -> Result<String, String> {
    let mapping = |text: &str, what: &str| match serde_norway::from_str::<Value>(text) {
        Ok(Value::Mapping(m)) => Ok(m),
        Ok(Value::Null) => Ok(Mapping::new()),
        Ok(_) => Err(format!("the {what} is not a mapping")),
        Err(e) => Err(format!("the {what} is not YAML: {e}")),
    };
    let (live, candidate) = (
        mapping(live, "config file")?,
        mapping(candidate, "candidate")?,
    );
    let kept = |key: &Value| key.as_str().is_some_and(|k| KEPT_SECTIONS.contains(&k));
    let mut out = Mapping::new();
    for (key, value) in &live {
        if kept(key) {
            out.insert(key.clone(), value.clone());
        } else if let Some(value) = candidate.get(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    for (key, value) in &candidate {
        if !kept(key) && !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    serde_norway::to_string(&Value::Mapping(out)).map_err(|e| e.to_string())
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// synced and renamed over it: a reader sees the old file or the new one.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    // The file's mode stays what it was (a new one: owner-only).
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.write_all(bytes).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(path).map_err(|e| failed(e.error))?;
    if let Ok(folder) = std::fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// A file's folder, resolved (`""` is the working directory).
fn folder(dir: &Path) -> Option<PathBuf> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::canonicalize(dir).ok()
}

fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ServeOptions;

    const TOKENS: &str =
        "server:\n  tokens:\n    - {name: ops, role: admin, token: admin-token-0123456789abcdef}\n";

    #[test]
    fn a_config_file_rewritten_by_a_promotion_is_not_reloaded_again_by_the_watcher() {
        let dir = tempfile::tempdir().unwrap();
        let candidate = "guardrails:\n  providers:\n    - {name: strict, wasm: 'builtin:allowlist', config: {allowed_tools: []}}\n";
        std::fs::write(dir.path().join("candidate.yaml"), candidate).unwrap();
        let live =
            format!("shadow: {{config: candidate.yaml, until: '2999-01-01T00:00:00Z'}}\n{TOKENS}");
        let path = dir.path().join("warden.yaml");
        std::fs::write(&path, live).unwrap();
        let options = ServeOptions {
            data_dir: Some(dir.path().join("data")),
            watch: Some(false),
            ..ServeOptions::default()
        };
        let daemon = DaemonState::load(&path, &options).unwrap();
        let who = Trigger::Admin("ops".into());
        let promoted = daemon.promote(&who, true).unwrap();
        // What the watcher runs on the rename's event: nothing changed.
        assert!(daemon.reload_if_changed(&Trigger::Watch).is_none());
        assert_eq!(daemon.warden().snapshot().generation(), promoted.generation);
        // A later edit is still seen.
        std::fs::write(&path, format!("{candidate}{TOKENS}# edited\n")).unwrap();
        assert!(daemon.reload_if_changed(&Trigger::Watch).is_some());
    }

    #[test]
    fn a_rewritten_file_keeps_the_daemons_sections_and_takes_the_candidates_others() {
        let live = "guardrails: {enabled: true}\nserver: {listen: '127.0.0.1:1'}\nshadow: {config: c.yaml, until: '2030-01-01T00:00:00Z'}\ndecision_log: {fsync: always}\n";
        let candidate = "server: {listen: '127.0.0.1:2'}\nguardrails: {enabled: false}\ntriage: {detector: true}\n";
        let out: Value = serde_norway::from_str(&compose(live, candidate).unwrap()).unwrap();
        assert_eq!(out["guardrails"]["enabled"], Value::Bool(false));
        assert_eq!(out["server"]["listen"], Value::from("127.0.0.1:1"));
        assert_eq!(out["decision_log"]["fsync"], Value::from("always"));
        assert_eq!(out["triage"]["detector"], Value::Bool(true));
        assert!(out.get("shadow").is_none());
    }
}
