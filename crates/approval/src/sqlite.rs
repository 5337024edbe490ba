//! The approval store in one embedded SQLite file (WAL), durable across
//! restarts. At most one pending approval per thread is a unique partial
//! index; consumption is a conditional update inside an immediate transaction,
//! so of two resumes, in one process or in two, exactly one changes the row.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::grant::{Grant, GrantFilter};
use crate::durability::Durability;
use crate::row::{Body, Row, columns, decode_event, decode_grant, json, purged};
use crate::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStore, Expected, Inserted, JournalFilter, ListFilter,
    ResumeKey, StoreError, now_ms, requests_digest,
};
use crate::transfer::{
    self, APPROVAL_COLUMNS, ApprovalRow, Contents, EVENT_COLUMNS, EventRow, GRANT_COLUMNS,
    GrantRow, Occupied,
};
use warden_types::approval::Resolution;

/// The file name of the store inside the data directory.
pub const STORE_FILE: &str = "approvals.sqlite3";

/// The schema this code writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 4;

/// How long a writer waits for another process's transaction before failing,
/// unless told otherwise ([`SqliteApprovalStore::set_busy_timeout`]; the daemon
/// waits far less).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The approvals table.
const APPROVALS: &str = "
CREATE TABLE approvals (
    approval_id     TEXT PRIMARY KEY,
    principal       TEXT NOT NULL,
    thread_id       TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'resumed', 'cleared', 'expired')),
    version         INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    expires_at_ms   INTEGER,
    resolved_at_ms  INTEGER,
    requests_digest TEXT NOT NULL,
    consumption_id  TEXT,
    resume_key      TEXT,
    resume_digest   TEXT,
    purged          INTEGER NOT NULL DEFAULT 0,
    body            TEXT NOT NULL,
    resolution      TEXT
);
";

/// Its indexes: at most one pending approval per thread of a principal is a
/// unique partial index.
const APPROVAL_INDEXES: &str = "
CREATE UNIQUE INDEX approvals_one_pending_per_thread ON approvals (principal, thread_id) WHERE status = 'pending';
CREATE INDEX approvals_by_thread ON approvals (principal, thread_id, created_at);
CREATE INDEX approvals_by_status ON approvals (status, principal);
";

const JOURNAL: &str = "
CREATE TABLE approval_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    event       TEXT NOT NULL,
    principal   TEXT NOT NULL DEFAULT 'local'
);
CREATE INDEX approval_events_by_thread ON approval_events (thread_id, seq);
CREATE TRIGGER approval_events_no_update BEFORE UPDATE ON approval_events
    BEGIN SELECT RAISE(ABORT, 'the approval journal is append-only'); END;
CREATE TRIGGER approval_events_no_delete BEFORE DELETE ON approval_events
    BEGIN SELECT RAISE(ABORT, 'the approval journal is append-only'); END;
";

/// Standing grants (schema 3): the grant as JSON, with the columns its
/// lookups compare.
const GRANTS: &str = "
CREATE TABLE grants (
    grant_id      TEXT PRIMARY KEY,
    principal     TEXT NOT NULL,
    thread_id     TEXT,
    expires_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER,
    body          TEXT NOT NULL
);
CREATE INDEX grants_by_principal ON grants (principal, expires_at_ms);
CREATE INDEX approvals_to_purge ON approvals (resolved_at_ms) WHERE purged = 0 AND status != 'pending';
";

/// Schema 4: when a retry consumed an MCP call's answer (NULL: not yet, or
/// an approval of another kind).
const CONSUMED: &str = "ALTER TABLE approvals ADD COLUMN consumed_at TEXT;";

/// From schema 1 (no principals, no expiry, no idempotency keys), around a
/// new [`APPROVALS`] table: the old pauses become the local principal's, the
/// journal gains its principal column.
const MIGRATE_1_TO_2: (&str, &str) = (
    "
ALTER TABLE approvals RENAME TO approvals_v1;
DROP INDEX approvals_one_pending_per_thread;
DROP INDEX approvals_by_thread;
",
    "
INSERT INTO approvals (approval_id, principal, thread_id, run_id, status, version, created_at,
                       requests_digest, consumption_id, body, resolution)
    SELECT approval_id, 'local', thread_id, run_id, status, version, created_at,
           requests_digest, consumption_id, body, resolution
    FROM approvals_v1 ORDER BY rowid;
DROP TABLE approvals_v1;
ALTER TABLE approval_events ADD COLUMN principal TEXT NOT NULL DEFAULT 'local';
",
);

/// The SQLite `synchronous` setting for a durability.
fn pragma(durability: Durability) -> &'static str {
    match durability {
        Durability::Normal => "NORMAL",
        Durability::Full => "FULL",
    }
}

/// Approvals in a SQLite file. Three connections per store, each used by one
/// thread at a time: one writes, one only reads, so that a write waiting for
/// another process's lock never holds up a read (WAL readers do not wait for
/// writers), and one only looks whether a thread is free, never waiting for a
/// lock ([`ApprovalStore::free_at_once`]). Other processes open their own.
pub struct SqliteApprovalStore {
    connection: Mutex<Connection>,
    reader: Mutex<Connection>,
    probe: Mutex<Connection>,
    path: PathBuf,
}

impl SqliteApprovalStore {
    /// Opens (creating when absent) the store in `data_dir`, creating the
    /// directory too.
    pub fn open_in(data_dir: &Path, durability: Durability) -> Result<Self, StoreError> {
        warden_runtime::data_dir::create_private_dir(data_dir).map_err(|e| StoreError::Open {
            path: data_dir.display().to_string(),
            message: e.to_string(),
        })?;
        Self::open(&data_dir.join(STORE_FILE), durability)
    }

    /// Opens (creating when absent) the store file at `path`. The file, its
    /// WAL and its SHM are 0600: SQLite gives the latter two the database
    /// file's mode, so the file is created (or narrowed) first.
    pub fn open(path: &Path, durability: Durability) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: shown.clone(),
            message: e.to_string(),
        };
        let private = warden_runtime::data_dir::ensure_private_file(path).and_then(|()| {
            for suffix in ["-wal", "-shm"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                warden_runtime::data_dir::make_private(Path::new(&side))?;
            }
            Ok(())
        });
        private.map_err(|e| StoreError::Open {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        let mut connection = Connection::open(path).map_err(open_error)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        connection
            .pragma_update(None, "synchronous", pragma(durability))
            .map_err(open_error)?;
        // Purged arguments are overwritten, not left in free pages.
        connection
            .pragma_update(None, "secure_delete", true)
            .map_err(open_error)?;
        migrate(&mut connection, &shown)?;
        let reader = Connection::open(path).map_err(open_error)?;
        reader.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        reader
            .pragma_update(None, "query_only", true)
            .map_err(open_error)?;
        // Busy at once rather than waiting: its caller then asks the reader.
        let probe = Connection::open(path).map_err(open_error)?;
        probe.busy_timeout(Duration::ZERO).map_err(open_error)?;
        probe
            .pragma_update(None, "query_only", true)
            .map_err(open_error)?;
        Ok(SqliteApprovalStore {
            connection: Mutex::new(connection),
            reader: Mutex::new(reader),
            probe: Mutex::new(probe),
            path: path.to_path_buf(),
        })
    }

    /// How long a call waits for another process's lock before it fails
    /// with [`StoreError::Busy`].
    pub fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        self.with(|connection| connection.busy_timeout(timeout).map_err(db))?;
        self.read(|connection| connection.busy_timeout(timeout).map_err(db))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The durability the connection really runs with, read back from SQLite.
    pub fn durability(&self) -> Result<Durability, StoreError> {
        let level: i64 = self.with(|connection| {
            connection
                .query_row("PRAGMA synchronous", [], |row| row.get(0))
                .map_err(db)
        })?;
        match level {
            1 => Ok(Durability::Normal),
            2 => Ok(Durability::Full),
            other => Err(StoreError::Database(format!(
                "unexpected synchronous level {other}"
            ))),
        }
    }

    /// Runs `f` on the writing connection.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        on(&self.connection, f)
    }

    /// Runs `f` on the reading connection.
    fn read<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        on(&self.reader, f)
    }
}

fn on<T>(
    connection: &Mutex<Connection>,
    f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    // A panic while holding the lock leaves no half-done transaction behind
    // (rusqlite rolls back on drop), so the connection stays usable.
    let mut guard = connection
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    f(&mut guard)
}

fn migrate(connection: &mut Connection, path: &str) -> Result<(), StoreError> {
    let tx = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let found: i64 = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(db)?;
    match found {
        0 => {
            tx.execute_batch(APPROVALS).map_err(db)?;
            tx.execute_batch(APPROVAL_INDEXES).map_err(db)?;
            tx.execute_batch(JOURNAL).map_err(db)?;
            tx.execute_batch(GRANTS).map_err(db)?;
            tx.execute_batch(CONSUMED).map_err(db)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(db)?;
        }
        1 => {
            let (before, after) = MIGRATE_1_TO_2;
            tx.execute_batch(before).map_err(db)?;
            tx.execute_batch(APPROVALS).map_err(db)?;
            tx.execute_batch(after).map_err(db)?;
            tx.execute_batch(APPROVAL_INDEXES).map_err(db)?;
            tx.execute_batch(GRANTS).map_err(db)?;
            tx.execute_batch(CONSUMED).map_err(db)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(db)?;
        }
        2 => {
            tx.execute_batch(GRANTS).map_err(db)?;
            tx.execute_batch(CONSUMED).map_err(db)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(db)?;
        }
        3 => {
            tx.execute_batch(CONSUMED).map_err(db)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                .map_err(db)?;
        }
        SCHEMA_VERSION => {}
        _ => {
            return Err(StoreError::Schema {
                path: path.to_string(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
    }
    tx.commit().map_err(db)
}

fn db(e: rusqlite::Error) -> StoreError {
    if is_busy(&e) {
        return StoreError::Busy {
            message: e.to_string(),
        };
    }
    StoreError::Database(e.to_string())
}

/// Whether another connection held the store locked past the busy timeout:
/// the store is busy, not broken.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(failure, _) if matches!(
        failure.code,
        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
    ))
}

/// `SELECT` of every column [`Row`] reads.
const SELECT: &str = concat!("SELECT ", columns!(), " FROM approvals");

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        approval_id: row.get(0)?,
        thread_id: row.get(1)?,
        run_id: row.get(2)?,
        status: row.get(3)?,
        version: row.get(4)?,
        created_at: row.get(5)?,
        body: row.get(6)?,
        resolution: row.get(7)?,
        principal: row.get(8)?,
        resume_key: row.get(9)?,
        resume_digest: row.get(10)?,
        expires_at_ms: row.get(11)?,
        consumed_at: row.get(12)?,
    })
}

/// Every row a prepared statement returns, mapped.
fn all<T>(
    statement: &mut rusqlite::Statement<'_>,
    params: impl rusqlite::Params,
    map: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    statement
        .query_map(params, map)
        .map_err(db)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(db)
}

fn append_event(tx: &rusqlite::Transaction<'_>, event: &ApprovalEvent) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO approval_events (at, kind, thread_id, approval_id, run_id, event, principal) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            event.at,
            event.kind.as_str(),
            event.thread_id,
            event.approval_id,
            event.run_id,
            json(event)?,
            event.principal,
        ],
    )
    .map_err(db)?;
    Ok(())
}

/// Whether the principal's thread has a pending approval, on `connection`
/// (a transaction's, or the probe's on evaluate's path: kept prepared).
fn pending_exists(
    connection: &Connection,
    principal: &str,
    thread_id: &str,
) -> Result<bool, StoreError> {
    connection
        .prepare_cached(
            "SELECT 1 FROM approvals WHERE principal = ?1 AND thread_id = ?2 AND status = 'pending'",
        )
        .and_then(|mut statement| statement.exists([principal, thread_id]))
        .map_err(db)
}

impl ApprovalStore for SqliteApprovalStore {
    fn free_at_once(&self, principal: &str, thread_id: &str) -> bool {
        // Another thread probing, a lock held elsewhere, any error: not known.
        let Ok(probe) = self.probe.try_lock() else {
            return false;
        };
        pending_exists(&probe, principal, thread_id).is_ok_and(|pending| !pending)
    }

    fn insert(
        &self,
        record: &ApprovalRecord,
        event: &ApprovalEvent,
        quota: Option<u64>,
    ) -> Result<Inserted, StoreError> {
        let body = Body::of(record)?;
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            if pending_exists(&tx, &record.principal, &record.thread_id)? {
                return Ok(Inserted::ThreadBusy);
            }
            if let Some(quota) = quota {
                let pending: i64 = tx
                    .query_row(
                        "SELECT count(*) FROM approvals WHERE status = 'pending' AND principal = ?1",
                        [&record.principal],
                        |row| row.get(0),
                    )
                    .map_err(db)?;
                if pending as u64 >= quota {
                    return Ok(Inserted::OverQuota {
                        pending: pending as u64,
                    });
                }
            }
            tx.execute(
                "INSERT INTO approvals (approval_id, principal, thread_id, run_id, status, version, created_at, requests_digest, body, expires_at_ms) \
                 VALUES (?1, ?8, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?9)",
                params![
                    record.approval_id,
                    record.thread_id,
                    record.run_id,
                    record.version as i64,
                    record.created_at,
                    requests_digest(&record.requests),
                    body,
                    record.principal,
                    record.expires_at_ms,
                ],
            )
            .map_err(db)?;
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(Inserted::Paused)
        })
    }

    fn get(&self, approval_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let row = self.read(|connection| {
            connection
                .query_row(
                    &format!("{SELECT} WHERE approval_id = ?1"),
                    [approval_id],
                    read_row,
                )
                .optional()
                .map_err(db)
        })?;
        row.map(Row::decode).transpose()
    }

    fn pending_on_thread(
        &self,
        principal: &str,
        thread_id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        // On the daemon's evaluate path for every call with a thread: keep the
        // statement prepared.
        let row = self.read(|connection| {
            connection
                .prepare_cached(&format!(
                    "{SELECT} WHERE principal = ?1 AND thread_id = ?2 AND status = 'pending'"
                ))
                .and_then(|mut statement| {
                    statement
                        .query_row([principal, thread_id], read_row)
                        .optional()
                })
                .map_err(db)
        })?;
        row.map(Row::decode).transpose()
    }

    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        let rows = self.read(|connection| {
            let mut sql = format!(
                "{SELECT} WHERE (?1 IS NULL OR thread_id = ?1) AND (?2 IS NULL OR principal = ?2)"
            );
            if !filter.include_resolved {
                sql.push_str(" AND status = 'pending'");
            }
            // Insertion order: timestamps of one second compare badly as text.
            sql.push_str(" ORDER BY rowid");
            let mut statement = connection.prepare(&sql).map_err(db)?;
            all(
                &mut statement,
                [filter.thread_id.as_deref(), filter.principal.as_deref()],
                read_row,
            )
        })?;
        rows.into_iter().map(Row::decode).collect()
    }

    fn resolve(
        &self,
        expected: &Expected<'_>,
        resolution: &Resolution,
        key: Option<&ResumeKey>,
        grants: &[Grant],
        events: &[ApprovalEvent],
    ) -> Result<bool, StoreError> {
        let status = resolution.resolved_by.status();
        let grants = grants
            .iter()
            .map(|g| Ok((g, json(g)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let resolution_json = json(resolution)?;
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let changed = tx
                .execute(
                    "UPDATE approvals SET status = ?1, version = version + 1, consumption_id = ?2, resolution = ?3, \
                     resume_key = ?7, resume_digest = ?8, resolved_at_ms = ?9 \
                     WHERE approval_id = ?4 AND status = 'pending' AND version = ?5 AND requests_digest = ?6",
                    params![
                        status.as_str(),
                        resolution.consumption_id,
                        resolution_json,
                        expected.approval_id,
                        expected.version as i64,
                        expected.requests_digest,
                        key.map(|k| k.key.as_str()),
                        key.map(|k| k.digest.as_str()),
                        now_ms(),
                    ],
                )
                .map_err(db)?;
            if changed != 1 {
                return Ok(false);
            }
            for (grant, body) in &grants {
                tx.execute(
                    "INSERT INTO grants (grant_id, principal, thread_id, expires_at_ms, body) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        grant.grant_id,
                        grant.principal,
                        grant.thread_id,
                        grant.expires_at_ms,
                        body
                    ],
                )
                .map_err(db)?;
            }
            for event in events {
                append_event(&tx, event)?;
            }
            tx.commit().map_err(db)?;
            Ok(true)
        })
    }

    fn restore(
        &self,
        approval_id: &str,
        consumption_id: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError> {
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let thread: Option<(String, String)> = tx
                .query_row(
                    "SELECT principal, thread_id FROM approvals WHERE approval_id = ?1 AND status = 'resumed' AND consumption_id = ?2",
                    params![approval_id, consumption_id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(db)?;
            let Some((principal, thread)) = thread else {
                return Ok(false);
            };
            if pending_exists(&tx, &principal, &thread)? {
                return Err(StoreError::RestoreBlocked {
                    approval_id: approval_id.to_string(),
                });
            }
            tx.execute(
                "UPDATE approvals SET status = 'pending', version = version + 1, consumption_id = NULL, resolution = NULL, \
                 resume_key = NULL, resume_digest = NULL, resolved_at_ms = NULL \
                 WHERE approval_id = ?1 AND status = 'resumed' AND consumption_id = ?2",
                params![approval_id, consumption_id],
            )
            .map_err(db)?;
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(true)
        })
    }

    fn consume(
        &self,
        approval_id: &str,
        at: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError> {
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let changed = tx
                .execute(
                    "UPDATE approvals SET consumed_at = ?2 \
                     WHERE approval_id = ?1 AND status != 'pending' AND consumed_at IS NULL",
                    params![approval_id, at],
                )
                .map_err(db)?;
            if changed != 1 {
                return Ok(false);
            }
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(true)
        })
    }

    fn purge_resolved(&self, before_ms: i64) -> Result<usize, StoreError> {
        /// At most this many records a call, so that one transaction stays short.
        const BATCH: i64 = 256;
        let purged = self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let rows: Vec<(String, String, Option<String>)> = {
                let mut statement = tx
                    .prepare_cached(
                        "SELECT approval_id, body, resolution FROM approvals \
                         WHERE purged = 0 AND status != 'pending' \
                         AND (resolved_at_ms IS NULL OR resolved_at_ms <= ?1) LIMIT ?2",
                    )
                    .map_err(db)?;
                all(&mut statement, params![before_ms, BATCH], |row| {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                })?
            };
            for (approval_id, body, resolution) in &rows {
                let (body, resolution) = purged(approval_id, body, resolution.as_deref())?;
                tx.execute(
                    "UPDATE approvals SET body = ?1, resolution = ?2, purged = 1 WHERE approval_id = ?3",
                    params![body, resolution, approval_id],
                )
                .map_err(db)?;
            }
            tx.commit().map_err(db)?;
            Ok(rows.len())
        })?;
        if purged > 0 {
            // The old pages live on in the write-ahead log until a checkpoint.
            self.with(|connection| {
                connection
                    .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .map_err(db)
            })?;
        }
        Ok(purged)
    }

    fn overdue(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        let rows = self.read(|connection| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "{SELECT} WHERE status = 'pending' AND expires_at_ms IS NOT NULL AND expires_at_ms <= ?1 ORDER BY rowid"
                ))
                .map_err(db)?;
            all(&mut statement, [now_ms], read_row)
        })?;
        rows.into_iter().map(Row::decode).collect()
    }

    fn live_grants(
        &self,
        principal: &str,
        thread_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Vec<Grant>, StoreError> {
        let bodies: Vec<String> = self.read(|connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT body FROM grants WHERE principal = ?1 AND expires_at_ms > ?2 \
                     AND revoked_at_ms IS NULL AND (thread_id IS NULL OR thread_id = ?3)",
                )
                .map_err(db)?;
            all(
                &mut statement,
                params![principal, now_ms, thread_id],
                |row| row.get(0),
            )
        })?;
        bodies.iter().map(|b| decode_grant(b)).collect()
    }

    fn grants(&self, filter: &GrantFilter, now_ms: i64) -> Result<Vec<Grant>, StoreError> {
        let bodies: Vec<String> = self.read(|connection| {
            let mut statement = connection
                .prepare(
                    "SELECT body FROM grants WHERE (?1 IS NULL OR principal = ?1) \
                     AND (?2 OR (expires_at_ms > ?3 AND revoked_at_ms IS NULL)) ORDER BY rowid DESC",
                )
                .map_err(db)?;
            all(&mut statement, params![filter.principal, filter.include_inactive, now_ms], |row| row.get(0))
        })?;
        bodies.iter().map(|b| decode_grant(b)).collect()
    }

    fn revoke_grant(
        &self,
        grant_id: &str,
        revoked_by: &str,
        now_ms: i64,
        event: &ApprovalEvent,
    ) -> Result<Option<Grant>, StoreError> {
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let body: Option<String> = tx
                .query_row(
                    "SELECT body FROM grants WHERE grant_id = ?1",
                    [grant_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)?;
            let Some(body) = body else {
                return Ok(None);
            };
            let mut grant = decode_grant(&body)?;
            if grant.revoked_at.is_some() || grant.expires_at_ms <= now_ms {
                return Ok(Some(grant));
            }
            grant.revoked_at = Some(super::grant::rfc3339(now_ms));
            grant.revoked_by = Some(revoked_by.to_string());
            tx.execute(
                "UPDATE grants SET revoked_at_ms = ?1, body = ?2 WHERE grant_id = ?3",
                params![now_ms, json(&grant)?, grant_id],
            )
            .map_err(db)?;
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(Some(grant))
        })
    }

    fn events(&self, filter: &JournalFilter) -> Result<Vec<ApprovalEvent>, StoreError> {
        let mut rows: Vec<(i64, String, String)> = self.read(|connection| {
            // Newest first, so that a limit keeps the newest; reversed below.
            let mut statement = connection
                .prepare(
                    "SELECT seq, kind, event FROM approval_events \
                     WHERE (?1 IS NULL OR thread_id = ?1) AND (?2 IS NULL OR principal = ?2) AND (?3 IS NULL OR seq < ?3) \
                     ORDER BY seq DESC LIMIT ?4",
                )
                .map_err(db)?;
            let limit = filter.limit.map_or(-1, |l| l as i64);
            all(&mut statement, params![
                        filter.thread_id,
                        filter.principal,
                        filter.before_seq.map(|s| s as i64),
                        limit
                    ], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        })?;
        rows.reverse();
        rows.into_iter()
            .map(|(seq, kind, text)| decode_event(seq, &kind, &text))
            .collect()
    }

    fn export(&self) -> Result<Contents, StoreError> {
        self.read(|connection| {
            let tx = connection.transaction().map_err(db)?;
            let approvals = all(
                &mut tx
                    .prepare(&format!(
                        "SELECT {APPROVAL_COLUMNS} FROM approvals ORDER BY rowid"
                    ))
                    .map_err(db)?,
                [],
                |row| {
                    Ok(ApprovalRow {
                        approval_id: row.get(0)?,
                        principal: row.get(1)?,
                        thread_id: row.get(2)?,
                        run_id: row.get(3)?,
                        status: row.get(4)?,
                        version: row.get(5)?,
                        created_at: row.get(6)?,
                        expires_at_ms: row.get(7)?,
                        resolved_at_ms: row.get(8)?,
                        requests_digest: row.get(9)?,
                        consumption_id: row.get(10)?,
                        resume_key: row.get(11)?,
                        resume_digest: row.get(12)?,
                        purged: row.get(13)?,
                        body: row.get(14)?,
                        resolution: row.get(15)?,
                        consumed_at: row.get(16)?,
                    })
                },
            )?;
            let events = all(
                &mut tx
                    .prepare(&format!(
                        "SELECT {EVENT_COLUMNS} FROM approval_events ORDER BY seq"
                    ))
                    .map_err(db)?,
                [],
                |row| {
                    Ok(EventRow {
                        at: row.get(0)?,
                        kind: row.get(1)?,
                        principal: row.get(2)?,
                        thread_id: row.get(3)?,
                        approval_id: row.get(4)?,
                        run_id: row.get(5)?,
                        event: row.get(6)?,
                    })
                },
            )?;
            let grants = all(
                &mut tx
                    .prepare(&format!(
                        "SELECT {GRANT_COLUMNS} FROM grants ORDER BY rowid"
                    ))
                    .map_err(db)?,
                [],
                |row| {
                    Ok(GrantRow {
                        grant_id: row.get(0)?,
                        principal: row.get(1)?,
                        thread_id: row.get(2)?,
                        expires_at_ms: row.get(3)?,
                        revoked_at_ms: row.get(4)?,
                        body: row.get(5)?,
                    })
                },
            )?;
            Ok(Contents {
                approvals,
                events,
                grants,
            })
        })
    }

    fn import(&self, contents: &Contents) -> Result<Result<(), Occupied>, StoreError> {
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let count = |table: &str| -> Result<u64, StoreError> {
                tx.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                    row.get::<_, i64>(0)
                })
                .map(|n| n as u64)
                .map_err(db)
            };
            let occupied = Occupied {
                approvals: count("approvals")?,
                events: count("approval_events")?,
                grants: count("grants")?,
            };
            if !occupied.is_empty() {
                return Ok(Err(occupied));
            }
            {
                let mut insert = tx
                    .prepare(&transfer::insert("approvals", APPROVAL_COLUMNS))
                    .map_err(db)?;
                for a in &contents.approvals {
                    insert
                        .execute(params![
                            a.approval_id,
                            a.principal,
                            a.thread_id,
                            a.run_id,
                            a.status,
                            a.version,
                            a.created_at,
                            a.expires_at_ms,
                            a.resolved_at_ms,
                            a.requests_digest,
                            a.consumption_id,
                            a.resume_key,
                            a.resume_digest,
                            a.purged,
                            a.body,
                            a.resolution,
                            a.consumed_at,
                        ])
                        .map_err(db)?;
                }
                let mut insert = tx
                    .prepare(&transfer::insert("approval_events", EVENT_COLUMNS))
                    .map_err(db)?;
                for e in &contents.events {
                    insert
                        .execute(params![
                            e.at,
                            e.kind,
                            e.principal,
                            e.thread_id,
                            e.approval_id,
                            e.run_id,
                            e.event
                        ])
                        .map_err(db)?;
                }
                let mut insert = tx
                    .prepare(&transfer::insert("grants", GRANT_COLUMNS))
                    .map_err(db)?;
                for g in &contents.grants {
                    insert
                        .execute(params![
                            g.grant_id,
                            g.principal,
                            g.thread_id,
                            g.expires_at_ms,
                            g.revoked_at_ms,
                            g.body
                        ])
                        .map_err(db)?;
                }
            }
            tx.commit().map_err(db)?;
            Ok(Ok(()))
        })
    }
}
