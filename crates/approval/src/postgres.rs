//! The approval store in a PostgreSQL database that several daemons share.
//!
//! The database decides, never a cache: every read that decides goes to the
//! database, and every write that matters is conditional in the database
//! itself. At most one pending approval per thread is a unique partial
//! index; consumption is one `UPDATE … WHERE status = 'pending' AND version =
//! $v … RETURNING` inside a transaction, so that of two resumes sent to two
//! nodes exactly one changes the row (PostgreSQL re-checks the `WHERE` of a
//! row another transaction changed before it updates it). The quota is
//! counted under a transaction lock on the principal, so two nodes cannot
//! both take its last place. The one thing a node knows without a round trip
//! is that a thread does not wait ([`crate::waiting`]), for evaluate's check
//! of a call's thread, within a stated window; it never answers that a thread
//! waits, and nothing that changes a row reads it.
//!
//! The store trait is synchronous and called from the daemon's worker
//! threads, so the client is the synchronous `postgres` crate, behind a
//! bounded `r2d2` pool: a call waits at most the pool's timeout for a
//! connection, and a database that cannot be reached is
//! [`StoreError::Unavailable`], never a hang.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use postgres::Transaction;
use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use r2d2_postgres::PostgresConnectionManager;

use super::grant::{Grant, GrantFilter};
use crate::announce::{Announcer, Heard, Listening};
use crate::postgres_tls::{MakeTls, SslMode};
use crate::row::{Body, Row, columns, decode_event, decode_grant, json, purged};
use crate::store::{
    ApprovalEvent, ApprovalRecord, ApprovalStore, Expected, Inserted, JournalFilter, ListFilter,
    StoreError, now_ms, requests_digest,
};
use crate::transfer::{
    self, APPROVAL_COLUMNS, ApprovalRow, Contents, EVENT_COLUMNS, EventRow, GRANT_COLUMNS,
    GrantRow, Occupied,
};
use crate::waiting::{HEARTBEAT, WINDOW as WAITING_WINDOW, Waiting};
use warden_types::approval::Resolution;

/// The newest schema this code knows; one entry of `MIGRATIONS` each.
pub const SCHEMA_VERSION: i64 = 2;

/// The migrations, in order: entry `n` takes the schema from `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[SCHEMA_1, SCHEMA_2];

/// Schema 1: the SQLite store's schema 4, in PostgreSQL's types; `seq`
/// keeps insertion order (SQLite's rowid).
const SCHEMA_1: &str = "
CREATE TABLE approvals (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    approval_id     TEXT PRIMARY KEY,
    principal       TEXT NOT NULL,
    thread_id       TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'resumed', 'cleared', 'expired')),
    version         BIGINT NOT NULL,
    created_at      TEXT NOT NULL,
    expires_at_ms   BIGINT,
    resolved_at_ms  BIGINT,
    requests_digest TEXT NOT NULL,
    consumption_id  TEXT,
    resume_key      TEXT,
    resume_digest   TEXT,
    purged          BOOLEAN NOT NULL DEFAULT FALSE,
    body            TEXT NOT NULL,
    resolution      TEXT,
    consumed_at     TEXT
);
CREATE UNIQUE INDEX approvals_one_pending_per_thread ON approvals (principal, thread_id) WHERE status = 'pending';
CREATE INDEX approvals_by_thread ON approvals (principal, thread_id, seq);
CREATE INDEX approvals_by_status ON approvals (status, principal);
CREATE INDEX approvals_overdue ON approvals (expires_at_ms) WHERE status = 'pending';
CREATE INDEX approvals_to_purge ON approvals (resolved_at_ms) WHERE NOT purged AND status <> 'pending';

CREATE TABLE approval_events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    principal   TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    event       TEXT NOT NULL
);
CREATE INDEX approval_events_by_thread ON approval_events (thread_id, seq);
CREATE FUNCTION approval_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the approval journal is append-only'; END $$;
CREATE TRIGGER approval_events_no_change BEFORE UPDATE OR DELETE ON approval_events
    FOR EACH ROW EXECUTE FUNCTION approval_events_append_only();
CREATE TRIGGER approval_events_no_truncate BEFORE TRUNCATE ON approval_events
    FOR EACH STATEMENT EXECUTE FUNCTION approval_events_append_only();

CREATE TABLE grants (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    grant_id      TEXT PRIMARY KEY,
    principal     TEXT NOT NULL,
    thread_id     TEXT,
    expires_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT,
    body          TEXT NOT NULL
);
CREATE INDEX grants_by_principal ON grants (principal, expires_at_ms);
";

/// The channel a trigger tells every node on: a thread began or stopped
/// waiting for a human ([`crate::waiting`]).
const WAITING_CHANNEL: &str = "warden_waiting_threads";

/// Schema 2: every change of an approval into or out of `pending` notifies
/// [`WAITING_CHANNEL`] with `+KEY APPROVAL_ID` or `-KEY APPROVAL_ID`, KEY the
/// hex SHA-256 of the principal, a zero byte and the thread id
/// ([`crate::waiting::Waiting::key`]). A trigger, so that no write path (a
/// pause, a resume, an expiry, a restore, a migration's copy) can skip it;
/// delivered when its transaction commits, never for one rolled back.
const SCHEMA_2: &str = "
CREATE FUNCTION warden_thread_waits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    waits  BOOLEAN := NEW.status = 'pending';
    waited BOOLEAN := TG_OP = 'UPDATE' AND OLD.status = 'pending';
BEGIN
    IF waits <> waited THEN
        PERFORM pg_notify('warden_waiting_threads',
            CASE WHEN waits THEN '+' ELSE '-' END
            || encode(sha256(convert_to(NEW.principal, 'UTF8') || '\\x00'::bytea
                             || convert_to(NEW.thread_id, 'UTF8')), 'hex')
            || ' ' || NEW.approval_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_thread_waits AFTER INSERT OR UPDATE OF status ON approvals
    FOR EACH ROW EXECUTE FUNCTION warden_thread_waits();
";

/// The table that records the schema version (one row).
const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS warden_schema (
    one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    version BIGINT NOT NULL
)";

/// The advisory lock two daemons migrating one database at once take in
/// turn ("warden" in ASCII).
const MIGRATION_LOCK: i64 = 0x7761_7264_656e;

const SELECT: &str = concat!("SELECT ", columns!(), " FROM approvals");

type Pool = r2d2::Pool<PostgresConnectionManager<MakeTls>>;

/// The pool's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolOptions {
    /// At most this many connections to the database.
    pub max_size: u32,
    /// How long a call waits for a connection (a free one, or a new one to a
    /// database that may be down) before it fails with
    /// [`StoreError::Unavailable`].
    pub timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_size: 16,
            timeout: Duration::from_secs(2),
        }
    }
}

/// Approvals in a PostgreSQL database.
pub struct PostgresApprovalStore {
    pool: Pool,
    /// How to connect: the listener of announcements opens a connection of
    /// its own with it.
    config: postgres::Config,
    /// How its connections speak TLS (`sslmode`, `sslrootcert`).
    tls: MakeTls,
    ssl_mode: SslMode,
    /// The threads that wait, known without a round trip, once
    /// [`PostgresApprovalStore::watch_waiting`] started keeping them.
    waiting: std::sync::OnceLock<(Arc<Waiting>, Listening)>,
    /// Host, port and database, for logs and errors (never the password).
    database: String,
}

impl PostgresApprovalStore {
    /// Connects to the database at `url` (a libpq-style URL or key=value
    /// string), creating or migrating the schema. Refuses a schema newer
    /// than this Warden knows, and TLS settings it cannot use (see
    /// [`crate::postgres_tls`]).
    pub fn connect(url: &str, options: PoolOptions) -> Result<Self, StoreError> {
        let crate::postgres_tls::Connection {
            mut config,
            tls,
            mode,
        } = connection(url)?;
        if config.get_connect_timeout().is_none() {
            // A database that does not answer is unavailable, not a hang.
            config.connect_timeout(options.timeout);
        }
        let shown = describe(&config);
        let manager = PostgresConnectionManager::new(config.clone(), tls.clone());
        let pool = r2d2::Pool::builder()
            .max_size(options.max_size)
            // No connection is opened before one is needed: the first
            // checkout below reports the real error.
            .min_idle(Some(0))
            .connection_timeout(options.timeout)
            .test_on_check_out(false)
            .build_unchecked(manager);
        let store = PostgresApprovalStore {
            pool,
            config,
            tls,
            ssl_mode: mode,
            waiting: std::sync::OnceLock::new(),
            database: shown.clone(),
        };
        // The first connection is made here, outside the pool, so that a
        // refusal says why (the pool keeps only its error's first line, "error
        // performing TLS handshake", not the certificate it did not trust);
        // it migrates the schema and closes.
        let mut client = store
            .config
            .connect(store.tls.clone())
            .map_err(|e| StoreError::Open {
                path: shown.clone(),
                message: with_causes(&e),
            })?;
        migrate(&mut client, &shown)?;
        Ok(store)
    }

    /// The database, as `postgres://host:port/db` (no credentials).
    pub fn database(&self) -> &str {
        &self.database
    }

    /// How the connections speak TLS, as the URL's `sslmode` said.
    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }

    /// Starts keeping the index of waiting threads ([`crate::waiting`]) on a
    /// connection and a thread of its own, so that evaluate's check of a
    /// thread that does not wait needs no round trip; the daemon does this,
    /// a one-shot command need not. Errors when the first connection cannot
    /// be made. Calling it again does nothing.
    pub fn watch_waiting(&self) -> Result<(), StoreError> {
        if self.waiting.get().is_some() {
            return Ok(());
        }
        let waiting = Arc::new(Waiting::new());
        let handle = on_own_connection(
            "warden-pg-waiting",
            "the index of waiting threads",
            &self.database,
            IndexKeeper {
                config: self.config.clone(),
                tls: self.tls.clone(),
                waiting: waiting.clone(),
            },
        )?;
        let _ = self.waiting.set((waiting, handle));
        Ok(())
    }

    /// The index of waiting threads, where it is kept.
    fn waiting(&self) -> Option<&Waiting> {
        self.waiting.get().map(|(waiting, _)| &**waiting)
    }

    fn client(
        &self,
    ) -> Result<r2d2::PooledConnection<PostgresConnectionManager<MakeTls>>, StoreError> {
        pooled(&self.pool)
    }

    /// Runs `f` in one transaction, committed when it returns `Ok`.
    fn transaction<T>(
        &self,
        f: impl FnOnce(&mut Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.client()?;
        let mut tx = client.transaction().map_err(db)?;
        let out = f(&mut tx)?;
        tx.commit().map_err(db)?;
        Ok(out)
    }

    /// The rows of one read. A pooled connection the server closed (a
    /// database restart) is found out only when used: a read tries once
    /// more on a fresh one. Writes are not retried: whether a commit on a
    /// lost connection took effect is unknown, and the caller is told so.
    fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, StoreError> {
        retried(&self.pool, |client| client.query(sql, params))
    }
}

/// The connection settings of `url` (a libpq-style URL or key=value string):
/// `sslmode` and `sslrootcert` as libpq reads them, TLS through rustls
/// ([`crate::postgres_tls`]).
pub fn parse_url(url: &str) -> Result<postgres::Config, StoreError> {
    connection(url).map(|c| c.config)
}

fn connection(url: &str) -> Result<crate::postgres_tls::Connection, StoreError> {
    crate::postgres_tls::connection(url).map_err(|message| StoreError::Open {
        path: "the PostgreSQL URL".into(),
        message,
    })
}

/// The database as errors name it: host, port and database, never the
/// password.
fn describe(config: &postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or("");
    format!("postgres://{host}:{port}/{db}")
}

/// A connection from the pool, or [`StoreError::Unavailable`].
fn pooled(
    pool: &Pool,
) -> Result<r2d2::PooledConnection<PostgresConnectionManager<MakeTls>>, StoreError> {
    pool.get().map_err(|e| StoreError::Unavailable {
        message: e.to_string(),
    })
}

/// `f` on a pooled connection, tried once more on a fresh one when that one
/// was closed (a database restart is found out only when a connection is
/// used): for reads, and statements that may run twice.
fn retried<T>(
    pool: &Pool,
    f: impl Fn(&mut postgres::Client) -> Result<T, postgres::Error>,
) -> Result<T, StoreError> {
    match f(&mut *pooled(pool)?) {
        Err(e) if e.is_closed() => f(&mut *pooled(pool)?).map_err(db),
        other => other.map_err(db),
    }
}

fn migrate(client: &mut postgres::Client, shown: &str) -> Result<(), StoreError> {
    let mut tx = client.transaction().map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(db)?;
    tx.batch_execute(VERSION_TABLE).map_err(db)?;
    let found: i64 = tx
        .query_opt("SELECT version FROM warden_schema", &[])
        .map_err(db)?
        .map_or(0, |row| row.get(0));
    if found > SCHEMA_VERSION {
        return Err(StoreError::Schema {
            path: shown.to_string(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for migration in &MIGRATIONS[found as usize..] {
        tx.batch_execute(migration).map_err(db)?;
    }
    if found < SCHEMA_VERSION {
        tx.execute(
            "INSERT INTO warden_schema (version) VALUES ($1) \
             ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version",
            &[&SCHEMA_VERSION],
        )
        .map_err(db)?;
    }
    tx.commit().map_err(db)
}

/// A failed statement: the connection's loss is [`StoreError::Unavailable`]
/// (the daemon answers 503 and the pool reconnects), anything else the
/// database's message.
fn db(e: postgres::Error) -> StoreError {
    if e.is_closed() || (e.code().is_none() && source_is_io(&e)) {
        return StoreError::Unavailable {
            message: e.to_string(),
        };
    }
    if let Some(code) = e.code()
        && (code == &SqlState::ADMIN_SHUTDOWN
            || code == &SqlState::CANNOT_CONNECT_NOW
            || code == &SqlState::CRASH_SHUTDOWN)
    {
        return StoreError::Unavailable {
            message: e.to_string(),
        };
    }
    let message = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    };
    StoreError::Database(message)
}

/// An error and what caused it, down the chain: "error performing TLS
/// handshake: invalid peer certificate: UnknownIssuer".
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(next) = cause {
        let more = next.to_string();
        if !text.ends_with(&more) {
            text = format!("{text}: {more}");
        }
        cause = next.source();
    }
    text
}

fn source_is_io(e: &postgres::Error) -> bool {
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

fn is_unique_violation(e: &postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

fn read_row(row: &postgres::Row) -> Row {
    Row {
        approval_id: row.get(0),
        thread_id: row.get(1),
        run_id: row.get(2),
        status: row.get(3),
        version: row.get(4),
        created_at: row.get(5),
        body: row.get(6),
        resolution: row.get(7),
        principal: row.get(8),
        resume_key: row.get(9),
        resume_digest: row.get(10),
        expires_at_ms: row.get(11),
        consumed_at: row.get(12),
    }
}

fn records(rows: Vec<postgres::Row>) -> Result<Vec<ApprovalRecord>, StoreError> {
    rows.iter().map(|r| read_row(r).decode()).collect()
}

fn append_event(tx: &mut Transaction<'_>, event: &ApprovalEvent) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO approval_events (at, kind, principal, thread_id, approval_id, run_id, event) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &event.at,
            &event.kind.as_str(),
            &event.principal,
            &event.thread_id,
            &event.approval_id,
            &event.run_id,
            &json(event)?,
        ],
    )
    .map_err(db)?;
    Ok(())
}

fn pending_exists(
    tx: &mut Transaction<'_>,
    principal: &str,
    thread_id: &str,
) -> Result<bool, StoreError> {
    tx.query_opt(
        "SELECT 1 FROM approvals WHERE principal = $1 AND thread_id = $2 AND status = 'pending'",
        &[&principal, &thread_id],
    )
    .map(|row| row.is_some())
    .map_err(db)
}

fn grant_bodies(rows: Vec<postgres::Row>) -> Result<Vec<Grant>, StoreError> {
    rows.iter().map(|r| decode_grant(r.get(0))).collect()
}

impl ApprovalStore for PostgresApprovalStore {
    fn insert(
        &self,
        record: &ApprovalRecord,
        event: &ApprovalEvent,
        quota: Option<u64>,
    ) -> Result<Inserted, StoreError> {
        let body = Body::of(record)?;
        let digest = requests_digest(&record.requests);
        self.transaction(|tx| {
            if pending_exists(tx, &record.principal, &record.thread_id)? {
                return Ok(Inserted::ThreadBusy);
            }
            if let Some(quota) = quota {
                // Two nodes pausing for one principal count in turn.
                tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtext($1))",
                    &[&record.principal],
                )
                .map_err(db)?;
                let pending: i64 = tx
                    .query_one(
                        "SELECT count(*) FROM approvals WHERE status = 'pending' AND principal = $1",
                        &[&record.principal],
                    )
                    .map_err(db)?
                    .get(0);
                if pending as u64 >= quota {
                    return Ok(Inserted::OverQuota {
                        pending: pending as u64,
                    });
                }
            }
            // A pause of the same thread committed on another node since the
            // check above: the unique index refuses this one.
            let inserted = tx.execute(
                "INSERT INTO approvals (approval_id, principal, thread_id, run_id, status, version, \
                 created_at, requests_digest, body, expires_at_ms) \
                 VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9) \
                 ON CONFLICT (principal, thread_id) WHERE status = 'pending' DO NOTHING",
                &[
                    &record.approval_id,
                    &record.principal,
                    &record.thread_id,
                    &record.run_id,
                    &(record.version as i64),
                    &record.created_at,
                    &digest,
                    &body,
                    &record.expires_at_ms,
                ],
            );
            match inserted {
                Ok(1) => {}
                Ok(_) => return Ok(Inserted::ThreadBusy),
                Err(e) if is_unique_violation(&e) => {
                    return Err(StoreError::Database(format!(
                        "approval {} already exists",
                        record.approval_id
                    )));
                }
                Err(e) => return Err(db(e)),
            }
            append_event(tx, event)?;
            Ok(Inserted::Paused)
        })
        .inspect(|inserted| {
            if let (Inserted::Paused, Some(waiting)) = (inserted, self.waiting()) {
                waiting.paused(&record.principal, &record.thread_id, &record.approval_id);
            }
        })
    }

    fn get(&self, approval_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let rows = self.query(&format!("{SELECT} WHERE approval_id = $1"), &[&approval_id])?;
        Ok(records(rows)?.pop())
    }

    fn pending_on_thread(
        &self,
        principal: &str,
        thread_id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        // On the daemon's evaluate path for every call with a thread: one
        // round trip (the parameters' types sent with the statement, no
        // separate prepare), answered from the unique partial index.
        let rows = self
            .client()?
            .query_typed(
                concat!(
                    "SELECT ",
                    columns!(),
                    " FROM approvals WHERE principal = $1 AND thread_id = $2 AND status = 'pending'"
                ),
                &[
                    (&principal as &(dyn ToSql + Sync), Type::TEXT),
                    (&thread_id as &(dyn ToSql + Sync), Type::TEXT),
                ],
            )
            .map_err(db)?;
        Ok(records(rows)?.pop())
    }

    fn list(&self, filter: &ListFilter) -> Result<Vec<ApprovalRecord>, StoreError> {
        let mut sql = format!(
            "{SELECT} WHERE ($1::text IS NULL OR thread_id = $1) AND ($2::text IS NULL OR principal = $2)"
        );
        if !filter.include_resolved {
            sql.push_str(" AND status = 'pending'");
        }
        sql.push_str(" ORDER BY seq");
        records(self.query(&sql, &[&filter.thread_id, &filter.principal])?)
    }

    fn resolve(
        &self,
        expected: &Expected<'_>,
        resolution: &Resolution,
        key: Option<&crate::store::ResumeKey>,
        grants: &[Grant],
        events: &[ApprovalEvent],
    ) -> Result<bool, StoreError> {
        let status = resolution.resolved_by.status();
        let grants = grants
            .iter()
            .map(|g| Ok((g, json(g)?)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        let resolution_json = json(resolution)?;
        self.transaction(|tx| {
            let won = tx
                .query_opt(
                    "UPDATE approvals SET status = $1, version = version + 1, consumption_id = $2, \
                     resolution = $3, resume_key = $7, resume_digest = $8, resolved_at_ms = $9 \
                     WHERE approval_id = $4 AND status = 'pending' AND version = $5 AND requests_digest = $6 \
                     RETURNING version",
                    &[
                        &status.as_str(),
                        &resolution.consumption_id,
                        &resolution_json,
                        &expected.approval_id,
                        &(expected.version as i64),
                        &expected.requests_digest,
                        &key.map(|k| k.key.as_str()),
                        &key.map(|k| k.digest.as_str()),
                        &now_ms(),
                    ],
                )
                .map_err(db)?;
            if won.is_none() {
                return Ok(false);
            }
            for (grant, body) in &grants {
                tx.execute(
                    "INSERT INTO grants (grant_id, principal, thread_id, expires_at_ms, body) \
                     VALUES ($1, $2, $3, $4, $5)",
                    &[
                        &grant.grant_id,
                        &grant.principal,
                        &grant.thread_id,
                        &grant.expires_at_ms,
                        body,
                    ],
                )
                .map_err(db)?;
            }
            for event in events {
                append_event(tx, event)?;
            }
            Ok(true)
        })
    }

    fn restore(
        &self,
        approval_id: &str,
        consumption_id: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError> {
        let mut restored_on = None;
        let restored = self.transaction(|tx| {
            let row = tx
                .query_opt(
                    "SELECT principal, thread_id FROM approvals \
                     WHERE approval_id = $1 AND status = 'resumed' AND consumption_id = $2 FOR UPDATE",
                    &[&approval_id, &consumption_id],
                )
                .map_err(db)?;
            let Some(row) = row else {
                return Ok(false);
            };
            let (principal, thread): (String, String) = (row.get(0), row.get(1));
            restored_on = Some((principal.clone(), thread.clone()));
            let blocked = || StoreError::RestoreBlocked {
                approval_id: approval_id.to_string(),
            };
            if pending_exists(tx, &principal, &thread)? {
                return Err(blocked());
            }
            let restored = tx.execute(
                "UPDATE approvals SET status = 'pending', version = version + 1, consumption_id = NULL, \
                 resolution = NULL, resume_key = NULL, resume_digest = NULL, resolved_at_ms = NULL \
                 WHERE approval_id = $1 AND status = 'resumed' AND consumption_id = $2",
                &[&approval_id, &consumption_id],
            );
            match restored {
                Ok(_) => {}
                // A pause taken on another node since the check above.
                Err(e) if is_unique_violation(&e) => return Err(blocked()),
                Err(e) => return Err(db(e)),
            }
            append_event(tx, event)?;
            Ok(true)
        })?;
        if let (true, Some((principal, thread)), Some(waiting)) =
            (restored, &restored_on, self.waiting())
        {
            waiting.paused(principal, thread, approval_id);
        }
        Ok(restored)
    }

    fn consume(
        &self,
        approval_id: &str,
        at: &str,
        event: &ApprovalEvent,
    ) -> Result<bool, StoreError> {
        self.transaction(|tx| {
            let won = tx
                .query_opt(
                    "UPDATE approvals SET consumed_at = $2 \
                     WHERE approval_id = $1 AND status <> 'pending' AND consumed_at IS NULL \
                     RETURNING approval_id",
                    &[&approval_id, &at],
                )
                .map_err(db)?;
            if won.is_none() {
                return Ok(false);
            }
            append_event(tx, event)?;
            Ok(true)
        })
    }

    fn purge_resolved(&self, before_ms: i64) -> Result<usize, StoreError> {
        /// At most this many records a call, so that one transaction stays short.
        const BATCH: i64 = 256;
        self.transaction(|tx| {
            // Rows another node is purging now are skipped, not waited for.
            let rows = tx
                .query(
                    "SELECT approval_id, body, resolution FROM approvals \
                     WHERE NOT purged AND status <> 'pending' \
                     AND (resolved_at_ms IS NULL OR resolved_at_ms <= $1) \
                     LIMIT $2 FOR UPDATE SKIP LOCKED",
                    &[&before_ms, &BATCH],
                )
                .map_err(db)?;
            for row in &rows {
                let approval_id: &str = row.get(0);
                let (body, resolution) = purged(approval_id, row.get(1), row.get(2))?;
                tx.execute(
                    "UPDATE approvals SET body = $1, resolution = $2, purged = TRUE WHERE approval_id = $3",
                    &[&body, &resolution, &approval_id],
                )
                .map_err(db)?;
            }
            Ok(rows.len())
        })
    }

    fn overdue(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        records(self.query(
            &format!(
                "{SELECT} WHERE status = 'pending' AND expires_at_ms IS NOT NULL \
                 AND expires_at_ms <= $1 ORDER BY seq"
            ),
            &[&now_ms],
        )?)
    }

    fn live_grants(
        &self,
        principal: &str,
        thread_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Vec<Grant>, StoreError> {
        grant_bodies(self.query(
            "SELECT body FROM grants WHERE principal = $1 AND expires_at_ms > $2 \
             AND revoked_at_ms IS NULL AND (thread_id IS NULL OR thread_id = $3) ORDER BY seq",
            &[&principal, &now_ms, &thread_id],
        )?)
    }

    fn grants(&self, filter: &GrantFilter, now_ms: i64) -> Result<Vec<Grant>, StoreError> {
        grant_bodies(self.query(
            "SELECT body FROM grants WHERE ($1::text IS NULL OR principal = $1) \
             AND ($2 OR (expires_at_ms > $3 AND revoked_at_ms IS NULL)) ORDER BY seq DESC",
            &[&filter.principal, &filter.include_inactive, &now_ms],
        )?)
    }

    fn revoke_grant(
        &self,
        grant_id: &str,
        revoked_by: &str,
        now_ms: i64,
        event: &ApprovalEvent,
    ) -> Result<Option<Grant>, StoreError> {
        self.transaction(|tx| {
            let row = tx
                .query_opt(
                    "SELECT body FROM grants WHERE grant_id = $1 FOR UPDATE",
                    &[&grant_id],
                )
                .map_err(db)?;
            let Some(row) = row else {
                return Ok(None);
            };
            let mut grant = decode_grant(row.get(0))?;
            if grant.revoked_at.is_some() || grant.expires_at_ms <= now_ms {
                return Ok(Some(grant));
            }
            grant.revoked_at = Some(super::grant::rfc3339(now_ms));
            grant.revoked_by = Some(revoked_by.to_string());
            tx.execute(
                "UPDATE grants SET revoked_at_ms = $1, body = $2 WHERE grant_id = $3",
                &[&now_ms, &json(&grant)?, &grant_id],
            )
            .map_err(db)?;
            append_event(tx, event)?;
            Ok(Some(grant))
        })
    }

    fn events(&self, filter: &JournalFilter) -> Result<Vec<ApprovalEvent>, StoreError> {
        // Newest first, so that a limit keeps the newest; reversed below.
        let rows = self.query(
            "SELECT seq, kind, event FROM approval_events \
             WHERE ($1::text IS NULL OR thread_id = $1) AND ($2::text IS NULL OR principal = $2) \
             AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $4",
            &[
                &filter.thread_id,
                &filter.principal,
                &filter.before_seq.map(|s| s as i64),
                &filter.limit.map(|l| l as i64),
            ],
        )?;
        rows.iter()
            .rev()
            .map(|row| decode_event(row.get(0), row.get(1), row.get(2)))
            .collect()
    }

    fn export(&self) -> Result<Contents, StoreError> {
        // One snapshot of the three tables.
        let mut client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(db)?;
        let approvals = tx
            .query(
                &format!("SELECT {APPROVAL_COLUMNS} FROM approvals ORDER BY seq"),
                &[],
            )
            .map_err(db)?
            .iter()
            .map(|row| ApprovalRow {
                approval_id: row.get(0),
                principal: row.get(1),
                thread_id: row.get(2),
                run_id: row.get(3),
                status: row.get(4),
                version: row.get(5),
                created_at: row.get(6),
                expires_at_ms: row.get(7),
                resolved_at_ms: row.get(8),
                requests_digest: row.get(9),
                consumption_id: row.get(10),
                resume_key: row.get(11),
                resume_digest: row.get(12),
                purged: row.get(13),
                body: row.get(14),
                resolution: row.get(15),
                consumed_at: row.get(16),
            })
            .collect();
        let events = tx
            .query(
                &format!("SELECT {EVENT_COLUMNS} FROM approval_events ORDER BY seq"),
                &[],
            )
            .map_err(db)?
            .iter()
            .map(|row| EventRow {
                at: row.get(0),
                kind: row.get(1),
                principal: row.get(2),
                thread_id: row.get(3),
                approval_id: row.get(4),
                run_id: row.get(5),
                event: row.get(6),
            })
            .collect();
        let grants = tx
            .query(
                &format!("SELECT {GRANT_COLUMNS} FROM grants ORDER BY seq"),
                &[],
            )
            .map_err(db)?
            .iter()
            .map(|row| GrantRow {
                grant_id: row.get(0),
                principal: row.get(1),
                thread_id: row.get(2),
                expires_at_ms: row.get(3),
                revoked_at_ms: row.get(4),
                body: row.get(5),
            })
            .collect();
        tx.commit().map_err(db)?;
        Ok(Contents {
            approvals,
            events,
            grants,
        })
    }

    fn import(&self, contents: &Contents) -> Result<Result<(), Occupied>, StoreError> {
        self.transaction(|tx| {
            // No daemon writes between the count and the copy.
            tx.batch_execute("LOCK TABLE approvals, approval_events, grants IN EXCLUSIVE MODE")
                .map_err(db)?;
            let mut count = |table: &str| -> Result<u64, StoreError> {
                let row = tx
                    .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                    .map_err(db)?;
                Ok(row.get::<_, i64>(0) as u64)
            };
            let occupied = Occupied {
                approvals: count("approvals")?,
                events: count("approval_events")?,
                grants: count("grants")?,
            };
            if !occupied.is_empty() {
                return Ok(Err(occupied));
            }
            let insert = tx
                .prepare(&transfer::insert("approvals", APPROVAL_COLUMNS))
                .map_err(db)?;
            for a in &contents.approvals {
                tx.execute(
                    &insert,
                    &[
                        &a.approval_id,
                        &a.principal,
                        &a.thread_id,
                        &a.run_id,
                        &a.status,
                        &a.version,
                        &a.created_at,
                        &a.expires_at_ms,
                        &a.resolved_at_ms,
                        &a.requests_digest,
                        &a.consumption_id,
                        &a.resume_key,
                        &a.resume_digest,
                        &a.purged,
                        &a.body,
                        &a.resolution,
                        &a.consumed_at,
                    ],
                )
                .map_err(db)?;
            }
            let insert = tx
                .prepare(&transfer::insert("approval_events", EVENT_COLUMNS))
                .map_err(db)?;
            for e in &contents.events {
                tx.execute(
                    &insert,
                    &[
                        &e.at,
                        &e.kind,
                        &e.principal,
                        &e.thread_id,
                        &e.approval_id,
                        &e.run_id,
                        &e.event,
                    ],
                )
                .map_err(db)?;
            }
            let insert = tx
                .prepare(&transfer::insert("grants", GRANT_COLUMNS))
                .map_err(db)?;
            for g in &contents.grants {
                tx.execute(
                    &insert,
                    &[
                        &g.grant_id,
                        &g.principal,
                        &g.thread_id,
                        &g.expires_at_ms,
                        &g.revoked_at_ms,
                        &g.body,
                    ],
                )
                .map_err(db)?;
            }
            Ok(Ok(()))
        })
    }

    fn known_free(&self, principal: &str, thread_id: &str) -> bool {
        self.waiting()
            .is_some_and(|waiting| waiting.known_free(principal, thread_id))
    }

    fn announcer(&self) -> Option<Arc<dyn Announcer>> {
        Some(Arc::new(Notifier {
            pool: self.pool.clone(),
            config: self.config.clone(),
            tls: self.tls.clone(),
            database: self.database.clone(),
        }))
    }
}

/// The channel pause events travel on between the daemons of one database.
const CHANNEL: &str = "warden_pause_events";

/// How long the listener waits for a notification before it looks whether it
/// should stop (and whether its connection is still there).
const LISTEN_POLL: Duration = Duration::from_millis(200);

/// How long a thread on a connection of its own ([`on_own_connection`])
/// waits before it connects again after losing the database.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Announcements through PostgreSQL's `NOTIFY`: delivered to every session
/// listening on the channel when the statement commits, in order.
struct Notifier {
    pool: Pool,
    config: postgres::Config,
    tls: MakeTls,
    database: String,
}

impl Announcer for Notifier {
    fn announce(&self, message: &str) -> Result<(), StoreError> {
        // Said twice after a restart, a message only tells listeners twice
        // to look.
        retried(&self.pool, |client| {
            client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &message])
        })?;
        Ok(())
    }

    fn listen(&self, heard: Box<dyn FnMut(Heard) + Send>) -> Result<Listening, StoreError> {
        on_own_connection(
            "warden-pg-listen",
            "the listener of other nodes' pause events",
            &self.database,
            PauseListener {
                config: self.config.clone(),
                tls: self.tls.clone(),
                heard,
            },
        )
    }
}

/// Work a thread does on a connection of its own, outside the pool, kept
/// open across the database's restarts by [`on_own_connection`].
trait OwnConnection: Send + 'static {
    /// Opens the connection (and whatever it listens to).
    fn connect(&mut self) -> Result<postgres::Client, String>;
    /// One turn of the work; an error loses the connection.
    fn turn(&mut self, client: &mut postgres::Client) -> Result<(), String>;
    /// The connection is open again after it was lost.
    fn back(&mut self) {}
    /// The connection is lost, or the work stops.
    fn lost(&mut self) {}
}

/// Runs `job` on a thread of its own until the returned handle is dropped:
/// its first connection made here (an error says why `what` cannot start),
/// each connection lost made again every [`RECONNECT_AFTER`].
fn on_own_connection(
    thread: &str,
    what: &'static str,
    database: &str,
    mut job: impl OwnConnection,
) -> Result<Listening, StoreError> {
    let refused = |message: String| StoreError::Open {
        path: database.to_string(),
        message: format!("starting {what}: {message}"),
    };
    let first = job.connect().map_err(refused)?;
    let stop = Arc::new(AtomicBool::new(false));
    let handle = Listening::new(stop.clone());
    let database = database.to_string();
    std::thread::Builder::new()
        .name(thread.into())
        .spawn(move || {
            let mut client = Some(first);
            while !stop.load(Ordering::Acquire) {
                let Some(connected) = client.as_mut() else {
                    std::thread::sleep(RECONNECT_AFTER);
                    match job.connect() {
                        Ok(fresh) => {
                            tracing::info!(%database, "{what} is back");
                            client = Some(fresh);
                            job.back();
                        }
                        Err(err) => tracing::debug!(%database, %err, "still no database"),
                    }
                    continue;
                };
                if let Err(err) = job.turn(connected) {
                    job.lost();
                    tracing::warn!(%database, %err, "lost the database; {what} waits for it");
                    client = None;
                }
            }
            job.lost();
        })
        .map_err(|e| refused(e.to_string()))?;
    Ok(handle)
}

/// Hears the other nodes' pause events ([`CHANNEL`]).
struct PauseListener {
    config: postgres::Config,
    tls: MakeTls,
    heard: Box<dyn FnMut(Heard) + Send>,
}

impl OwnConnection for PauseListener {
    fn connect(&mut self) -> Result<postgres::Client, String> {
        listening(&self.config, &self.tls, CHANNEL)
    }

    fn turn(&mut self, client: &mut postgres::Client) -> Result<(), String> {
        if let Some(payload) = next_notification(client).map_err(|e| db(e).to_string())? {
            (self.heard)(Heard::Message(payload));
        }
        Ok(())
    }

    fn back(&mut self) {
        (self.heard)(Heard::Gap);
    }
}

/// Keeps the index of waiting threads ([`WAITING_CHANNEL`]).
struct IndexKeeper {
    config: postgres::Config,
    tls: MakeTls,
    waiting: Arc<Waiting>,
}

impl OwnConnection for IndexKeeper {
    fn connect(&mut self) -> Result<postgres::Client, String> {
        watching(&self.config, &self.tls, &self.waiting)
    }

    fn turn(&mut self, client: &mut postgres::Client) -> Result<(), String> {
        keep(client, &self.waiting)
    }

    fn lost(&mut self) {
        // Every call on a thread asks the database until the index is read
        // again whole.
        self.waiting.stale();
    }
}

/// A connection of its own that listens on [`WAITING_CHANNEL`], with the
/// index read whole from the database after it began listening (what
/// changed in between arrives as notifications, applied in order after it).
fn watching(
    config: &postgres::Config,
    tls: &MakeTls,
    waiting: &Waiting,
) -> Result<postgres::Client, String> {
    let mut client = listening(config, tls, WAITING_CHANNEL)?;
    let threads = client
        .query(
            "SELECT principal, thread_id, approval_id FROM approvals WHERE status = 'pending'",
            &[],
        )
        .map_err(|e| db(e).to_string())?
        .iter()
        .map(|row| (Waiting::key(row.get(0), row.get(1)), row.get(2)))
        .collect();
    waiting.replace(threads);
    Ok(client)
}

/// One heartbeat of the index's connection: a round trip, the notifications
/// that arrived before its answer applied, the index fresh for
/// [`WAITING_WINDOW`] from when it was sent, then notifications applied as
/// they come until the next. An error loses the connection.
fn keep(client: &mut postgres::Client, waiting: &Waiting) -> Result<(), String> {
    use postgres::fallible_iterator::FallibleIterator;
    let sent = Instant::now();
    client.batch_execute("").map_err(|e| db(e).to_string())?;
    {
        let mut notifications = client.notifications();
        let mut queued = notifications.iter();
        while let Some(notification) = queued.next().map_err(|e| db(e).to_string())? {
            waiting.apply(notification.payload())?;
        }
    }
    waiting.fresh_until(sent + WAITING_WINDOW);
    let next = sent + HEARTBEAT;
    while let Some(left) = next.checked_duration_since(Instant::now()) {
        match client
            .notifications()
            .timeout_iter(left)
            .next()
            .map_err(|e| db(e).to_string())?
        {
            Some(notification) => waiting.apply(notification.payload())?,
            None => break,
        }
    }
    Ok(())
}

/// A connection of its own that listens on `channel`.
fn listening(
    config: &postgres::Config,
    tls: &MakeTls,
    channel: &str,
) -> Result<postgres::Client, String> {
    let mut client = config.connect(tls.clone()).map_err(|e| db(e).to_string())?;
    client
        .batch_execute(&format!("LISTEN {channel}"))
        .map_err(|e| db(e).to_string())?;
    Ok(client)
}

/// The next notification's payload, or `None` after [`LISTEN_POLL`] without
/// one; a connection the server closed is an error.
fn next_notification(client: &mut postgres::Client) -> Result<Option<String>, postgres::Error> {
    use postgres::fallible_iterator::FallibleIterator;
    let next = client.notifications().timeout_iter(LISTEN_POLL).next()?;
    if next.is_none() && client.is_closed() {
        // The iterator ends on a closed connection as on a timeout; a query
        // tells them apart with the connection's own error.
        client.batch_execute("")?;
    }
    Ok(next.map(|n| n.payload().to_string()))
}
