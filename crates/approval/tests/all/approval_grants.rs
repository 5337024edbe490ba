//! Standing grants: an approver's "approve, and allow the same call (or the
//! calls this rule matches) in this thread (or for this agent) for N minutes".
//! A grant answers only what a human would have been asked, never more than
//! the approver chose, and never over a deny.

use super::common::approval::*;
use serde_json::{Value, json};
use warden_approval::{
    CallStatus, EventKind, GateOutcome, GrantExt, GrantFilter, JournalFilter, ResumeRequest,
    RunState,
};

/// `bash` needs a human; force-pushes are denied by a rule.
const CONFIG: &str = "hitl_approval:\n  tools: [bash]\npermissions:\n  mode: full_auto\n  deny: [\"Bash(git push --force*)\"]\n";

fn push(id: &str, command: &str) -> Value {
    tool_call(json!(id), "bash", json!({ "command": command }))
}

/// The approval of the first call `paused` waits on, asking for `grant`.
fn approval_with(paused: &GateOutcome, grant: Value) -> ResumeRequest {
    serde_json::from_value(json!({"decisions": [{
        "request_id": paused.requests[0].request_id,
        "decision": "approve",
        "grant": grant,
    }]}))
    .unwrap()
}

/// Pauses `thread` on one call and approves it with `grant`.
fn approve_with_grant(g: &TestGate, thread: &str, command: &str, grant: Value) -> GateOutcome {
    let paused = g.submit(thread, "r1", &response(json!([push("c1", command)])));
    assert_eq!(paused.run_state, RunState::WaitingForInput);
    let request = approval_with(&paused, grant);
    let resolution = g.resume(thread, &paused, &request).unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Run);
    paused
}

/// One call on `thread`, as a new run: its status and first reason's code.
fn next_call(g: &TestGate, thread: &str, run: &str, command: &str) -> (CallStatus, String) {
    let outcome = g.submit(thread, run, &response(json!([push("c2", command)])));
    let call = &outcome.calls[0];
    (call.status, call.reasons[0].code.clone())
}

#[test]
fn a_grant_allows_the_next_identical_call_in_the_thread_without_a_pause() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 30}));
    let (status, code) = next_call(&g, "t1", "r2", "git push origin main");
    assert_eq!(
        (status, code.as_str()),
        (CallStatus::Run, "warden.approval_grant")
    );
}

#[test]
fn a_call_grant_does_not_allow_a_different_call() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 30}));
    let (status, _) = next_call(&g, "t1", "r2", "git push origin release");
    assert_eq!(status, CallStatus::Pending);
}

#[test]
fn a_thread_grant_does_not_hold_in_another_thread() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 30}));
    let (status, _) = next_call(&g, "t2", "r2", "git push origin main");
    assert_eq!(status, CallStatus::Pending);
}

#[test]
fn an_agent_grant_holds_in_every_thread_of_the_principal() {
    let g = gate(CONFIG);
    let grant = json!({"minutes": 30, "scope": "agent"});
    approve_with_grant(&g, "t1", "git push origin main", grant);
    let (status, code) = next_call(&g, "t2", "r2", "git push origin main");
    assert_eq!(
        (status, code.as_str()),
        (CallStatus::Run, "warden.approval_grant")
    );
}

#[test]
fn a_rule_grant_allows_the_calls_the_rule_matches_and_no_others() {
    let g = gate(CONFIG);
    let grant = json!({"minutes": 30, "rule": "Bash(git push origin *)"});
    approve_with_grant(&g, "t1", "git push origin main", grant);
    assert_eq!(
        next_call(&g, "t1", "r2", "git push origin release").0,
        CallStatus::Run
    );
    assert_eq!(
        next_call(&g, "t1", "r3", "git push upstream main").0,
        CallStatus::Pending
    );
}

#[test]
fn a_rule_wider_than_the_approved_call_is_refused_and_consumes_nothing() {
    let g = gate(CONFIG);
    let paused = g.submit(
        "t1",
        "r1",
        &response(json!([push("c1", "git push origin main")])),
    );
    let request = approval_with(&paused, json!({"minutes": 30, "rule": "Bash(rm *)"}));
    let err = g.resume("t1", &paused, &request).unwrap_err();
    assert_eq!(err.code(), "invalid_decision");
    assert!(err.to_string().contains("decisions[0].grant.rule"), "{err}");
    assert!(
        err.to_string().contains("does not match the approved call"),
        "{err}"
    );
    assert_eq!(
        g.gate.approvals(&Default::default()).unwrap().len(),
        1,
        "still pending"
    );
}

/// `bash` needs a human, and nothing else stands in the way: whatever a
/// grant does not cover waits for one.
const ONLY_LISTED: &str = "hitl_approval:\n  tools: [bash]\npermissions:\n  mode: full_auto\n";

/// The grant of issue 20: approve `git status`, and allow `git status*` for 15
/// minutes, for the agent (so that each call below can be its own thread).
fn git_status_granted() -> TestGate {
    let g = gate(ONLY_LISTED);
    let grant = json!({"minutes": 15, "rule": "Bash(git status*)", "scope": "agent"});
    approve_with_grant(&g, "t0", "git status", grant);
    g
}

/// Commands that start with `git status` but run more than it: through a
/// compound list, a wrapper, a substitution, a pipeline, or a part the
/// analysis cannot see through.
const MORE_THAN_GIT_STATUS: &[&str] = &[
    "git status && git push --force origin main",
    "git status; rm -rf ./src",
    "git status; python3 -c \"import os; os.system('id')\"",
    "git status || rm -rf ./src",
    "git status & rm -rf ./src",
    "sudo git status && git push --force origin main",
    "git status; sudo rm -rf ./src",
    "env GIT_PAGER=cat git status; rm -rf ./src",
    "timeout 5 git status; python3 -c \"import os; os.system('id')\"",
    "git status && nohup git push --force origin main",
    "bash -c 'git status; rm -rf ./src'",
    "git status $(rm -rf ./src)",
    "git status \"$(git push --force origin main)\"",
    "git status `rm -rf ./src`",
    "git status <(python3 -c \"import os; os.system('id')\")",
    "git status | sh",
    "git status | python3 -c \"import os; os.system('id')\"",
    "git status; $CMD -rf ./src",
    "git status; eval \"$X\"",
];

#[test]
fn a_rule_grant_allows_a_call_only_when_the_rule_matches_every_command_it_runs() {
    let g = git_status_granted();
    for (i, command) in MORE_THAN_GIT_STATUS.iter().enumerate() {
        let (status, code) = next_call(&g, &format!("t{}", i + 1), "r1", command);
        assert_eq!(status, CallStatus::Pending, "{command}: {code}");
    }
}

#[test]
fn a_rule_grant_still_allows_every_call_whose_commands_all_match() {
    let g = git_status_granted();
    for (i, command) in [
        "git status",
        "git status --short",
        "git status && git status -s",
        "git -C . status | git status",
    ]
    .iter()
    .enumerate()
    {
        let (status, code) = next_call(&g, &format!("t{}", i + 1), "r1", command);
        assert_eq!(
            (status, code.as_str()),
            (CallStatus::Run, "warden.approval_grant"),
            "{command}"
        );
    }
}

#[test]
fn a_rule_that_matches_only_part_of_the_approved_call_is_refused() {
    for command in MORE_THAN_GIT_STATUS {
        let g = gate(ONLY_LISTED);
        let paused = g.submit("t1", "r1", &response(json!([push("c1", command)])));
        let request = approval_with(&paused, json!({"minutes": 15, "rule": "Bash(git status*)"}));
        let err = g.resume("t1", &paused, &request).unwrap_err();
        assert_eq!(err.code(), "invalid_decision", "{command}");
        assert!(
            err.to_string().contains("decisions[0].grant.rule"),
            "{command}: {err}"
        );
    }
}

#[test]
fn a_grant_never_covers_a_call_the_live_pipeline_denies() {
    let g = gate(ONLY_LISTED);
    let grant = json!({"minutes": 30, "rule": "Bash(git push *)"});
    approve_with_grant(&g, "t1", "git push origin main", grant);
    // After the grant was given, the operator denies every push.
    let stricter = format!("{ONLY_LISTED}  deny: [\"Bash(git push *)\"]\n");
    g.gate
        .warden()
        .reload(&super::common::config(&stricter), "")
        .unwrap();
    let (status, code) = next_call(&g, "t1", "r2", "git push origin main");
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(code, "perm.rule_deny");
}

#[test]
fn a_grant_never_overrides_a_deny() {
    let g = gate(CONFIG);
    let grant = json!({"minutes": 30, "rule": "Bash(git push *)"});
    approve_with_grant(&g, "t1", "git push origin main", grant);
    let (status, code) = next_call(&g, "t1", "r2", "git push --force origin main");
    assert_eq!(status, CallStatus::Denied);
    assert_ne!(code, "warden.approval_grant");
}

#[test]
fn a_revoked_grant_allows_nothing() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 30}));
    let grant = g.gate.grants(&GrantFilter::default()).unwrap().remove(0);
    let revoked = g.gate.revoke_grant(&alice(), &grant.grant_id).unwrap();
    assert_eq!(revoked.revoked_by.as_deref(), Some("alice"));
    assert_eq!(
        next_call(&g, "t1", "r2", "git push origin main").0,
        CallStatus::Pending
    );
    assert!(g.gate.grants(&GrantFilter::default()).unwrap().is_empty());
}

#[test]
fn a_grant_ends_when_its_minutes_are_up() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 5}));
    let grant = g.gate.grants(&GrantFilter::default()).unwrap().remove(0);
    assert_eq!(
        grant.expires_at_ms - 5 * 60_000,
        time_ms(&grant.created_at),
        "five minutes from when it was given"
    );
    let snapshot = g.gate.warden().snapshot();
    let mut call = warden::ToolCall::new("bash", json!({"command": "git push origin main"}));
    call.context.thread_id = Some("t1".into());
    assert!(grant.allows(&snapshot, &call, grant.expires_at_ms - 1));
    assert!(!grant.allows(&snapshot, &call, grant.expires_at_ms));
}

#[test]
fn a_grant_longer_than_a_day_is_refused() {
    let g = gate(CONFIG);
    let paused = g.submit(
        "t1",
        "r1",
        &response(json!([push("c1", "git push origin main")])),
    );
    let body = json!({"decisions": [{
        "request_id": paused.requests[0].request_id,
        "decision": "approve",
        "grant": {"minutes": 1441},
    }]});
    let err = ResumeRequest::from_json(body.to_string().as_bytes()).unwrap_err();
    assert!(
        err.to_string().contains("decisions[0].grant.minutes"),
        "{err}"
    );
}

#[test]
fn only_an_approval_carries_a_grant() {
    let body = json!({"decisions": [{
        "request_id": "req_x", "decision": "reject", "grant": {"minutes": 5},
    }]});
    let err = ResumeRequest::from_json(body.to_string().as_bytes()).unwrap_err();
    assert!(
        err.to_string().contains("only an approval carries a grant"),
        "{err}"
    );
}

#[test]
fn a_grant_for_a_call_denied_when_judged_again_at_resume_is_not_given() {
    let g = gate(CONFIG);
    let paused = g.submit(
        "t1",
        "r1",
        &response(json!([push("c1", "git push origin main")])),
    );
    // Between the pause and the resume, the operator denies every push.
    let stricter = CONFIG.replace("git push --force*", "git push *");
    g.gate
        .warden()
        .reload(&super::common::config(&stricter), "")
        .unwrap();
    let request = approval_with(&paused, json!({"minutes": 30}));
    let resolution = g.resume("t1", &paused, &request).unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Denied);
    assert!(g.gate.grants(&GrantFilter::default()).unwrap().is_empty());
}

#[test]
fn a_grant_is_journalled_with_the_approver() {
    let g = gate(CONFIG);
    approve_with_grant(&g, "t1", "git push origin main", json!({"minutes": 30}));
    let journal = g.gate.journal(&JournalFilter::thread("t1")).unwrap();
    let kinds: Vec<EventKind> = journal.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [EventKind::Paused, EventKind::Resumed, EventKind::Granted]
    );
    let granted = &journal[2];
    assert_eq!(granted.reviewer.as_deref(), Some("alice"));
    assert!(
        granted.note.as_deref().unwrap().contains("in thread 't1'"),
        "{granted:?}"
    );
}

fn time_ms(rfc3339: &str) -> i64 {
    let t = time::OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339)
        .unwrap();
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}
