//! Reload on a change of the config file. The file's directory is watched, not
//! the file, because editors save by writing a new file and renaming it over
//! the old one. A burst of events is settled for a moment before reloading, and
//! a file whose bytes did not change is not reloaded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;

use crate::{DaemonState, ServeError, Trigger};

/// How long the file must be quiet before it is reloaded.
const SETTLE: Duration = Duration::from_millis(50);

/// Watches the config file while alive.
pub(super) struct ConfigWatcher {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl ConfigWatcher {
    /// Starts watching; must be called on a tokio runtime.
    pub(super) fn start(daemon: Arc<DaemonState>) -> Result<ConfigWatcher, ServeError> {
        let path = absolute(daemon.config_path());
        let failed = |message: String| ServeError::Watch {
            path: path.display().to_string(),
            message,
        };
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| failed("the file has no directory".into()))?;
        let name = path.file_name().map(|n| n.to_os_string());
        let (changed, mut changes) = mpsc::channel::<()>(1);
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
                Ok(event) => {
                    let ours = event
                        .paths
                        .iter()
                        .any(|p| p.file_name().map(|n| n.to_os_string()) == name);
                    if ours && !event.kind.is_access() {
                        // A full queue already holds a pending change.
                        let _ = changed.try_send(());
                    }
                }
                Err(err) => tracing::warn!(%err, "config file watch error"),
            })
            .map_err(|e| failed(e.to_string()))?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|e| failed(e.to_string()))?;
        let task = tokio::spawn(async move {
            while changes.recv().await.is_some() {
                tokio::time::sleep(SETTLE).await;
                while changes.try_recv().is_ok() {}
                let daemon = daemon.clone();
                // Errors are logged, counted and audited by the reload itself.
                let _ =
                    tokio::task::spawn_blocking(move || daemon.reload_if_changed(&Trigger::Watch))
                        .await;
            }
        });
        tracing::info!(path = %path.display(), "watching the config file");
        Ok(ConfigWatcher {
            _watcher: watcher,
            task,
        })
    }
}

impl Drop for ConfigWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
