//! Re-judging at resume: every call a resume would run (approved, edited, and
//! the ones that never needed approval) goes through the pipeline live at
//! resume time. A deny now stands, per call, with its reason; a call nobody
//! was asked about that would now ask is denied with its own code; the
//! human's answer stands only for the ask they answered.

use super::common::approval::*;
use serde_json::json;
use warden_approval::{CallStatus, ResumeRequest, RunState};

const BASH_LISTED: &str = "hitl_approval:\n  tools: [bash]\npermissions:\n  mode: full_auto\n";

/// A paused message: `c1` (bash, waits for a human) and `c2` (read_file,
/// allowed without asking).
fn paused(g: &TestGate) -> warden_approval::GateOutcome {
    let outcome = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(
                json!("c1"),
                "bash",
                json!({"command": "git push origin main"})
            ),
            tool_call(
                json!("c2"),
                "read_file",
                json!({"path": "/workspace/README.md"})
            ),
        ])),
    );
    assert_eq!(outcome.run_state, RunState::WaitingForInput);
    assert_eq!(call(&outcome.calls, "read_file").status, CallStatus::Run);
    outcome
}

/// The policy the gate judges with from now on.
fn operator_changes_policy(g: &TestGate, yaml: &str) {
    g.gate
        .warden()
        .reload(&super::common::config(yaml), "")
        .unwrap();
}

fn codes(o: &warden_approval::CallOutcome) -> Vec<&str> {
    o.reasons.iter().map(|r| r.code.as_str()).collect()
}

#[test]
fn an_approved_call_that_a_rule_now_denies_is_denied_with_the_rules_reason() {
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    operator_changes_policy(
        &g,
        &format!("{BASH_LISTED}  deny: [\"Bash(git push *)\"]\n"),
    );
    let resolution = g.resume("t1", &o, &approve_all(&o)).unwrap();
    let bash = call(&resolution.calls, "bash");
    assert_eq!(bash.status, CallStatus::Denied);
    assert_eq!(codes(bash)[0], "perm.rule_deny", "{:?}", bash.reasons);
    assert!(
        bash.note.as_deref().unwrap().contains("blocked"),
        "{bash:?}"
    );
}

#[test]
fn an_untouched_allowed_call_of_the_message_is_judged_again_too() {
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    operator_changes_policy(&g, &format!("{BASH_LISTED}  deny: [Read]\n"));
    let resolution = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(call(&resolution.calls, "bash").status, CallStatus::Run);
    let read = call(&resolution.calls, "read_file");
    assert_eq!(read.status, CallStatus::Denied);
    assert_eq!(codes(read)[0], "perm.rule_deny");
}

#[test]
fn a_call_nobody_was_asked_about_that_would_now_ask_is_denied_with_its_own_code() {
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    operator_changes_policy(&g, &BASH_LISTED.replace("[bash]", "[bash, read_file]"));
    let resolution = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(call(&resolution.calls, "bash").status, CallStatus::Run);
    let read = call(&resolution.calls, "read_file");
    assert_eq!(read.status, CallStatus::Denied);
    assert_eq!(codes(read)[0], "warden.approval_not_asked");
}

#[test]
fn the_humans_approval_answers_the_ask_it_was_given_for() {
    // Still listed at resume: the approval is the answer to that ask.
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    let resolution = g.resume("t1", &o, &approve_all(&o)).unwrap();
    let bash = call(&resolution.calls, "bash");
    assert_eq!(bash.status, CallStatus::Run);
    assert_eq!(codes(bash)[0], "warden.approval_granted");
    assert_eq!(call(&resolution.calls, "read_file").status, CallStatus::Run);
}

#[test]
fn an_edit_is_judged_by_the_policy_live_at_resume() {
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    operator_changes_policy(
        &g,
        &format!("{BASH_LISTED}  deny: [\"Bash(git push upstream*)\"]\n"),
    );
    let request: ResumeRequest = serde_json::from_value(json!({"decisions": [{
        "request_id": rid(&o, "c1"),
        "decision": "edit",
        "args": {"command": "git push upstream main"},
    }]}))
    .unwrap();
    let resolution = g.resume("t1", &o, &request).unwrap();
    let bash = call(&resolution.calls, "bash");
    assert_eq!(bash.status, CallStatus::Denied);
    assert_eq!(
        bash.args,
        json!({"command": "git push origin main"}),
        "the model's own call stays"
    );
}

#[test]
fn a_clear_judges_the_calls_that_still_run_again() {
    let g = gate(BASH_LISTED);
    let o = paused(&g);
    operator_changes_policy(&g, &format!("{BASH_LISTED}  deny: [Read]\n"));
    let cleared = g
        .gate
        .clear(&alice(), "t1", o.approval_id.as_deref(), Some("not now"))
        .unwrap()
        .unwrap();
    assert_eq!(
        statuses(&cleared.calls),
        [
            ("bash".to_string(), CallStatus::Denied),
            ("read_file".to_string(), CallStatus::Denied)
        ]
    );
}

fn rid(o: &warden_approval::GateOutcome, call_id: &str) -> String {
    o.requests
        .iter()
        .find(|r| r.tool_call_id.as_deref() == Some(call_id))
        .unwrap()
        .request_id
        .clone()
}
