//! The rule that decided, named with its place: a permission rule's and a
//! rules-provider rule's text, file and line in the decision's cause, its
//! metadata (`rule_source`), and the provider's name, version and digest.

use std::path::Path;

use crate::common::*;
use serde_json::json;
use warden::{Caller, Config, Evaluation, RuleRef, Verdict, Warden};

/// A Warden from `text` written to `warden.yaml` in `dir` (and the files
/// beside it the test wrote), and the main file's path as the cause names it.
fn load(dir: &Path, text: &str) -> (Warden, String) {
    let path = dir.join("warden.yaml");
    std::fs::write(&path, text).unwrap();
    let config = Config::load(&path).expect("a valid configuration");
    (Warden::new(&config).unwrap(), path.display().to_string())
}

fn judge(warden: &Warden, command: &str) -> Evaluation {
    warden
        .evaluate(&call("bash", json!({"command": command})), Caller::Agent)
        .unwrap()
}

fn rule(text: &str, file: &str, line: u32) -> RuleRef {
    RuleRef {
        text: text.into(),
        file: Some(file.into()),
        line: Some(line),
    }
}

const NATIVE: &str = "\
permissions:
  mode: default
  allow:
    - Bash(git status*)
    - Bash(ls)
  ask: [Bash(git push *)]
  deny:
    - Bash(rm -rf *)
";

#[test]
fn a_native_deny_rule_is_named_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, file) = load(dir.path(), NATIVE);
    let e = judge(&warden, "rm -rf ./src");
    assert_eq!(e.verdict, Verdict::Deny);
    let cause = e.cause.expect("a cause");
    assert_eq!(cause.stage, "permissions");
    assert_eq!(cause.rules, [rule("Bash(rm -rf *)", &file, 8)]);
    assert_eq!(e.metadata["rule"], "Bash(rm -rf *)");
    assert_eq!(e.metadata["rule_source"], format!("{file}:8"));
}

#[test]
fn a_native_ask_rule_in_a_flow_list_is_named_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, file) = load(dir.path(), NATIVE);
    let e = judge(&warden, "git push origin main");
    assert_eq!(e.verdict, Verdict::Ask);
    assert_eq!(e.cause.unwrap().rules, [rule("Bash(git push *)", &file, 6)]);
}

#[test]
fn every_allow_rule_that_covered_the_call_is_named_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, file) = load(dir.path(), NATIVE);
    let e = judge(&warden, "git status && ls");
    assert_eq!(e.verdict, Verdict::Allow);
    assert_eq!(
        e.cause.unwrap().rules,
        [
            rule("Bash(git status*)", &file, 4),
            rule("Bash(ls)", &file, 5)
        ]
    );
    assert_eq!(e.metadata["rule_source"], format!("{file}:4, {file}:5"));
}

#[test]
fn an_ask_that_no_rule_made_names_no_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, _) = load(dir.path(), NATIVE);
    let e = judge(&warden, "make");
    assert_eq!(e.verdict, Verdict::Ask);
    let cause = e.cause.unwrap();
    assert_eq!(cause.stage, "permissions");
    assert!(cause.rules.is_empty(), "{cause:?}");
}

const RULES: &str = "\
guardrails:
  providers:
    - name: policy
      wasm: builtin:rules
      config:
        default: allow
        rules:
          - id: no-curl
            priority: 1
            when: [{field: command, op: contains, value: curl}]
            action: deny

          - id: ask-deploy
            priority: 5
            when: [{field: command, op: glob, value: 'deploy *'}]
            action: ask
";

#[test]
fn a_rules_provider_rule_is_named_with_its_file_line_and_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, file) = load(dir.path(), RULES);
    let e = judge(&warden, "curl https://example.com");
    assert_eq!(e.verdict, Verdict::Deny);
    let cause = e.cause.expect("a cause");
    assert_eq!(cause.stage, "provider:policy");
    assert_eq!(cause.rules, [rule("no-curl", &file, 8)]);
    let provider = cause.provider.expect("the deciding provider");
    assert_eq!(provider.name, "policy");
    assert_eq!(provider.version, "0.1.0");
    assert_eq!(provider.digest.len(), 64, "{provider:?}");
    assert_eq!(
        e.stages[1].digest.as_deref(),
        Some(provider.digest.as_str())
    );
    assert_eq!(e.metadata["rule_source"], format!("{file}:8"));
}

#[test]
fn a_rules_provider_rule_keeps_its_written_line_when_priorities_reorder_it() {
    let dir = tempfile::tempdir().unwrap();
    let (warden, file) = load(dir.path(), RULES);
    let e = judge(&warden, "deploy prod");
    assert_eq!(e.verdict, Verdict::Ask);
    assert_eq!(e.cause.unwrap().rules, [rule("ask-deploy", &file, 13)]);
}

#[test]
fn a_rules_provider_rule_in_an_included_file_is_named_with_that_file() {
    let dir = tempfile::tempdir().unwrap();
    let included = dir.path().join("rules.yaml");
    std::fs::write(
        &included,
        "# the team's rules\n- id: no-curl\n  when: [{field: command, op: contains, value: curl}]\n  action: deny\n- id: no-wget\n  when: [{field: command, op: contains, value: wget}]\n  action: deny\n",
    )
    .unwrap();
    let (warden, _) = load(
        dir.path(),
        "guardrails:\n  providers:\n    - name: policy\n      wasm: builtin:rules\n      config: {default: allow}\n      config_files: {rules: rules.yaml}\n",
    );
    let e = judge(&warden, "wget https://example.com");
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(
        e.cause.unwrap().rules,
        [rule("no-wget", &included.display().to_string(), 5)]
    );
}

#[test]
fn a_rule_of_a_configuration_built_in_code_is_named_without_a_place() {
    let mut config = config("{}");
    config.permissions =
        Some(serde_json::from_value(json!({"mode": "full_auto", "deny": ["Bash(rm *)"]})).unwrap());
    let warden = Warden::new(&config).unwrap();
    let e = judge(&warden, "rm x");
    let rules = e.cause.unwrap().rules;
    assert_eq!(rules.len(), 1);
    assert_eq!((rules[0].file.as_deref(), rules[0].line), (None, None));
    assert!(!e.metadata.contains_key("rule_source"));
}
