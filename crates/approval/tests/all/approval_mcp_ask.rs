//! One MCP call's ask as a one-use approval in the store: filed on the call's
//! own thread, answered like any pause, and consumed once by the identical
//! retry, by a compare-and-swap in the store, whichever gate (process) asks.

use std::sync::{Arc, Barrier};

use super::common::approval::*;
use serde_json::{Value, json};
use warden::Caller;
use warden_approval::{
    ApprovalGate, ApprovalKind, CallStatus, EventKind, JournalFilter,
    LOCAL_PRINCIPAL, ListFilter, McpAskAnswer, ResumeRequest, mcp_thread,
};
use warden_types::approval::{AnsweredBy, McpAttestation};
use warden_types::error::ApprovalError;
use warden_types::request::ToolCall;

const NOTE_NEEDS_APPROVAL: &str = "hitl_approval:\n  tools: [mcp__py__note]\n";

fn note(text: &str) -> ToolCall {
    ToolCall::new("mcp__py__note", json!({"text": text}))
}

fn ask(gate: &ApprovalGate, call: &ToolCall) -> McpAskAnswer {
    gate.mcp_ask(LOCAL_PRINCIPAL, call, Caller::Agent)
        .expect("the gate answers")
        .answer
}

/// Files the call's ask and returns its approval id.
fn filed(gate: &ApprovalGate, call: &ToolCall) -> String {
    match ask(gate, call) {
        McpAskAnswer::Pending { approval_id, .. } => approval_id,
        other => panic!("expected a pending ask, got {other:?}"),
    }
}

/// A human answers every request of the approval with `decision`.
fn answer(gate: &ApprovalGate, approval_id: &str, decision_kind: &str) {
    let view = gate
        .approvals(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|a| a.approval_id == approval_id)
        .expect("the approval is listed");
    let request = ResumeRequest::decide(
        view.requests
            .iter()
            .map(|r| decision(&r.request_id, decision_kind))
            .collect(),
    );
    gate.resume(&alice(), &view.thread_id, Some(approval_id), &request)
        .expect("the human's answer is taken");
}

fn runs(answer: &McpAskAnswer, args: &Value) -> bool {
    match answer {
        McpAskAnswer::Answered { resolution } => resolution
            .calls
            .first()
            .is_some_and(|c| c.status == CallStatus::Run && c.args == *args),
        _ => false,
    }
}

#[test]
fn an_ask_is_an_approval_of_its_own_kind_on_the_calls_own_thread() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("hello");
    let approval_id = filed(&g.gate, &call);
    let listed = g.gate.approvals(&ListFilter::default()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].approval_id, approval_id);
    assert_eq!(listed[0].kind, ApprovalKind::McpCall);
    assert_eq!(
        listed[0].thread_id,
        mcp_thread("mcp__py__note", &json!({"text": "hello"}))
    );
    // Asked again while pending: the same approval, not a second one.
    assert_eq!(filed(&g.gate, &call), approval_id);
    // Another call is asked on its own.
    assert_ne!(filed(&g.gate, &note("other")), approval_id);
}

#[test]
fn an_approved_answer_lets_the_identical_retry_through_once() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("hello");
    let approval_id = filed(&g.gate, &call);
    answer(&g.gate, &approval_id, "approve");
    assert!(runs(&ask(&g.gate, &call), &call.tool_input));
    // Consumed: the next identical call is asked again.
    let again = filed(&g.gate, &call);
    assert_ne!(again, approval_id);
    let record = g.gate.store().get(&approval_id).unwrap().unwrap();
    assert!(record.consumed_at.is_some());
    let kinds: Vec<_> = g
        .gate
        .journal(&JournalFilter::thread(record.thread_id))
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::Consumed,
            EventKind::Paused
        ]
    );
}

#[test]
fn a_restarted_proxy_finds_the_answer_in_the_store_and_uses_it_once() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("hello");
    let approval_id = filed(&g.gate, &call);
    answer(&g.gate, &approval_id, "approve");
    // Another process, with nothing in memory of the first.
    let restarted = g.reopen();
    assert!(runs(&ask(&restarted, &call), &call.tool_input));
    assert!(matches!(ask(&g.gate, &call), McpAskAnswer::Pending { .. }));
}

#[test]
fn of_two_proxies_racing_one_approved_retry_exactly_one_runs() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("hello");
    let approval_id = filed(&g.gate, &call);
    answer(&g.gate, &approval_id, "approve");
    let gates = [Arc::new(g.reopen()), Arc::new(g.reopen())];
    let start = Arc::new(Barrier::new(gates.len()));
    let answers: Vec<McpAskAnswer> = std::thread::scope(|scope| {
        let handles: Vec<_> = gates
            .iter()
            .map(|gate| {
                let (gate, start, call) = (gate.clone(), start.clone(), call.clone());
                scope.spawn(move || {
                    start.wait();
                    ask(&gate, &call)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ran = answers.iter().filter(|a| runs(a, &call.tool_input)).count();
    assert_eq!(ran, 1, "{answers:?}");
    assert!(
        answers
            .iter()
            .any(|a| matches!(a, McpAskAnswer::Pending { approval_id: other, .. } if *other != approval_id)),
        "the loser is asked again: {answers:?}"
    );
}

#[test]
fn the_store_consumes_an_answer_once() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let approval_id = filed(&g.gate, &note("hello"));
    let event = |at: &str| warden_approval::ApprovalEvent {
        seq: 0,
        at: at.into(),
        kind: EventKind::Consumed,
        principal: LOCAL_PRINCIPAL.into(),
        thread_id: mcp_thread("mcp__py__note", &json!({"text": "hello"})),
        approval_id: approval_id.clone(),
        run_id: "r".into(),
        reviewer: None,
        relayed_by: None,
        note: None,
        calls: Vec::new(),
    };
    let store = g.gate.store();
    let at = "2026-01-01T00:00:00Z";
    assert!(
        !store.consume(&approval_id, at, &event(at)).unwrap(),
        "a pending approval has no answer to consume"
    );
    answer(&g.gate, &approval_id, "approve");
    assert!(store.consume(&approval_id, at, &event(at)).unwrap());
    assert!(
        !store.consume(&approval_id, at, &event(at)).unwrap(),
        "consumed once only"
    );
    let other = g.reopen();
    assert!(
        !other.store().consume(&approval_id, at, &event(at)).unwrap(),
        "nor through another connection"
    );
}

#[test]
fn a_rejected_answer_is_read_once_and_never_runs() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("hello");
    let approval_id = filed(&g.gate, &call);
    answer(&g.gate, &approval_id, "reject");
    match ask(&g.gate, &call) {
        McpAskAnswer::Answered { resolution } => {
            assert_eq!(resolution.calls[0].status, CallStatus::Denied)
        }
        other => panic!("expected the rejection, got {other:?}"),
    }
    assert!(
        matches!(ask(&g.gate, &call), McpAskAnswer::Pending { approval_id: again, .. } if again != approval_id)
    );
}

#[test]
fn a_call_that_no_longer_waits_when_filed_is_answered_with_its_judgement() {
    // Not under the approval list any more (the policy changed since the
    // evaluate that asked): judged again at filing, it runs, nothing is filed.
    let g = gate("hitl_approval:\n  tools: [bash]\n");
    match ask(&g.gate, &note("hello")) {
        McpAskAnswer::Judged { call } => assert_eq!(call.status, CallStatus::Run),
        other => panic!("expected the call judged, got {other:?}"),
    }
    assert!(g.gate.approvals(&ListFilter::default()).unwrap().is_empty());
}

sqlite_only! {
use warden_approval::ApprovalStore;

#[test]
fn a_store_of_schema_3_opens_and_takes_one_use_answers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(warden_approval::sqlite::STORE_FILE);
    {
        // A data directory written by the previous release: schema 3, no consumed_at.
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute_batch(include_str!("schema3.sql"))
            .unwrap();
    }
    let store = warden_approval::SqliteApprovalStore::open(&path, Default::default()).unwrap();
    let old = store
        .get("apr_schema3")
        .unwrap()
        .expect("the old pause is kept");
    assert_eq!(old.kind, ApprovalKind::Pause);
    assert_eq!(old.consumed_at, None);
    let g = ApprovalGate::new(
        Arc::new(super::common::warden(NOTE_NEEDS_APPROVAL)),
        Arc::new(store),
    );
    let call = note("hello");
    let approval_id = filed(&g, &call);
    answer(&g, &approval_id, "approve");
    assert!(runs(&ask(&g, &call), &call.tool_input));
}
}

/// The client's own answer to the elicitation on the ask `approval_id`.
fn attest(
    gate: &ApprovalGate,
    approval_id: &str,
    call: &ToolCall,
    approve: bool,
) -> Result<McpAskAnswer, ApprovalError> {
    let attestation = McpAttestation {
        approval_id: approval_id.to_string(),
        call: call.clone(),
        approve,
    };
    gate.mcp_attest(LOCAL_PRINCIPAL, &attestation)
        .map(|asked| asked.answer)
}

fn client_attested(answer: &McpAskAnswer) -> bool {
    matches!(answer, McpAskAnswer::Pending { client_attested, .. } if *client_attested)
}

#[test]
fn unset_client_attested_lets_no_client_approve_a_tool_the_approval_list_names() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("ship it");
    let asked = ask(&g.gate, &call);
    assert!(!client_attested(&asked), "{asked:?}");
    let McpAskAnswer::Pending { approval_id, .. } = asked else {
        unreachable!()
    };
    let refused = attest(&g.gate, &approval_id, &call, true).unwrap_err();
    assert!(
        refused.to_string().contains("mcp.client_attested"),
        "{refused}"
    );
    // Still pending, for a human.
    assert!(
        matches!(ask(&g.gate, &call), McpAskAnswer::Pending { approval_id: same, .. } if same == approval_id)
    );
}

#[test]
fn a_client_attested_approval_where_allowed_is_recorded_as_such_and_consumed_at_once() {
    let g = gate(&format!(
        "{NOTE_NEEDS_APPROVAL}mcp:\n  client_attested: allow\n"
    ));
    let call = note("ship it");
    let asked = ask(&g.gate, &call);
    assert!(client_attested(&asked), "{asked:?}");
    let McpAskAnswer::Pending { approval_id, .. } = asked else {
        unreachable!()
    };
    let answered = attest(&g.gate, &approval_id, &call, true).unwrap();
    assert!(runs(&answered, &call.tool_input), "{answered:?}");
    let McpAskAnswer::Answered { resolution } = &answered else {
        unreachable!()
    };
    assert_eq!(resolution.answered_by, AnsweredBy::ClientAttested);
    let stored = g.gate.approvals(&ListFilter {
        include_resolved: true,
        ..ListFilter::default()
    });
    let stored = stored.unwrap();
    let view = stored
        .iter()
        .find(|a| a.approval_id == approval_id)
        .unwrap();
    assert_eq!(
        view.resolution.as_ref().unwrap().answered_by,
        AnsweredBy::ClientAttested
    );
    assert!(view.consumed_at.is_some(), "read by the waiting call");
    // The next identical call is asked again: the answer served once.
    assert!(
        matches!(ask(&g.gate, &call), McpAskAnswer::Pending { approval_id: other, .. } if other != approval_id)
    );
}

#[test]
fn a_client_decline_rejects_the_ask() {
    let g = gate(NOTE_NEEDS_APPROVAL);
    let call = note("ship it");
    let approval_id = filed(&g.gate, &call);
    let answered = attest(&g.gate, &approval_id, &call, false).unwrap();
    let McpAskAnswer::Answered { resolution } = &answered else {
        panic!("{answered:?}")
    };
    assert_eq!(resolution.calls[0].status, CallStatus::Denied);
    assert_eq!(resolution.answered_by, AnsweredBy::ClientAttested);
}

#[test]
fn a_client_answers_only_the_ask_of_the_very_call_it_was_asked_about() {
    let g = gate(&format!(
        "{NOTE_NEEDS_APPROVAL}mcp:\n  client_attested: allow\n"
    ));
    let approval_id = filed(&g.gate, &note("ship it"));
    // Other arguments: another call, whose ask this is not.
    let other = attest(&g.gate, &approval_id, &note("rm -rf"), true).unwrap_err();
    assert!(matches!(other, ApprovalError::NotFound { .. }), "{other}");
    // Another principal's ask.
    let attestation = McpAttestation {
        approval_id: approval_id.clone(),
        call: note("ship it"),
        approve: true,
    };
    let foreign = g.gate.mcp_attest("mallory", &attestation).unwrap_err();
    assert!(
        matches!(foreign, ApprovalError::NotFound { .. }),
        "{foreign}"
    );
}

#[test]
fn an_ask_a_human_answered_first_is_not_answered_again_by_the_client() {
    let g = gate(&format!(
        "{NOTE_NEEDS_APPROVAL}mcp:\n  client_attested: allow\n"
    ));
    let call = note("ship it");
    let approval_id = filed(&g.gate, &call);
    answer(&g.gate, &approval_id, "reject");
    let late = attest(&g.gate, &approval_id, &call, true).unwrap_err();
    assert!(
        matches!(late, ApprovalError::AlreadyResolved { .. }),
        "{late}"
    );
}
