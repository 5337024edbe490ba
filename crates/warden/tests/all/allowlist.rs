//! The allowlist provider behaves exactly like DeerFlow's AllowlistProvider.

use crate::common::*;
use serde_json::json;
use warden::Verdict;

fn allowlist(config: serde_json::Value) -> warden::Warden {
    warden(&format!(
        "guardrails:\n  providers:\n    - name: allowlist\n      wasm: \"builtin:allowlist\"\n      config: {config}\n"
    ))
}

#[test]
fn without_lists_every_tool_is_allowed() {
    let e = eval(&allowlist(json!({})), "bash", cmd("ls"));
    assert_eq!(e.verdict, Verdict::Allow);
    assert_eq!(codes(&e), ["oap.allowed"]);
}

#[test]
fn a_denied_tool_is_denied() {
    let e = eval(
        &allowlist(json!({"denied_tools": ["bash"]})),
        "bash",
        empty(),
    );
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(codes(&e), ["oap.tool_not_allowed"]);
    assert_eq!(e.reasons[0].message, "tool 'bash' is denied");
}

#[test]
fn a_tool_missing_from_the_allowlist_is_denied() {
    let e = eval(
        &allowlist(json!({"allowed_tools": ["web_search"]})),
        "bash",
        empty(),
    );
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.reasons[0].message, "tool 'bash' not in allowlist");
}

#[test]
fn a_tool_on_the_allowlist_is_allowed() {
    let e = eval(
        &allowlist(json!({"allowed_tools": ["web_search"]})),
        "web_search",
        empty(),
    );
    assert_eq!(e.verdict, Verdict::Allow);
}

#[test]
fn an_empty_allowlist_denies_everything() {
    let warden = allowlist(json!({"allowed_tools": []}));
    for tool in ["bash", "read_file", "web_search"] {
        assert_eq!(
            eval(&warden, tool, empty()).verdict,
            Verdict::Deny,
            "{tool}"
        );
    }
}

#[test]
fn a_tool_on_both_lists_is_denied_by_the_denylist() {
    let e = eval(
        &allowlist(json!({"allowed_tools": ["bash"], "denied_tools": ["bash"]})),
        "bash",
        empty(),
    );
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.reasons[0].message, "tool 'bash' is denied");
}

#[test]
fn tool_names_match_exactly() {
    let warden = allowlist(json!({"allowed_tools": ["bash"]}));
    for tool in ["Bash", "bash2", "bas"] {
        assert_eq!(
            eval(&warden, tool, empty()).verdict,
            Verdict::Deny,
            "{tool}"
        );
    }
}
