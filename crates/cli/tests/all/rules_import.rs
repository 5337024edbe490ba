//! `warden rules import --from deepcode`: DeepCode's permission config turned
//! into Warden's `permissions:` block by the real binary, the block loaded by
//! `warden eval`, refusals and malformed input named where they are.

use std::path::Path;
use std::process::Output;

use crate::common::daemon::warden_in;

use serde_json::{Value, json};

/// `warden ARGS` in `dir`, stdin `input`.
fn warden(dir: &Path, args: &[&str], input: &str) -> Output {
    warden_in(dir, args, Some(input))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Imports `config` (written as `deepcode_config.json` in a new directory):
/// the directory, the command's output, the YAML and the report.
fn import(config: &str) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deepcode_config.json"), config).unwrap();
    let out = warden(
        dir.path(),
        &[
            "rules",
            "import",
            "--from",
            "deepcode",
            "deepcode_config.json",
            "--out",
            "warden.yaml",
            "--report",
            "report.json",
        ],
        "",
    );
    (dir, out)
}

fn imported(config: Value) -> (tempfile::TempDir, Value, Value) {
    let (dir, out) = import(&config.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let yaml = std::fs::read_to_string(dir.path().join("warden.yaml")).unwrap();
    let block: Value = serde_norway::from_str(&yaml).unwrap();
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    (dir, block["permissions"].clone(), report)
}

/// `warden eval` of a bash command under the imported block.
fn eval_bash(dir: &Path, command: &str) -> Value {
    let request = json!({"tool_name": "bash", "tool_input": {"command": command}}).to_string();
    let out = warden(dir, &["eval", "--config", "warden.yaml"], &request);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn deepcode_rules_become_a_permissions_block_that_warden_loads() {
    let (dir, permissions, report) = imported(json!({"security": {
        "permissionMode": "default",
        "permissions": {"bash": {"git push *": "ask", "*": "allow", "rm -rf *": "deny"}, "web_fetch": "deny"}
    }}));
    assert_eq!(permissions["mode"], "default");
    assert_eq!(permissions["allow"], json!(["bash"]));
    assert_eq!(permissions["ask"], json!(["Bash(git push *)"]));
    assert!(
        permissions["deny"]
            .as_array()
            .unwrap()
            .contains(&json!("Bash(rm -rf *)"))
    );
    assert!(
        permissions["deny"]
            .as_array()
            .unwrap()
            .contains(&json!("web_fetch"))
    );
    assert_eq!(report["warden_mode"], "default");
    assert_eq!(eval_bash(dir.path(), "git status")["verdict"], "allow");
    assert_eq!(
        eval_bash(dir.path(), "git push origin main")["verdict"],
        "ask"
    );
    let d = eval_bash(dir.path(), "echo hi && rm -rf build");
    assert_eq!(d["verdict"], "deny", "{d}");
}

#[test]
fn the_report_names_every_rule_warden_judges_stricter() {
    let (_dir, permissions, report) = imported(json!({"security": {
        "permissionMode": "default",
        "permissions": {"bash": {"*": "deny", "git status": "allow"}, "write": {"src/*": "allow", "*": "ask"}}
    }}));
    // The carve-outs are not emitted: Warden's deny and ask win whatever the order.
    assert_eq!(permissions["allow"], json!([]));
    assert!(
        permissions["ask"]
            .as_array()
            .unwrap()
            .contains(&json!("write"))
    );
    let listed: Vec<(String, String)> = report["stricter"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["deepcode"] == "allow")
        .map(|e| {
            (
                e["tools"][0].as_str().unwrap().into(),
                e["calls"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        listed.contains(&("bash".into(), "git status".into())),
        "{report:#}"
    );
    assert!(
        listed.contains(&("write".into(), "src/*".into())),
        "{report:#}"
    );
}

#[test]
fn plan_mode_becomes_read_only_and_full_auto_stays_full_auto() {
    let (_d, permissions, _r) = imported(json!({"security": {"permissionMode": "plan"}}));
    assert_eq!(permissions["mode"], "read_only");
    let (_d, permissions, report) = imported(json!({"security": {}}));
    assert_eq!(permissions["mode"], "full_auto");
    assert!(
        report["notes"][0].as_str().unwrap().contains("full_auto"),
        "{report:#}"
    );
    let (_d, permissions, _r) =
        imported(json!({"security": {"permission_mode": "full_auto", "accessPreset": "ask"}}));
    assert_eq!(permissions["mode"], "default");
}

#[test]
fn a_pattern_warden_cannot_cover_is_refused_naming_the_rule() {
    let (_dir, out) = import(r#"{"security": {"permissions": {"bash": {"curl * | sh": "deny"}}}}"#);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(r#"security.permissions["bash"]["curl * | sh"] = deny: cannot be imported"#),
        "{err}"
    );
    let (dir, out) = import(r#"{"security": {"permissions": {"bash": {"sudo rm *": "ask"}}}}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("sudo rm *"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("warden.yaml").exists());
}

#[test]
fn a_tool_key_that_is_a_pattern_is_refused() {
    let (_dir, out) = import(r#"{"security": {"permissions": {"mcp_*": "deny"}}}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("'mcp_*' is a pattern"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn malformed_config_is_an_error_saying_where() {
    let cases = [
        (
            r#"{"security": {"permissions": {"bash": "sometimes"}}}"#,
            r#"security.permissions["bash"]: unknown action 'sometimes'"#,
        ),
        (
            r#"{"security": {"permissions": {"bash": ["ls"]}}}"#,
            r#"security.permissions["bash"]: expected an action"#,
        ),
        (
            r#"{"security": {"permissionMode": "yolo"}}"#,
            "security.permissionMode: unknown mode 'yolo'",
        ),
        (r#"{"permissions": {}}"#, "security: no `security` block"),
        (
            "{\"security\": {\n  \"permissions\": {,}}}",
            "line 2 column",
        ),
    ];
    for (config, expected) in cases {
        let (_dir, out) = import(config);
        assert_eq!(out.status.code(), Some(2), "{config}");
        let err = text(&out.stderr);
        assert!(
            err.contains("deepcode_config.json") && err.contains(expected),
            "{config}: {err}"
        );
    }
}

#[test]
fn without_out_the_block_goes_to_stdout_and_the_report_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.json"),
        r#"{"security": {"permissionMode": "default", "permissions": {"bash": {"*": "deny", "ls": "allow"}}}}"#,
    )
    .unwrap();
    let out = warden(
        dir.path(),
        &["rules", "import", "--from", "deepcode", "c.json"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let block: Value = serde_norway::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(block["permissions"]["deny"][0], "bash");
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["stricter"][0]["calls"], "ls");
}
