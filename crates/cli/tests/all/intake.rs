//! Request intake over real HTTP: whatever an agent's model controls (the tool
//! name, argument values, sizes, depth, odd numbers, odd Unicode, duplicate
//! keys, ids) gets a deny decision that names the cause and is logged, never an
//! error a harness could read as fail-open; what only the harness controls (its
//! token, the request's shape) stays an error with a distinct code.

use crate::common::daemon::*;
use reqwest::Method;
use serde_json::{Value, json};

fn daemon() -> Daemon {
    Daemon::start(&format!(
        "{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

/// POSTs raw bytes as JSON (what a client that writes invalid JSON sends).
async fn post_raw(daemon: &Daemon, path: &str, body: &str) -> (u16, Value) {
    post_raw_as(daemon, AGENT, path, body).await
}

async fn post_raw_as(daemon: &Daemon, token: &str, path: &str, body: &str) -> (u16, Value) {
    let response = daemon
        .request(Method::POST, path, Some(token))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// The answer is a logged deny whose first reason is `code`.
fn assert_denied(daemon: &mut Daemon, answer: &(u16, Value), code: &str) {
    let (status, decision) = answer;
    assert_eq!(*status, 200, "{decision}");
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(decision["allow"], false);
    assert_eq!(decision["reasons"][0]["code"], code, "{decision}");
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    let line = log.last().expect("the refusal is logged");
    assert_eq!(line["verdict"], "deny");
    assert_eq!(line["reasons"][0]["code"], code);
    assert_eq!(line["caller"]["token"], "harness");
}

#[tokio::test]
async fn nan_in_a_spare_argument_is_a_deny_not_an_error() {
    let mut daemon = daemon();
    let answer = post_raw(
        &daemon,
        "/v1/evaluate",
        r#"{"tool_name": "bash", "tool_input": {"command": "cat ~/.ssh/id_rsa", "timeout": NaN}}"#,
    )
    .await;
    assert_denied(&mut daemon, &answer, "warden.invalid_json");
    assert_eq!(daemon.log("decisions.jsonl")[0]["tool_name"], "");
}

#[tokio::test]
async fn a_lone_surrogate_is_a_deny() {
    let mut daemon = daemon();
    let answer = post_raw(
        &daemon,
        "/v1/evaluate",
        r#"{"tool_name": "bash", "tool_input": {"command": "ls \ud800"}}"#,
    )
    .await;
    assert_denied(&mut daemon, &answer, "warden.invalid_json");
}

#[tokio::test]
async fn a_body_that_is_not_json_from_an_authenticated_caller_is_a_deny() {
    let mut daemon = daemon();
    let answer = post_raw(&daemon, "/v1/evaluate", "tool_name=bash").await;
    assert_denied(&mut daemon, &answer, "warden.invalid_json");
}

#[tokio::test]
async fn a_duplicate_argument_key_is_refused_as_ambiguous() {
    let mut daemon = daemon();
    let answer = post_raw(
        &daemon,
        "/v1/evaluate",
        r#"{"tool_name": "bash", "tool_input": {"command": "ls", "command": "rm -rf ~"}}"#,
    )
    .await;
    let message = answer.1["reasons"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("'command'") && message.contains("tool_input"),
        "{message}"
    );
    assert_denied(&mut daemon, &answer, "warden.duplicate_key");
    // The log still names the call.
    assert_eq!(daemon.log("decisions.jsonl")[0]["tool_name"], "bash");
}

#[tokio::test]
async fn a_duplicate_key_anywhere_in_the_request_is_refused() {
    let mut daemon = daemon();
    let answer = post_raw(
        &daemon,
        "/v1/evaluate",
        r#"{"tool_name": "read_file", "tool_name": "bash", "tool_input": {}}"#,
    )
    .await;
    assert_denied(&mut daemon, &answer, "warden.duplicate_key");
}

#[tokio::test]
async fn arguments_nested_past_the_limit_are_a_deny() {
    let mut daemon = daemon();
    let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    let answer = post_raw(
        &daemon,
        "/v1/evaluate",
        &format!(r#"{{"tool_name": "bash", "tool_input": {{"a": {deep}}}}}"#),
    )
    .await;
    assert_denied(&mut daemon, &answer, "warden.input_too_deep");
}

#[tokio::test]
async fn arguments_over_the_body_limit_are_a_deny() {
    let mut daemon = daemon();
    let big = json!({"tool_name": "bash", "tool_input": {"command": "x".repeat(1 << 20)}});
    let answer = daemon.evaluate(AGENT, &big).await;
    assert_denied(&mut daemon, &answer, "warden.input_too_large");
}

#[tokio::test]
async fn an_empty_tool_name_is_a_deny() {
    let mut daemon = daemon();
    let answer = daemon
        .evaluate(AGENT, &json!({"tool_name": "", "tool_input": {}}))
        .await;
    assert_denied(&mut daemon, &answer, "oap.invalid_tool_name");
}

#[tokio::test]
async fn a_tool_name_with_a_space_is_a_deny() {
    let mut daemon = daemon();
    let answer = daemon
        .evaluate(AGENT, &json!({"tool_name": "read file", "tool_input": {}}))
        .await;
    assert_denied(&mut daemon, &answer, "oap.invalid_tool_name");
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_a_deny() {
    let mut daemon = daemon();
    let answer = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "bash", "tool_input": "rm -rf /"}),
        )
        .await;
    assert_denied(&mut daemon, &answer, "warden.invalid_tool_input");
}

#[tokio::test]
async fn a_thread_id_longer_than_the_gates_cap_is_a_deny() {
    let mut daemon = daemon();
    let call = json!({"tool_name": "bash", "tool_input": {"command": "ls"},
                      "context": {"thread_id": "t".repeat(100_000)}});
    let answer = daemon.evaluate(AGENT, &call).await;
    let message = answer.1["reasons"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("context.thread_id") && message.contains("256"),
        "{message}"
    );
    assert_denied(&mut daemon, &answer, "warden.invalid_id");
}

#[tokio::test]
async fn a_long_tool_call_id_is_a_deny() {
    let mut daemon = daemon();
    let call = json!({"tool_name": "bash", "tool_input": {}, "tool_call_id": "c".repeat(300)});
    let answer = daemon.evaluate(AGENT, &call).await;
    assert_denied(&mut daemon, &answer, "warden.invalid_id");
}

// --- what only the harness controls stays an error -----------------------------

#[tokio::test]
async fn an_unknown_field_is_invalid_request_400() {
    let daemon = daemon();
    let (status, body) = daemon
        .evaluate(AGENT, &json!({"tool_name": "bash", "tool_inptu": {}}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
}

#[tokio::test]
async fn invalid_request_has_one_status_on_every_route() {
    let daemon = daemon();
    let (evaluate, _) = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "bash", "context": {"thread": "x"}}),
        )
        .await;
    let (tool_calls, body) = daemon
        .post(
            "/v1/threads/t-1/runs/r-1/tool-calls",
            Some(AGENT),
            &json!({"message": {"tool_calls": []}, "context": {"thread": "x"}}),
        )
        .await;
    assert_eq!(body["error"]["code"], "invalid_request");
    // A resume body is the harness's (a human's answer relayed): an error there too.
    let path = "/v1/threads/t-1/approvals/apr_1/resume";
    let (resume, body) = post_raw_as(&daemon, RELAY, path, "{").await;
    assert_eq!(body["error"]["code"], "invalid_request", "{body}");
    assert_eq!((evaluate, tool_calls, resume), (400, 400, 400));
}

#[tokio::test]
async fn a_wrong_token_and_a_wrong_role_are_errors_with_distinct_codes() {
    let daemon = daemon();
    let call = json!({"tool_name": "bash", "tool_input": {}});
    let (status, body) = daemon.evaluate("not-a-token-0123456789", &call).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (status, body) = daemon.evaluate(ADMIN, &call).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("forbidden"))
    );
}

// --- the tool-calls route -----------------------------------------------------

#[tokio::test]
async fn a_model_response_with_a_duplicate_argument_key_denies_every_call() {
    let mut daemon = daemon();
    let (status, outcome) = post_raw(
        &daemon,
        "/v1/threads/t-1/runs/r-1/tool-calls",
        r#"{"message": {"tool_calls": [
            {"id": "a", "name": "read_file", "args": {"path": "README.md"}},
            {"id": "b", "name": "bash", "args": {"command": "ls", "command": "rm -rf ~"}}]}}"#,
    )
    .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "running");
    for call in outcome["calls"].as_array().unwrap() {
        assert_eq!(call["status"], "denied", "{call}");
        assert_eq!(call["reasons"][0]["code"], "warden.duplicate_key");
    }
    assert_eq!(outcome["calls"][1]["id"], "b");
    daemon.stop();
    assert_eq!(daemon.log("decisions.jsonl").len(), 2);
}

#[tokio::test]
async fn a_model_response_nested_past_the_parsers_own_guard_denies_every_call() {
    let mut daemon = daemon();
    // Past serde_json's 128 levels: the response cannot be parsed whole, but
    // each call still comes back, denied by id and name.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let (status, outcome) = post_raw(
        &daemon,
        "/v1/threads/t-1/runs/r-1/tool-calls",
        &format!(
            r#"{{"message": {{"tool_calls": [
            {{"id": "a", "name": "read_file", "args": {{"path": "README.md"}}}},
            {{"id": "b", "name": "bash", "args": {{"command": {deep}}}}}]}}}}"#
        ),
    )
    .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["run_state"], "running");
    let calls = outcome["calls"].as_array().unwrap();
    let listed: Vec<_> = calls.iter().map(|c| (&c["id"], &c["name"])).collect();
    assert_eq!(
        listed,
        [
            (&json!("a"), &json!("read_file")),
            (&json!("b"), &json!("bash"))
        ]
    );
    for call in calls {
        assert_eq!(call["status"], "denied", "{call}");
        assert_eq!(call["reasons"][0]["code"], "warden.input_too_deep");
        assert!(call["note"].as_str().unwrap().contains("input_too_deep"));
    }
    daemon.stop();
    assert_eq!(daemon.log("decisions.jsonl").len(), 2);
}

#[tokio::test]
async fn a_model_response_that_is_not_json_lists_no_call_and_runs_none() {
    let mut daemon = daemon();
    let (status, outcome) = post_raw(
        &daemon,
        "/v1/threads/t-1/runs/r-1/tool-calls",
        r#"{"message": {"tool_calls": [{"id": "a", "name": "bash", "args": {"n": NaN}}]}}"#,
    )
    .await;
    assert_eq!(status, 200, "{outcome}");
    assert_eq!(outcome["calls"], json!([]));
    assert_eq!(outcome["message"]["tool_calls"], json!([]));
    assert_eq!(outcome["notices"][0]["code"], "warden.invalid_json");
    daemon.stop();
    let log = daemon.log("decisions.jsonl");
    assert_eq!(log[0]["reasons"][0]["code"], "warden.invalid_json");
    assert_eq!(log[0]["thread_id"], "t-1");
}

#[tokio::test]
async fn a_model_response_with_too_many_calls_denies_them_all() {
    let daemon = daemon();
    let calls: Vec<Value> = (0..300)
        .map(|i| json!({"id": format!("c{i}"), "name": "read_file", "args": {}}))
        .collect();
    let (status, outcome) = daemon
        .post(
            "/v1/threads/t-1/runs/r-1/tool-calls",
            Some(AGENT),
            &json!({"message": {"tool_calls": calls}}),
        )
        .await;
    assert_eq!(status, 200, "{outcome}");
    let calls = outcome["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 300);
    assert!(
        calls
            .iter()
            .all(|c| c["status"] == "denied" && c["reasons"][0]["code"] == "warden.too_many_calls")
    );
}

// --- hitl_approval on /v1/evaluate ----------------------------------------------

fn listed_daemon(non_interactive: &str) -> Daemon {
    Daemon::start(&format!(
        "hitl_approval:\n  tools: [bash]\n  non_interactive: {non_interactive}\n{}{}",
        allowlist("allowlist", &["bash", "read_file"], &[]),
        server_block(false)
    ))
}

fn scheduled(tool: &str) -> Value {
    json!({"tool_name": tool, "tool_input": {"command": "ls"}, "context": {"interaction_mode": "scheduled"}})
}

#[tokio::test]
async fn a_listed_tool_asks_on_evaluate_where_a_human_can_be_asked() {
    let daemon = listed_daemon("deny");
    let (status, decision) = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "bash", "tool_input": {"command": "ls"}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(decision["verdict"], "ask", "{decision}");
    assert_eq!(decision["reasons"][0]["code"], "warden.approval_required");
    assert_eq!(decision["decided_by"], "approval");
    let (_, other) = daemon
        .evaluate(
            AGENT,
            &json!({"tool_name": "read_file", "tool_input": {"path": "a"}}),
        )
        .await;
    assert_eq!(other["verdict"], "allow");
}

#[tokio::test]
async fn a_listed_tool_is_denied_on_evaluate_in_a_scheduled_run() {
    let daemon = listed_daemon("deny");
    let (_, decision) = daemon.evaluate(INTERNAL, &scheduled("bash")).await;
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(
        decision["reasons"][0]["code"],
        "warden.approval_unavailable"
    );
}

#[tokio::test]
async fn a_listed_tool_follows_non_interactive_allow_on_evaluate() {
    let daemon = listed_daemon("allow");
    let (_, decision) = daemon.evaluate(INTERNAL, &scheduled("bash")).await;
    assert_eq!(decision["verdict"], "allow", "{decision}");
    let codes: Vec<&str> = decision["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"warden.approval_waived"), "{codes:?}");
}

#[tokio::test]
async fn a_listed_tool_of_a_subagent_is_denied_whatever_non_interactive_says() {
    let daemon = listed_daemon("allow");
    let call = json!({"tool_name": "bash", "tool_input": {}, "context": {"is_subagent": true}});
    let (_, decision) = daemon.evaluate(AGENT, &call).await;
    assert_eq!(decision["verdict"], "deny", "{decision}");
}

// --- /v1/interaction ----------------------------------------------------------------

#[tokio::test]
async fn interaction_answers_an_agent_with_an_interactive_run_and_its_role() {
    let daemon = listed_daemon("deny");
    let (status, report) = daemon.get("/v1/interaction", Some(AGENT)).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["mode"], "interactive");
    assert_eq!(report["can_ask_human"], true);
    assert_eq!(report["approval_listed_tools"], "pause");
    assert_eq!(report["withheld_tools"], json!([]));
    assert_eq!(
        report["caller"],
        json!({"token": "harness", "role": "agent"})
    );
    let doc: Value = serde_json::from_str(warden_server::OPENAPI).unwrap();
    assert_matches_schema(&doc, "InteractionReport", &report);
}

#[tokio::test]
async fn interaction_resolves_a_scheduled_run_for_an_internal_caller() {
    let daemon = listed_daemon("deny");
    let (status, report) = daemon
        .post(
            "/v1/interaction",
            Some(INTERNAL),
            &json!({"context": {"interaction_mode": "scheduled"},
                    "tools": ["bash", "ask_clarification", "web_search"]}),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["mode"], "scheduled");
    assert_eq!(report["can_ask_human"], false);
    assert_eq!(report["approval_listed_tools"], "deny");
    assert_eq!(report["offered_tools"], json!(["bash", "web_search"]));
    assert_eq!(report["withheld_tools"], json!(["ask_clarification"]));
    assert_eq!(report["network_requests"], "deny");
    assert!(report["guidance"].as_str().unwrap().contains("BLOCKED"));
    assert_eq!(report["caller"]["role"], "internal");
}

#[tokio::test]
async fn interaction_drops_the_mode_an_agent_sends_and_says_so() {
    let daemon = listed_daemon("deny");
    let (_, report) = daemon
        .post(
            "/v1/interaction",
            Some(AGENT),
            &json!({"context": {"interaction_mode": "scheduled"}}),
        )
        .await;
    assert_eq!(report["mode"], "interactive");
    assert_eq!(report["dropped_keys"], json!(["interaction_mode"]));
}
