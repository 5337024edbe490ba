//! Moving a SQLite store into a PostgreSQL one (`warden approvals migrate`):
//! every row arrives as it was, a pending approval stays resumable there and
//! nowhere twice, and a store that holds anything is never written into.

use serde_json::{Value, json};
use warden_approval::ApprovalStore;
use warden_approval::transfer::{Contents, Occupied};
use warden_approval::{CallStatus, JournalFilter, ResumeRequest, RunState};
use warden_testkit::approval::*;

/// Copies `from` into `to`, as `warden approvals migrate` does.
fn copy(from: &dyn ApprovalStore, to: &dyn ApprovalStore) -> Result<Contents, Occupied> {
    let contents = from.export().unwrap();
    to.import(&contents).unwrap().map(|()| contents)
}

fn push(command: &str) -> warden_approval::ModelResponse {
    response(json!([tool_call(
        json!("c1"),
        "bash",
        json!({ "command": command })
    )]))
}

fn approve_first(paused: &warden_approval::GateOutcome, grant: Value) -> ResumeRequest {
    serde_json::from_value(json!({"decisions": [{
        "request_id": paused.requests[0].request_id,
        "decision": "approve",
        "grant": grant,
    }]}))
    .unwrap()
}

/// A SQLite store holding a pending approval on `t-wait`, and on `t-done` an
/// answered one that gave a standing grant.
fn sqlite_with_history() -> (TestGate, warden_approval::GateOutcome) {
    let g = Store::Sqlite.gate(BASH_NEEDS_APPROVAL);
    let done = g.submit("t-done", "r1", &push("git push origin main"));
    g.resume(
        "t-done",
        &done,
        &approve_first(&done, json!({"minutes": 30})),
    )
    .unwrap();
    let waiting = g.submit("t-wait", "r1", &push("make deploy"));
    assert_eq!(waiting.run_state, RunState::WaitingForInput);
    (g, waiting)
}

#[test]
fn every_row_of_a_sqlite_store_arrives_in_postgres_as_it_was() {
    let (from, _) = sqlite_with_history();
    let to = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    let copied = copy(&*from.open_store(), &*to.open_store()).expect("an empty store is written");
    assert_eq!((copied.approvals.len(), copied.pending()), (2, 1));
    assert_eq!(copied.grants.len(), 1);
    assert_eq!(to.open_store().export().unwrap(), copied);
    // The journal reads the same on both sides, in the same order.
    let journal = |g: &TestGate| g.gate.store().events(&JournalFilter::default()).unwrap();
    assert_eq!(journal(&to), journal(&from));
}

#[test]
fn a_pending_approval_moved_is_resumed_on_the_new_store_once() {
    let (from, waiting) = sqlite_with_history();
    let to = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    copy(&*from.open_store(), &*to.open_store()).unwrap();
    let approve = approve_first(&waiting, Value::Null);
    let resolution = to.resume("t-wait", &waiting, &approve).unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Run);
    let again = to.resume("t-wait", &waiting, &ResumeRequest::reject_all(None));
    assert!(again.is_err(), "{again:?}");
    // The grant moved with its approval answers the same call without a pause.
    let next = to.submit("t-done", "r2", &push("git push origin main"));
    assert_eq!(next.calls[0].reasons[0].code, "warden.approval_grant");
}

#[test]
fn a_store_that_holds_anything_is_not_written_into() {
    let (from, _) = sqlite_with_history();
    let to = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    to.submit("t-there", "r1", &push("make deploy"));
    let before = to.open_store().export().unwrap();
    let refused = copy(&*from.open_store(), &*to.open_store());
    assert_eq!(
        refused,
        Err(Occupied {
            approvals: 1,
            events: 1,
            grants: 0
        })
    );
    assert_eq!(to.open_store().export().unwrap(), before);
}

#[test]
fn a_postgres_store_moves_back_into_an_empty_sqlite_one_too() {
    let (from, _) = sqlite_with_history();
    let pg = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    let copied = copy(&*from.open_store(), &*pg.open_store()).unwrap();
    let back = Store::Sqlite.gate(BASH_NEEDS_APPROVAL);
    copy(&*pg.open_store(), &*back.open_store()).unwrap();
    assert_eq!(back.open_store().export().unwrap(), copied);
}
