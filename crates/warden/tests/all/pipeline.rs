//! One call through the providers: order, the strictest verdict, the end of the
//! chain at a deny, attribution and the interaction mode.

use crate::common::*;
use serde_json::json;
use warden::{Caller, ToolCall, Verdict};

fn scripted(providers: &[(&str, &str)]) -> warden::Warden {
    let mut yaml = String::from("guardrails:\n  providers:\n");
    for (name, verdict) in providers {
        yaml.push_str(&format!(
            "    - name: {name}\n      wasm: hostile.wasm\n      config: {{verdict: {verdict}, code: fixture.{name}}}\n"
        ));
    }
    warden(&yaml)
}

#[test]
fn the_strictest_verdict_wins() {
    let e = eval(
        &scripted(&[("a", "allow"), ("b", "ask"), ("c", "allow")]),
        "bash",
        cmd("ls"),
    );
    assert_eq!(e.verdict, Verdict::Ask);
    assert_eq!(codes(&e), ["fixture.b"]);
    assert_eq!(e.decided_by.as_deref(), Some("provider:b"));
    assert!(!e.allow);
}

#[test]
fn a_deny_ends_the_chain() {
    let e = eval(
        &scripted(&[("a", "allow"), ("b", "deny"), ("c", "allow")]),
        "bash",
        cmd("ls"),
    );
    assert_eq!(e.verdict, Verdict::Deny);
    let ran: Vec<_> = e.stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(ran, ["permissions", "provider:a", "provider:b"]);
}

#[test]
fn every_provider_runs_in_order_when_none_denies() {
    let e = eval(
        &scripted(&[("a", "allow"), ("b", "ask"), ("c", "allow")]),
        "bash",
        cmd("ls"),
    );
    let ran: Vec<_> = e.stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(
        ran,
        ["permissions", "provider:a", "provider:b", "provider:c"]
    );
}

#[test]
fn an_ask_from_one_provider_and_allows_from_the_rest_is_an_ask() {
    let e = eval(
        &scripted(&[("a", "ask"), ("b", "allow")]),
        "bash",
        cmd("ls"),
    );
    assert_eq!(e.verdict, Verdict::Ask);
}

#[test]
fn an_ask_in_a_run_that_cannot_ask_a_human_is_a_deny_that_says_why() {
    let w = scripted(&[("a", "ask")]);
    for (mode, subagent) in [
        ("scheduled", false),
        ("webhook", false),
        ("autonomous", false),
        ("interactive", true),
    ] {
        let mut c = call("bash", cmd("ls"));
        c.context.interaction_mode = Some(mode.into());
        c.context.is_subagent = subagent;
        let e = w.evaluate(&c, Caller::Internal).unwrap();
        assert_eq!(e.verdict, Verdict::Deny, "{mode} subagent={subagent}");
        assert_eq!(e.reasons[0].code, "warden.ask_unavailable");
        assert_eq!(e.reasons[1].code, "fixture.a", "the cause stays visible");
    }
}

#[test]
fn an_ask_stays_an_ask_where_a_human_can_answer() {
    let e = eval(&scripted(&[("a", "ask")]), "bash", cmd("ls"));
    assert_eq!(e.verdict, Verdict::Ask);
}

#[test]
fn an_ask_from_a_harness_that_cannot_resume_is_a_deny() {
    let w = scripted(&[("a", "ask")]);
    let mut c = call("bash", cmd("ls"));
    c.context.can_resume = Some(false);
    assert_eq!(
        w.evaluate(&c, Caller::Agent).unwrap().verdict,
        Verdict::Deny
    );
}

#[test]
fn disabled_guardrails_run_no_provider_but_the_native_core_still_runs() {
    let w = warden(
        "guardrails:\n  enabled: false\n  providers:\n    - {name: a, wasm: hostile.wasm, config: {verdict: deny}}\n",
    );
    let e = eval(&w, "bash", cmd("ls"));
    assert!(
        e.stages.iter().all(|s| !s.stage.starts_with("provider:")),
        "{e:?}"
    );
}

#[test]
fn the_passport_is_the_agent_the_call_is_attributed_to() {
    let w = warden(
        "guardrails:\n  passport: ap_0042\n  providers:\n    - {name: a, wasm: hostile.wasm}\n",
    );
    let mut c = call("bash", cmd("ls"));
    c.context.agent_id = Some("someone-else".into());
    c.tool_call_id = Some("call_7".into());
    let e = w.evaluate(&c, Caller::Agent).unwrap();
    assert_eq!(e.metadata["agent_id"], "ap_0042");
    assert_eq!(e.metadata["tool_call_id"], "call_7");
}

#[test]
fn an_internal_caller_sets_the_mode_the_providers_see() {
    let w = scripted(&[("a", "allow")]);
    let mut c = call("bash", cmd("ls"));
    c.context.interaction_mode = Some("scheduled".into());
    let e = w.evaluate(&c, Caller::Internal).unwrap();
    assert_eq!(e.metadata["interaction_mode"], "scheduled");
    assert_eq!(e.interaction_mode.as_str(), "scheduled");
}

#[test]
fn an_agent_callers_internal_keys_are_dropped_and_the_reasons_say_so() {
    let w = scripted(&[("a", "allow")]);
    let mut c = call("bash", cmd("ls"));
    c.context.non_interactive = Some(true);
    let e = w.evaluate(&c, Caller::Agent).unwrap();
    assert_eq!(e.metadata["interaction_mode"], "interactive");
    let dropped = e
        .reasons
        .iter()
        .find(|r| r.code == "warden.context_keys_dropped")
        .unwrap();
    assert!(dropped.message.contains("non_interactive"), "{dropped:?}");
}

#[test]
fn an_unknown_mode_from_an_internal_caller_refuses_the_request() {
    let w = scripted(&[("a", "allow")]);
    let mut c = call("bash", cmd("ls"));
    c.context.interaction_mode = Some("headless".into());
    let err = w.evaluate(&c, Caller::Internal).unwrap_err().to_string();
    assert!(
        err.contains("headless") && err.contains("interactive, autonomous, webhook, scheduled"),
        "{err}"
    );
}

#[test]
fn a_call_the_model_malformed_is_denied_before_any_stage_judges_it() {
    let w = scripted(&[("a", "allow")]);
    let bad = ToolCall::new("", json!({}));
    let e = w.evaluate(&bad, Caller::Agent).unwrap();
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.reasons[0].code, "oap.invalid_tool_name");
    assert_eq!(e.decided_by.as_deref(), Some("intake"));
    assert_eq!(e.stages.len(), 1, "no provider ran: {:?}", e.stages);
}

#[test]
fn each_evaluation_names_the_provider_set_that_judged_it() {
    let a = scripted(&[("a", "allow")]);
    let b = scripted(&[("a", "allow")]);
    let ga = eval(&a, "bash", cmd("ls")).generation;
    let gb = eval(&b, "bash", cmd("ls")).generation;
    assert_ne!(ga, gb);
}

#[test]
fn a_clarification_question_in_an_unattended_run_is_answered_with_guidance() {
    let w = scripted(&[("a", "allow")]);
    let mut c = call("ask_clarification", json!({"question": "Which branch?"}));
    c.context.interaction_mode = Some("scheduled".into());
    let e = w.evaluate(&c, Caller::Internal).unwrap();
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.reasons[0].code, "warden.clarification_unavailable");
    let message = &e.reasons[0].message;
    assert!(
        message.contains("assumptions") && message.contains("BLOCKED"),
        "{message}"
    );
    assert!(!message.contains("carry out"), "{message}");
}

#[test]
fn a_clarification_question_in_an_interactive_run_goes_through() {
    let e = eval(
        &scripted(&[("a", "allow")]),
        "ask_clarification",
        json!({"question": "Which branch?"}),
    );
    assert_eq!(e.verdict, Verdict::Allow);
}
