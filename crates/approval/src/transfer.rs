//! Moving what one store holds into another, as `warden approvals migrate
//! --from sqlite:PATH --to postgres` does when a node's SQLite store becomes
//! a fleet's PostgreSQL one: every approval (pending ones stay resumable,
//! resolved ones keep the answer a retried resume or MCP call reads), the
//! journal in its order, and the standing grants, row for row, column for
//! column: nothing is judged or rewritten on the way.

/// The columns of an [`ApprovalRow`], in its fields' order (both stores name
/// them alike).
pub(crate) const APPROVAL_COLUMNS: &str = "approval_id, principal, thread_id, run_id, status, \
     version, created_at, expires_at_ms, resolved_at_ms, requests_digest, consumption_id, \
     resume_key, resume_digest, purged, body, resolution, consumed_at";

/// The columns of an [`EventRow`], in its fields' order.
pub(crate) const EVENT_COLUMNS: &str = "at, kind, principal, thread_id, approval_id, run_id, event";

/// The columns of a [`GrantRow`], in its fields' order.
pub(crate) const GRANT_COLUMNS: &str =
    "grant_id, principal, thread_id, expires_at_ms, revoked_at_ms, body";

/// `INSERT INTO table (columns) VALUES ($1, …)` for `count` columns.
pub(crate) fn insert(table: &str, columns: &str) -> String {
    let count = columns.split(',').count();
    let values: Vec<String> = (1..=count).map(|n| format!("${n}")).collect();
    format!(
        "INSERT INTO {table} ({columns}) VALUES ({})",
        values.join(", ")
    )
}

/// One approval as stored, every column.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // The columns of the store's `approvals` table.
pub struct ApprovalRow {
    pub approval_id: String,
    pub principal: String,
    pub thread_id: String,
    pub run_id: String,
    pub status: String,
    pub version: i64,
    pub created_at: String,
    pub expires_at_ms: Option<i64>,
    pub resolved_at_ms: Option<i64>,
    pub requests_digest: String,
    pub consumption_id: Option<String>,
    pub resume_key: Option<String>,
    pub resume_digest: Option<String>,
    pub purged: bool,
    pub body: String,
    pub resolution: Option<String>,
    pub consumed_at: Option<String>,
}

/// One journal entry as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // The columns of the store's `approval_events` table.
pub struct EventRow {
    pub at: String,
    pub kind: String,
    pub principal: String,
    pub thread_id: String,
    pub approval_id: String,
    pub run_id: String,
    pub event: String,
}

/// One standing grant as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // The columns of the store's `grants` table.
pub struct GrantRow {
    pub grant_id: String,
    pub principal: String,
    pub thread_id: Option<String>,
    pub expires_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
    pub body: String,
}

/// Everything a store holds, each table in the order it was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    /// The approvals, oldest first.
    pub approvals: Vec<ApprovalRow>,
    /// The journal, oldest first.
    pub events: Vec<EventRow>,
    /// The grants, oldest first.
    pub grants: Vec<GrantRow>,
}

impl Contents {
    /// Nothing at all.
    pub fn is_empty(&self) -> bool {
        self.approvals.is_empty() && self.events.is_empty() && self.grants.is_empty()
    }

    /// The approvals still waiting for a human.
    pub fn pending(&self) -> usize {
        self.approvals
            .iter()
            .filter(|a| a.status == "pending")
            .count()
    }
}

/// What [`crate::store::ApprovalStore::import`] found where it was to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupied {
    /// Approvals already there.
    pub approvals: u64,
    /// Journal entries already there.
    pub events: u64,
    /// Grants already there.
    pub grants: u64,
}

impl Occupied {
    /// Whether the store holds anything.
    pub fn is_empty(&self) -> bool {
        self.approvals == 0 && self.events == 0 && self.grants == 0
    }
}
