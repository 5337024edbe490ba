//! `warden mcp stdio`, driven as an MCP client drives it: its arguments, and a
//! session in front of `cat`, a server that sends back whatever reaches it, so
//! what Warden forwards is seen and what it keeps from the server is not.
//! (The real servers and clients are in tests/mcp, run by scripts/test.)

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn warden_mcp(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["mcp", "stdio"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The binary may exit (on a usage error) before reading its input.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn policy(dir: &tempfile::TempDir) -> String {
    let path = dir.path().join("warden.yaml");
    std::fs::write(
        &path,
        "permissions:\n  mode: full_auto\n  deny: [\"mcp__echo__drop_table\"]\n",
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn call(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {"x": 1}}})
    .to_string()
}

#[test]
fn a_denied_call_is_answered_by_warden_and_never_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let config = policy(&dir);
    let input = format!("{}\n{}\n", call(1, "drop_table"), call(2, "select"));
    let out = warden_mcp(
        &["--config", &config, "--server-name", "echo", "--", "cat"],
        &input,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = lines(&out);
    // Warden's denial of call 1, then call 2 as `cat` sent it back: call 1 never reached it.
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[0]["result"]["isError"], true);
    assert_eq!(
        lines[0]["result"]["structuredContent"]["code"],
        "perm.rule_deny"
    );
    assert_eq!(lines[1]["method"], "tools/call");
    assert_eq!(lines[1]["params"]["name"], "select");
}

#[test]
fn the_proxy_exits_with_the_servers_status() {
    let dir = tempfile::tempdir().unwrap();
    let config = policy(&dir);
    let out = warden_mcp(&["--config", &config, "--", "sh", "-c", "exit 7"], "");
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
}

#[test]
fn a_policy_is_required() {
    let out = warden_mcp(&["--", "cat"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--daemon"), "{}", stderr(&out));
}

#[test]
fn a_server_name_that_would_blur_the_tool_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = policy(&dir);
    let out = warden_mcp(
        &["--config", &config, "--server-name", "a__b", "--", "cat"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--server-name 'a__b'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unset_token_variable_is_refused_before_the_server_starts() {
    let out = warden_mcp(
        &[
            "--daemon",
            "http://127.0.0.1:9",
            "--token-env",
            "WARDEN_MCP_TEST_UNSET_TOKEN",
            "--",
            "cat",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("WARDEN_MCP_TEST_UNSET_TOKEN"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_server_that_cannot_start_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = policy(&dir);
    let out = warden_mcp(
        &[
            "--config",
            &config,
            "--server-name",
            "x",
            "--",
            "/nonexistent/server",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent/server"),
        "{}",
        stderr(&out)
    );
}
