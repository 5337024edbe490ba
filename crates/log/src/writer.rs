//! The group-commit writer: an append-only JSON-lines file whose lines a
//! caller only copies into a buffer, written out and synced by two background
//! threads.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde::Serialize;

use crate::chain::{Chain, CheckpointKey};
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
    tap: OnceLock<Tap>,
}

/// What is also given each line as it is appended (without its newline):
/// the daemon's telemetry, which sends decision lines to a collector.
pub type Tap = Box<dyn Fn(&[u8]) + Send + Sync>;

struct Shared {
    pending: Mutex<Pending>,
    /// A line is waiting (always), or the log is closing.
    woken: Condvar,
    /// The file lines go to; replaced when the log rotates.
    file: ArcSwap<File>,
    /// Held while a batch is written, so that batches reach the file in the
    /// order they were taken; the chain, when the file is chained.
    out: Mutex<Out>,
    /// What the writer has written out, for the syncer.
    written: Mutex<Written>,
    /// The writer wrote a batch, or is closing.
    wrote: Condvar,
    /// The number of the last line written and synced.
    #[cfg(feature = "async")]
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

/// The writer's side: whether writes fail (so that an outage is reported
/// once), for a chained file the chain and the checkpoint file, and what
/// rotating needs.
struct Out {
    failing: bool,
    chain: Option<(Chain, File)>,
    rotation: Rotation,
    /// The current file's size and when it was opened.
    size: u64,
    opened: Instant,
    /// The log's path (the current file's name).
    path: PathBuf,
}

/// When the log is rotated: once its file holds `max_bytes`, or `max_age`
/// after it was opened (whichever comes first; neither: never). The file is
/// renamed beside itself with the time (`decisions.20261205T210834.123456789Z.jsonl`)
/// and a new one started; no line is lost (the lines waiting go to the new
/// file) and a chained log's chain goes on in it, after a checkpoint that
/// ends the old one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rotation {
    /// The size past which the file is rotated (before the next batch is
    /// written: a file may exceed it by one batch).
    pub max_bytes: Option<u64>,
    /// The age past which the file is rotated.
    pub max_age: Option<Duration>,
}

impl Rotation {
    /// Whether a file of `size` bytes opened at `opened` is due at `now` (an
    /// empty file never is).
    pub fn due(&self, size: u64, opened: Instant, now: Instant) -> bool {
        size > 0
            && (self.max_bytes.is_some_and(|max| size >= max)
                || self
                    .max_age
                    .is_some_and(|max| now.saturating_duration_since(opened) >= max))
    }
}

/// How a log file is opened: synced as `fsync` says (every `interval`),
/// chained if `chain` is given, rotated as `rotation` says.
pub struct Options {
    /// When lines reach the disk.
    pub fsync: Fsync,
    /// With [`Fsync::Interval`], how often.
    pub interval: Duration,
    /// The hash chain and its checkpoints.
    pub chain: Option<ChainOptions>,
    /// When the file is rotated.
    pub rotation: Rotation,
}

/// How a chained file is chained: a checkpoint every `every` lines (0: only
/// when closed), also appended to `checkpoints`, signed with `key` if given.
pub struct ChainOptions {
    /// Lines between checkpoints.
    pub every: u64,
    /// The file the checkpoints are also appended to.
    pub checkpoints: PathBuf,
    /// The key that signs them.
    pub key: Option<CheckpointKey>,
}

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
        Self::open_with_options(
            path,
            Options {
                fsync,
                interval,
                chain: None,
                rotation: Rotation::default(),
            },
        )
    }

    /// As [`JsonLines::open_with`]; with a chain, every line carries the hash
    /// of the one before it and checkpoints are added ([`crate::chain`]),
    /// continuing the chain of the lines already in the file; with a
    /// rotation, the file is rotated ([`Rotation`]).
    pub fn open_with_options(path: &Path, options: Options) -> Result<JsonLines, DecisionLogError> {
        let Options {
            fsync,
            interval,
            chain,
            rotation,
        } = options;
        let open_error = |source| DecisionLogError::Open {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            warden_runtime::data_dir::create_private_dir(dir).map_err(open_error)?;
        }
        let file = warden_runtime::data_dir::open_private_append(path).map_err(open_error)?;
        let chain = match chain {
            None => None,
            Some(options) => {
                let mut tail = read_tail(path).map_err(open_error)?;
                if tail.last().is_some_and(|&b| b != b'\n') {
                    // A line torn by a crash ends here, so that the next
                    // starts a line of its own; the chain goes on from it
                    // (the verifier reports it as unreadable).
                    (&file).write_all(b"\n").map_err(open_error)?;
                    tail.push(b'\n');
                }
                let checkpoints = open_checkpoints(&options.checkpoints)?;
                let resumed = Chain::resume(&tail, options.every, options.key);
                Some((resumed, checkpoints))
            }
        };
        let size = file.metadata().map_err(open_error)?.len();
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                lines: Vec::with_capacity(64 * 1024),
                appended: 0,
                stop: false,
            }),
            woken: Condvar::new(),
            file: ArcSwap::from_pointee(file),
            out: Mutex::new(Out {
                failing: false,
                chain,
                rotation,
                size,
                opened: Instant::now(),
                path: path.to_path_buf(),
            }),
            written: Mutex::new(Written {
                upto: 0,
                stop: false,
            }),
            wrote: Condvar::new(),
            #[cfg(feature = "async")]
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
            tap: OnceLock::new(),
        })
    }

    /// Gives every line appended from now on to `tap` too; a second tap is
    /// refused (returned).
    pub fn set_tap(&self, tap: Tap) -> Result<(), Tap> {
        self.tap.set(tap)
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
        if let Some(tap) = self.tap.get() {
            tap(&line);
        }
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
    #[cfg(feature = "async")]
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
    /// system, not yet the disk), in order, chained when the file is; returns
    /// the number of the last.
    fn write_out(&self) -> u64 {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (lines, upto) = {
            let mut pending = self.lock_pending();
            let lines = std::mem::replace(&mut pending.lines, Vec::with_capacity(64 * 1024));
            (lines, pending.appended)
        };
        if lines.is_empty() {
            return upto;
        }
        if out.rotation.due(out.size, out.opened, Instant::now()) {
            self.rotate(&mut out);
        }
        let Out {
            failing,
            chain,
            size,
            ..
        } = &mut *out;
        match chain {
            None => self.write(failing, size, &lines),
            Some((chain, checkpoints)) => {
                // The chain is made here, off the callers' path: one writer
                // per file keeps the order the lines are written in.
                let mut linked = Vec::with_capacity(lines.len() + lines.len() / 8);
                let mut made = Vec::new();
                for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    made.extend(chain.link(line, &mut linked));
                }
                self.write(failing, size, &linked);
                self.write_checkpoints(checkpoints, &made);
            }
        }
        upto
    }

    /// Rotates the file: a chained log's last line is a checkpoint; the file
    /// is synced, renamed beside itself with the time, and a new one opened at
    /// the log's path. On a failure the current file goes on (nothing is lost:
    /// the handle still writes to the same file, whatever its name).
    fn rotate(&self, out: &mut Out) {
        let Out {
            failing,
            chain,
            size,
            opened,
            path,
            ..
        } = out;
        if let Some((chain, checkpoints)) = chain {
            let mut bytes = Vec::new();
            let checkpoint = chain.rotate(&mut bytes);
            self.write(failing, size, &bytes);
            self.write_checkpoints(checkpoints, &[checkpoint]);
        }
        let current: &Path = path;
        let rotated = rotated_name(current);
        let result = self
            .file
            .load()
            .sync_data()
            .and_then(|()| std::fs::rename(current, &rotated))
            .and_then(|()| {
                warden_runtime::data_dir::open_private_append(current).inspect_err(|_| {
                    // Put the old file back under the log's name if we can.
                    let _ = std::fs::rename(&rotated, current);
                })
            });
        match result {
            Ok(file) => {
                self.file.store(Arc::new(file));
                *size = 0;
                *opened = Instant::now();
                tracing::info!(path = %self.path, rotated = %rotated.display(), "decision log rotated");
            }
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                tracing::error!(path = %self.path, %err, "cannot rotate the log; it goes on in the same file");
                // Not again before the next interval of growth or age.
                *opened = Instant::now();
            }
        }
    }

    /// Writes lines out to the log, counting and reporting a failure.
    fn write(&self, failing: &mut bool, size: &mut u64, bytes: &[u8]) {
        let file = self.file.load();
        match (&**file).write_all(bytes) {
            Ok(()) => {
                *failing = false;
                *size += bytes.len() as u64;
            }
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if !*failing {
                    tracing::error!(path = %self.path, %err, "cannot write the log; records are being lost");
                }
                *failing = true;
            }
        }
    }

    /// Appends checkpoints to the checkpoint file and syncs it: they are few,
    /// and one that is lost cannot vouch for anything.
    fn write_checkpoints(&self, file: &File, made: &[crate::chain::Checkpoint]) {
        if made.is_empty() {
            return;
        }
        let mut bytes = Vec::new();
        for checkpoint in made {
            // A plain struct: serialising cannot fail.
            bytes.extend(serde_json::to_vec(checkpoint).unwrap_or_default());
            bytes.push(b'\n');
        }
        let mut handle = file;
        if let Err(err) = handle.write_all(&bytes).and_then(|()| file.sync_data()) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            tracing::error!(path = %self.path, %err, "cannot write the checkpoint file");
        }
    }

    /// Appends the closing checkpoint of a chained file to the checkpoint
    /// file (nothing if no line came since the last one).
    fn close_chain(&self) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((chain, checkpoints)) = &mut out.chain
            && let Some(checkpoint) = chain.close()
        {
            self.write_checkpoints(checkpoints, &[checkpoint]);
        }
    }

    /// Syncs what was written to the disk and publishes that lines up to
    /// `upto` are there, after a failure too: a caller waits for the
    /// attempt, and a failed one is counted in
    /// `warden_decision_log_write_errors_total`.
    fn sync(&self, upto: u64) {
        match self.file.load().sync_data() {
            Ok(()) => self.sync_failing.store(false, Ordering::Relaxed),
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if !self.sync_failing.swap(true, Ordering::Relaxed) {
                    tracing::error!(path = %self.path, %err, "cannot sync the log; records may be lost");
                }
            }
        }
        // Without `async` nobody waits on the count.
        #[cfg(not(feature = "async"))]
        let _ = upto;
        #[cfg(feature = "async")]
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
        self.shared.close_chain();
    }
}

/// The end of a file: enough of it to hold its last line (read back further
/// until a line break before the last line is found, or the start).
fn read_tail(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut want = 64 * 1024;
    loop {
        let start = len.saturating_sub(want);
        file.seek(SeekFrom::Start(start))?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail)?;
        let body = tail.strip_suffix(b"\n").unwrap_or(&tail);
        if start == 0 || body.contains(&b'\n') {
            return Ok(tail);
        }
        want *= 4;
    }
}

/// The name a rotated file takes: the log's, with the UTC time to the
/// nanosecond before its extension (`decisions.20261205T210834.123456789Z.jsonl`,
/// fixed width, so that names sort as the files were rotated), and `_1`, `_2`,
/// ... after the time should that name be taken.
fn rotated_name(path: &Path) -> PathBuf {
    let t = time::OffsetDateTime::now_utc();
    let stamp = format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}.{:09}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.nanosecond()
    );
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut n = 0;
    loop {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("_{n}")
        };
        let candidate = path.with_file_name(format!("{stem}.{stamp}{suffix}{ext}"));
        if !candidate.exists() {
            return candidate;
        }
        n += 1;
    }
}

/// Opens (creates, 0600) the checkpoint file for appending.
fn open_checkpoints(path: &Path) -> Result<File, DecisionLogError> {
    let open_error = |source| DecisionLogError::Open {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        warden_runtime::data_dir::create_private_dir(dir).map_err(open_error)?;
    }
    warden_runtime::data_dir::open_private_append(path).map_err(open_error)
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
