//! Who may answer a pause, over real HTTP: only approvers (and a relay naming
//! the human) resume or clear; an agent never answers, not even its own pause;
//! every pause belongs to the principal that made it, threads are scoped per
//! principal, and a principal may have only so many pauses pending.

use crate::common::daemon::*;
use serde_json::{Value, json};
use warden_approval::{ApprovalStore, Durability, EventKind, JournalFilter, SqliteApprovalStore};

fn daemon_with(extra: &str) -> Daemon {
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n{extra}{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

fn daemon() -> Daemon {
    daemon_with("")
}

fn git_push() -> Value {
    json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
        {"id": "call_2", "name": "read_file", "args": {"path": "CHANGELOG.md"}}
    ]}})
}

/// Pauses `thread` with `token`; returns the outcome.
async fn pause(daemon: &Daemon, token: &str, thread: &str) -> Value {
    let path = format!("/v1/threads/{thread}/runs/r-1/tool-calls");
    let (status, outcome) = daemon.post(&path, Some(token), &git_push()).await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    outcome
}

fn clear_path(thread: &str, outcome: &Value) -> String {
    format!(
        "/v1/threads/{thread}/approvals/{}/clear",
        outcome["approval_id"].as_str().unwrap()
    )
}

/// The approval journal, read from the daemon's store as another process would.
fn journal(daemon: &Daemon) -> Vec<warden_approval::ApprovalEvent> {
    let store =
        SqliteApprovalStore::open(&daemon.data_file("approvals.sqlite3"), Durability::Normal)
            .unwrap();
    store.events(&JournalFilter::default()).unwrap()
}

async fn pending(daemon: &Daemon, token: &str, thread: &str) -> Vec<Value> {
    let (status, page) = daemon
        .get(&format!("/v1/threads/{thread}/approvals"), Some(token))
        .await;
    assert_eq!(status, 200, "{page}");
    page["approvals"].as_array().unwrap().clone()
}

#[tokio::test]
async fn an_agent_cannot_resume_its_own_pause() {
    let daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let (status, body) = daemon
        .post(
            &resume_path("t-1", &outcome),
            Some(AGENT),
            &approve(&outcome),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "approver_required");
    assert_eq!(
        pending(&daemon, AGENT, "t-1").await.len(),
        1,
        "still pending"
    );
}

#[tokio::test]
async fn an_agent_cannot_clear_its_own_pause() {
    let daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let (status, body) = daemon
        .post(&clear_path("t-1", &outcome), Some(AGENT), &json!({}))
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "approver_required");
    assert_eq!(
        pending(&daemon, AGENT, "t-1").await.len(),
        1,
        "still pending"
    );
}

#[tokio::test]
async fn an_internal_token_without_relay_cannot_answer() {
    let daemon = daemon();
    let outcome = pause(&daemon, INTERNAL, "t-1").await;
    let (status, body) = daemon
        .post(
            &resume_path("t-1", &outcome),
            Some(INTERNAL),
            &json!({"reject_all": {}, "reviewer": "bob"}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "approver_required");
}

#[tokio::test]
async fn an_approver_resumes_and_the_journal_and_the_log_name_it() {
    let mut daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let (status, resolution) = daemon
        .post(
            &resume_path("t-1", &outcome),
            Some(APPROVER),
            &approve(&outcome),
        )
        .await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(resolution["reviewer"], "alice");
    assert!(resolution.get("relayed_by").is_none(), "{resolution}");
    assert_eq!(
        resolution["calls"][0]["reasons"][0]["message"],
        "approved by alice"
    );
    let resumed = journal(&daemon).pop().unwrap();
    assert_eq!(resumed.kind, EventKind::Resumed);
    assert_eq!(
        (resumed.reviewer.as_deref(), resumed.relayed_by.as_deref()),
        (Some("alice"), None)
    );
    assert_eq!(resumed.principal, "harness");
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    let answered = log
        .iter()
        .find(|l| l["source"] == "resume" && l["human_decision"] == "approve")
        .expect("the resume is logged");
    assert_eq!(answered["reviewer"], "alice");
    assert_eq!(answered["caller"]["token"], "alice");
}

#[tokio::test]
async fn an_approver_answers_in_its_own_name_only() {
    let daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let mut answer = approve(&outcome);
    answer["reviewer"] = json!("alice");
    let (status, body) = daemon
        .post(&resume_path("t-1", &outcome), Some(APPROVER), &{
            let mut other = answer.clone();
            other["reviewer"] = json!("mallory");
            other
        })
        .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "reviewer_mismatch");
    let (status, body) = daemon
        .post(&resume_path("t-1", &outcome), Some(APPROVER), &answer)
        .await;
    assert_eq!(status, 200, "its own name is accepted: {body}");
}

#[tokio::test]
async fn a_relay_names_the_human_and_the_journal_records_both() {
    let daemon = daemon();
    let outcome = pause(&daemon, RELAY, "t-1").await;
    let mut answer = approve(&outcome);
    answer["reviewer"] = json!("bob");
    let (status, resolution) = daemon
        .post(&resume_path("t-1", &outcome), Some(RELAY), &answer)
        .await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(
        (&resolution["reviewer"], &resolution["relayed_by"]),
        (&json!("bob"), &json!("gateway-relay"))
    );
    assert_eq!(
        resolution["calls"][0]["reasons"][0]["message"],
        "approved by \"bob\", relayed by gateway-relay"
    );
    let resumed = journal(&daemon).pop().unwrap();
    assert_eq!(
        (resumed.reviewer.as_deref(), resumed.relayed_by.as_deref()),
        (Some("bob"), Some("gateway-relay"))
    );
}

#[tokio::test]
async fn a_relay_must_name_the_human() {
    let daemon = daemon();
    let outcome = pause(&daemon, RELAY, "t-1").await;
    let (status, body) = daemon
        .post(
            &resume_path("t-1", &outcome),
            Some(RELAY),
            &approve(&outcome),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "invalid_decision");
    assert_eq!(body["error"]["details"]["field"], "reviewer");
}

#[tokio::test]
async fn a_relay_cannot_answer_another_principals_pause() {
    let daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let mut answer = approve(&outcome);
    answer["reviewer"] = json!("bob");
    let (status, body) = daemon
        .post(&resume_path("t-1", &outcome), Some(RELAY), &answer)
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "approval_not_found");
    assert_eq!(
        pending(&daemon, AGENT, "t-1").await.len(),
        1,
        "still pending"
    );
}

#[tokio::test]
async fn a_relay_clears_naming_the_human() {
    let daemon = daemon();
    let outcome = pause(&daemon, RELAY, "t-1").await;
    let (status, cleared) = daemon
        .post(
            &clear_path("t-1", &outcome),
            Some(RELAY),
            &json!({"reviewer": "bob", "reason": "wrong branch"}),
        )
        .await;
    assert_eq!(status, 200, "{cleared}");
    assert_eq!(cleared["calls"][0]["status"], "denied");
    assert_eq!(cleared["resolved_by"]["by"], "clear");
    let event = journal(&daemon).pop().unwrap();
    assert_eq!(event.kind, EventKind::Cleared);
    assert_eq!(
        (event.reviewer.as_deref(), event.relayed_by.as_deref()),
        (Some("bob"), Some("gateway-relay"))
    );
    assert_eq!(event.note.as_deref(), Some("wrong branch"));
}

#[tokio::test]
async fn an_approver_clears_and_a_second_clear_is_409() {
    let daemon = daemon();
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let path = clear_path("t-1", &outcome);
    let (status, cleared) = daemon.post(&path, Some(APPROVER), &json!({})).await;
    assert_eq!(status, 200, "{cleared}");
    assert_eq!(cleared["reviewer"], "alice");
    let (status, again) = daemon.post(&path, Some(APPROVER), &json!({})).await;
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "approval_resolved");
}

#[tokio::test]
async fn an_admin_answers_when_the_operator_allows_it() {
    let daemon = daemon_with("  admins_may_approve: true\n");
    let outcome = pause(&daemon, AGENT, "t-1").await;
    let (status, resolution) = daemon
        .post(
            &resume_path("t-1", &outcome),
            Some(ADMIN),
            &approve(&outcome),
        )
        .await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(resolution["reviewer"], "ops");
}

#[tokio::test]
async fn an_agent_lists_only_its_own_principals_approvals() {
    let daemon = daemon();
    pause(&daemon, AGENT, "t-1").await;
    assert_eq!(pending(&daemon, AGENT, "t-1").await.len(), 1);
    assert!(
        pending(&daemon, OTHER_AGENT, "t-1").await.is_empty(),
        "another agent does not see it"
    );
    let all = pending(&daemon, APPROVER, "t-1").await;
    assert_eq!(all.len(), 1, "an approver sees every principal's");
    assert_eq!(all[0]["principal"], "harness");
}

#[tokio::test]
async fn a_thread_paused_by_one_agent_does_not_block_another() {
    let daemon = daemon();
    pause(&daemon, AGENT, "t-1").await;
    // The other agent's thread of the same id is its own: it pauses too.
    pause(&daemon, OTHER_AGENT, "t-1").await;
    let call = json!({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": "t-1"}});
    let (status, decision) = daemon.evaluate(OTHER_AGENT, &call).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(
        decision["reasons"][0]["code"], "warden.approval_pending",
        "its own thread waits: {decision}"
    );
    let (status, decision) = daemon
        .evaluate(
            INTERNAL,
            &json!({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": "t-1"}}),
        )
        .await;
    assert_eq!(status, 200, "a third principal's t-1 is free: {decision}");
    let both = pending(&daemon, APPROVER, "t-1").await;
    let mut principals: Vec<&str> = both
        .iter()
        .map(|a| a["principal"].as_str().unwrap())
        .collect();
    principals.sort();
    assert_eq!(principals, ["harness", "other-agent"]);
}

#[tokio::test]
async fn a_principal_past_its_quota_gets_its_asks_denied_not_paused() {
    let daemon = daemon_with("  max_pending_per_principal: 2\n");
    pause(&daemon, AGENT, "t-1").await;
    pause(&daemon, AGENT, "t-2").await;
    let (status, outcome) = daemon
        .post(
            "/v1/threads/t-3/runs/r-1/tool-calls",
            Some(AGENT),
            &git_push(),
        )
        .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "running");
    assert!(outcome["approval_id"].is_null(), "{outcome}");
    assert_eq!(outcome["calls"][0]["status"], "denied");
    assert_eq!(
        outcome["calls"][0]["reasons"][0]["code"],
        "warden.approval_quota_exceeded"
    );
    assert_eq!(outcome["calls"][1]["status"], "run", "the rest runs");
    assert!(pending(&daemon, AGENT, "t-3").await.is_empty());
    // The quota is per principal.
    pause(&daemon, OTHER_AGENT, "t-3").await;
}

#[test]
fn a_relay_on_an_approver_token_stops_the_daemon_from_starting() {
    let (code, stderr) = serve_refused(
        &format!(
            "server:\n  tokens:\n    - {{name: alice, role: approver, relay: true, token: {APPROVER}}}\n"
        ),
        |_| {},
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("server.tokens[0].relay") && stderr.contains("approver"),
        "{stderr}"
    );
}
