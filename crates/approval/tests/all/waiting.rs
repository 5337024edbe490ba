//! The PostgreSQL store's index of waiting threads, on the test PostgreSQL:
//! a node knows a thread free without a round trip only while it is sure. A
//! thread paused on another node is known waiting within the stated window,
//! one paused on this node at once, and an index that lost its database
//! knows no thread free, so that every check asks the database (and fails
//! closed while it is gone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use warden::Caller;
use warden_approval::postgres::{PoolOptions, PostgresApprovalStore};
use warden_approval::store::ApprovalStore;
use warden_approval::waiting::WINDOW;
use warden_approval::{ApprovalGate, LOCAL_PRINCIPAL, ResumeRequest, RunRef, RunState};
use warden_testkit::approval::*;
use warden_testkit::postgres::PgServer;

/// A daemon's view of the database at `url`: the store with its index.
fn watching(url: &str) -> PostgresApprovalStore {
    let store = PostgresApprovalStore::connect(url, PoolOptions::default()).unwrap();
    store.watch_waiting().unwrap();
    store
}

/// Waits (at most 10 s) until `known` says `wanted` of thread `t` of the
/// local principal.
fn until_known_free(store: &PostgresApprovalStore, thread: &str, wanted: bool) {
    let started = Instant::now();
    while store.known_free(LOCAL_PRINCIPAL, thread) != wanted {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "thread {thread} never known {}",
            if wanted { "free" } else { "waiting" }
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn push() -> warden_approval::ModelResponse {
    response(json!([tool_call(
        json!("c1"),
        "bash",
        json!({"command": "make deploy"})
    )]))
}

fn pause(g: &TestGate, thread: &str) -> warden_approval::GateOutcome {
    g.submit(thread, "r1", &push())
}

#[test]
fn a_thread_paused_on_another_node_is_known_waiting_once_the_window_has_passed() {
    let a = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    let b = watching(a.url.as_deref().unwrap());
    until_known_free(&b, "t-1", true);
    pause(&a, "t-1");
    std::thread::sleep(WINDOW);
    assert!(!b.known_free(LOCAL_PRINCIPAL, "t-1"));
    assert!(b.known_free(LOCAL_PRINCIPAL, "t-2"));
    assert!(b.known_free("another-principal", "t-1"));
}

#[test]
fn a_thread_paused_through_this_node_is_known_waiting_at_once() {
    let a = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    let store = Arc::new(watching(a.url.as_deref().unwrap()));
    let warden = Arc::new(warden_testkit::warden(BASH_NEEDS_APPROVAL));
    let gate = ApprovalGate::new(warden, store.clone());
    until_known_free(&store, "t-1", true);
    let outcome = gate
        .submit(&RunRef::new("t-1", "r1"), &push(), Caller::Agent)
        .unwrap();
    assert_eq!(outcome.run_state, RunState::WaitingForInput);
    assert!(!store.known_free(LOCAL_PRINCIPAL, "t-1"));
}

#[test]
fn a_thread_whose_approval_was_answered_is_known_free_again() {
    let a = Store::Postgres.gate(BASH_NEEDS_APPROVAL);
    let b = watching(a.url.as_deref().unwrap());
    let outcome = pause(&a, "t-1");
    until_known_free(&b, "t-1", false);
    a.resume("t-1", &outcome, &ResumeRequest::reject_all(None))
        .unwrap();
    until_known_free(&b, "t-1", true);
}

#[test]
fn an_index_that_lost_its_database_knows_no_thread_free_until_it_is_back() {
    let server = PgServer::start().unwrap();
    let b = watching(&server.database());
    until_known_free(&b, "t-1", true);
    server.stop();
    std::thread::sleep(WINDOW + Duration::from_millis(50));
    assert!(!b.known_free(LOCAL_PRINCIPAL, "t-1"));
    server.restart().unwrap();
    until_known_free(&b, "t-1", true);
}
