//! One `warden serve` per SQLite store: the daemon holds a lease the store
//! records, renews it while it runs and gives it up when it stops. A second
//! daemon started on the same store file (a second replica on one volume, a
//! copy of a unit file) is refused, naming the holder; several daemons share
//! approvals through PostgreSQL instead. The CLI's `warden approvals …` takes
//! no lease: it opens the store beside a running daemon, as SQLite allows.
//!
//! A lease ends three ways: its holder gives it up (a clean stop); it expires
//! ([`LEASE_TTL`] after its last renewal: a holder killed on another host);
//! or its holder's process is gone from this host (a `kill -9` and a restart
//! here take over at once, without waiting for the expiry).
//!
//! The table is created beside the store's own, outside its schema version:
//! a Warden that knows no lease opens the file as before.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::store::{StoreError, now_ms};

/// How long a lease lasts after its last renewal; it is renewed three times
/// in that span.
pub const LEASE_TTL: Duration = Duration::from_secs(15);

const TABLE: &str = "
CREATE TABLE IF NOT EXISTS daemon_lease (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    token       TEXT NOT NULL,
    host        TEXT,
    node        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
";

/// Who takes the lease.
#[derive(Clone, Debug)]
pub struct Holder {
    /// This host's name, for telling whether a holder's process is still
    /// here; `None` when unknown (then only expiry ends another's lease).
    pub host: Option<String>,
    /// The daemon's node name, for the refusal's message.
    pub node: String,
    /// This process.
    pub pid: u32,
}

/// A held lease: renewed in the background until dropped, then given up.
pub struct Lease {
    path: PathBuf,
    token: String,
    stop: Option<mpsc::Sender<()>>,
    renewer: Option<JoinHandle<()>>,
}

/// The lease another holder has.
struct Held {
    host: Option<String>,
    node: String,
    pid: i64,
    expires_at: i64,
}

impl Lease {
    /// Takes the lease on the store file `path` for `holder`, lasting `ttl`
    /// past each renewal. Refused while another daemon holds it.
    pub fn acquire(path: &Path, holder: &Holder, ttl: Duration) -> Result<Lease, StoreError> {
        let shown = path.display().to_string();
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: shown.clone(),
            message: e.to_string(),
        };
        let mut connection = Connection::open(path).map_err(open_error)?;
        connection
            .busy_timeout(Duration::from_secs(5))
            .map_err(open_error)?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        tx.execute_batch(TABLE).map_err(db)?;
        let held = tx
            .query_row(
                "SELECT host, node, pid, expires_at FROM daemon_lease WHERE id = 1",
                [],
                |row| {
                    Ok(Held {
                        host: row.get(0)?,
                        node: row.get(1)?,
                        pid: row.get(2)?,
                        expires_at: row.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(db)?;
        let now = now_ms();
        if let Some(held) = held {
            match ended(&held, holder, now) {
                Some(why) => tracing::warn!(
                    store = %shown,
                    node = %held.node,
                    pid = held.pid,
                    "the lease of a daemon that did not give it up is taken over: {why}"
                ),
                None => {
                    return Err(StoreError::Open {
                        path: shown,
                        message: refusal(&held, now),
                    });
                }
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO daemon_lease (id, token, host, node, pid, acquired_at, expires_at)
             VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                token,
                holder.host,
                holder.node,
                holder.pid,
                now,
                now + ttl.as_millis() as i64
            ],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        let (stop, stopped) = mpsc::channel();
        let renewer = {
            let (path, token) = (path.to_path_buf(), token.clone());
            std::thread::Builder::new()
                .name("warden-lease".into())
                .spawn(move || renew(&connection, &path, &token, ttl, &stopped))
                .map_err(|e| StoreError::Open {
                    path: shown,
                    message: format!("starting the lease's renewal: {e}"),
                })?
        };
        Ok(Lease {
            path: path.to_path_buf(),
            token,
            stop: Some(stop),
            renewer: Some(renewer),
        })
    }
}

impl Drop for Lease {
    /// Gives the lease up: the next daemon on the store starts at once.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        let given_up = Connection::open(&self.path).and_then(|connection| {
            connection.busy_timeout(Duration::from_secs(5))?;
            connection.execute(
                "DELETE FROM daemon_lease WHERE id = 1 AND token = ?1",
                params![self.token],
            )
        });
        if let Err(err) = given_up {
            tracing::warn!(store = %self.path.display(), "the lease was not given up: {err}");
        }
    }
}

/// Why `held`'s lease is over for `holder` at `now`, or `None` if it is not.
fn ended(held: &Held, holder: &Holder, now: i64) -> Option<String> {
    if held.expires_at <= now {
        return Some(format!(
            "it expired {} s ago",
            (now - held.expires_at) / 1000
        ));
    }
    let here = holder.host.is_some() && held.host == holder.host;
    if here && held.pid == i64::from(holder.pid) {
        return Some("its process id is this process's".into());
    }
    if here && !alive(held.pid) {
        return Some(format!("process {} is gone from this host", held.pid));
    }
    None
}

fn refusal(held: &Held, now: i64) -> String {
    let host = held.host.as_deref().unwrap_or("an unknown host");
    format!(
        "another warden serve holds this store (node {}, process {} on {host}; its lease \
         ends {} s after it stops renewing it, {} s from now). One SQLite store serves one \
         daemon: stop that one, give this one another data directory (--data-dir), or share \
         approvals between daemons through PostgreSQL (hitl_approval.store.kind: postgres)",
        held.node,
        held.pid,
        LEASE_TTL.as_secs(),
        (held.expires_at - now).max(0).div_euclid(1000) + 1,
    )
}

/// Whether process `pid` runs on this host (Linux: `/proc/<pid>/stat`, where
/// a killed process not yet reaped is a zombie, `Z`, and counts as gone).
/// Elsewhere every process counts as alive, and only expiry ends a lease.
fn alive(pid: i64) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    if pid <= 0 {
        return false;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (command) state ...`: the command may hold spaces and parentheses.
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x"))
}

/// Renews the lease every third of `ttl` until told to stop.
fn renew(
    connection: &Connection,
    path: &Path,
    token: &str,
    ttl: Duration,
    stopped: &mpsc::Receiver<()>,
) {
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(ttl / 3) {
        let renewed = connection.execute(
            "UPDATE daemon_lease SET expires_at = ?1 WHERE id = 1 AND token = ?2",
            params![now_ms() + ttl.as_millis() as i64, token],
        );
        match renewed {
            Ok(1) => {}
            Ok(_) => tracing::error!(
                store = %path.display(),
                "another daemon took this daemon's lease on the store (this one was stopped \
                 past the lease's end): two daemons now serve one SQLite store"
            ),
            Err(err) => tracing::warn!(
                store = %path.display(),
                "the lease was not renewed this time: {err}"
            ),
        }
    }
}

fn db(e: rusqlite::Error) -> StoreError {
    if crate::sqlite::is_busy(&e) {
        return StoreError::Busy {
            message: format!("the daemon's lease: {e}"),
        };
    }
    StoreError::Database(format!("the daemon's lease: {e}"))
}
