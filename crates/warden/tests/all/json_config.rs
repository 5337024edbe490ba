//! A configuration written as JSON, as a program that generates a policy
//! writes it: read by the JSON parser where YAML would read it alike
//! (`warden_runtime::json_config`), and otherwise exactly as YAML reads it.

use std::path::PathBuf;

use crate::common::*;
use serde_json::json;
use warden::{Caller, Config, Verdict, Warden};

fn parse(text: &str) -> Result<Config, warden::config::ConfigError> {
    Config::parse(text, "w.json", PathBuf::from("."))
}

#[test]
fn a_policy_written_as_json_names_each_rule_with_its_line() {
    let policy = json!({
        "permissions": {"mode": "default", "deny": ["Bash(rm -rf *)"]},
        "guardrails": {"providers": [{"name": "policy", "wasm": "builtin:rules", "config": {
            "policy_id": "p", "default": "allow",
            "rules": [{"id": "no-curl", "priority": 1, "action": "deny",
                       "when": [{"field": "command", "op": "contains", "value": "curl"}]}]}}]}
    });
    let text = serde_json::to_string_pretty(&policy).unwrap();
    let line = |needle: &str| 1 + text.lines().position(|l| l.contains(needle)).unwrap() as u32;
    let warden = Warden::new(&parse(&text).unwrap()).unwrap();
    let judge = |command: &str| {
        let e = warden
            .evaluate(&call("bash", json!({"command": command})), Caller::Agent)
            .unwrap();
        assert_eq!(e.verdict, Verdict::Deny, "{e:?}");
        e.cause.unwrap().rules[0].line
    };
    assert_eq!(judge("rm -rf ./src"), Some(line("Bash(rm -rf *)")));
    // A rule's place is where its mapping starts: the `{` before its `id`.
    assert_eq!(judge("curl https://example.com"), Some(line("\"id\"") - 1));
}

#[test]
fn json_that_only_yaml_converts_still_loads_as_before() {
    // YAML reads the number as the string a path is; JSON would not.
    let config = parse("{\"data_dir\": 5}").unwrap();
    assert_eq!(config.data_dir(), PathBuf::from("./5"));
}

#[test]
fn an_error_in_a_json_file_reads_as_yaml_reports_it() {
    let text = "{\n  \"permissions\": {\"mode\": \"sometimes\"}\n}";
    let err = parse(text).unwrap_err().to_string();
    assert!(err.contains("w.json"), "{err}");
    assert!(err.contains("permissions.mode"), "{err}");
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn json_that_yaml_refuses_is_still_refused() {
    // A tab before the object: JSON's white space, not YAML's.
    assert!(parse("\t{}").is_err());
}
