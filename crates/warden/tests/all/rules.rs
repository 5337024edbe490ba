//! The rules provider (`builtin:rules`): its fields, operators, priorities and
//! default, the rule named in every decision, and configurations it refuses.

use crate::common::*;
use serde_json::{Value, json};
use warden::{Caller, Evaluation, ToolCall, Verdict, Warden};

fn rules(policy: Value) -> Warden {
    warden(&format!(
        "guardrails:\n  providers:\n    - name: rules\n      wasm: \"builtin:rules\"\n      config: {policy}\n"
    ))
}

/// A policy of one rule that allows what matches `condition`, denying the rest.
fn only(condition: Value) -> Warden {
    rules(json!({"rules": [{"id": "r", "when": [condition], "action": "allow"}]}))
}

fn judge(warden: &Warden, request: Value) -> Evaluation {
    let call = ToolCall::from_json(request.to_string().as_bytes()).expect("a valid request");
    // An internal caller: the rules see the role and ids the request names.
    warden
        .evaluate(&call, Caller::Internal)
        .expect("a decision")
}

fn verdict(warden: &Warden, request: Value) -> Verdict {
    judge(warden, request).verdict
}

fn bash(command: &str) -> Value {
    json!({"tool_name": "bash", "tool_input": {"command": command}})
}

fn configure_error(policy: Value) -> String {
    let e = eval(&rules(policy), "bash", empty());
    assert_eq!(detail(&e), Some("warden.configure_failed"), "{e:?}");
    e.reasons[1].message.clone()
}

#[test]
fn eq_matches_the_whole_value() {
    let w = only(json!({"field": "tool_name", "op": "eq", "value": "bash"}));
    assert_eq!(verdict(&w, bash("ls")), Verdict::Allow);
    assert_eq!(verdict(&w, json!({"tool_name": "bash2"})), Verdict::Deny);
}

#[test]
fn ne_holds_for_other_values_and_for_a_missing_field() {
    let w = only(json!({"field": "user_role", "op": "ne", "value": "viewer"}));
    let as_role = |role: &str| json!({"tool_name": "search", "context": {"user_role": role}});
    assert_eq!(verdict(&w, as_role("admin")), Verdict::Allow);
    assert_eq!(verdict(&w, as_role("viewer")), Verdict::Deny);
    assert_eq!(verdict(&w, json!({"tool_name": "search"})), Verdict::Allow);
}

#[test]
fn in_matches_any_listed_value() {
    let w = only(json!({"field": "tool_name", "op": "in", "value": ["read_file", "ls"]}));
    assert_eq!(verdict(&w, json!({"tool_name": "ls"})), Verdict::Allow);
    assert_eq!(verdict(&w, json!({"tool_name": "bash"})), Verdict::Deny);
}

#[test]
fn contains_matches_a_substring_of_the_command() {
    let w = only(json!({"field": "command", "op": "contains", "value": "git "}));
    assert_eq!(verdict(&w, bash("cd x && git status")), Verdict::Allow);
    assert_eq!(verdict(&w, bash("rm -rf /")), Verdict::Deny);
}

#[test]
fn glob_matches_an_argument_by_path() {
    let w = only(json!({"field": "args.files[0].path", "op": "glob", "value": "/workspace/**"}));
    let edit = |path: &str| json!({"tool_name": "edit", "tool_input": {"files": [{"path": path}]}});
    assert_eq!(verdict(&w, edit("/workspace/src/main.rs")), Verdict::Allow);
    assert_eq!(verdict(&w, edit("/etc/passwd")), Verdict::Deny);
    assert_eq!(
        verdict(&w, json!({"tool_name": "edit", "tool_input": {}})),
        Verdict::Deny
    );
}

#[test]
fn matches_is_a_regex_search() {
    let w = only(json!({"field": "command", "op": "matches", "value": "^git (status|log)\\b"}));
    assert_eq!(verdict(&w, bash("git log --oneline")), Verdict::Allow);
    assert_eq!(verdict(&w, bash("git push --force")), Verdict::Deny);
}

#[test]
fn role_tool_key_joins_role_and_tool() {
    let w = only(json!({"field": "role_tool_key", "op": "in", "value": ["admin:deploy"]}));
    let call = |role: &str, tool: &str| json!({"tool_name": tool, "context": {"user_role": role}});
    assert_eq!(verdict(&w, call("admin", "deploy")), Verdict::Allow);
    assert_eq!(verdict(&w, call("viewer", "deploy")), Verdict::Deny);
    assert_eq!(verdict(&w, call("admin", "search")), Verdict::Deny);
}

#[test]
fn message_is_the_json_of_the_arguments() {
    let w = only(json!({"field": "message", "op": "contains", "value": "\"dry_run\":true"}));
    let call = |dry: bool| json!({"tool_name": "deploy", "tool_input": {"dry_run": dry}});
    assert_eq!(verdict(&w, call(true)), Verdict::Allow);
    assert_eq!(verdict(&w, call(false)), Verdict::Deny);
}

#[test]
fn thread_and_agent_ids_can_be_tested() {
    let w = rules(json!({"rules": [{"id": "r", "action": "allow", "when": [
        {"field": "thread_id", "op": "glob", "value": "sandbox-*"},
        {"field": "agent_id", "op": "eq", "value": "researcher"}
    ]}]}));
    let call = |thread: &str, agent: &str| json!({"tool_name": "search", "context": {"thread_id": thread, "agent_id": agent}});
    assert_eq!(verdict(&w, call("sandbox-7", "researcher")), Verdict::Allow);
    assert_eq!(verdict(&w, call("prod-1", "researcher")), Verdict::Deny);
    assert_eq!(verdict(&w, call("sandbox-7", "coder")), Verdict::Deny);
}

#[test]
fn a_number_argument_compares_as_its_json_text() {
    let w = only(json!({"field": "args.replicas", "op": "in", "value": [1, 2, 3]}));
    let scale = |n: u32| json!({"tool_name": "scale", "tool_input": {"replicas": n}});
    assert_eq!(verdict(&w, scale(2)), Verdict::Allow);
    assert_eq!(verdict(&w, scale(20)), Verdict::Deny);
}

#[test]
fn a_higher_priority_rule_wins_over_an_earlier_one() {
    let w = rules(json!({"default": "allow", "rules": [
        {"id": "shell-ok", "when": [{"field": "tool_name", "op": "eq", "value": "bash"}], "action": "allow"},
        {"id": "no-rm", "priority": 10, "when": [{"field": "command", "op": "contains", "value": "rm "}], "action": "deny"}
    ]}));
    let e = judge(&w, bash("rm -rf build"));
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(e.policy_id.as_deref(), Some("rules#no-rm"));
}

#[test]
fn rules_of_equal_priority_are_tried_in_written_order() {
    let w = rules(json!({"rules": [
        {"id": "first", "action": "ask"},
        {"id": "second", "action": "allow"}
    ]}));
    let e = judge(&w, bash("ls"));
    assert_eq!(e.verdict, Verdict::Ask);
    assert_eq!(e.metadata["rule"], "first");
}

#[test]
fn all_conditions_of_a_rule_must_hold() {
    let w = rules(
        json!({"rules": [{"id": "admin-deploy", "action": "allow", "when": [
            {"field": "tool_name", "op": "eq", "value": "deploy"},
            {"field": "user_role", "op": "eq", "value": "admin"}
        ]}]}),
    );
    let call = |role: &str| json!({"tool_name": "deploy", "context": {"user_role": role}});
    assert_eq!(verdict(&w, call("admin")), Verdict::Allow);
    assert_eq!(verdict(&w, call("dev")), Verdict::Deny);
}

#[test]
fn without_a_matching_rule_the_default_denies() {
    let e = judge(&rules(json!({"rules": []})), bash("ls"));
    assert_eq!(e.verdict, Verdict::Deny);
    assert_eq!(codes(&e), ["rules.default_deny"]);
    assert_eq!(e.policy_id.as_deref(), Some("rules#default"));
    assert_eq!(e.metadata["rule"], "default");
}

#[test]
fn the_default_action_can_be_set() {
    for (default, expected) in [("allow", Verdict::Allow), ("ask", Verdict::Ask)] {
        let w = rules(json!({"default": default}));
        assert_eq!(verdict(&w, bash("ls")), expected, "{default}");
    }
}

#[test]
fn a_decision_names_the_rule_and_its_policy() {
    let w = rules(json!({"policy_id": "shell.v2", "rules": [
        {"id": "no-push", "priority": 5, "action": "deny", "code": "shell.push_blocked",
         "message": "pushing is for humans", "when": [{"field": "command", "op": "matches", "value": "git\\s+push"}]}
    ]}));
    let e = judge(&w, bash("git push origin main"));
    assert_eq!(e.policy_id.as_deref(), Some("shell.v2#no-push"));
    assert_eq!(e.metadata["rule"], "no-push");
    assert_eq!(e.metadata["priority"], 5);
    assert_eq!(e.reasons[0].code, "shell.push_blocked");
    assert_eq!(e.reasons[0].message, "pushing is for humans");
}

#[test]
fn actions_have_default_codes_and_messages() {
    let w = rules(json!({"rules": [{"id": "careful", "action": "ask"}]}));
    let e = judge(&w, bash("ls"));
    assert_eq!(codes(&e), ["rules.approval_required"]);
    assert_eq!(e.reasons[0].message, "rule 'careful' requires approval");
}

#[test]
fn the_policy_may_be_a_yaml_document() {
    let policy = "default: allow\nrules:\n  - id: no-curl\n    when:\n      - {field: command, op: contains, value: curl}\n    action: deny\n";
    let w = rules(json!({ "policy": policy }));
    assert_eq!(verdict(&w, bash("curl x | sh")), Verdict::Deny);
    assert_eq!(verdict(&w, bash("ls")), Verdict::Allow);
}

#[test]
fn the_policy_may_be_a_json_document() {
    let policy = json!({"rules": [{"id": "ok", "action": "allow"}]}).to_string();
    assert_eq!(
        verdict(&rules(json!({ "policy": policy })), bash("ls")),
        Verdict::Allow
    );
}

#[test]
fn an_invalid_regex_fails_configure_naming_the_rule() {
    let err = configure_error(json!({"rules": [
        {"id": "fine", "action": "allow"},
        {"id": "broken", "action": "deny", "when": [{"field": "command", "op": "matches", "value": "(unclosed"}]}
    ]}));
    assert!(err.contains("rules[1].when[0].value"), "{err}");
    assert!(
        err.contains("rule 'broken'") && err.contains("invalid regex"),
        "{err}"
    );
}

#[test]
fn an_unknown_field_fails_configure_listing_the_known_ones() {
    let err = configure_error(json!({"rules": [
        {"id": "r", "action": "deny", "when": [{"field": "tool", "op": "eq", "value": "bash"}]}
    ]}));
    assert!(
        err.contains("rules[0].when[0].field") && err.contains("role_tool_key"),
        "{err}"
    );
}

#[test]
fn an_unknown_operator_fails_configure_naming_the_field() {
    let err = configure_error(json!({"rules": [
        {"id": "r", "action": "deny", "when": [{"field": "tool_name", "op": "like", "value": "b%"}]}
    ]}));
    assert!(err.contains("rules[0].when[0].op"), "{err}");
}

#[test]
fn in_without_a_list_fails_configure() {
    let err = configure_error(json!({"rules": [
        {"id": "r", "action": "deny", "when": [{"field": "tool_name", "op": "in", "value": "bash"}]}
    ]}));
    assert!(err.contains("`in` takes a list"), "{err}");
}

#[test]
fn a_rule_id_used_twice_fails_configure() {
    let err = configure_error(json!({"rules": [
        {"id": "a", "action": "allow"}, {"id": "a", "action": "deny"}
    ]}));
    assert!(
        err.contains("rules[1].id") && err.contains("rules[0]"),
        "{err}"
    );
}

#[test]
fn an_unknown_key_in_a_rule_fails_configure() {
    let err = configure_error(json!({"rules": [{"id": "a", "action": "allow", "priorty": 3}]}));
    assert!(err.contains("priorty"), "{err}");
}

#[test]
fn a_yaml_document_error_names_the_field() {
    let err = configure_error(json!({"policy": "rules:\n  - id: a\n    action: permit\n"}));
    assert!(err.contains("policy") && err.contains("permit"), "{err}");
}

/// What the provider said about a call in the example policy, whatever the
/// native policy adds.
fn stage(warden: &Warden, request: Value) -> (Verdict, String) {
    let e = judge(warden, request);
    let stage = e
        .stages
        .iter()
        .find(|s| s.stage == "provider:policy")
        .unwrap_or_else(|| panic!("the provider was asked: {e:?}"));
    (stage.verdict, stage.codes[0].clone())
}

#[test]
fn the_example_policy_loads_and_decides_as_documented() {
    let config = warden::Config::load(&repo_root().join("examples/rules.yaml")).unwrap();
    let w = Warden::new(&config).unwrap();
    let as_role = |role: &str, tool: &str, input: Value| json!({"tool_name": tool, "tool_input": input, "context": {"user_role": role}});
    assert_eq!(
        stage(
            &w,
            as_role("dev", "bash", json!({"command": "rm -rf /tmp/x"}))
        ),
        (Verdict::Deny, "policy.destructive".into())
    );
    assert_eq!(
        stage(&w, as_role("viewer", "write_file", json!({"path": "a"}))),
        (Verdict::Deny, "rules.denied".into())
    );
    assert_eq!(
        stage(&w, as_role("admin", "deploy", json!({}))),
        (Verdict::Ask, "rules.approval_required".into())
    );
    assert_eq!(
        stage(&w, as_role("dev", "deploy", json!({}))),
        (Verdict::Deny, "rules.denied".into())
    );
    assert_eq!(
        stage(
            &w,
            as_role("dev", "read_file", json!({"path": "/etc/hosts"}))
        ),
        (Verdict::Deny, "rules.denied".into())
    );
    assert_eq!(
        stage(&w, as_role("dev", "search", json!({"q": "x"}))),
        (Verdict::Allow, "oap.allowed".into())
    );
}

/// A policy of `n` rules of every condition kind (`eq`, `in`, `contains`,
/// `glob`, `matches`, `ne`), priorities mixed; a call of the table matches
/// only the rule written for it.
fn large_policy(n: usize) -> Value {
    let rules: Vec<Value> = (0..n)
        .map(|i| {
            let mut when = vec![match i % 6 {
                0 => json!({"field": "tool_name", "op": "eq", "value": format!("tool{i}")}),
                1 => json!({"field": "user_role", "op": "in", "value": [format!("role{i}"), format!("team{i}")]}),
                2 => json!({"field": "command", "op": "contains", "value": format!("--flag{i}")}),
                3 => json!({"field": "args.path", "op": "glob", "value": format!("/srv/data{i}/**")}),
                4 => json!({"field": "command", "op": "matches", "value": format!("^deploy{i}\\s+\\w+$")}),
                _ => json!({"field": "thread_id", "op": "ne", "value": format!("thread{i}")}),
            }];
            if i % 6 == 5 {
                when.push(json!({"field": "tool_name", "op": "eq", "value": format!("ne{i}")}));
            }
            let action = ["deny", "ask", "allow"][i % 3];
            json!({"id": format!("r{i}"), "priority": i % 5, "when": when, "action": action})
        })
        .collect();
    json!({"rules": rules, "default": "ask"})
}

#[test]
fn ten_thousand_rules_of_every_kind_load_on_the_default_limits_and_decide() {
    let w = rules(large_policy(10_000));
    let snapshot = w.snapshot();
    let provider = &snapshot.providers().providers()[0];
    assert!(provider.health().is_ok(), "{:?}", provider.health());
    let role = |role: &str| json!({"tool_name": "x", "context": {"user_role": role}});
    let path = |path: &str| json!({"tool_name": "read_file", "tool_input": {"path": path}});
    let table = [
        (bash("git status"), Verdict::Ask, "rules#default"),
        (json!({"tool_name": "tool6"}), Verdict::Deny, "rules#r6"),
        (role("team7"), Verdict::Ask, "rules#r7"),
        (bash("ls --flag8"), Verdict::Allow, "rules#r8"),
        (path("/srv/data9/a"), Verdict::Deny, "rules#r9"),
        (bash("deploy10 prod"), Verdict::Ask, "rules#r10"),
        (bash("deploy10 prod now"), Verdict::Ask, "rules#default"),
        (json!({"tool_name": "ne11"}), Verdict::Allow, "rules#r11"),
        (
            json!({"tool_name": "tool9996"}),
            Verdict::Deny,
            "rules#r9996",
        ),
    ];
    for (request, verdict, policy_id) in table {
        let e = judge(&w, request.clone());
        assert_eq!(e.verdict, verdict, "{request}: {e:?}");
        assert_eq!(e.policy_id.as_deref(), Some(policy_id), "{request}: {e:?}");
    }
}

#[test]
fn a_policy_costlier_to_load_than_a_call_loads_on_the_configure_budget() {
    // Per-call fuel far below what loading a regex costs (about 1.5 million
    // units each, before the index): loading has its own budget.
    let conditions: Vec<Value> = (0..200)
        .map(|i| json!({"field": "command", "op": "matches", "value": format!("^job{i}\\s+\\w+$")}))
        .collect();
    let rules: Vec<Value> = conditions
        .into_iter()
        .enumerate()
        .map(|(i, c)| json!({"id": format!("r{i}"), "when": [c], "action": "deny"}))
        .collect();
    let w = warden(&format!(
        "guardrails:\n  providers:\n    - name: rules\n      wasm: \"builtin:rules\"\n      limits: {{fuel: 20000000}}\n      config: {}\n",
        json!({"rules": rules, "default": "allow"})
    ));
    assert_eq!(verdict(&w, bash("job7 now")), Verdict::Deny);
    assert_eq!(verdict(&w, bash("ls")), Verdict::Allow);
}
