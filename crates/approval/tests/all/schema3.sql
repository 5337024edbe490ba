-- The approval store as schema 3 wrote it (the release before one-use MCP answers), with one pause.
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
CREATE UNIQUE INDEX approvals_one_pending_per_thread ON approvals (principal, thread_id) WHERE status = 'pending';
CREATE INDEX approvals_by_thread ON approvals (principal, thread_id, created_at);
CREATE INDEX approvals_by_status ON approvals (status, principal);
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
INSERT INTO approvals (approval_id, principal, thread_id, run_id, status, version, created_at, requests_digest, body)
    VALUES ('apr_schema3', 'local', 't-old', 'r-old', 'pending', 1, '2026-01-01T00:00:00Z', 'legacy',
            '{"caller":"agent","context":{},"message":{"tool_calls":[]},"requests":[],"calls":[],"response_digest":"legacy","generation":0}');
PRAGMA user_version = 3;
