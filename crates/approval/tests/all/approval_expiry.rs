//! Expiry, opt-in: approvals wait for a human for ever unless
//! `hitl_approval.expire_after` says otherwise; then an unanswered approval
//! expires to a reject-all, journalled, and its run can go on.

use std::time::Duration;

use super::common::approval::*;
use serde_json::json;
use warden_approval::{ApprovalStatus, CallStatus, EventKind, JournalFilter, ListFilter, RunState};

const EXPIRES: &str = "hitl_approval:\n  tools: [bash]\n  expire_after: 1s\n";

fn pause(g: &TestGate, thread: &str) -> warden_approval::GateOutcome {
    let outcome = g.submit(
        thread,
        "r1",
        &response(json!([tool_call(
            json!("c1"),
            "bash",
            json!({"command": "make deploy"})
        )])),
    );
    assert_eq!(outcome.run_state, RunState::WaitingForInput);
    outcome
}

fn past_expiry() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn without_expire_after_an_approval_never_expires() {
    let g = gate(BASH_NEEDS_APPROVAL);
    pause(&g, "t1");
    let view = &g.gate.approvals(&ListFilter::default()).unwrap()[0];
    assert_eq!(view.expires_at, None);
    assert_eq!(g.gate.expire_overdue().unwrap(), 0);
}

#[test]
fn a_pause_says_when_it_expires() {
    let g = gate(EXPIRES);
    pause(&g, "t1");
    let view = &g.gate.approvals(&ListFilter::default()).unwrap()[0];
    assert!(view.expires_at.is_some(), "{view:?}");
}

#[test]
fn an_unanswered_approval_expires_to_a_reject_all_journalled() {
    let g = gate(EXPIRES);
    pause(&g, "t1");
    past_expiry();
    assert_eq!(g.gate.expire_overdue().unwrap(), 1);
    let all = ListFilter {
        include_resolved: true,
        ..ListFilter::default()
    };
    let view = &g.gate.approvals(&all).unwrap()[0];
    assert_eq!(view.status, ApprovalStatus::Expired);
    let resolution = view.resolution.as_ref().unwrap();
    assert_eq!(resolution.calls[0].status, CallStatus::Denied);
    assert_eq!(
        resolution.calls[0].reasons[0].code,
        "warden.approval_expired"
    );
    let journal = g.gate.journal(&JournalFilter::thread("t1")).unwrap();
    assert_eq!(journal[1].kind, EventKind::Expired);
    assert_eq!(journal[1].note.as_deref(), Some("unanswered for 1s"));
}

#[test]
fn an_expired_approval_no_longer_blocks_its_thread_even_before_the_sweeper_runs() {
    let g = gate(EXPIRES);
    pause(&g, "t1");
    past_expiry();
    let next = g.submit(
        "t1",
        "r2",
        &response(json!([tool_call(
            json!("c9"),
            "read_file",
            json!({"path": "README.md"})
        )])),
    );
    assert_eq!(next.run_state, RunState::Running);
}

#[test]
fn a_resume_after_expiry_is_refused_naming_the_expiry() {
    let g = gate(EXPIRES);
    let o = pause(&g, "t1");
    past_expiry();
    let err = g.resume("t1", &o, &approve_all(&o)).unwrap_err();
    assert_eq!(err.code(), "approval_resolved");
    assert!(err.to_string().contains("expired"), "{err}");
}

#[test]
fn a_malformed_expire_after_is_refused_naming_the_key() {
    let yaml = "hitl_approval:\n  tools: [bash]\n  expire_after: 10 minutes\n";
    let err = warden::Config::parse(yaml, "test.yaml", super::common::guest_dir()).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("expire_after"), "{text}");
    assert!(text.contains("not a duration"), "{text}");
}
