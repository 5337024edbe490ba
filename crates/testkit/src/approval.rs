//! Helpers for the approval tests: a gate over a real Warden and a real SQLite
//! store in a temporary data directory.

use std::sync::Arc;

use serde_json::{Value, json};
use warden::Caller;
use warden_approval::ApprovalError;
use warden_approval::{
    ApprovalGate, CallOutcome, CallStatus, Durability, GateOutcome, ModelResponse, RequestDecision,
    ResumeRequest, Reviewer, RunRef, SqliteApprovalStore,
};

/// A gate and the data directory its store lives in (removed on drop).
pub struct TestGate {
    pub gate: ApprovalGate,
    pub dir: tempfile::TempDir,
    pub yaml: String,
}

/// The approval list puts `bash` under the gate; no provider.
pub const BASH_NEEDS_APPROVAL: &str = "hitl_approval:\n  tools: [bash]\n";

/// A gate on this configuration, with a fresh store.
pub fn gate(yaml: &str) -> TestGate {
    let dir = tempfile::tempdir().unwrap();
    let gate = ApprovalGate::open(
        Arc::new(crate::warden(yaml)),
        dir.path(),
        Durability::default(),
    )
    .unwrap();
    TestGate {
        gate,
        dir,
        yaml: yaml.to_string(),
    }
}

impl TestGate {
    /// Another gate on the same store file, as another process would open it.
    pub fn reopen(&self) -> ApprovalGate {
        let store = SqliteApprovalStore::open_in(self.dir.path(), Durability::default()).unwrap();
        ApprovalGate::new(Arc::new(crate::warden(&self.yaml)), Arc::new(store))
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
