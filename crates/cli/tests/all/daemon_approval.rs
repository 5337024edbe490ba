//! The daemon's approval routes end to end over real HTTP: a model response
//! through the gate, the pause, the list, the resume, and their refusals.

use crate::common::daemon::*;
use serde_json::{Value, json};

fn daemon() -> Daemon {
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

fn git_push() -> Value {
    json!({"message": {"tool_calls": [
        {"id": "call_1", "name": "bash", "args": {"command": "git push origin main"}},
        {"id": "call_2", "name": "read_file", "args": {"path": "CHANGELOG.md"}}
    ]}})
}

const TOOL_CALLS: &str = "/v1/threads/t-1/runs/r-1/tool-calls";

async fn pause(daemon: &Daemon) -> Value {
    let (status, outcome) = daemon.post(TOOL_CALLS, Some(AGENT), &git_push()).await;
    assert_eq!(status, 200, "{outcome}");
    outcome
}

#[tokio::test]
async fn a_listed_call_pauses_the_run_for_a_human() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    assert_eq!(outcome["run_state"], "waiting_for_input");
    assert_eq!(outcome["calls"][0]["status"], "pending");
    assert_eq!(outcome["calls"][1]["status"], "run");
    assert!(outcome["approval_id"].is_string());
    assert_eq!(outcome["requests"][0]["tool_name"], "bash");
}

#[tokio::test]
async fn the_pending_approval_is_listed_for_its_thread() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let (status, page) = daemon.get("/v1/threads/t-1/approvals", Some(AGENT)).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["approvals"][0]["approval_id"], outcome["approval_id"]);
    let (_, other) = daemon.get("/v1/threads/t-2/approvals", Some(AGENT)).await;
    assert_eq!(other["approvals"], json!([]));
}

#[tokio::test]
async fn a_resume_answers_the_paused_calls_once() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let approval = outcome["approval_id"].as_str().unwrap();
    let request_id = outcome["requests"][0]["request_id"].clone();
    let path = format!("/v1/threads/t-1/approvals/{approval}/resume");
    let answer = json!({"decisions": [{"request_id": request_id, "decision": "approve"}]});
    let (status, resolution) = daemon.post(&path, Some(APPROVER), &answer).await;
    assert_eq!(status, 200, "{resolution}");
    assert_eq!(resolution["calls"][0]["status"], "run");
    assert_eq!(resolution["run_state"], "running");
    assert_eq!(resolution["replayed"], false);

    let other = json!({"reject_all": {"message": "changed my mind"}});
    let (status, again) = daemon.post(&path, Some(APPROVER), &other).await;
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "approval_resolved");
    let (_, all) = daemon
        .get("/v1/threads/t-1/approvals?all=true", Some(APPROVER))
        .await;
    assert_eq!(all["approvals"][0]["status"], "resumed");
}

#[tokio::test]
async fn a_resume_that_misses_a_request_is_422_with_details() {
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    let approval = outcome["approval_id"].as_str().unwrap();
    let (status, body) = daemon
        .post(
            &format!("/v1/threads/t-1/approvals/{approval}/resume"),
            Some(APPROVER),
            &json!({"decisions": []}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "decisions_mismatch");
    assert!(body["error"]["details"]["missing"].is_array(), "{body}");
}

#[tokio::test]
async fn a_thread_waiting_for_a_human_refuses_new_work_with_409() {
    let daemon = daemon();
    pause(&daemon).await;
    let (status, body) = daemon
        .post(
            "/v1/threads/t-1/runs/r-2/tool-calls",
            Some(AGENT),
            &git_push(),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "approval_pending");
    let call = json!({"tool_name": "read_file", "tool_input": {"path": "x"}, "context": {"thread_id": "t-1"}});
    // On the single-call route a decision the harness understands, never an
    // error a harness could read as fail-open.
    let (status, decision) = daemon.evaluate(AGENT, &call).await;
    assert_eq!(status, 200, "{decision}");
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["reasons"][0]["code"], "warden.approval_pending");
    assert_eq!(decision["metadata"]["thread_id"], "t-1");
}

#[tokio::test]
async fn only_agent_and_internal_tokens_submit_model_responses() {
    let daemon = daemon();
    let (status, _) = daemon.post(TOOL_CALLS, None, &git_push()).await;
    assert_eq!(status, 401);
    for token in [ADMIN, APPROVER] {
        let (status, _) = daemon.post(TOOL_CALLS, Some(token), &git_push()).await;
        assert_eq!(status, 403);
    }
    // Nothing paused.
    let (_, page) = daemon.get("/v1/threads/t-1/approvals", Some(AGENT)).await;
    assert_eq!(page["approvals"], json!([]));
}

#[tokio::test]
async fn an_admin_neither_lists_nor_answers_approvals_by_default() {
    let daemon = daemon();
    let (status, body) = daemon.get("/v1/threads/t-1/approvals", Some(ADMIN)).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("approver_required"))
    );
    let (status, body) = daemon
        .post(
            "/v1/threads/t-1/approvals/a-1/resume",
            Some(ADMIN),
            &json!({"reject_all": {}}),
        )
        .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("approver_required"))
    );
}

#[tokio::test]
async fn an_unknown_approval_is_404() {
    let daemon = daemon();
    let (status, body) = daemon
        .post(
            "/v1/threads/t-1/approvals/nope/resume",
            Some(APPROVER),
            &json!({"reject_all": {}}),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], "approval_not_found");
}

#[tokio::test]
async fn gate_decisions_are_logged_per_call_without_arguments() {
    let mut daemon = daemon();
    let outcome = pause(&daemon).await;
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0]["source"], "tool-calls");
    assert_eq!(log[0]["tool_call_id"], "call_1");
    assert_eq!(log[0]["verdict"], "ask");
    assert_eq!(log[0]["approval_id"], outcome["approval_id"]);
    assert_eq!(log[1]["verdict"], "allow");
    assert_eq!(log[1]["caller"]["token"], "harness");
    let text = std::fs::read_to_string(daemon.data_file("decisions.jsonl")).unwrap();
    assert!(!text.contains("git push"), "{text}");
}

#[tokio::test]
async fn approval_answers_have_the_shapes_the_openapi_document_gives() {
    let doc: Value = serde_json::from_str(warden_server::OPENAPI).unwrap();
    let daemon = daemon();
    let outcome = pause(&daemon).await;
    crate::common::daemon::assert_matches_schema(&doc, "GateOutcome", &outcome);
    crate::common::daemon::assert_matches_schema(&doc, "CallOutcome", &outcome["calls"][0]);
    crate::common::daemon::assert_matches_schema(&doc, "ApprovalRequest", &outcome["requests"][0]);
    let (_, page) = daemon.get("/v1/threads/t-1/approvals", Some(AGENT)).await;
    crate::common::daemon::assert_matches_schema(&doc, "ApprovalPage", &page);
    crate::common::daemon::assert_matches_schema(&doc, "ApprovalView", &page["approvals"][0]);
    let approval = outcome["approval_id"].as_str().unwrap();
    let (_, resolution) = daemon
        .post(
            &format!("/v1/threads/t-1/approvals/{approval}/resume"),
            Some(APPROVER),
            &json!({"reject_all": {"message": "no"}}),
        )
        .await;
    crate::common::daemon::assert_matches_schema(&doc, "Resolution", &resolution);
}
