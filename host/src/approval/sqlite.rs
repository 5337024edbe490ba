//! The approval store in one embedded SQLite file (WAL), durable across
//! restarts. At most one pending approval per thread is a unique partial
//! index; consumption is a conditional update inside an immediate transaction,
//! so of two resumes, in one process or in two, exactly one changes the row.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::message::AiMessage;
use super::outcome::{CallOutcome, Resolution};
use super::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStatus, ApprovalStore, EventKind, Expected, ListFilter,
    StoreError, StoredRequest, requests_digest,
};
use crate::request::{CallContext, Caller};

/// The file name of the store inside the data directory.
pub const STORE_FILE: &str = "approvals.sqlite3";

/// The schema this code writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 1;

/// How long a writer waits for another process's transaction before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE approvals (
    approval_id     TEXT PRIMARY KEY,
    thread_id       TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'resumed', 'cleared')),
    version         INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    requests_digest TEXT NOT NULL,
    consumption_id  TEXT,
    body            TEXT NOT NULL,
    resolution      TEXT
);
CREATE UNIQUE INDEX approvals_one_pending_per_thread ON approvals (thread_id) WHERE status = 'pending';
CREATE INDEX approvals_by_thread ON approvals (thread_id, created_at);
CREATE TABLE approval_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    event       TEXT NOT NULL
);
CREATE INDEX approval_events_by_thread ON approval_events (thread_id, seq);
CREATE TRIGGER approval_events_no_update BEFORE UPDATE ON approval_events
    BEGIN SELECT RAISE(ABORT, 'the approval journal is append-only'); END;
CREATE TRIGGER approval_events_no_delete BEFORE DELETE ON approval_events
    BEGIN SELECT RAISE(ABORT, 'the approval journal is append-only'); END;
";

/// The immutable part of a record, stored as one JSON column.
#[derive(Serialize, Deserialize)]
struct Body {
    caller: Caller,
    context: CallContext,
    message: AiMessage,
    requests: Vec<StoredRequest>,
    calls: Vec<CallOutcome>,
    response_digest: String,
    #[serde(default)]
    generation: u64,
}

/// How hard a commit waits for the disk.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Commits reach the OS before they return and the disk at checkpoints
    /// (WAL with `synchronous=NORMAL`): a pause or a resume survives a crash or
    /// kill of the process; if the machine loses power, the last few may be
    /// lost (never half-written). Losing one fails safe: a lost pause is a 404
    /// on resume (nothing ran), a lost resume leaves the approval pending.
    #[default]
    Normal,
    /// Every commit reaches the disk before it returns (`synchronous=FULL`),
    /// surviving a power cut too, at one fsync per write.
    Full,
}

impl Durability {
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Normal => "normal",
            Durability::Full => "full",
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// Approvals in a SQLite file. One connection per store, used by one thread at
/// a time; other processes open their own.
pub struct SqliteApprovalStore {
    connection: Mutex<Connection>,
    path: PathBuf,
}

impl SqliteApprovalStore {
    /// Opens (creating when absent) the store in `data_dir`, creating the
    /// directory too.
    pub fn open_in(data_dir: &Path, durability: Durability) -> Result<Self, StoreError> {
        std::fs::create_dir_all(data_dir).map_err(|e| StoreError::Open {
            path: data_dir.display().to_string(),
            message: e.to_string(),
        })?;
        Self::open(&data_dir.join(STORE_FILE), durability)
    }

    /// Opens (creating when absent) the store file at `path`.
    pub fn open(path: &Path, durability: Durability) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: shown.clone(),
            message: e.to_string(),
        };
        let mut connection = Connection::open(path).map_err(open_error)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        connection
            .pragma_update(None, "synchronous", durability.pragma())
            .map_err(open_error)?;
        migrate(&mut connection, &shown)?;
        Ok(SqliteApprovalStore {
            connection: Mutex::new(connection),
            path: path.to_path_buf(),
        })
    }

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

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock leaves no half-done transaction
        // behind (rusqlite rolls back on drop), so the connection stays usable.
        let mut guard = self
            .connection
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut guard)
    }
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
            tx.execute_batch(SCHEMA).map_err(db)?;
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
    StoreError::Database(e.to_string())
}

fn json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Database(e.to_string()))
}

const SELECT: &str = "SELECT approval_id, thread_id, run_id, status, version, created_at, body, resolution FROM approvals";

/// A row as read, decoded after the statement is done.
struct Row {
    approval_id: String,
    thread_id: String,
    run_id: String,
    status: String,
    version: i64,
    created_at: String,
    body: String,
    resolution: Option<String>,
}

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
    })
}

impl Row {
    fn decode(self) -> Result<ApprovalRecord, StoreError> {
        let corrupt = |message: String| StoreError::Corrupt {
            approval_id: self.approval_id.clone(),
            message,
        };
        let status = ApprovalStatus::parse(&self.status)
            .ok_or_else(|| corrupt(format!("unknown status '{}'", self.status)))?;
        let body: Body =
            serde_json::from_str(&self.body).map_err(|e| corrupt(format!("body: {e}")))?;
        let resolution = match &self.resolution {
            Some(text) => Some(
                serde_json::from_str::<Resolution>(text)
                    .map_err(|e| corrupt(format!("resolution: {e}")))?,
            ),
            None => None,
        };
        Ok(ApprovalRecord {
            approval_id: self.approval_id,
            thread_id: self.thread_id,
            run_id: self.run_id,
            status,
            version: self.version as u64,
            created_at: self.created_at,
            caller: body.caller,
            context: body.context,
            message: body.message,
            requests: body.requests,
            calls: body.calls,
            response_digest: body.response_digest,
            generation: body.generation,
            resolution,
        })
    }
}

fn append_event(tx: &rusqlite::Transaction<'_>, event: &ApprovalEvent) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO approval_events (at, kind, thread_id, approval_id, run_id, event) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            event.at,
            event.kind.as_str(),
            event.thread_id,
            event.approval_id,
            event.run_id,
            json(event)?,
        ],
    )
    .map_err(db)?;
    Ok(())
}

fn pending_exists(tx: &rusqlite::Transaction<'_>, thread_id: &str) -> Result<bool, StoreError> {
    tx.query_row(
        "SELECT 1 FROM approvals WHERE thread_id = ?1 AND status = 'pending'",
        [thread_id],
        |_| Ok(()),
    )
    .optional()
    .map(|found| found.is_some())
    .map_err(db)
}

impl ApprovalStore for SqliteApprovalStore {
    fn insert(&self, record: &ApprovalRecord, event: &ApprovalEvent) -> Result<bool, StoreError> {
        let body = json(&Body {
            caller: record.caller,
            context: record.context.clone(),
            message: record.message.clone(),
            requests: record.requests.clone(),
            calls: record.calls.clone(),
            response_digest: record.response_digest.clone(),
            generation: record.generation,
        })?;
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            if pending_exists(&tx, &record.thread_id)? {
                return Ok(false);
            }
            tx.execute(
                "INSERT INTO approvals (approval_id, thread_id, run_id, status, version, created_at, requests_digest, body) \
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7)",
                params![
                    record.approval_id,
                    record.thread_id,
                    record.run_id,
                    record.version as i64,
                    record.created_at,
                    requests_digest(&record.requests),
                    body,
                ],
            )
            .map_err(db)?;
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(true)
        })
    }

    fn get(&self, approval_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let row = self.with(|connection| {
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

    fn pending_on_thread(&self, thread_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let row = self.with(|connection| {
            connection
                .query_row(
                    &format!("{SELECT} WHERE thread_id = ?1 AND status = 'pending'"),
                    [thread_id],
                    read_row,
                )
                .optional()
                .map_err(db)
        })?;
        row.map(Row::decode).transpose()
    }

    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        let rows = self.with(|connection| {
            let mut sql = format!("{SELECT} WHERE (?1 IS NULL OR thread_id = ?1)");
            if !filter.include_resolved {
                sql.push_str(" AND status = 'pending'");
            }
            // Insertion order: timestamps of one second compare badly as text.
            sql.push_str(" ORDER BY rowid");
            let mut statement = connection.prepare(&sql).map_err(db)?;
            let rows = statement
                .query_map([filter.thread_id.as_deref()], read_row)
                .map_err(db)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(db)?;
            Ok(rows)
        })?;
        rows.into_iter().map(Row::decode).collect()
    }

    fn resolve(
        &self,
        expected: &Expected<'_>,
        resolution: &Resolution,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError> {
        let status = match resolution.resolved_by {
            super::outcome::ResolvedBy::Resume { .. } => ApprovalStatus::Resumed,
            super::outcome::ResolvedBy::Clear { .. } => ApprovalStatus::Cleared,
        };
        let resolution_json = json(resolution)?;
        self.with(|connection| {
            let tx = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(db)?;
            let changed = tx
                .execute(
                    "UPDATE approvals SET status = ?1, version = version + 1, consumption_id = ?2, resolution = ?3 \
                     WHERE approval_id = ?4 AND status = 'pending' AND version = ?5 AND requests_digest = ?6",
                    params![
                        status.as_str(),
                        resolution.consumption_id,
                        resolution_json,
                        expected.approval_id,
                        expected.version as i64,
                        expected.requests_digest,
                    ],
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
            let thread: Option<String> = tx
                .query_row(
                    "SELECT thread_id FROM approvals WHERE approval_id = ?1 AND status = 'resumed' AND consumption_id = ?2",
                    params![approval_id, consumption_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(db)?;
            let Some(thread) = thread else {
                return Ok(false);
            };
            if pending_exists(&tx, &thread)? {
                return Err(StoreError::RestoreBlocked {
                    approval_id: approval_id.to_string(),
                });
            }
            tx.execute(
                "UPDATE approvals SET status = 'pending', version = version + 1, consumption_id = NULL, resolution = NULL \
                 WHERE approval_id = ?1 AND status = 'resumed' AND consumption_id = ?2",
                params![approval_id, consumption_id],
            )
            .map_err(db)?;
            append_event(&tx, event)?;
            tx.commit().map_err(db)?;
            Ok(true)
        })
    }

    fn events(&self, thread_id: Option<&str>) -> Result<Vec<ApprovalEvent>, StoreError> {
        let rows: Vec<(i64, String, String)> = self.with(|connection| {
            let mut statement = connection
                .prepare(
                    "SELECT seq, kind, event FROM approval_events WHERE (?1 IS NULL OR thread_id = ?1) ORDER BY seq",
                )
                .map_err(db)?;
            let rows = statement
                .query_map([thread_id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .map_err(db)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(db)?;
            Ok(rows)
        })?;
        rows.into_iter()
            .map(|(seq, kind, text)| {
                let corrupt = |message: String| StoreError::Corrupt {
                    approval_id: format!("journal entry {seq}"),
                    message,
                };
                EventKind::parse(&kind).ok_or_else(|| corrupt(format!("unknown kind '{kind}'")))?;
                let mut event: ApprovalEvent =
                    serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
                event.seq = seq as u64;
                Ok(event)
            })
            .collect()
    }
}
