//! The log's lines keep their format byte for byte (auditors' tools read
//! them): a judged call, a gate's calls and a resume's, written through the
//! log and read back from the file, only the clock and the random ids pinned.

use serde_json::json;
use warden_log::{DecisionLog, DecisionLogConfig, Requester};
use warden_types::approval::{CallOutcome, CallStatus, DecisionKind, GateOutcome, Resolution};
use warden_types::{Evaluation, ToolCall};

/// `"key":"…"` with its value replaced, so that a line's clock and
/// random id compare equal.
fn pinned(line: &str, key: &str) -> String {
    let start = format!("\"{key}\":\"");
    let at = line.find(&start).expect(key) + start.len();
    let end = at + line[at..].find('"').unwrap();
    format!("{}{key}{}", &line[..at], &line[end..])
}

fn golden_lines(write: impl FnOnce(&DecisionLog)) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    // The record's own format; the chain's link, which ends each line when
    // chained, is the trail's tests' (tests/all/trail.rs).
    let config: DecisionLogConfig = serde_norway::from_str(
        "arguments: {bash: [command]}\nredact: ['acct-[0-9]+']\nfsync: always\nchain: false",
    )
    .unwrap();
    let log = DecisionLog::open(&config, dir.path()).unwrap();
    // Every line names its node (the host name unless configured).
    log.set_node_name("node-1".into());
    write(&log);
    log.flush();
    let text = std::fs::read_to_string(log.path().unwrap()).unwrap();
    text.lines()
        .map(|line| pinned(&pinned(line, "decision_id"), "time"))
        .collect()
}

fn judged_call() -> (ToolCall, Evaluation) {
    let call: ToolCall = serde_json::from_value(json!({
        "tool_name": "bash",
        "tool_input": {"command": "bill acct-991 now", "env": {"A": "1"}},
        "tool_call_id": "call-1",
        "context": {"thread_id": "t-1", "run_id": "r-1", "agent_id": "a-1",
                    "timestamp": "2026-01-02T03:04:05Z"}
    }))
    .unwrap();
    let evaluation: Evaluation = serde_json::from_value(json!({
        "verdict": "deny", "allow": false,
        "reasons": [{"code": "rules.denied", "message": "no billing"}],
        "policy_id": "rules", "metadata": {}, "decided_by": "provider:rules",
        "interaction_mode": "interactive",
        "stages": [
            {"stage": "permissions", "verdict": "allow", "codes": [], "duration_us": 3},
            {"stage": "provider:rules", "verdict": "deny", "codes": ["rules.denied"],
             "duration_us": 40, "digest": "sha256:ab", "fuel_used": 1200,
             "error_detail": "trap"}
        ],
        "generation": 7, "duration_us": 51, "judged_at": "2026-01-02T03:04:06Z"
    }))
    .unwrap();
    (call, evaluation)
}

#[test]
fn a_decision_line_keeps_its_format() {
    let (call, evaluation) = judged_call();
    let lines = golden_lines(|log| {
        log.record(
            &call,
            &evaluation,
            Some(Requester {
                token: "agent",
                role: "evaluate",
            }),
        );
    });
    assert_eq!(
        lines,
        [concat!(
            r#"{"decision_id":"decision_id","time":"time","judged_at":"2026-01-02T03:04:06Z","#,
            r#""call_timestamp":"2026-01-02T03:04:05Z","thread_id":"t-1","run_id":"r-1","#,
            r#""tool_call_id":"call-1","agent_id":"a-1","tool_name":"bash","verdict":"deny","#,
            r#""reasons":[{"code":"rules.denied","message":"no billing"}],"policy_id":"rules","#,
            r#""decided_by":"provider:rules","interaction_mode":"interactive","generation":7,"#,
            r#""stages":[{"stage":"permissions","verdict":"allow","duration_us":3},"#,
            r#"{"stage":"provider:rules","verdict":"deny","digest":"sha256:ab","duration_us":40,"#,
            r#""fuel_used":1200,"error_detail":"trap"}],"duration_us":51,"fuel_used":1200,"#,
            r#""error_detail":"trap","caller":{"token":"agent","role":"evaluate"},"#,
            r#""node_name":"node-1","arguments":{"command":"bill [REDACTED] now"}}"#
        )]
    );
}

#[test]
fn a_decision_line_names_the_rule_that_decided_with_its_place_and_the_provider() {
    let (call, mut evaluation) = judged_call();
    evaluation.cause = Some(
        serde_json::from_value(json!({
            "stage": "provider:rules",
            "rules": [{"text": "no-billing", "file": "/etc/warden/rules.yaml", "line": 12}],
            "provider": {"name": "rules", "version": "0.1.0", "digest": "ab"}
        }))
        .unwrap(),
    );
    let lines = golden_lines(|log| {
        log.record(&call, &evaluation, None);
    });
    let line: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(line["decided_by"], "provider:rules");
    assert_eq!(
        line["cause"],
        json!({
            "stage": "provider:rules",
            "rules": [{"text": "no-billing", "file": "/etc/warden/rules.yaml", "line": 12}],
            "provider": {"name": "rules", "version": "0.1.0", "digest": "ab"}
        })
    );
}

#[test]
fn a_resumed_call_a_human_answered_names_the_human_as_its_cause() {
    let mut calls = gate_calls();
    calls[0].status = CallStatus::Run;
    calls[0].decision = Some(DecisionKind::Approve);
    let resolution: Resolution = serde_json::from_value(json!({
        "approval_id": "ap-1", "thread_id": "t-1", "run_id": "r-1",
        "resolved_by": {"by": "resume", "run_id": "r-1"},
        "reviewer": "alice@example.com",
        "consumption_id": "c-1", "resolved_at": "2026-01-02T03:04:07Z",
        "run_state": "running", "calls": calls,
        "message": {"content": "", "tool_calls": []}
    }))
    .unwrap();
    let lines = golden_lines(|log| log.record_resolution(&resolution, None));
    let answered: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(answered["verdict"], "allow");
    assert_eq!(
        answered["cause"],
        json!({"stage": "approval", "approver": "alice@example.com"})
    );
    // A call nobody was asked about names no human.
    let unasked: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    assert!(unasked.get("cause").is_none(), "{unasked}");
}

fn gate_calls() -> Vec<CallOutcome> {
    serde_json::from_value(json!([
        {"index": 0, "id": "call-1", "name": "bash", "status": "pending", "removed": false,
         "request_id": "req-1", "args": {"command": "rm acct-7"},
         "reasons": [{"code": "approval.required", "message": "bash needs a human"}],
         "decided_by": "approval"},
        {"index": 1, "id": null, "name": "read_file", "status": "run", "removed": false,
         "args": {"path": "/etc/hosts"}, "reasons": []}
    ]))
    .unwrap()
}

#[test]
fn gate_lines_keep_their_format() {
    let outcome: GateOutcome = serde_json::from_value(json!({
        "thread_id": "t-1", "run_id": "r-1", "run_state": "waiting_for_input",
        "approval_id": "ap-1", "requests": [], "calls": gate_calls(),
        "message": {"content": "", "tool_calls": []},
        "interaction_mode": "interactive", "generation": 3
    }))
    .unwrap();
    let lines = golden_lines(|log| log.record_gate(&outcome, None));
    assert_eq!(
        lines,
        [
            concat!(
                r#"{"decision_id":"decision_id","time":"time","source":"tool-calls","#,
                r#""thread_id":"t-1","run_id":"r-1","tool_call_id":"call-1","tool_name":"bash","#,
                r#""verdict":"ask","approval_id":"ap-1","request_id":"req-1","#,
                r#""reasons":[{"code":"approval.required","message":"bash needs a human"}],"#,
                r#""decided_by":"approval","generation":3,"node_name":"node-1","#,
                r#""arguments":{"command":"rm [REDACTED]"}}"#
            ),
            concat!(
                r#"{"decision_id":"decision_id","time":"time","source":"tool-calls","#,
                r#""thread_id":"t-1","run_id":"r-1","tool_call_id":null,"tool_name":"read_file","#,
                r#""verdict":"allow","reasons":[],"decided_by":null,"generation":3,"node_name":"node-1"}"#
            ),
        ]
    );
}

#[test]
fn resume_lines_keep_their_format() {
    let mut calls = gate_calls();
    calls[0].status = CallStatus::Denied;
    calls[0].decision = Some(DecisionKind::Reject);
    calls[0].reasons[0].message = "not acct-7, no".into();
    let resolution: Resolution = serde_json::from_value(json!({
        "approval_id": "ap-1", "thread_id": "t-1", "run_id": "r-1",
        "resolved_by": {"by": "resume", "run_id": "r-2"},
        "reviewer": "alice acct-12", "relayed_by": "harness",
        "consumption_id": "c-1", "resolved_at": "2026-01-02T03:04:07Z",
        "run_state": "running", "calls": calls,
        "message": {"content": "", "tool_calls": []}
    }))
    .unwrap();
    let lines = golden_lines(|log| {
        log.record_resolution(
            &resolution,
            Some(Requester {
                token: "harness",
                role: "evaluate",
            }),
        )
    });
    assert_eq!(
        lines,
        [
            concat!(
                r#"{"decision_id":"decision_id","time":"time","source":"resume","#,
                r#""thread_id":"t-1","run_id":"r-2","tool_call_id":"call-1","tool_name":"bash","#,
                r#""verdict":"deny","approval_id":"ap-1","request_id":"req-1","#,
                r#""human_decision":"reject","reviewer":"alice [REDACTED]","relayed_by":"harness","#,
                r#""reasons":[{"code":"approval.required","message":"not [REDACTED], no"}],"#,
                r#""decided_by":"approval","cause":{"stage":"approval","approver":"alice [REDACTED]"},"#,
                r#""caller":{"token":"harness","role":"evaluate"},"node_name":"node-1","#,
                r#""arguments":{"command":"rm [REDACTED]"}}"#
            ),
            concat!(
                r#"{"decision_id":"decision_id","time":"time","source":"resume","#,
                r#""thread_id":"t-1","run_id":"r-2","tool_call_id":null,"tool_name":"read_file","#,
                r#""verdict":"allow","reasons":[],"decided_by":null,"#,
                r#""caller":{"token":"harness","role":"evaluate"},"node_name":"node-1"}"#
            ),
        ]
    );
}
