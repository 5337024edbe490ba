//! The group-commit writer: an append-only JSON-lines file whose lines a
//! caller only copies into a buffer, written out and synced by two background
//! threads.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::{DEFAULT_FSYNC_INTERVAL_MS, Fsync};
use crate::error::DecisionLogError;

/// An append-only JSON-lines file. A line is copied into a buffer under a lock
/// (no system call, no thread to wake, on the caller's path); a background
/// thread writes the buffer out to the file every `fsync_interval_ms`
/// ([`Fsync::Interval`]) or as soon as a line is waiting ([`Fsync::Always`],
/// where callers wait for [`JsonLines::synced`]), and a second one syncs what
/// was written to the disk: one sync carries every line written meanwhile, and
/// a slow disk delays only the sync, never the next write, so that a kill of
/// the process loses at most the lines of one interval. [`JsonLines::flush`]
/// and dropping write and sync everything at once.
pub struct JsonLines {
    path: PathBuf,
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    pending: Mutex<Pending>,
    /// A line is waiting (always), or the log is closing.
    woken: Condvar,
    file: File,
    /// Held while a batch is written, so that batches reach the file in the
    /// order they were taken.
    out: Mutex<Failing>,
    /// What the writer has written out, for the syncer.
    written: Mutex<Written>,
    /// The writer wrote a batch, or is closing.
    wrote: Condvar,
    /// The number of the last line written and synced.
    synced: tokio::sync::watch::Sender<u64>,
    errors: AtomicU64,
    /// Set while syncs fail, so that an outage is reported once.
    sync_failing: AtomicBool,
    fsync: Fsync,
    interval: Duration,
    path: String,
}

/// Lines appended and not yet written.
struct Pending {
    lines: Vec<u8>,
    /// Lines appended since the file was opened.
    appended: u64,
    stop: bool,
}

/// Set while writes fail, so that an outage is reported once.
struct Failing(bool);

/// The lines written out (or tried), by number, and whether the writer is done.
struct Written {
    upto: u64,
    stop: bool,
}

impl JsonLines {
    /// Opens `path` for appending, creating it (0600) and its directory
    /// (0700), synced every [`DEFAULT_FSYNC_INTERVAL_MS`].
    pub fn open(path: &Path) -> Result<JsonLines, DecisionLogError> {
        Self::open_with(
            path,
            Fsync::Interval,
            Duration::from_millis(DEFAULT_FSYNC_INTERVAL_MS),
        )
    }

    /// As [`JsonLines::open`], synced as `fsync` says.
    pub fn open_with(
        path: &Path,
        fsync: Fsync,
        interval: Duration,
    ) -> Result<JsonLines, DecisionLogError> {
        let open_error = |source| DecisionLogError::Open {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            warden_runtime::data_dir::create_private_dir(dir).map_err(open_error)?;
        }
        let file = warden_runtime::data_dir::open_private_append(path).map_err(open_error)?;
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                lines: Vec::with_capacity(64 * 1024),
                appended: 0,
                stop: false,
            }),
            woken: Condvar::new(),
            file,
            out: Mutex::new(Failing(false)),
            written: Mutex::new(Written {
                upto: 0,
                stop: false,
            }),
            wrote: Condvar::new(),
            synced: tokio::sync::watch::Sender::new(0),
            errors: AtomicU64::new(0),
            sync_failing: AtomicBool::new(false),
            fsync,
            interval,
            path: path.display().to_string(),
        });
        let mut threads = Vec::with_capacity(2);
        for (name, run) in [
            ("warden-log", Shared::write_in_background as fn(&Shared)),
            ("warden-log-sync", Shared::sync_in_background),
        ] {
            let own = shared.clone();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || run(&own));
            match thread {
                Ok(thread) => threads.push(thread),
                Err(err) => {
                    // Stop the one already started.
                    JsonLines::stop(&shared, threads);
                    return Err(open_error(err));
                }
            }
        }
        Ok(JsonLines {
            path: path.to_path_buf(),
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// Appends one record as a line.
    pub fn append(&self, record: &impl Serialize) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(err) => {
                tracing::error!(path = %self.path.display(), %err, "cannot serialise a log record");
                self.shared.errors.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        line.push(b'\n');
        let mut pending = self.shared.lock_pending();
        pending.lines.extend_from_slice(&line);
        pending.appended += 1;
        if self.shared.fsync == Fsync::Always {
            self.shared.woken.notify_one();
        }
    }

    /// With [`Fsync::Always`], waits until every line appended so far is on
    /// the disk (or failed to get there, which is counted); otherwise at once.
    pub async fn synced(&self) {
        if self.shared.fsync != Fsync::Always {
            return;
        }
        let target = self.shared.lock_pending().appended;
        let mut synced = self.shared.synced.subscribe();
        // The sender lives as long as `self`: this cannot fail.
        let _ = synced.wait_for(|done| *done >= target).await;
    }

    /// Writes out and syncs every line appended so far.
    pub fn flush(&self) {
        let upto = self.shared.write_out();
        self.shared.sync(upto);
    }

    /// Lines that could not be serialised, written or synced, since opened.
    pub fn write_errors(&self) -> u64 {
        self.shared.errors.load(Ordering::Relaxed)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tells the threads to write and sync what is left and stop, and waits
    /// for them.
    fn stop(shared: &Shared, threads: Vec<JoinHandle<()>>) {
        shared.lock_pending().stop = true;
        shared.woken.notify_all();
        // The syncer stops once the writer has; if the writer never started,
        // tell the syncer here.
        shared.lock_written().stop = true;
        shared.wrote.notify_all();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_written(&self) -> std::sync::MutexGuard<'_, Written> {
        self.written.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the waiting lines and writes them out (to the operating
    /// system, not yet the disk), in order; returns the number of the last.
    fn write_out(&self) -> u64 {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (lines, upto) = {
            let mut pending = self.lock_pending();
            let lines = std::mem::replace(&mut pending.lines, Vec::with_capacity(64 * 1024));
            (lines, pending.appended)
        };
        if !lines.is_empty() {
            match (&self.file).write_all(&lines) {
                Ok(()) => out.0 = false,
                Err(err) => {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                    if !out.0 {
                        tracing::error!(path = %self.path, %err, "cannot write the log; records are being lost");
                    }
                    out.0 = true;
                }
            }
        }
        upto
    }

    /// Syncs what was written to the disk and publishes that lines up to
    /// `upto` are there, after a failure too: a caller waits for the
    /// attempt, and a failed one is counted in
    /// `warden_decision_log_write_errors_total`.
    fn sync(&self, upto: u64) {
        match self.file.sync_data() {
            Ok(()) => self.sync_failing.store(false, Ordering::Relaxed),
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if !self.sync_failing.swap(true, Ordering::Relaxed) {
                    tracing::error!(path = %self.path, %err, "cannot sync the log; records may be lost");
                }
            }
        }
        self.synced.send_if_modified(|done| {
            let advanced = upto > *done;
            *done = (*done).max(upto);
            advanced
        });
    }

    /// The writer: takes the lines on a fixed cadence (`interval`: the time a
    /// write takes does not stretch it) or as soon as one waits (`always`),
    /// writes them out and hands them to the syncer.
    fn write_in_background(&self) {
        let mut due = Instant::now() + self.interval;
        loop {
            let stop = {
                let mut pending = self.lock_pending();
                match self.fsync {
                    Fsync::Always => {
                        while pending.lines.is_empty() && !pending.stop {
                            pending = self.woken.wait(pending).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    Fsync::Interval => loop {
                        let now = Instant::now();
                        if pending.stop || now >= due {
                            break;
                        }
                        pending = self
                            .woken
                            .wait_timeout(pending, due - now)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    },
                }
                pending.stop
            };
            let upto = self.write_out();
            {
                let mut written = self.lock_written();
                written.upto = written.upto.max(upto);
                written.stop |= stop;
            }
            self.wrote.notify_one();
            if stop {
                return;
            }
            due = (due + self.interval).max(Instant::now());
        }
    }

    /// The syncer: syncs whatever was written since its last sync.
    fn sync_in_background(&self) {
        let mut done = 0;
        loop {
            let (upto, stop) = {
                let mut written = self.lock_written();
                while written.upto <= done && !written.stop {
                    written = self.wrote.wait(written).unwrap_or_else(|e| e.into_inner());
                }
                (written.upto, written.stop)
            };
            if upto > done {
                self.sync(upto);
                done = upto;
            }
            if stop && self.lock_written().upto <= done {
                return;
            }
        }
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        JsonLines::stop(&self.shared, threads);
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn appended_lines_are_in_the_file_after_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log/decisions.jsonl");
        let log = JsonLines::open(&path).unwrap();
        log.append(&json!({"n": 1}));
        log.flush();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\":1}\n");
    }

    #[test]
    fn lines_from_many_threads_stay_whole_and_all_are_written_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        let log = JsonLines::open(&path).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let log = &log;
                s.spawn(move || {
                    for i in 0..500 {
                        log.append(&json!({"t": t, "i": i, "pad": "x".repeat(100)}));
                    }
                });
            }
        });
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2000);
    }

    #[test]
    fn an_existing_log_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        std::fs::write(&path, "{\"old\":true}\n").unwrap();
        let log = JsonLines::open(&path).unwrap();
        log.append(&json!({"new": true}));
        drop(log);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }
}
