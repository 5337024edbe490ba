//! Idempotent resumes over real HTTP: the same resume again (its
//! `Idempotency-Key` header, else its `run_id`, and the same body) gets the
//! stored answer with `replayed: true` and consumes nothing; any other resume
//! of a consumed approval is 409; a lost response is recovered by a retry.

use std::io::Write;
use std::time::Duration;

use crate::common::daemon::*;
use serde_json::{Value, json};
use warden_approval::{ApprovalStore, Durability, EventKind, JournalFilter, SqliteApprovalStore};

fn daemon() -> Daemon {
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

async fn pause(daemon: &Daemon) -> Value {
    let body = json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
        {"id": "call_2", "name": "read_file", "args": {"path": "CHANGELOG.md"}}
    ]}});
    let (status, outcome) = daemon
        .post("/v1/threads/t-1/runs/r-1/tool-calls", Some(AGENT), &body)
        .await;
    assert_eq!(status, 200, "{outcome}");
    outcome
}

fn path(outcome: &Value) -> String {
    format!(
        "/v1/threads/t-1/approvals/{}/resume",
        outcome["approval_id"].as_str().unwrap()
    )
}

fn approve(outcome: &Value, run_id: &str) -> Value {
    json!({"decisions": [{"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}],
           "run_id": run_id})
}

/// POSTs with an `Idempotency-Key` header.
async fn post_keyed(daemon: &Daemon, path: &str, key: &str, body: &Value) -> (u16, Value) {
    let response = daemon
        .request(reqwest::Method::POST, path, Some(APPROVER))
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

fn resumes(daemon: &Daemon) -> usize {
    let store =
        SqliteApprovalStore::open(&daemon.data_file("approvals.sqlite3"), Durability::Normal)
            .unwrap();
    store
        .events(&JournalFilter::default())
        .unwrap()
        .iter()
        .filter(|e| e.kind == EventKind::Resumed)
        .count()
}

#[tokio::test]
async fn the_same_resume_twice_returns_the_same_outcome_and_consumes_once() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let answer = approve(&outcome, "r-2");
    let (status, first) = daemon.post(&path(&outcome), Some(APPROVER), &answer).await;
    assert_eq!(status, 200, "{first}");
    let (status, second) = daemon.post(&path(&outcome), Some(APPROVER), &answer).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        (&first["replayed"], &second["replayed"]),
        (&json!(false), &json!(true))
    );
    let mut replayed = second.clone();
    replayed["replayed"] = json!(false);
    assert_eq!(replayed, first, "the stored outcome, unchanged");
    assert_eq!(resumes(&daemon), 1);
}

#[tokio::test]
async fn another_body_on_a_consumed_approval_is_409() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let (status, _) = daemon
        .post(&path(&outcome), Some(APPROVER), &approve(&outcome, "r-2"))
        .await;
    assert_eq!(status, 200);
    let mut rejection = approve(&outcome, "r-2");
    rejection["decisions"][0]["decision"] = json!("reject");
    let (status, body) = daemon
        .post(&path(&outcome), Some(APPROVER), &rejection)
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "approval_resolved");
    assert_eq!(resumes(&daemon), 1);
}

#[tokio::test]
async fn the_header_is_the_key_when_given() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let answer = approve(&outcome, "r-2");
    let (status, _) = post_keyed(&daemon, &path(&outcome), "key-1", &answer).await;
    assert_eq!(status, 200);
    let (status, again) = post_keyed(&daemon, &path(&outcome), "key-1", &answer).await;
    assert_eq!((status, &again["replayed"]), (200, &json!(true)), "{again}");
    let (status, body) = post_keyed(&daemon, &path(&outcome), "key-2", &answer).await;
    assert_eq!(status, 409, "another key on a consumed approval: {body}");
    let (status, body) = daemon.post(&path(&outcome), Some(APPROVER), &answer).await;
    assert_eq!(
        status, 409,
        "the run id is not the key when a header was: {body}"
    );
}

#[tokio::test]
async fn the_same_body_from_another_reviewer_is_409() {
    let daemon = daemon();
    // A relay's own pause, answered in two humans' names.
    let (status, relayed) = daemon
        .post(
            "/v1/threads/t-9/runs/r-1/tool-calls",
            Some(RELAY),
            &json!({"message": {"tool_calls": [{"id": "c", "name": "bash", "args": {}}]}}),
        )
        .await;
    assert_eq!(status, 200);
    let path = format!(
        "/v1/threads/t-9/approvals/{}/resume",
        relayed["approval_id"].as_str().unwrap()
    );
    let body = |reviewer: &str| {
        json!({"decisions": [{"request_id": relayed["requests"][0]["request_id"], "decision": "approve"}],
               "reviewer": reviewer})
    };
    let (status, _) = daemon.post(&path, Some(RELAY), &body("bob")).await;
    assert_eq!(status, 200);
    let (status, again) = daemon.post(&path, Some(RELAY), &body("bob")).await;
    assert_eq!((status, &again["replayed"]), (200, &json!(true)));
    let (status, other) = daemon.post(&path, Some(RELAY), &body("carol")).await;
    assert_eq!(
        status, 409,
        "another human's answer is another resume: {other}"
    );
}

#[tokio::test]
async fn a_replay_is_not_logged_as_a_second_decision() {
    let mut daemon = daemon();
    let outcome = pause(&daemon).await;
    let answer = approve(&outcome, "r-2");
    for _ in 0..3 {
        let (status, _) = daemon.post(&path(&outcome), Some(APPROVER), &answer).await;
        assert_eq!(status, 200);
    }
    daemon.stop();
    let resumed = daemon
        .log("decisions.jsonl")
        .iter()
        .filter(|l| l["source"] == "resume")
        .count();
    assert_eq!(resumed, 2, "one line per call of the one resume");
}

#[tokio::test]
async fn a_lost_response_then_a_retry_gets_the_outcome_not_409() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let answer = approve(&outcome, "r-2").to_string();
    // The client sends the resume, and goes away without reading the answer
    // once the daemon has consumed the approval.
    let addr = daemon.url.trim_start_matches("http://").to_string();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        socket,
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {APPROVER}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
        path(&outcome),
        answer.len()
    )
    .unwrap();
    socket.flush().unwrap();
    for _ in 0..500 {
        if resumes(&daemon) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(resumes(&daemon), 1, "the resume was consumed");
    drop(socket);
    // The client's retry learns the outcome.
    let (status, retry) = daemon
        .post(
            &path(&outcome),
            Some(APPROVER),
            &serde_json::from_str(&answer).unwrap(),
        )
        .await;
    assert_eq!(status, 200, "{retry}");
    assert_eq!(retry["replayed"], true);
    assert_eq!(retry["calls"][0]["status"], "run");
    assert_eq!(resumes(&daemon), 1, "consumed once");
}
