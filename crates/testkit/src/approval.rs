//! Helpers for the approval tests: a gate over a real Warden and a real
//! store: SQLite in a temporary data directory, or a fresh database on the
//! test PostgreSQL ([`crate::postgres`]).

use std::sync::Arc;

use serde_json::{Value, json};
use warden::Caller;
use warden_approval::ApprovalError;
use warden_approval::{
    ApprovalGate, CallOutcome, CallStatus, Durability, GateOutcome, ModelResponse, RequestDecision,
    ResumeRequest, Reviewer, RunRef, SqliteApprovalStore,
};
use warden_approval::{ApprovalStore, PostgresApprovalStore};

/// A gate and the data directory its store lives in (removed on drop).
pub struct TestGate {
    pub gate: ApprovalGate,
    pub dir: tempfile::TempDir,
    pub yaml: String,
    /// Where its store is.
    pub store: Store,
    /// The database's URL, on PostgreSQL.
    pub url: Option<String>,
}

/// Which store a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// A SQLite file in the test's data directory.
    Sqlite,
    /// A fresh database on the shared test PostgreSQL.
    Postgres,
}

impl Store {
    /// A gate on this configuration, with a fresh store of this kind.
    pub fn gate(self, yaml: &str) -> TestGate {
        let dir = tempfile::tempdir().unwrap();
        let url = match self {
            Store::Sqlite => None,
            Store::Postgres => Some(crate::postgres::PgServer::shared().database()),
        };
        let store = open_store(dir.path(), url.as_deref());
        TestGate {
            gate: ApprovalGate::new(Arc::new(crate::warden(yaml)), store),
            dir,
            yaml: yaml.to_string(),
            store: self,
            url,
        }
    }
}

/// The store in `dir`, or in the PostgreSQL database at `url`.
fn open_store(dir: &std::path::Path, url: Option<&str>) -> Arc<dyn ApprovalStore> {
    match url {
        None => Arc::new(SqliteApprovalStore::open_in(dir, Durability::default()).unwrap()),
        Some(url) => Arc::new(PostgresApprovalStore::connect(url, Default::default()).unwrap()),
    }
}

/// The approval list puts `bash` under the gate; no provider.
pub const BASH_NEEDS_APPROVAL: &str = "hitl_approval:\n  tools: [bash]\n";

/// A gate on this configuration, with a fresh SQLite store.
pub fn gate(yaml: &str) -> TestGate {
    Store::Sqlite.gate(yaml)
}

impl TestGate {
    /// Another gate on the same store, as another process would open it.
    pub fn reopen(&self) -> ApprovalGate {
        ApprovalGate::new(Arc::new(crate::warden(&self.yaml)), self.open_store())
    }

    /// The same store, opened again (another connection, as another process).
    pub fn open_store(&self) -> Arc<dyn ApprovalStore> {
        open_store(self.dir.path(), self.url.as_deref())
    }

    /// The gate closed and opened again on the same store: a restart.
    pub fn restart(self) -> TestGate {
        let TestGate {
            gate,
            dir,
            yaml,
            store,
            url,
        } = self;
        drop(gate);
        let gate = ApprovalGate::new(
            Arc::new(crate::warden(&yaml)),
            open_store(dir.path(), url.as_deref()),
        );
        TestGate {
            gate,
            dir,
            yaml,
            store,
            url,
        }
    }

    /// Everything the store keeps, as text: every byte of the SQLite
    /// store's files, or every row of every table of the PostgreSQL
    /// database.
    pub fn stored_text(&self) -> String {
        match &self.url {
            None => {
                let mut text = String::new();
                for entry in std::fs::read_dir(self.dir.path()).unwrap() {
                    let bytes = std::fs::read(entry.unwrap().path()).unwrap();
                    text.push_str(&String::from_utf8_lossy(&bytes));
                }
                text
            }
            Some(url) => {
                let mut client = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
                let mut text = String::new();
                for table in ["approvals", "approval_events", "grants"] {
                    for row in client
                        .query(&format!("SELECT t::text FROM {table} t"), &[])
                        .unwrap()
                    {
                        text.push_str(row.get(0));
                    }
                }
                text
            }
        }
    }

    pub fn submit(&self, thread: &str, run: &str, response: &ModelResponse) -> GateOutcome {
        self.try_submit(thread, run, response, Caller::Agent)
            .expect("the gate answers")
    }

    pub fn try_submit(
        &self,
        thread: &str,
        run: &str,
        response: &ModelResponse,
        caller: Caller,
    ) -> Result<GateOutcome, ApprovalError> {
        self.gate
            .submit(&RunRef::new(thread, run), response, caller)
    }

    pub fn resume(
        &self,
        thread: &str,
        outcome: &GateOutcome,
        request: &ResumeRequest,
    ) -> Result<warden_approval::Resolution, ApprovalError> {
        self.gate
            .resume(&alice(), thread, outcome.approval_id.as_deref(), request)
    }
}

/// The human who answers in these tests.
pub fn alice() -> Reviewer {
    Reviewer::human("alice")
}

/// A model response from a JSON list of tool calls and a context.
pub fn response_with(calls: Value, context: Value) -> ModelResponse {
    serde_json::from_value(json!({"message": {"tool_calls": calls}, "context": context})).unwrap()
}

pub fn response(calls: Value) -> ModelResponse {
    response_with(calls, json!({}))
}

/// A call `{"id", "name", "args"}`.
pub fn tool_call(id: Value, name: &str, args: Value) -> Value {
    json!({"id": id, "name": name, "args": args})
}

/// Each call's name and status, in order.
pub fn statuses(calls: &[CallOutcome]) -> Vec<(String, CallStatus)> {
    calls.iter().map(|c| (c.name.clone(), c.status)).collect()
}

pub fn call<'a>(calls: &'a [CallOutcome], name: &str) -> &'a CallOutcome {
    calls
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no call '{name}' in {calls:?}"))
}

/// Ids of the calls left in the rewritten message.
pub fn message_ids(message: &warden_approval::AiMessage) -> Vec<Option<String>> {
    message.tool_calls.iter().map(|c| c.id.clone()).collect()
}

pub fn decision(request_id: &str, kind: &str) -> RequestDecision {
    serde_json::from_value(json!({"request_id": request_id, "decision": kind})).unwrap()
}

/// Approves every pending request of an outcome.
pub fn approve_all(outcome: &GateOutcome) -> ResumeRequest {
    ResumeRequest::decide(
        outcome
            .requests
            .iter()
            .map(|r| decision(&r.request_id, "approve"))
            .collect(),
    )
}
