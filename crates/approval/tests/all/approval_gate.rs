//! The approval gate on one model response: who pauses, who is denied, who runs,
//! and the calls that can never be paused because no answer can reach them.

use super::common::approval::*;
use serde_json::json;
use warden::{Caller, Config};
use warden_approval::ApprovalError;
use warden_approval::{CallStatus, LOCAL_PRINCIPAL, RunState};

use CallStatus::{Denied, Pending, Run};

/// Run `r1` of thread `t1` asks to `git push`, which waits for a human under
/// [`BASH_NEEDS_APPROVAL`].
fn pause_git_push(g: &TestGate) -> warden_approval::GateOutcome {
    g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(
            json!("c1"),
            "bash",
            json!({"command": "git push"})
        )])),
    )
}

fn owned(pairs: &[(&str, CallStatus)]) -> Vec<(String, CallStatus)> {
    pairs.iter().map(|(n, s)| (n.to_string(), *s)).collect()
}

/// `bash` needs approval; `rm` is denied by the allowlist provider.
const MIXED: &str = "hitl_approval:\n  tools: [bash]\nguardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {denied_tools: [rm]}\n";

fn ask_provider(extra: &str) -> String {
    format!(
        "{extra}guardrails:\n  providers:\n    - name: asker\n      wasm: hostile.wasm\n      config: {{verdict: ask, code: fixture.ask}}\n"
    )
}

fn internal(g: &TestGate, context: serde_json::Value, name: &str) -> warden_approval::GateOutcome {
    let r = response_with(
        json!([tool_call(json!("c1"), name, json!({"command": "git push"}))]),
        context,
    );
    g.try_submit("t", "r", &r, Caller::Internal).unwrap()
}

#[test]
fn a_listed_tool_pauses_an_interactive_run_which_then_waits_for_input() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = pause_git_push(&g);
    assert_eq!(o.run_state, RunState::WaitingForInput);
    let approval_id = o.approval_id.clone().expect("an approval");
    assert_eq!(o.requests.len(), 1);
    assert_eq!(o.requests[0].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(o.calls[0].status, Pending);
    assert_eq!(
        o.calls[0].request_id.as_deref(),
        Some(o.requests[0].request_id.as_str())
    );
    assert_eq!(o.calls[0].reasons[0].code, "warden.approval_required");
    let listed = g.gate.approvals(&Default::default()).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].approval_id, approval_id);
    assert_eq!(listed[0].run_state, Some(RunState::WaitingForInput));
}

#[test]
fn a_response_that_needs_no_human_runs_without_a_pause() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(
            json!("c1"),
            "read_file",
            json!({"path": "a"})
        )])),
    );
    assert_eq!(o.run_state, RunState::Running);
    assert_eq!(o.approval_id, None);
    assert_eq!(statuses(&o.calls), owned(&[("read_file", Run)]));
    assert!(g.gate.approvals(&Default::default()).unwrap().is_empty());
}

#[test]
fn a_mixed_response_is_judged_call_by_call_and_pauses_once_for_the_run() {
    let g = gate(MIXED);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(json!("a"), "read_file", json!({"path": "x"})),
            tool_call(json!("b"), "bash", json!({"command": "make"})),
            tool_call(json!("c"), "rm", json!({"path": "/"})),
            tool_call(json!("d"), "bash", json!({"command": "make test"})),
            tool_call(json!(null), "ls", json!({})),
        ])),
    );
    assert_eq!(
        statuses(&o.calls),
        owned(&[
            ("read_file", Run),
            ("bash", Pending),
            ("rm", Denied),
            ("bash", Pending),
            ("ls", Denied)
        ])
    );
    assert_eq!(o.run_state, RunState::WaitingForInput);
    assert_eq!(
        o.requests.len(),
        2,
        "one approval with a request per paused call"
    );
    assert_ne!(o.requests[0].request_id, o.requests[1].request_id);
    let rm = call(&o.calls, "rm");
    assert!(
        !rm.removed,
        "a denied call with a good id stays, answered by its note"
    );
    assert!(
        rm.note.as_deref().unwrap().contains("'rm'"),
        "{:?}",
        rm.note
    );
    assert_eq!(
        message_ids(&o.message),
        [
            Some("a".into()),
            Some("b".into()),
            Some("c".into()),
            Some("d".into())
        ]
    );
}

#[test]
fn a_call_with_a_null_id_is_removed_with_a_note_and_never_paused() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([{"name": "bash", "args": {"command": "rm -rf /"}}])),
    );
    let c = &o.calls[0];
    assert_eq!((c.status, c.removed), (Denied, true));
    assert_eq!(c.reasons[0].code, "warden.unaddressable_call");
    let note = c.note.as_deref().unwrap();
    assert!(note.contains("'bash'") && note.contains("no id"), "{note}");
    assert_eq!(o.run_state, RunState::Running);
    assert!(o.message.tool_calls.is_empty());
    assert!(g.gate.approvals(&Default::default()).unwrap().is_empty());
}

#[test]
fn a_call_with_an_empty_id_is_removed_and_never_paused() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(
            json!(""),
            "bash",
            json!({"command": "git push"})
        )])),
    );
    assert_eq!((o.calls[0].status, o.calls[0].removed), (Denied, true));
    assert!(o.calls[0].note.as_deref().unwrap().contains("empty"));
    assert_eq!(o.run_state, RunState::Running);
}

#[test]
fn duplicated_ids_remove_the_whole_group() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(json!("dup"), "bash", json!({"command": "a"})),
            tool_call(json!("dup"), "bash", json!({"command": "b"})),
            tool_call(json!("ok"), "bash", json!({"command": "c"})),
        ])),
    );
    assert_eq!(
        statuses(&o.calls),
        owned(&[("bash", Denied), ("bash", Denied), ("bash", Pending)])
    );
    assert!(o.calls[0].removed && o.calls[1].removed);
    assert_eq!(message_ids(&o.message), [Some("ok".to_string())]);
    assert_eq!(o.requests.len(), 1);
    assert_eq!(o.requests[0].tool_call_id.as_deref(), Some("ok"));
}

#[test]
fn an_approval_call_sharing_its_id_with_an_ordinary_call_takes_both_off_every_surface() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let r: warden_approval::ModelResponse = serde_json::from_value(json!({
        "message": {
            "tool_calls": [
                {"id": "x", "name": "bash", "args": {"command": "git push"}},
                {"id": "x", "name": "read_file", "args": {"path": "a"}},
                {"id": "y", "name": "read_file", "args": {"path": "b"}}
            ],
            "raw_tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "x", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
                {"id": "y", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"b\"}"}}
            ],
            "content": [
                {"type": "text", "text": "on it"},
                {"type": "tool_use", "id": "x", "name": "bash", "input": {}},
                {"type": "tool_use", "id": "x", "name": "read_file", "input": {}},
                {"type": "tool_use", "id": "y", "name": "read_file", "input": {"path": "b"}}
            ]
        }
    }))
    .unwrap();
    let o = g.submit("t1", "r1", &r);
    assert_eq!(
        statuses(&o.calls),
        owned(&[("bash", Denied), ("read_file", Denied), ("read_file", Run)])
    );
    let note = o.calls[0].note.as_deref().unwrap();
    assert!(note.contains("'bash'") && note.contains("shared"), "{note}");
    assert_eq!(o.run_state, RunState::Running, "nothing is left to pause");
    assert_eq!(message_ids(&o.message), [Some("y".to_string())]);
    let raw = o.message.raw_tool_calls.as_ref().unwrap();
    assert_eq!(raw.len(), 1);
    assert_eq!(raw[0]["id"], "y");
    let blocks = o.message.content.as_ref().unwrap().as_array().unwrap();
    assert_eq!(blocks.len(), 2, "the text block and y's block");
    assert_eq!(blocks[1]["id"], "y");
}

#[test]
fn unaddressable_calls_are_removed_on_the_deny_path_too() {
    let g = gate("hitl_approval:\n  tools: [bash]\n  non_interactive: deny\n");
    let r = response_with(
        json!([
            tool_call(json!("x"), "bash", json!({"command": "git push"})),
            tool_call(json!("x"), "read_file", json!({})),
            tool_call(json!("z"), "bash", json!({"command": "git push"})),
        ]),
        json!({"interaction_mode": "scheduled"}),
    );
    let o = g.try_submit("t1", "r1", &r, Caller::Internal).unwrap();
    assert!(
        o.calls[0].removed && o.calls[1].removed,
        "a deny by id would answer both"
    );
    let z = &o.calls[2];
    assert_eq!((z.status, z.removed), (Denied, false));
    assert_eq!(z.reasons[0].code, "warden.approval_unavailable");
    assert_eq!(message_ids(&o.message), [Some("z".to_string())]);
}

#[test]
fn the_thread_stays_usable_after_calls_were_removed() {
    let g = gate(BASH_NEEDS_APPROVAL);
    g.submit(
        "t1",
        "r1",
        &response(json!([{"id": null, "name": "bash", "args": {}}])),
    );
    let o = g.submit(
        "t1",
        "r2",
        &response(json!([tool_call(json!("c"), "read_file", json!({}))])),
    );
    assert_eq!(statuses(&o.calls), owned(&[("read_file", Run)]));
}

#[test]
fn listed_tools_in_unattended_runs_are_denied_by_default() {
    let g = gate(BASH_NEEDS_APPROVAL);
    for context in [
        json!({"interaction_mode": "scheduled"}),
        json!({"interaction_mode": "webhook"}),
        json!({"interaction_mode": "autonomous"}),
        json!({"run_origin": "im"}),
        json!({"run_origin": "extension"}),
        json!({"run_origin": "mcp_notification"}),
    ] {
        let o = internal(&g, context.clone(), "bash");
        assert_eq!(o.calls[0].status, Denied, "{context}");
        assert_eq!(
            o.calls[0].reasons[0].code, "warden.approval_unavailable",
            "{context}"
        );
        assert_eq!(o.run_state, RunState::Running);
    }
}

#[test]
fn listed_tools_in_unattended_runs_run_when_non_interactive_is_allow() {
    let g = gate("hitl_approval:\n  tools: [bash]\n  non_interactive: allow\n");
    for context in [
        json!({"interaction_mode": "webhook"}),
        json!({"run_origin": "im"}),
    ] {
        let o = internal(&g, context.clone(), "bash");
        assert_eq!(o.calls[0].status, Run, "{context}");
        assert!(
            o.calls[0]
                .reasons
                .iter()
                .any(|r| r.code == "warden.approval_waived"),
            "{context}"
        );
    }
}

#[test]
fn subagents_are_denied_listed_tools_even_when_non_interactive_is_allow() {
    let g = gate("hitl_approval:\n  tools: [bash]\n  non_interactive: allow\n");
    for context in [
        json!({"is_subagent": true}),
        json!({"is_subagent": true, "interaction_mode": "scheduled"}),
    ] {
        let o = internal(&g, context.clone(), "bash");
        assert_eq!(o.calls[0].status, Denied, "{context}");
        assert!(
            o.calls[0].reasons[0].message.contains("subagent"),
            "{context}"
        );
    }
}

#[test]
fn harnesses_that_cannot_resume_are_denied_listed_tools_even_when_non_interactive_is_allow() {
    let g = gate("hitl_approval:\n  tools: [bash]\n  non_interactive: allow\n");
    for context in [
        json!({"can_resume": false}),
        json!({"can_resume": false, "run_origin": "im"}),
    ] {
        let o = internal(&g, context.clone(), "bash");
        assert_eq!(o.calls[0].status, Denied, "{context}");
        assert!(
            o.calls[0].reasons[0].message.contains("cannot pause"),
            "{context}"
        );
    }
}

#[test]
fn an_ask_from_a_provider_pauses_where_a_human_can_answer() {
    let g = gate(&ask_provider(""));
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(json!("c1"), "read_file", json!({}))])),
    );
    assert_eq!(o.calls[0].status, Pending);
    assert_eq!(o.requests[0].reasons[0].code, "fixture.ask");
    assert_eq!(o.calls[0].decided_by.as_deref(), Some("provider:asker"));
}

#[test]
fn an_ask_from_a_provider_in_a_run_that_cannot_pause_is_denied_even_when_non_interactive_is_allow()
{
    let g = gate(&ask_provider(
        "hitl_approval:\n  tools: [bash]\n  non_interactive: allow\n",
    ));
    for context in [
        json!({"interaction_mode": "scheduled"}),
        json!({"run_origin": "im"}),
        json!({"can_resume": false}),
    ] {
        for tool in ["read_file", "bash"] {
            let o = internal(&g, context.clone(), tool);
            assert_eq!(o.calls[0].status, Denied, "{tool} in {context}");
            assert_eq!(
                o.calls[0].reasons[0].code, "warden.ask_unavailable",
                "{tool} in {context}"
            );
        }
    }
}

#[test]
fn a_provider_deny_wins_over_the_approval_list() {
    let g = gate(
        "hitl_approval:\n  tools: [rm]\nguardrails:\n  providers:\n    - name: allowlist\n      wasm: builtin:allowlist\n      config: {denied_tools: [rm]}\n",
    );
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([tool_call(json!("c1"), "rm", json!({}))])),
    );
    assert_eq!(o.calls[0].status, Denied);
    assert_eq!(o.calls[0].decided_by.as_deref(), Some("provider:allowlist"));
    assert_eq!(o.run_state, RunState::Running);
}

#[test]
fn an_agent_cannot_claim_an_unattended_origin_and_is_told() {
    let g = gate("hitl_approval:\n  tools: [bash]\n  non_interactive: allow\n");
    let r = response_with(
        json!([tool_call(
            json!("c1"),
            "bash",
            json!({"command": "git push"})
        )]),
        json!({"run_origin": "im"}),
    );
    let o = g.try_submit("t1", "r1", &r, Caller::Agent).unwrap();
    assert_eq!(
        o.calls[0].status, Pending,
        "the claim is ignored: the call still needs a human"
    );
    assert_eq!(o.notices[0].code, "warden.context_keys_dropped");
    assert!(o.notices[0].message.contains("run_origin"));
}

#[test]
fn a_malformed_call_is_denied_on_its_own() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(json!("a"), "bash", json!("rm -rf /")),
            tool_call(json!("b"), "read_file", json!({})),
        ])),
    );
    assert_eq!(
        statuses(&o.calls),
        owned(&[("bash", Denied), ("read_file", Run)])
    );
    assert_eq!(o.calls[0].reasons[0].code, "warden.invalid_tool_input");
}

#[test]
fn a_new_run_on_a_thread_with_a_pending_approval_is_refused_naming_the_request() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let paused = pause_git_push(&g);
    let err = g
        .try_submit(
            "t1",
            "r2",
            &response(json!([tool_call(json!("c9"), "read_file", json!({}))])),
            Caller::Agent,
        )
        .unwrap_err();
    assert_eq!((err.status(), err.code()), (409, "approval_pending"));
    let ApprovalError::ApprovalPending {
        approval_id,
        requests,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(Some(approval_id), paused.approval_id.as_ref());
    assert_eq!(requests[0].request_id, paused.requests[0].request_id);
    assert!(
        err.to_string().contains(&paused.requests[0].request_id),
        "{err}"
    );
    // Other threads are not affected.
    g.submit(
        "t2",
        "r1",
        &response(json!([tool_call(json!("c1"), "read_file", json!({}))])),
    );
}

#[test]
fn a_retried_submission_gets_the_same_answer_instead_of_a_conflict() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let r = response(json!([tool_call(
        json!("c1"),
        "bash",
        json!({"command": "git push"})
    )]));
    let first = g.submit("t1", "r1", &r);
    let again = g.submit("t1", "r1", &r);
    assert_eq!(again.approval_id, first.approval_id);
    assert_eq!(again.requests, first.requests);
    assert_eq!(again.calls, first.calls);
}

#[test]
fn runtime_only_keys_are_never_written_into_the_store() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let r = response_with(
        json!([tool_call(
            json!("c1"),
            "bash",
            json!({"command": "git push"})
        )]),
        json!({"channel_name": "slack-secret-channel", "disable_clarification": false, "user_id": "u-7"}),
    );
    let o = g.try_submit("t1", "r1", &r, Caller::Internal).unwrap();
    assert_eq!(o.run_state, RunState::WaitingForInput);
    let record = g
        .gate
        .store()
        .get(o.approval_id.as_deref().unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(record.context.channel_name, None);
    assert_eq!(record.context.disable_clarification, None);
    assert_eq!(
        record.context.user_id.as_deref(),
        Some("u-7"),
        "the rest of the context is kept"
    );
    let text = g.stored_text();
    assert!(!text.contains("slack-secret-channel") && !text.contains("channel_name"));
    assert!(!text.contains("disable_clarification"));
}

#[test]
fn an_unknown_run_origin_from_an_internal_caller_is_refused() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let r = response_with(json!([]), json!({"run_origin": "carrier_pigeon"}));
    let err = g.try_submit("t1", "r1", &r, Caller::Internal).unwrap_err();
    assert_eq!((err.status(), err.code()), (400, "invalid_request"));
    assert!(err.to_string().contains("context.run_origin"), "{err}");
}

#[test]
fn a_context_that_names_another_thread_than_the_route_is_refused() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let r = response_with(json!([]), json!({"thread_id": "other"}));
    let err = g.try_submit("t1", "r1", &r, Caller::Agent).unwrap_err();
    assert_eq!((err.status(), err.code()), (400, "invalid_request"));
    assert!(err.to_string().contains("context.thread_id"), "{err}");
}

#[test]
fn a_response_body_with_an_unknown_key_is_refused_naming_it() {
    let err = warden_approval::ModelResponse::from_json(
        br#"{"message": {"tool_calls": [{"id": "a", "name": "bash", "argz": {}}]}}"#,
    )
    .unwrap_err();
    assert_eq!((err.status(), err.code()), (400, "invalid_request"));
    let text = err.to_string();
    assert!(
        text.contains("message.tool_calls[0]") && text.contains("argz"),
        "{text}"
    );
}

#[test]
fn a_misspelled_approval_rule_is_refused_at_load_naming_it() {
    let err = Config::parse(
        "hitl_approval:\n  tools: [read_file, 'Bsh(git push *)']\n",
        "w.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hitl_approval.tools[1]") && err.contains("Bsh"),
        "{err}"
    );
}

#[test]
fn an_approval_rule_pauses_only_the_calls_it_matches() {
    let g = gate("hitl_approval:\n  tools: ['Bash(git push *)']\n");
    let o = g.submit(
        "t1",
        "r1",
        &response(json!([
            tool_call(json!("a"), "bash", json!({"command": "git status"})),
            tool_call(
                json!("b"),
                "bash",
                json!({"command": "git add . && git push origin main"})
            ),
        ])),
    );
    assert_eq!(
        statuses(&o.calls),
        owned(&[("bash", Run), ("bash", Pending)])
    );
}

#[test]
fn an_unknown_non_interactive_value_is_refused_at_load() {
    let err = Config::parse(
        "hitl_approval:\n  non_interactive: ask\n",
        "w.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("hitl_approval.non_interactive"), "{err}");
}

#[test]
fn durability_defaults_to_normal_and_accepts_full() {
    use warden_approval::{Durability, StoreConfig};
    let default = StoreConfig::parse("{}", "w.yaml").unwrap();
    assert_eq!(default.durability, Durability::Normal);
    let full = StoreConfig::parse("hitl_approval:\n  durability: full\n", "w.yaml").unwrap();
    assert_eq!(full.durability, Durability::Full);
    let err = StoreConfig::parse("hitl_approval:\n  durability: eventually\n", "w.yaml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("hitl_approval.durability"), "{err}");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn other_entry_points_can_check_that_a_thread_waits_for_a_human() {
    let g = gate(BASH_NEEDS_APPROVAL);
    g.gate.check_thread(LOCAL_PRINCIPAL, "t1").unwrap();
    pause_git_push(&g);
    assert_eq!(
        g.gate
            .check_thread(LOCAL_PRINCIPAL, "t1")
            .unwrap_err()
            .code(),
        "approval_pending"
    );
    g.gate.check_thread(LOCAL_PRINCIPAL, "t2").unwrap();
}

/// A lone call to read a file, on `thread`.
fn read_file_on(thread: Option<&str>) -> warden::ToolCall {
    let mut call = warden::ToolCall::new("read_file", json!({"path": "a.txt"}));
    call.context.thread_id = thread.map(str::to_string);
    call
}

#[test]
fn a_call_on_a_thread_waiting_for_a_human_is_never_judged_at_once() {
    let g = gate(BASH_NEEDS_APPROVAL);
    pause_git_push(&g);
    let call = read_file_on(Some("t1"));
    assert!(
        g.gate
            .evaluate_at_once(LOCAL_PRINCIPAL, &call, Caller::Agent)
            .is_none(),
        "a paused thread must take the long way, which denies it"
    );
}

#[test]
fn a_call_that_names_no_thread_may_be_judged_at_once() {
    let g = gate(BASH_NEEDS_APPROVAL);
    pause_git_push(&g);
    let call = read_file_on(None);
    let judged = g
        .gate
        .evaluate_at_once(LOCAL_PRINCIPAL, &call, Caller::Agent)
        .expect("nothing to ask the store");
    assert_eq!(judged.unwrap().0.verdict, warden::Verdict::Allow);
}

sqlite_only! {
    #[test]
    fn a_call_on_a_free_thread_of_a_sqlite_store_may_be_judged_at_once() {
        let g = gate(BASH_NEEDS_APPROVAL);
        pause_git_push(&g);
        let mut call = read_file_on(Some("t2"));
        let judged = g
            .gate
            .evaluate_at_once(LOCAL_PRINCIPAL, &call, Caller::Agent)
            .expect("the store answers at once that t2 is free");
        assert_eq!(judged.unwrap().0.verdict, warden::Verdict::Allow);
        // The same thread of another principal is free too.
        call.context.thread_id = Some("t1".into());
        assert!(
            g.gate
                .evaluate_at_once("someone-else", &call, Caller::Agent)
                .is_some()
        );
    }
}

#[test]
fn a_lone_call_on_a_thread_waiting_for_a_human_is_denied_naming_the_pause() {
    let g = gate(BASH_NEEDS_APPROVAL);
    let outcome = pause_git_push(&g);
    let mut call = read_file_on(Some("t1"));
    let e = g
        .gate
        .evaluate(LOCAL_PRINCIPAL, &call, Caller::Agent)
        .unwrap();
    assert_eq!(e.verdict, warden::Verdict::Deny);
    assert_eq!(e.reasons[0].code, "warden.approval_pending");
    assert_eq!(e.decided_by.as_deref(), Some(warden::INTAKE_STAGE));
    assert_eq!(e.metadata["approval_id"], json!(outcome.approval_id));
    // Another thread, and another principal's thread, are judged.
    call.context.thread_id = Some("t2".into());
    let e = g
        .gate
        .evaluate(LOCAL_PRINCIPAL, &call, Caller::Agent)
        .unwrap();
    assert_eq!(e.verdict, warden::Verdict::Allow, "{e:?}");
    call.context.thread_id = Some("t1".into());
    let e = g
        .gate
        .evaluate("someone-else", &call, Caller::Agent)
        .unwrap();
    assert_eq!(e.verdict, warden::Verdict::Allow, "{e:?}");
}
