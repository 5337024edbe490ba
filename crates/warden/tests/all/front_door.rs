//! The library's documented entry point, `Warden::evaluate` (the README, the
//! crate docs, `examples/embed`), gives a lone call every check the daemon
//! gives it, the approval list included: a listed tool asks where a human can
//! be asked and is denied where nobody can, and is never simply allowed.

use crate::common::*;
use serde_json::json;
use warden::{Caller, Config, ToolCall, Verdict, Warden};

/// The embedded default policy, as the README loads it, with `tools` listed
/// under `hitl_approval`.
fn embedded_listing(tools: &[&str]) -> Warden {
    let mut config = Config::embedded();
    config.hitl_approval.tools = tools.iter().map(|t| t.to_string()).collect();
    Warden::new(&config).expect("the embedded policy loads")
}

fn git_status() -> ToolCall {
    ToolCall::new("bash", json!({"command": "git status"}))
}

#[test]
fn the_readme_snippet_asks_for_a_listed_tool() {
    // Unlisted, the embedded policy allows the call: the ask is the list's.
    let unlisted = embedded_listing(&[]);
    let e = unlisted.evaluate(&git_status(), Caller::Agent).unwrap();
    assert_eq!(e.verdict, Verdict::Allow);

    let warden = embedded_listing(&["bash"]);
    let e = warden.evaluate(&git_status(), Caller::Agent).unwrap();
    assert_eq!(e.verdict, Verdict::Ask);
    assert!(!e.allow);
    assert_eq!(codes(&e), ["warden.approval_required"]);
    assert_eq!(e.decided_by.as_deref(), Some(warden::APPROVAL_STAGE));
}

#[test]
fn a_listed_tool_is_denied_where_nobody_can_be_asked() {
    let warden = embedded_listing(&["bash"]);
    let mut subagent = git_status();
    subagent.context.is_subagent = true;
    let e = warden.evaluate(&subagent, Caller::Agent).unwrap();
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(codes(&e), ["warden.approval_unavailable"]);

    let mut scheduled = git_status();
    scheduled.context.interaction_mode = Some("scheduled".into());
    let e = warden.evaluate(&scheduled, Caller::Internal).unwrap();
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(codes(&e), ["warden.approval_unavailable"]);
}

#[test]
#[allow(deprecated)]
fn evaluate_alone_is_the_same_call_as_evaluate() {
    let warden = embedded_listing(&["bash"]);
    let alone = warden.evaluate_alone(&git_status(), Caller::Agent).unwrap();
    let front = warden.evaluate(&git_status(), Caller::Agent).unwrap();
    assert_eq!(alone.verdict, front.verdict);
    assert_eq!(codes(&alone), codes(&front));
}

/// Every tool allowed by the mode; `tools` listed under `hitl_approval`.
fn full_auto_listing(tools: &str) -> Warden {
    warden(&format!(
        "hitl_approval:\n  tools: {tools}\npermissions:\n  mode: full_auto\n"
    ))
}

#[test]
fn a_star_in_the_approval_list_matches_names_with_slashes() {
    let warden = full_auto_listing("[\"*\"]");
    for name in ["foo", "foo/bar", "mcp__x__a/b", "/", "a//b/"] {
        let e = eval(&warden, name, json!({}));
        assert_eq!(e.verdict, Verdict::Ask, "{name}: {:?}", codes(&e));
        assert_eq!(codes(&e), ["warden.approval_required"], "{name}");
    }
}

#[test]
fn a_name_glob_in_the_approval_list_spans_slashes_and_ignores_case() {
    let warden = full_auto_listing("[\"MCP__X__*\", \"tools/?\"]");
    for name in ["mcp__x__a/b", "mcp__X__/", "tools//", "TOOLS/a"] {
        assert_eq!(
            eval(&warden, name, json!({})).verdict,
            Verdict::Ask,
            "{name}"
        );
    }
    for name in ["mcp__y__a/b", "tools/ab", "xmcp__x__a"] {
        assert_eq!(
            eval(&warden, name, json!({})).verdict,
            Verdict::Allow,
            "{name}"
        );
    }
}
