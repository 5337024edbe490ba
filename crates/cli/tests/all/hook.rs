//! `warden hook claude-code`, the real binary fed Claude Code's documented
//! `PreToolUse` payloads on stdin: every tool's shape, a malformed payload and an
//! unreachable daemon. Whatever happens, it prints a hook answer and exits 0 (a
//! crashing hook would let the call through in Claude Code).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::daemon::*;
use crate::common::repo_root;
use serde_json::{Value, json};

/// The example configuration the docs point at.
fn example() -> String {
    repo_root()
        .join("examples/claude-code/warden.yaml")
        .display()
        .to_string()
}

/// Runs the hook with `args` on `payload`; the exit code must be 0 and stdout
/// one hook answer. Returns (permissionDecision, permissionDecisionReason).
fn hook(args: &[&str], payload: &str) -> (String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["hook", "claude-code"])
        .args(args)
        .env("WARDEN_TOKEN", AGENT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a hook answer ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let decision = &answer["hookSpecificOutput"];
    assert_eq!(decision["hookEventName"], "PreToolUse");
    (
        decision["permissionDecision"].as_str().unwrap().to_string(),
        decision["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

/// A payload as Claude Code sends it.
fn payload(tool_name: &str, tool_input: Value) -> String {
    json!({
        "session_id": "abc123",
        "transcript_path": "/home/dev/.claude/projects/repo/abc123.jsonl",
        "cwd": "/work/repo",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC"
    })
    .to_string()
}

fn judged(tool_name: &str, tool_input: Value) -> (String, String) {
    hook(&["--config", &example()], &payload(tool_name, tool_input))
}

#[test]
fn bash_allowed_by_a_rule_is_allowed() {
    let (decision, _) = judged(
        "Bash",
        json!({"command": "git status", "description": "Show the status", "timeout": 120000}),
    );
    assert_eq!(decision, "allow");
}

#[test]
fn bash_under_an_ask_rule_asks_the_user() {
    let (decision, reason) = judged("Bash", json!({"command": "git push origin main"}));
    assert_eq!(decision, "ask");
    assert!(reason.contains("git push"), "{reason}");
}

#[test]
fn with_on_ask_deny_an_ask_is_a_deny_naming_the_ask() {
    let payload = payload("Bash", json!({"command": "git push origin main"}));
    let (decision, reason) = hook(&["--config", &example(), "--on-ask", "deny"], &payload);
    assert_eq!(decision, "deny");
    assert!(
        reason.contains("asks a human") && reason.contains("git push"),
        "{reason}"
    );
}

#[test]
fn with_on_ask_deny_an_allow_stays_an_allow() {
    let payload = payload("Bash", json!({"command": "git status"}));
    let (decision, _) = hook(&["--config", &example(), "--on-ask", "deny"], &payload);
    assert_eq!(decision, "allow");
}

#[test]
fn bash_under_a_deny_rule_is_denied_without_inviting_a_workaround() {
    let (decision, reason) = judged("Bash", json!({"command": "rm -rf /tmp/build"}));
    assert_eq!(decision, "deny");
    assert!(reason.contains("perm.rule_deny"), "{reason}");
    assert!(reason.contains("Do not try to reach the same result another way"));
}

#[test]
fn read_of_a_key_is_denied() {
    let (decision, reason) = judged(
        "Read",
        json!({"file_path": "/home/dev/.ssh/id_ed25519", "offset": 1, "limit": 20}),
    );
    assert_eq!(decision, "deny");
    assert!(reason.contains("perm.sensitive_path"), "{reason}");
}

#[test]
fn read_of_a_project_file_is_allowed() {
    assert_eq!(
        judged("Read", json!({"file_path": "/work/repo/README.md"})).0,
        "allow"
    );
}

#[test]
fn edit_inside_the_allowed_tree_is_allowed_and_outside_asks() {
    let edit = |path: &str| {
        judged(
            "Edit",
            json!({"file_path": path, "old_string": "a", "new_string": "b", "replace_all": false}),
        )
        .0
    };
    assert_eq!(edit("/work/repo/src/main.rs"), "allow");
    assert_eq!(edit("/work/repo/Cargo.toml"), "ask");
}

#[test]
fn multi_edit_is_judged_as_an_edit() {
    let (decision, _) = judged(
        "MultiEdit",
        json!({"file_path": "/work/repo/.env", "edits": [{"old_string": "a", "new_string": "b"}]}),
    );
    assert_eq!(decision, "deny");
}

#[test]
fn write_outside_the_rules_asks() {
    let (decision, _) = judged(
        "Write",
        json!({"file_path": "/work/repo/notes.md", "content": "hello"}),
    );
    assert_eq!(decision, "ask");
}

#[test]
fn web_fetch_of_an_allowed_domain_is_allowed_and_another_asks() {
    let fetch = |url: &str| judged("WebFetch", json!({"url": url, "prompt": "summarise"})).0;
    assert_eq!(fetch("https://docs.rs/serde"), "allow");
    assert_eq!(fetch("https://example.net/"), "ask");
}

#[test]
fn read_only_search_tools_are_allowed() {
    assert_eq!(
        judged("Glob", json!({"pattern": "**/*.rs", "path": "/work/repo"})).0,
        "allow"
    );
    assert_eq!(
        judged("Grep", json!({"pattern": "TODO", "path": "/work/repo/src"})).0,
        "allow"
    );
    assert_eq!(
        judged("WebSearch", json!({"query": "rust serde"})).0,
        "allow"
    );
}

#[test]
fn mcp_tools_follow_their_rules() {
    assert_eq!(
        judged(
            "mcp__github__get_issue",
            json!({"owner": "o", "repo": "r", "issue_number": 1})
        )
        .0,
        "allow"
    );
    assert_eq!(
        judged(
            "mcp__github__delete_repo",
            json!({"owner": "o", "repo": "r"})
        )
        .0,
        "deny"
    );
}

#[test]
fn a_payload_that_is_not_json_is_a_deny_saying_why() {
    let (decision, reason) = hook(&["--config", &example()], "{\"tool_name\": ");
    assert_eq!(decision, "deny");
    assert!(reason.contains("not a PreToolUse payload"), "{reason}");
}

#[test]
fn a_payload_without_tool_input_is_a_deny_naming_the_field() {
    let (decision, reason) = hook(
        &["--config", &example()],
        r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash"}"#,
    );
    assert_eq!(decision, "deny");
    assert!(reason.contains("tool_input"), "{reason}");
}

#[test]
fn a_hook_wired_to_another_event_is_a_deny_naming_it() {
    let other = payload("Bash", json!({"command": "ls"})).replace("PreToolUse", "PostToolUse");
    let (decision, reason) = hook(&["--config", &example()], &other);
    assert_eq!(decision, "deny");
    assert!(reason.contains("PostToolUse"), "{reason}");
}

#[test]
fn an_unreadable_config_is_a_deny() {
    let (decision, reason) = judged_with(&["--config", "/nonexistent/warden.yaml"]);
    assert_eq!(decision, "deny");
    assert!(reason.contains("/nonexistent/warden.yaml"), "{reason}");
}

fn judged_with(args: &[&str]) -> (String, String) {
    hook(args, &payload("Bash", json!({"command": "git status"})))
}

#[test]
fn an_unreachable_daemon_is_a_deny() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (decision, reason) = judged_with(&["--url", &format!("http://127.0.0.1:{port}")]);
    assert_eq!(decision, "deny");
    assert!(reason.contains("cannot reach warden"), "{reason}");
}

#[test]
fn through_the_daemon_the_decision_is_the_daemons() {
    let daemon = Daemon::start(&format!(
        "permissions:\n  mode: default\n  allow: [\"Bash(git status*)\"]\n  ask: [\"Bash(git push *)\"]\n{}",
        server_block(false)
    ));
    let url = daemon.url.clone();
    let ask = hook(
        &["--url", &url],
        &payload("Bash", json!({"command": "git push origin main"})),
    );
    assert_eq!(ask.0, "ask", "{}", ask.1);
    assert_eq!(judged_with(&["--url", &url]).0, "allow");
    // A token the daemon refuses is a deny, not a pass.
    let refused = hook(
        &[
            "--url",
            &url,
            "--token-env",
            "WARDEN_NO_SUCH_TOKEN_VARIABLE",
        ],
        &payload("Bash", json!({"command": "git status"})),
    );
    assert_eq!(refused.0, "deny", "{}", refused.1);
}

#[test]
fn the_documented_settings_snippet_is_valid_json_naming_the_hook() {
    let doc = std::fs::read_to_string(repo_root().join("docs/claude-code.md")).unwrap();
    let snippet = doc
        .split("```json")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/claude-code.md has a json block");
    let settings: Value = serde_json::from_str(snippet).unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.contains("warden hook claude-code"), "{command}");
}

// --- the shipped example, with `matcher: "*"` ------------------------------------

#[test]
fn claude_codes_own_housekeeping_tools_are_allowed_by_the_example() {
    for (tool, input) in [
        (
            "TodoWrite",
            json!({"todos": [{"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"}]}),
        ),
        (
            "Task",
            json!({"description": "Find the parser", "prompt": "Where is the shell parser?", "subagent_type": "general-purpose"}),
        ),
        ("ExitPlanMode", json!({"plan": "1. Edit src/lib.rs"})),
        ("BashOutput", json!({"bash_id": "bash_1"})),
        ("KillShell", json!({"shell_id": "bash_1"})),
    ] {
        let (decision, reason) = judged(tool, input);
        assert_eq!(decision, "allow", "{tool}: {reason}");
    }
}

#[test]
fn a_notebook_edit_is_judged_as_an_edit_of_its_notebook() {
    let edit = |path: &str| {
        judged(
            "NotebookEdit",
            json!({"notebook_path": path, "new_source": "print(1)", "cell_id": "c1"}),
        )
        .0
    };
    assert_eq!(edit("/work/repo/src/analysis.ipynb"), "allow");
    assert_eq!(edit("/work/repo/analysis.ipynb"), "ask");
    assert_eq!(edit("/work/repo/.env"), "deny");
}

#[test]
fn reading_an_env_template_is_allowed_by_the_example() {
    for file in [".env.example", ".env.sample"] {
        let (decision, reason) = judged("Read", json!({"file_path": format!("/work/repo/{file}")}));
        assert_eq!(decision, "allow", "{file}: {reason}");
    }
}

#[test]
fn real_env_files_stay_denied_by_the_example() {
    for file in [".env", ".env.local", ".env.production", ".env.example.bak"] {
        let (decision, reason) = judged("Read", json!({"file_path": format!("/work/repo/{file}")}));
        assert_eq!(decision, "deny", "{file}: {reason}");
        assert!(reason.contains("perm.sensitive_path"), "{reason}");
    }
    // Writing a template could plant what a later copy picks up.
    let (decision, _) = judged(
        "Write",
        json!({"file_path": "/work/repo/.env.example", "content": "TOKEN=x"}),
    );
    assert_eq!(decision, "deny");
}
