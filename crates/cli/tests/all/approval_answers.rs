//! Over real HTTP: a resume judges every call again with the policy live now
//! (a passport suspended by a reload denies an approved call), approvers give
//! and revoke standing grants, and the daemon expires unanswered approvals
//! under `hitl_approval.expire_after` without anyone touching the thread.

use std::time::{Duration, Instant};

use crate::common::daemon::*;
use serde_json::{Value, json};

/// The shipped example passport, with `status` set.
fn passport(status: &str) -> Value {
    let text =
        std::fs::read_to_string(crate::common::repo_root().join("examples/passport.json")).unwrap();
    let mut passport: Value = serde_json::from_str(&text).unwrap();
    passport["status"] = json!(status);
    passport
}

/// `bash` waits for a human; the OAP provider judges every call on `passport`.
fn oap_config(status: &str) -> String {
    format!(
        "hitl_approval:\n  tools: [bash]\npermissions:\n  mode: full_auto\nguardrails:\n  providers:\n    - name: oap\n      wasm: \"builtin:oap-passport\"\n      config: {{passport: {}}}\n{}",
        passport(status),
        server_block(false)
    )
}

fn message() -> Value {
    json!({"message": {"tool_calls": [
        {"id": "c1", "name": "bash", "args": {"command": "git status"}},
        {"id": "c2", "name": "read_file", "args": {"path": "/workspace/README.md"}}
    ]}})
}

async fn pause(daemon: &Daemon, thread: &str, run: &str, body: &Value) -> Value {
    let path = format!("/v1/threads/{thread}/runs/{run}/tool-calls");
    let (status, outcome) = daemon.post(&path, Some(AGENT), body).await;
    assert_eq!(status, 200, "{outcome}");
    outcome
}

fn resume_path(thread: &str, outcome: &Value) -> String {
    format!(
        "/v1/threads/{thread}/approvals/{}/resume",
        outcome["approval_id"].as_str().unwrap()
    )
}

fn call<'a>(resolution: &'a Value, id: &str) -> &'a Value {
    resolution["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap()
}

#[tokio::test]
async fn a_passport_suspended_between_pause_and_resume_denies_the_approved_call() {
    let daemon = Daemon::start(&oap_config("active"));
    let outcome = pause(&daemon, "t1", "r1", &message()).await;
    assert_eq!(outcome["run_state"], "waiting_for_input", "{outcome}");
    daemon.write_config(&oap_config("suspended"));
    let (status, report) = daemon.reload().await;
    assert_eq!(status, 200, "{report}");
    let approve = json!({"decisions": [
        {"request_id": outcome["requests"][0]["request_id"], "decision": "approve"}
    ]});
    let (status, resolution) = daemon
        .post(&resume_path("t1", &outcome), Some(APPROVER), &approve)
        .await;
    assert_eq!(status, 200, "{resolution}");
    let bash = call(&resolution, "c1");
    assert_eq!(bash["status"], "denied", "{resolution}");
    assert_eq!(bash["reasons"][0]["code"], "oap.passport_suspended");
    // The call nobody was asked about is judged again too.
    let read = call(&resolution, "c2");
    assert_eq!(read["status"], "denied", "{resolution}");
    assert_eq!(read["reasons"][0]["code"], "oap.passport_suspended");
}

fn listed_daemon(extra: &str) -> Daemon {
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n{extra}{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

fn push() -> Value {
    json!({"message": {"tool_calls": [
        {"id": "c1", "name": "bash", "args": {"command": "git push origin main"}}
    ]}})
}

/// Pauses on a push and approves it with a thread grant of 10 minutes.
async fn grant(daemon: &Daemon) -> Value {
    let outcome = pause(daemon, "t1", "r1", &push()).await;
    let body = json!({"decisions": [{
        "request_id": outcome["requests"][0]["request_id"],
        "decision": "approve",
        "grant": {"minutes": 10},
    }]});
    let (status, resolution) = daemon
        .post(&resume_path("t1", &outcome), Some(APPROVER), &body)
        .await;
    assert_eq!(status, 200, "{resolution}");
    let (status, page) = daemon.get("/v1/grants", Some(APPROVER)).await;
    assert_eq!(status, 200, "{page}");
    page["grants"][0].clone()
}

#[tokio::test]
async fn an_approvers_grant_lets_the_same_call_run_without_a_pause() {
    let daemon = listed_daemon("");
    let given = grant(&daemon).await;
    assert_eq!(given["granted_by"], "alice");
    assert_eq!(given["thread_id"], "t1");
    let next = pause(&daemon, "t1", "r2", &push()).await;
    assert_eq!(next["run_state"], "running", "{next}");
    assert_eq!(next["calls"][0]["status"], "run");
    assert_eq!(
        next["calls"][0]["reasons"][0]["code"],
        "warden.approval_grant"
    );
}

#[tokio::test]
async fn an_agent_sees_its_own_grants_and_cannot_revoke_them() {
    let daemon = listed_daemon("");
    let given = grant(&daemon).await;
    let (_, own) = daemon.get("/v1/grants", Some(AGENT)).await;
    assert_eq!(own["grants"].as_array().unwrap().len(), 1, "{own}");
    let (_, others) = daemon.get("/v1/grants", Some(OTHER_AGENT)).await;
    assert!(others["grants"].as_array().unwrap().is_empty(), "{others}");
    let path = format!("/v1/grants/{}/revoke", given["grant_id"].as_str().unwrap());
    let (status, err) = daemon.post(&path, Some(AGENT), &json!({})).await;
    assert_eq!(status, 403, "{err}");
    assert_eq!(err["error"]["code"], "approver_required", "{err}");
}

#[tokio::test]
async fn a_revoked_grant_pauses_the_next_call_again() {
    let daemon = listed_daemon("");
    let given = grant(&daemon).await;
    let path = format!("/v1/grants/{}/revoke", given["grant_id"].as_str().unwrap());
    let (status, revoked) = daemon.post(&path, Some(APPROVER), &json!({})).await;
    assert_eq!(status, 200, "{revoked}");
    assert_eq!(revoked["revoked_by"], "alice");
    let next = pause(&daemon, "t1", "r2", &push()).await;
    assert_eq!(next["run_state"], "waiting_for_input", "{next}");
    let (_, live) = daemon.get("/v1/grants", Some(APPROVER)).await;
    assert!(live["grants"].as_array().unwrap().is_empty(), "{live}");
    let (_, all) = daemon.get("/v1/grants?all=true", Some(APPROVER)).await;
    assert_eq!(all["grants"].as_array().unwrap().len(), 1, "{all}");
}

#[tokio::test]
async fn revoking_an_unknown_grant_is_404() {
    let daemon = listed_daemon("");
    let (status, err) = daemon
        .post("/v1/grants/grt_nope/revoke", Some(APPROVER), &json!({}))
        .await;
    assert_eq!(status, 404, "{err}");
    assert_eq!(err["error"]["code"], "grant_not_found", "{err}");
}

#[tokio::test]
async fn the_daemon_expires_an_unanswered_approval_on_its_own() {
    let daemon = listed_daemon("  expire_after: 1s\n");
    let outcome = pause(&daemon, "t1", "r1", &push()).await;
    assert!(outcome["approval_id"].is_string(), "{outcome}");
    let started = Instant::now();
    loop {
        // Listing does not expire anything: only the sweeper does.
        let (_, page) = daemon
            .get("/v1/threads/t1/approvals?all=true", Some(APPROVER))
            .await;
        if page["approvals"][0]["status"] == "expired" {
            let calls = &page["approvals"][0]["resolution"]["calls"];
            assert_eq!(calls[0]["reasons"][0]["code"], "warden.approval_expired");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not expired: {page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
