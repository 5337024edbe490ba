//! Resuming a pause: decisions, their validation (each 422), the
//! compare-and-swap (exactly one of two resumes wins), durability across a
//! restart, the restore after a failed hand-off, the journal, and the recovery
//! of a broken older pause.

use std::sync::{Arc, Barrier};

use super::common::approval::*;
use serde_json::{Value, json};
use warden::{Caller, Reason};
use warden_approval::ApprovalError;
use warden_approval::{
    AiMessage, ApprovalEvent, ApprovalRecord, ApprovalStatus, ApprovalStore,
    CallOutcome, CallStatus, DecisionKind, EventKind, GateOutcome, Inserted,
    JournalFilter, LOCAL_PRINCIPAL, ListFilter, ResolvedBy, ResumeRequest, RunState,
    StoredRequest,
};

/// Pauses `t1`/`r1` on two bash calls (`c1`, `c2`) next to a read_file that runs.
fn paused(g: &TestGate) -> GateOutcome {
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(json!("c1"), "bash", json!({"command": "git push"})),
            tool_call(json!("c2"), "bash", json!({"command": "make deploy"})),
            tool_call(json!("c3"), "read_file", json!({"path": "README"})),
        ])),
    );
    assert_eq!(o.run_state, RunState::WaitingForInput);
    o
}

fn rid(o: &GateOutcome, call_id: &str) -> String {
    o.requests
        .iter()
        .find(|r| r.tool_call_id.as_deref() == Some(call_id))
        .unwrap()
        .request_id
        .clone()
}

fn decisions(body: Value) -> ResumeRequest {
    ResumeRequest::from_json(body.to_string().as_bytes()).expect("a well-formed body")
}

fn mismatch_of(err: &ApprovalError) -> &warden_approval::Mismatch {
    match err {
        ApprovalError::DecisionMismatch { mismatch, .. } => mismatch,
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn approved_calls_run_with_their_arguments_and_the_others_keep_their_verdicts() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let r = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(r.run_state, RunState::Running);
    assert!(
        r.calls.iter().all(|c| c.status == CallStatus::Run),
        "{:?}",
        r.calls
    );
    assert_eq!(r.calls[0].decision, Some(DecisionKind::Approve));
    assert_eq!(r.calls[0].args, json!({"command": "git push"}));
    assert_eq!(r.calls[2].decision, None, "read_file was never asked about");
    assert_eq!(r.message, o.message);
}

#[test]
fn a_rejected_call_is_denied_with_the_humans_message_naming_the_tool() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let r = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [
                {"request_id": rid(&o, "c1"), "decision": "reject", "message": "not on a Friday"},
                {"request_id": rid(&o, "c2"), "decision": "approve"}
            ]})),
        )
        .unwrap();
    let c1 = &r.calls[0];
    assert_eq!(
        (c1.status, c1.decision),
        (CallStatus::Denied, Some(DecisionKind::Reject))
    );
    assert_eq!(c1.reasons[0].code, "warden.approval_rejected");
    let note = c1.note.as_deref().unwrap();
    assert!(
        note.contains("'bash'") && note.contains("not on a Friday"),
        "{note}"
    );
    assert_eq!(r.calls[1].status, CallStatus::Run);
}

#[test]
fn an_edited_call_runs_with_the_new_arguments_on_every_surface_of_the_message() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let response: warden_approval::ModelResponse = serde_json::from_value(json!({"message": {
        "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "git push --force"}}],
        "raw_tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"git push --force\"}"}}],
        "content": [{"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "git push --force"}}]
    }}))
    .unwrap();
    let o = g.submit("t1", "r1", &response);
    let edited = json!({"command": "git push"});
    let r = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [{"request_id": rid(&o, "c1"), "decision": "edit", "args": edited}]})),
        )
        .unwrap();
    assert_eq!(
        (r.calls[0].status, r.calls[0].decision),
        (CallStatus::Run, Some(DecisionKind::Edit))
    );
    assert_eq!(r.calls[0].args, edited);
    assert_eq!(r.message.tool_calls[0].args, edited);
    assert_eq!(
        r.message.raw_tool_calls.as_ref().unwrap()[0]["function"]["arguments"],
        Value::String(edited.to_string())
    );
    assert_eq!(r.message.content.as_ref().unwrap()[0]["input"], edited);
}

#[test]
fn edited_arguments_go_through_the_providers_again_and_a_deny_stands() {
    // The fixture takes its behaviour from the call's arguments: these new
    // arguments make it trap, which is a deny.
    let g = gate(
        "hitl_approval:\n  tools: [bash]\nguardrails:\n  providers:\n    - name: judge\n      wasm: hostile.wasm\n      config: {behaviour: from_input}\n",
    );
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(
            json!("c1"),
            "bash",
            json!({"command": "ls"})
        )])),
    );
    assert_eq!(o.calls[0].status, CallStatus::Pending);
    let r = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [{"request_id": rid(&o, "c1"), "decision": "edit", "args": {"behaviour": "panic"}}]})),
        )
        .unwrap();
    let c1 = &r.calls[0];
    assert_eq!(
        (c1.status, c1.decision),
        (CallStatus::Denied, Some(DecisionKind::Edit))
    );
    assert_eq!(c1.reasons[0].code, "oap.evaluator_error");
    assert_eq!(c1.decided_by.as_deref(), Some("provider:judge"));
    assert_eq!(
        r.message.tool_calls[0].args,
        json!({"command": "ls"}),
        "the refused edit is not written into the message"
    );
}

#[test]
fn an_all_reject_rejects_every_pending_call() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let r = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"reject_all": {"message": "wrong branch"}})),
        )
        .unwrap();
    for c in &r.calls[..2] {
        assert_eq!(
            (c.status, c.decision),
            (CallStatus::Denied, Some(DecisionKind::Reject))
        );
        assert!(c.note.as_deref().unwrap().contains("wrong branch"));
    }
    assert_eq!(r.calls[2].status, CallStatus::Run);
}

#[test]
fn a_decision_missing_for_a_pending_request_is_refused_naming_it() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .resume(
            "t1",
            &o,
            &decisions(
                json!({"decisions": [{"request_id": rid(&o, "c1"), "decision": "approve"}]}),
            ),
        )
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (422, "decisions_mismatch"));
    assert_eq!(mismatch_of(&err).missing, [rid(&o, "c2")]);
}

#[test]
fn a_decision_for_an_unknown_request_is_refused_naming_it() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [
                {"request_id": rid(&o, "c1"), "decision": "approve"},
                {"request_id": rid(&o, "c2"), "decision": "approve"},
                {"request_id": "req_forged", "decision": "approve"}
            ]})),
        )
        .unwrap_err();
    assert_eq!(err.status(), 422);
    assert_eq!(mismatch_of(&err).extra, ["req_forged"]);
    assert!(err.to_string().contains("extra req_forged"), "{err}");
}

#[test]
fn a_request_decided_twice_is_refused_naming_it() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [
                {"request_id": rid(&o, "c1"), "decision": "approve"},
                {"request_id": rid(&o, "c2"), "decision": "approve"},
                {"request_id": rid(&o, "c1"), "decision": "reject"}
            ]})),
        )
        .unwrap_err();
    assert_eq!(err.status(), 422);
    assert_eq!(mismatch_of(&err).duplicated, [rid(&o, "c1")]);
}

#[test]
fn an_empty_request_id_is_refused_naming_its_position() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .resume(
            "t1",
            &o,
            &decisions(json!({"decisions": [
                {"request_id": rid(&o, "c1"), "decision": "approve"},
                {"request_id": "", "decision": "approve"}
            ]})),
        )
        .unwrap_err();
    assert_eq!(err.status(), 422);
    assert_eq!(mismatch_of(&err).empty, [1]);
    assert_eq!(mismatch_of(&err).missing, [rid(&o, "c2")]);
}

#[test]
fn a_null_request_id_is_refused_naming_the_field() {
    let err = ResumeRequest::from_json(
        br#"{"decisions": [{"request_id": null, "decision": "approve"}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.status(), 422);
    assert!(err.to_string().contains("decisions[0].request_id"), "{err}");
}

#[test]
fn malformed_resume_bodies_are_refused_naming_what_is_wrong() {
    for (body, field) in [
        (json!({}), "<body>"),
        (json!({"decisions": [], "reject_all": {}}), "<body>"),
        (
            json!({"decisions": [{"request_id": "r", "decision": "edit"}]}),
            "decisions[0].args",
        ),
        (
            json!({"decisions": [{"request_id": "r", "decision": "edit", "args": "ls"}]}),
            "decisions[0].args",
        ),
        (
            json!({"decisions": [{"request_id": "r", "decision": "approve", "args": {}}]}),
            "decisions[0].args",
        ),
        (
            json!({"decisions": [{"request_id": "r", "decision": "approve", "message": "ok"}]}),
            "decisions[0].message",
        ),
        (
            json!({"decisions": [{"request_id": "r", "decision": "maybe"}]}),
            "decisions[0].decision",
        ),
        (
            json!({"decisions": [{"request_id": "r", "decision": "approve", "extra": 1}]}),
            "decisions[0]",
        ),
    ] {
        let err = ResumeRequest::from_json(body.to_string().as_bytes()).unwrap_err();
        assert_eq!(err.status(), 422, "{body}: {err}");
        assert!(err.to_string().contains(field), "{body}: {err}");
    }
}

#[test]
fn of_two_concurrent_resumes_exactly_one_wins_and_the_other_gets_409() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    // Two gates, two SQLite connections, as two processes would have.
    let gates = [Arc::new(g.reopen()), Arc::new(g.reopen())];
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = gates
        .iter()
        .enumerate()
        .map(|(i, gate)| {
            let (gate, barrier) = (gate.clone(), barrier.clone());
            let (approval, request) = (
                o.approval_id.clone(),
                approve_all(&o).by_run(format!("resume-{i}")),
            );
            std::thread::spawn(move || {
                barrier.wait();
                gate.resume(&alice(), "t1", approval.as_deref(), &request)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let wins: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    let losses: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!((wins.len(), losses.len()), (1, 1), "{results:?}");
    assert_eq!(
        (losses[0].status(), losses[0].code()),
        (409, "approval_resolved")
    );
    let ResolvedBy::Resume { run_id } = &wins[0].resolved_by else {
        panic!()
    };
    assert!(
        losses[0].to_string().contains(run_id.as_str()),
        "the loser is told who won: {}",
        losses[0]
    );
    let resumed = g
        .gate
        .store()
        .events(&JournalFilter::thread("t1"))
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == EventKind::Resumed)
        .count();
    assert_eq!(resumed, 1, "exactly one consumption is journalled");
}

#[test]
fn a_second_resume_after_the_first_is_refused_with_409() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    let err = g
        .resume("t1", &o, &ResumeRequest::reject_all(None))
        .unwrap_err();
    assert_eq!(err.status(), 409);
}

#[test]
fn a_pause_survives_a_restart_and_is_resumed_by_the_new_process() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let restarted = g.restart();
    let listed = restarted.gate.approvals(&ListFilter::default()).unwrap();
    assert_eq!(listed[0].approval_id, o.approval_id.clone().unwrap());
    let r = restarted.resume("t1", &o, &approve_all(&o)).unwrap();
    assert_eq!(r.calls[0].status, CallStatus::Run);
}

#[test]
fn a_failed_hand_off_restores_the_run_to_waiting_for_input_and_a_retry_succeeds() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .gate
        .resume_and_hand_off(
            &alice(),
            "t1",
            o.approval_id.as_deref(),
            &approve_all(&o),
            |_| Err("no worker available"),
        )
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (503, "hand_off_failed"));
    assert!(
        matches!(err, ApprovalError::HandOff { restored: true, .. }),
        "{err:?}"
    );
    let listed = g.gate.approvals(&ListFilter::default()).unwrap();
    assert_eq!(listed[0].status, ApprovalStatus::Pending);
    assert_eq!(listed[0].run_state, Some(RunState::WaitingForInput));
    // A new run is still refused, and a retry (here an all-reject) goes through.
    let new_run = g
        .try_submit("t1", "r2", &response(json!([])), Caller::Agent)
        .unwrap_err();
    assert_eq!(new_run.code(), "approval_pending");
    g.resume("t1", &o, &ResumeRequest::reject_all(None))
        .unwrap();
    let kinds: Vec<_> = g
        .gate
        .journal(&JournalFilter::thread("t1"))
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            EventKind::Paused,
            EventKind::Resumed,
            EventKind::Restored,
            EventKind::Resumed
        ]
    );
}

#[test]
fn a_restore_applies_only_to_the_consumption_it_names() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let first = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert!(g.gate.restore(&first, "worker crashed").unwrap());
    let second = g.resume("t1", &o, &approve_all(&o)).unwrap();
    assert!(
        !g.gate
            .restore(&first, "late report from the first hand-off")
            .unwrap(),
        "a stale consumption restores nothing"
    );
    let record = g.gate.store().get(&second.approval_id).unwrap().unwrap();
    assert_eq!(record.status, ApprovalStatus::Resumed);
}

#[test]
fn waiting_for_input_is_not_a_finished_state() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let pending = &g.gate.approvals(&ListFilter::default()).unwrap()[0];
    assert_eq!(
        (pending.status, pending.run_state),
        (ApprovalStatus::Pending, Some(RunState::WaitingForInput))
    );
    assert!(
        pending.resolution.is_none(),
        "no outcome exists while waiting"
    );
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    let all = g
        .gate
        .approvals(&ListFilter {
            principal: None,
            thread_id: Some("t1".into()),
            include_resolved: true,
        })
        .unwrap();
    assert_eq!(
        (all[0].status, all[0].run_state),
        (ApprovalStatus::Resumed, None)
    );
    assert!(
        g.gate.approvals(&ListFilter::default()).unwrap().is_empty(),
        "nothing pending any more"
    );
}

#[test]
fn after_a_resume_the_thread_takes_new_runs() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    g.resume("t1", &o, &approve_all(&o)).unwrap();
    let next = g.submit(
        "t1",
        "r2",
        &response(json!([tool_call(json!("c9"), "read_file", json!({}))])),
    );
    assert_eq!(next.run_state, RunState::Running);
}

#[test]
fn the_resume_run_adopts_the_calls_it_answers_in_the_journal() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let request = decisions(json!({"run_id": "resume-run", "decisions": [
        {"request_id": rid(&o, "c1"), "decision": "approve"},
        {"request_id": rid(&o, "c2"), "decision": "reject"}
    ]}));
    g.resume("t1", &o, &request).unwrap();
    let journal = g.gate.journal(&JournalFilter::thread("t1")).unwrap();
    let paused_event = &journal[0];
    assert_eq!(
        (paused_event.kind, paused_event.run_id.as_str()),
        (EventKind::Paused, "r1")
    );
    let resumed = &journal[1];
    assert_eq!(
        (resumed.kind, resumed.run_id.as_str()),
        (EventKind::Resumed, "resume-run")
    );
    // The calls nobody was asked about are journalled too (judged again at
    // resume), without a decision.
    let answered: Vec<_> = resumed
        .calls
        .iter()
        .filter(|c| c.decision.is_some())
        .map(|c| {
            (
                c.tool_call_id.as_deref().unwrap(),
                c.decision.unwrap(),
                c.status,
            )
        })
        .collect();
    assert_eq!(
        answered,
        [
            ("c1", DecisionKind::Approve, CallStatus::Run),
            ("c2", DecisionKind::Reject, CallStatus::Denied)
        ]
    );
    let text = serde_json::to_string(&journal).unwrap();
    assert!(!text.contains("git push"), "arguments are never journalled");
}

#[test]
fn an_unknown_approval_is_404_and_an_approval_of_another_thread_is_not_found_either() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let err = g
        .gate
        .resume(&alice(), "t1", Some("apr_nope"), &approve_all(&o))
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (404, "approval_not_found"));
    let err = g
        .gate
        .resume(&alice(), "t2", o.approval_id.as_deref(), &approve_all(&o))
        .unwrap_err();
    assert_eq!(err.status(), 404);
}

// A pause as an older release stored it: the paused bash call has no id, and
// a second bash call shares an id with a read_file.

fn broken_pause(store: &dyn ApprovalStore) -> ApprovalRecord {
    let message: AiMessage = serde_json::from_value(json!({
        "tool_calls": [
            {"id": null, "name": "bash", "args": {"command": "rm -rf build"}},
            {"id": "dup", "name": "bash", "args": {"command": "make"}},
            {"id": "dup", "name": "read_file", "args": {"path": "a"}},
            {"id": "ok", "name": "read_file", "args": {"path": "b"}}
        ],
        "raw_tool_calls": [
            {"type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "dup", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "dup", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            {"id": "ok", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        ]
    }))
    .unwrap();
    let outcome = |index: usize, status: CallStatus, request_id: Option<&str>| {
        let c = &message.tool_calls[index];
        CallOutcome {
            index,
            id: c.id.clone(),
            name: c.name.clone(),
            status,
            removed: false,
            request_id: request_id.map(str::to_string),
            decision: None,
            args: c.args.clone(),
            note: None,
            reasons: vec![Reason::new("warden.approval_required", "legacy")],
            decided_by: None,
        }
    };
    let record = ApprovalRecord {
        approval_id: "apr_legacy".into(),
        principal: LOCAL_PRINCIPAL.into(),
        thread_id: "t-old".into(),
        run_id: "r-old".into(),
        status: ApprovalStatus::Pending,
        version: 1,
        created_at: "2026-01-01T00:00:00Z".into(),
        caller: Caller::Agent,
        context: Default::default(),
        calls: vec![
            outcome(0, CallStatus::Pending, Some("req_legacy_1")),
            outcome(1, CallStatus::Pending, Some("req_legacy_2")),
            outcome(2, CallStatus::Run, None),
            outcome(3, CallStatus::Run, None),
        ],
        message,
        requests: vec![
            StoredRequest {
                request_id: "req_legacy_1".into(),
                tool_call_id: None,
                tool_name: "bash".into(),
            },
            StoredRequest {
                request_id: "req_legacy_2".into(),
                tool_call_id: Some("dup".into()),
                tool_name: "bash".into(),
            },
        ],
        response_digest: "legacy".into(),
        generation: 0,
        expires_at_ms: None,
        resolution: None,
        resume_key: None,
        kind: Default::default(),
        consumed_at: None,
    };
    let event = ApprovalEvent {
        seq: 0,
        at: record.created_at.clone(),
        kind: EventKind::Paused,
        principal: record.principal.clone(),
        thread_id: record.thread_id.clone(),
        approval_id: record.approval_id.clone(),
        run_id: record.run_id.clone(),
        reviewer: None,
        relayed_by: None,
        note: None,
        calls: vec![],
    };
    assert_eq!(
        store.insert(&record, &event, None).unwrap(),
        Inserted::Paused
    );
    record
}

fn legacy_decisions() -> ResumeRequest {
    ResumeRequest::decide(vec![
        decision("req_legacy_1", "approve"),
        decision("req_legacy_2", "approve"),
    ])
}

#[test]
fn a_broken_older_pause_refuses_per_call_decisions_naming_the_problems() {
    let g = gate(BASH_NEEDS_APPROVAL);
    broken_pause(g.gate.store());
    let err = g
        .gate
        .resume(&alice(), "t-old", None, &legacy_decisions())
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (422, "broken_pause"));
    let text = err.to_string();
    assert!(
        text.contains("no id") && text.contains("'dup'") && text.contains("warden approvals clear"),
        "{text}"
    );
    let listed = g.gate.approvals(&ListFilter::default()).unwrap();
    assert!(
        !listed[0].broken.is_empty(),
        "the listing says it is broken"
    );
}

#[test]
fn a_broken_older_pause_still_blocks_new_runs_until_it_is_recovered() {
    let g = gate(BASH_NEEDS_APPROVAL);
    broken_pause(g.gate.store());
    let err = g
        .try_submit("t-old", "r-new", &response(json!([])), Caller::Agent)
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (409, "approval_pending"));
}

#[test]
fn a_broken_older_pause_is_recovered_in_place_by_an_all_reject() {
    let g = gate(BASH_NEEDS_APPROVAL);
    broken_pause(g.gate.store());
    let r = g
        .gate
        .resume(
            &alice(),
            "t-old",
            None,
            &ResumeRequest::reject_all(Some("stale".into())),
        )
        .unwrap();
    assert!(
        r.calls[..3]
            .iter()
            .all(|c| c.status == CallStatus::Denied && c.removed),
        "{:?}",
        r.calls
    );
    assert!(r.calls[0].note.as_deref().unwrap().contains("'bash'"));
    assert_eq!(
        r.calls[3].status,
        CallStatus::Run,
        "the addressable ordinary call keeps its verdict"
    );
    assert_eq!(message_ids(&r.message), [Some("ok".to_string())]);
    let raw = r.message.raw_tool_calls.as_ref().unwrap();
    assert_eq!((raw.len(), &raw[0]["id"]), (1, &json!("ok")));
    // The thread is usable again, in place.
    let next = g.submit(
        "t-old",
        "r-new",
        &response(json!([tool_call(json!("n1"), "read_file", json!({}))])),
    );
    assert_eq!(next.run_state, RunState::Running);
}

#[test]
fn a_broken_older_pause_is_recovered_by_an_operators_clear_with_a_journal_entry() {
    let g = gate(BASH_NEEDS_APPROVAL);
    broken_pause(g.gate.store());
    let r = g
        .gate
        .clear(&alice(), "t-old", None, Some("legacy pause"))
        .unwrap()
        .expect("something was pending");
    assert_eq!(
        r.resolved_by,
        ResolvedBy::Clear {
            actor: "alice".into(),
            reason: Some("legacy pause".into())
        }
    );
    assert!(r.calls[0].note.as_deref().unwrap().contains("'bash'"));
    let cleared = g
        .gate
        .journal(&JournalFilter::thread("t-old"))
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(
        (cleared.kind, cleared.reviewer.as_deref()),
        (EventKind::Cleared, Some("alice"))
    );
    assert_eq!(cleared.note.as_deref(), Some("legacy pause"));
    assert!(
        !cleared.calls.is_empty(),
        "the journal names the calls it rejected"
    );
    g.submit("t-old", "r-new", &response(json!([])));
    assert!(
        g.gate
            .clear(&alice(), "t-old", None, None)
            .unwrap()
            .is_none(),
        "nothing left to clear"
    );
}

sqlite_only! {
use warden_approval::{ApprovalGate, Durability, SqliteApprovalStore};

#[test]
fn a_store_written_by_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.sqlite3");
    drop(SqliteApprovalStore::open(&path, Durability::default()).unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    let err = SqliteApprovalStore::open(&path, Durability::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("schema version 99"), "{err}");
}

#[test]
fn the_journal_is_append_only() {
    let g = gate(BASH_NEEDS_APPROVAL);
    paused(&g);
    let raw = rusqlite::Connection::open(g.dir.path().join("approvals.sqlite3")).unwrap();
    let err = raw
        .execute("DELETE FROM approval_events", [])
        .unwrap_err()
        .to_string();
    assert!(err.contains("append-only"), "{err}");
    assert_eq!(g.gate.journal(&JournalFilter::default()).unwrap().len(), 1);
}

#[test]
fn the_store_runs_with_the_durability_it_was_opened_with() {
    let dir = tempfile::tempdir().unwrap();
    for durability in [Durability::Full, Durability::Normal] {
        let store = SqliteApprovalStore::open_in(dir.path(), durability).unwrap();
        assert_eq!(store.durability().unwrap(), durability);
    }
}

/// The schema-1 store of the previous release, as it created its tables.
const SCHEMA_V1: &str = "
CREATE TABLE approvals (
    approval_id     TEXT PRIMARY KEY,
    thread_id       TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'resumed', 'cleared')),
    version         INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    requests_digest TEXT NOT NULL,
    consumption_id  TEXT,
    body            TEXT NOT NULL,
    resolution      TEXT
);
CREATE UNIQUE INDEX approvals_one_pending_per_thread ON approvals (thread_id) WHERE status = 'pending';
CREATE INDEX approvals_by_thread ON approvals (thread_id, created_at);
CREATE TABLE approval_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    thread_id   TEXT NOT NULL,
    approval_id TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    event       TEXT NOT NULL
);
CREATE TRIGGER approval_events_no_delete BEFORE DELETE ON approval_events
    BEGIN SELECT RAISE(ABORT, 'the approval journal is append-only'); END;
PRAGMA user_version = 1;
";

#[test]
fn a_store_of_the_previous_schema_is_migrated_and_its_pauses_stay_answerable() {
    // A pause as the previous release stored it: its row and journal entry
    // copied into a schema-1 file.
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = paused(&g);
    let current = rusqlite::Connection::open(g.dir.path().join("approvals.sqlite3")).unwrap();
    let (body, digest, created): (String, String, String) = current
        .query_row(
            "SELECT body, requests_digest, created_at FROM approvals",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let event: String = current
        .query_row("SELECT event FROM approval_events", [], |r| r.get(0))
        .unwrap();
    let old = tempfile::tempdir().unwrap();
    let raw = rusqlite::Connection::open(old.path().join("approvals.sqlite3")).unwrap();
    raw.execute_batch(SCHEMA_V1).unwrap();
    raw.execute(
        "INSERT INTO approvals VALUES (?1, 't1', 'r1', 'pending', 1, ?2, ?3, NULL, ?4, NULL)",
        rusqlite::params![o.approval_id, created, digest, body],
    )
    .unwrap();
    raw.execute(
        "INSERT INTO approval_events (at, kind, thread_id, approval_id, run_id, event) VALUES (?1, 'paused', 't1', ?2, 'r1', ?3)",
        rusqlite::params![created, o.approval_id, event],
    )
    .unwrap();
    drop(raw);

    let store = SqliteApprovalStore::open_in(old.path(), Durability::default()).unwrap();
    let pending = store
        .pending_on_thread(LOCAL_PRINCIPAL, "t1")
        .unwrap()
        .expect("the old pause is the local principal's");
    assert_eq!(pending.approval_id, o.approval_id.clone().unwrap());
    let journal = store.events(&JournalFilter::default()).unwrap();
    assert_eq!(journal[0].principal, LOCAL_PRINCIPAL);
    let gate = ApprovalGate::new(
        Arc::new(super::common::warden(BASH_NEEDS_APPROVAL)),
        Arc::new(store),
    );
    let r = gate
        .resume(&alice(), "t1", o.approval_id.as_deref(), &approve_all(&o))
        .unwrap();
    assert_eq!(r.calls[0].status, CallStatus::Run);
}
}

postgres_only! {
#[test]
fn a_database_written_by_a_newer_schema_is_refused() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let url = g.url.clone().unwrap();
    let mut raw = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    raw.execute("UPDATE warden_schema SET version = 99", &[])
        .unwrap();
    let err = warden_approval::PostgresApprovalStore::connect(&url, Default::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("schema version 99"), "{err}");
    assert!(!err.contains("warden-test"), "no password in the error: {err}");
}

#[test]
fn the_journal_is_append_only_in_the_database() {
    let g = gate(BASH_NEEDS_APPROVAL);
    paused(&g);
    let mut raw = postgres::Client::connect(g.url.as_deref().unwrap(), postgres::NoTls).unwrap();
    for statement in [
        "DELETE FROM approval_events",
        "UPDATE approval_events SET kind = 'resumed'",
        "TRUNCATE approval_events",
    ] {
        let err = raw.batch_execute(statement).unwrap_err();
        let message = err.as_db_error().map(|e| e.message().to_string()).unwrap_or_default();
        assert!(message.contains("append-only"), "{statement}: {err}");
    }
    assert_eq!(g.gate.journal(&JournalFilter::default()).unwrap().len(), 1);
}
}

#[test]
fn the_librarys_own_decision_log_gets_the_gates_calls_and_the_humans_answer() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let data = tempfile::tempdir().unwrap();
    let mut config = super::common::config(BASH_NEEDS_APPROVAL);
    config.set_data_dir(data.path());
    let warden = warden::Warden::new(&config).unwrap();
    warden.log_decisions(&config).unwrap();
    let logged = TestGate {
        gate: warden_approval::ApprovalGate::new(Arc::new(warden), g.open_store()),
        ..g
    };
    let o = paused(&logged);
    logged.resume("t1", &o, &approve_all(&o)).unwrap();
    let log = logged.gate.warden().decision_log().unwrap();
    log.flush();
    let text = std::fs::read_to_string(log.path().unwrap()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l.get("source").is_some())
        .collect();
    let of = |source: &str| {
        lines
            .iter()
            .filter(|l| l["source"] == source)
            .collect::<Vec<_>>()
    };
    let names = |lines: &[&Value]| {
        lines
            .iter()
            .map(|l| l["tool_name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&of("tool-calls")), ["bash", "bash", "read_file"], "{text}");
    let answered: Vec<_> = of("resume")
        .into_iter()
        .filter(|l| l["reviewer"] == "alice")
        .collect();
    assert_eq!(names(&answered), ["bash", "bash"], "{text}");
}
