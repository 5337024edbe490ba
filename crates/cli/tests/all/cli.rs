//! The `warden` binary, driven as an operator or a harness would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common::*;
use serde_json::Value;

fn warden(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        // The binary may exit (on a config error) before reading its input.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write_config(dir: &tempfile::TempDir, yaml: &str) -> String {
    let path = dir.path().join("warden.yaml");
    std::fs::write(&path, yaml).unwrap();
    path.display().to_string()
}

#[test]
fn eval_prints_the_decision_as_json_and_exits_zero_on_a_deny() {
    let out = warden(
        &[
            "eval",
            "--config",
            "examples/warden.yaml",
            "--request",
            "examples/requests/not-in-allowlist.json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = stdout_json(&out);
    assert_eq!(d["verdict"], "deny");
    assert_eq!(d["allow"], false);
    assert_eq!(d["reasons"][0]["code"], "oap.tool_not_allowed");
    assert!(d["policy_id"].is_null());
    assert!(d["metadata"].is_object());
    assert!(d["duration_us"].is_u64());
    assert_eq!(d["interaction_mode"], "interactive");
}

#[test]
fn eval_reads_the_request_from_stdin_by_default() {
    let out = warden(
        &["eval"],
        Some(r#"{"tool_name": "bash", "tool_input": {"command": "ls"}}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["verdict"], "allow");
}

#[test]
fn eval_with_a_malformed_request_exits_two_naming_the_problem() {
    let out = warden(
        &["eval"],
        Some(r#"{"tool_name": "bash", "tool_inptu": {}}"#),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("tool_inptu"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn eval_of_arguments_the_model_got_wrong_prints_a_deny_naming_the_cause() {
    let out = warden(
        &["eval"],
        Some(r#"{"tool_name": "bash", "tool_input": []}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = stdout_json(&out);
    assert_eq!(d["verdict"], "deny");
    assert_eq!(d["reasons"][0]["code"], "warden.invalid_tool_input");
    assert_eq!(d["decided_by"], "intake");
}

#[test]
fn eval_with_an_unknown_config_key_exits_two_naming_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(&dir, "guardrails:\n  fail_close: true\n");
    let out = warden(
        &["eval", "--config", &config],
        Some(r#"{"tool_name": "bash"}"#),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("guardrails") && err.contains("fail_close"),
        "{err}"
    );
}

#[test]
fn eval_with_an_unknown_mode_from_an_internal_caller_exits_two() {
    let out = warden(
        &["eval", "--internal"],
        Some(r#"{"tool_name": "bash", "context": {"interaction_mode": "sometimes"}}"#),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("interactive, autonomous, webhook, scheduled"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_prints_what_it_loaded() {
    let out = warden(&["check", "--config", "examples/warden.yaml"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("allowlist") && text.contains("sha256:") && text.contains("timeout_ms="),
        "{text}"
    );
}

#[test]
fn check_fails_when_a_provider_cannot_be_configured() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "guardrails:\n  providers:\n    - name: broken\n      wasm: {}\n      config: {{behaviour: refuse_config}}\n",
        guest("hostile").display()
    );
    let out = warden(&["check", "--config", &write_config(&dir, &yaml)], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("warden.configure_failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_fails_on_a_digest_mismatch_printing_both_digests() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "guardrails:\n  providers:\n    - {{name: a, wasm: \"{}\", sha256: \"{}\"}}\n",
        guest("allowlist").display(),
        "a".repeat(64)
    );
    let out = warden(&["check", "--config", &write_config(&dir, &yaml)], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("expected aaaa") && err.contains("actual "),
        "{err}"
    );
}

#[test]
fn demo_judges_example_calls_showing_allow_and_deny() {
    let out = warden(&["demo"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ALLOW") && text.contains("DENY"), "{text}");
    assert!(text.contains("oap.tool_not_allowed"), "{text}");
}

#[test]
fn an_unknown_subcommand_is_a_usage_error() {
    assert_eq!(warden(&["judge"], None).status.code(), Some(2));
}

#[test]
fn interaction_prints_the_resolved_policy_and_guidance() {
    let out = warden(
        &["interaction", "--internal"],
        Some(r#"{"non_interactive": true}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let p = stdout_json(&out);
    assert_eq!(p["mode"], "scheduled");
    assert_eq!(p["can_ask_human"], false);
    assert_eq!(
        p["withheld_tools"],
        serde_json::json!(["ask_clarification"])
    );
    assert_eq!(p["approval_listed_tools"], "deny");
    assert_eq!(p["network_requests"], "deny");
    assert!(p["guidance"].as_str().unwrap().contains("BLOCKED"));
}

#[test]
fn interaction_refuses_an_unknown_mode_from_an_internal_caller() {
    let out = warden(
        &["interaction", "--internal"],
        Some(r#"{"interaction_mode": "batch"}"#),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("expected one of"), "{}", stderr(&out));
}
