//! The policy: rules ordered by priority (highest first; equal priorities keep
//! the order they are written in), each a list of conditions that must all
//! hold and an action; the first rule that matches decides, and the default
//! action decides when none does. Checked and compiled once in `configure`.

use std::collections::HashMap;

use serde::Deserialize;
use warden_provider::{Call, ConfigError, Decision, Verdict};

use crate::condition::{Condition, ConditionSpec};
use crate::index::Index;

/// The name of the default "rule" in decisions; no rule may take it.
const DEFAULT_RULE: &str = "default";

/// A policy as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// Names the policy in every decision's `policy_id` (`<policy_id>#<rule>`).
    #[serde(default = "default_policy_id")]
    policy_id: String,
    /// What happens when no rule matches.
    #[serde(default = "default_action")]
    default: Action,
    #[serde(default)]
    rules: Vec<RuleSpec>,
}

/// The provider's configuration: the policy inline (`policy_id`, `default`,
/// `rules`), or a policy document as text under `policy`, never both. Read
/// straight from the host's JSON, with no value in between, so that a policy
/// of thousands of rules is read in one pass; errors name the field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default, deserialize_with = "policy_text")]
    policy: Option<String>,
    #[serde(default, deserialize_with = "present")]
    policy_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    default: Option<Action>,
    #[serde(default, deserialize_with = "present")]
    rules: Option<Vec<RuleSpec>>,
}

/// Where the policy is given.
pub enum Given {
    Inline(PolicySpec),
    /// A YAML or JSON document, as text.
    Document(String),
}

impl ProviderConfig {
    pub fn given(self) -> Result<Given, ConfigError> {
        let inline = self.policy_id.is_some() || self.default.is_some() || self.rules.is_some();
        match self.policy {
            Some(_) if inline => Err(ConfigError::new(
                "give the policy either inline (rules, default, policy_id) or as text under `policy`, not both",
            )),
            Some(text) => Ok(Given::Document(text)),
            None => Ok(Given::Inline(PolicySpec {
                policy_id: self.policy_id.unwrap_or_else(default_policy_id),
                default: self.default.unwrap_or_else(default_action),
                rules: self.rules.unwrap_or_default(),
            })),
        }
    }
}

/// A key that is given: its value must be the field's type (`null` is not
/// "absent").
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

fn policy_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    String::deserialize(deserializer)
        .map(Some)
        .map_err(|_| serde::de::Error::custom("must be the policy as YAML or JSON text"))
}

fn default_policy_id() -> String {
    "rules".into()
}

/// Fail closed: without a matching rule, a call is denied unless the policy
/// says otherwise.
fn default_action() -> Action {
    Action::Deny
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Allow,
    Ask,
    Deny,
}

impl Action {
    fn verdict(self) -> Verdict {
        match self {
            Action::Allow => Verdict::Allow,
            Action::Ask => Verdict::Ask,
            Action::Deny => Verdict::Deny,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    #[serde(default)]
    priority: i64,
    /// All must hold; none: the rule always matches.
    #[serde(default)]
    when: Vec<ConditionSpec>,
    action: Action,
    /// The reason code (default: `oap.allowed`, `rules.approval_required`,
    /// `rules.denied`).
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// A compiled rule.
#[derive(Debug)]
struct Rule {
    /// Its place in `rules` as written (before the sort by priority), for
    /// the decision's `rule_pointer`.
    written: usize,
    id: String,
    priority: i64,
    conditions: Vec<Condition>,
    action: Action,
    code: String,
    message: String,
}

impl Rule {
    fn holds(&self, call: &Call) -> bool {
        self.conditions.iter().all(|c| c.holds(call))
    }
}

/// A compiled policy, rules in the order they are tried.
#[derive(Debug)]
pub struct Policy {
    /// Where the policy sits in the provider's configuration, as a JSON
    /// pointer: empty inline, `/policy` for a document given as text.
    at: String,
    policy_id: String,
    default: Action,
    rules: Vec<Rule>,
    index: Index,
}

impl Policy {
    /// Checks and compiles a policy. Errors name the field by its path in the
    /// policy (`rules[2].when[0].value`) and the rule by its id.
    pub fn compile(spec: PolicySpec) -> Result<Policy, ConfigError> {
        if spec.policy_id.trim().is_empty() {
            return Err(ConfigError::field("policy_id", "must not be empty"));
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut rules = Vec::with_capacity(spec.rules.len());
        for (index, rule) in spec.rules.into_iter().enumerate() {
            let at = format!("rules[{index}]");
            if rule.id.trim().is_empty() || rule.id == DEFAULT_RULE {
                return Err(ConfigError::field(
                    format!("{at}.id"),
                    format!(
                        "'{}' is not a usable rule id (not empty, not '{DEFAULT_RULE}')",
                        rule.id
                    ),
                ));
            }
            if let Some(first) = seen.insert(rule.id.clone(), index) {
                return Err(ConfigError::field(
                    format!("{at}.id"),
                    format!("rule id '{}' is already used by rules[{first}]", rule.id),
                ));
            }
            let conditions = rule
                .when
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    Condition::compile(c).map_err(|err| {
                        let err = err.within(&format!("{at}.when[{i}]"));
                        ConfigError::field(
                            err.field_path().unwrap_or_default().to_string(),
                            format!("rule '{}': {}", rule.id, err.message()),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let (code, message) = match rule.action {
                Action::Allow => ("oap.allowed", format!("allowed by rule '{}'", rule.id)),
                Action::Ask => (
                    "rules.approval_required",
                    format!("rule '{}' requires approval", rule.id),
                ),
                Action::Deny => ("rules.denied", format!("denied by rule '{}'", rule.id)),
            };
            rules.push(Rule {
                written: index,
                code: rule.code.unwrap_or_else(|| code.to_string()),
                message: rule.message.unwrap_or(message),
                id: rule.id,
                priority: rule.priority,
                conditions,
                action: rule.action,
            });
        }
        // Stable: equal priorities keep their written order.
        rules.sort_by_key(|rule| std::cmp::Reverse(rule.priority));
        let index = Index::new(rules.iter().map(|rule| rule.conditions.as_slice()))
            .map_err(ConfigError::new)?;
        Ok(Policy {
            at: String::new(),
            policy_id: spec.policy_id,
            default: spec.default,
            rules,
            index,
        })
    }

    /// The policy placed at `pointer` in the provider's configuration (a
    /// document given as text under `policy`): its decisions' `rule_pointer`
    /// start there.
    pub fn placed_at(mut self, pointer: &str) -> Policy {
        self.at = pointer.to_string();
        self
    }

    /// The decision of the first matching rule, or of the default action.
    /// Only the rules the index finds for the call are tried.
    pub fn decide(&self, call: &Call) -> Decision {
        let first = self
            .index
            .candidates(call)
            .into_iter()
            .map(|position| &self.rules[position as usize])
            .find(|rule| rule.holds(call));
        self.decision(first)
    }

    /// The straightforward decision, every rule in turn: what the indexed
    /// one is held to.
    #[cfg(test)]
    pub fn decide_linear(&self, call: &Call) -> Decision {
        self.decision(self.rules.iter().find(|rule| rule.holds(call)))
    }

    fn decision(&self, rule: Option<&Rule>) -> Decision {
        match rule {
            Some(rule) => Decision::new(rule.action.verdict(), &rule.code, &rule.message)
                .with_policy_id(format!("{}#{}", self.policy_id, rule.id))
                .with_metadata("rule", rule.id.as_str())
                .with_metadata("priority", rule.priority)
                // Where the rule is written, for the host to turn into a
                // file and a line (the decision's cause).
                .with_metadata(
                    "rule_pointer",
                    format!("{}/rules/{}", self.at, rule.written),
                ),
            None => {
                let (code, what) = match self.default {
                    Action::Allow => ("oap.allowed", "allow"),
                    Action::Ask => ("rules.default_ask", "ask"),
                    Action::Deny => ("rules.default_deny", "deny"),
                };
                Decision::new(
                    self.default.verdict(),
                    code,
                    format!("no rule matched; the default is {what}"),
                )
                .with_policy_id(format!("{}#{DEFAULT_RULE}", self.policy_id))
                .with_metadata("rule", DEFAULT_RULE)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    fn compile(rules: Value) -> Policy {
        let spec = serde_json::from_value(json!({"rules": rules, "default": "ask"})).unwrap();
        Policy::compile(spec).unwrap()
    }

    fn call(tool: &str, input: Value, role: Option<&str>) -> Call {
        let call = Call::new(tool, input);
        match role {
            Some(role) => call.with_user_role(role),
            None => call,
        }
    }

    const FIELDS: &[&str] = &["tool_name", "user_role", "command", "args.path", "message"];
    const OPS: &[&str] = &["eq", "ne", "in", "contains", "glob", "matches"];
    const VALUES: &[&str] = &[
        "bash",
        "read_file",
        "admin",
        "viewer",
        "git status",
        "git",
        "rm -rf /",
        "/etc/passwd",
        "/etc",
        "",
        "sta",
        "x",
    ];
    const GLOBS: &[&str] = &[
        "git *",
        "/etc/*",
        "*",
        "rm*",
        "ba?h",
        "*status",
        "[gr]*",
        // Sharing their first word, told apart by what else they say.
        "git * --force",
        "git */x*",
        "**/passwd",
        "git * -?",
    ];
    const REGEXES: &[&str] = &[
        "^git",
        "status$",
        "rm\\s+-rf",
        "(?i)GIT",
        "passw(or)?d",
        "[a-z]+",
        ".*",
        "^(bash|sh)$",
        "et.",
        "\\d",
        "^git\\s+push\\b",
        "^git\\s+(push|sta)",
        "(?i)^git\\s+\\w+ -f$",
        // No literal every match holds: filed under the field's regex set.
        "\\d{4}",
        "^\\w+\\s+\\S+$",
        "[a-z]{3}",
    ];

    fn a_condition() -> impl Strategy<Value = Value> {
        (
            prop::sample::select(FIELDS),
            prop::sample::select(OPS),
            prop::sample::select(VALUES),
            prop::collection::vec(prop::sample::select(VALUES), 0..4),
            prop::sample::select(GLOBS),
            prop::sample::select(REGEXES),
        )
            .prop_map(|(field, op, value, list, glob, regex)| {
                let value = match op {
                    "in" => json!(list),
                    "glob" => json!(glob),
                    "matches" => json!(regex),
                    _ => json!(value),
                };
                json!({"field": field, "op": op, "value": value})
            })
    }

    fn a_policy() -> impl Strategy<Value = Value> {
        prop::collection::vec(
            (
                prop::collection::vec(a_condition(), 0..3),
                0..3i64,
                prop::sample::select(&["allow", "ask", "deny"][..]),
            ),
            0..12,
        )
        .prop_map(|rules| {
            let rules: Vec<Value> = rules
                .into_iter()
                .enumerate()
                .map(|(i, (when, priority, action))| {
                    json!({"id": format!("r{i}"), "priority": priority, "when": when, "action": action})
                })
                .collect();
            json!(rules)
        })
    }

    fn a_call() -> impl Strategy<Value = Call> {
        (
            prop::sample::select(&["bash", "read_file", "sh", "other"][..]),
            prop::sample::select(
                &[
                    "git status",
                    "rm -rf /",
                    "ls",
                    "cat /etc/passwd",
                    "GIT sta 1",
                    "git push --force",
                    "git sta/x -f",
                    "git  push",
                    "make 2024",
                ][..],
            ),
            prop::option::of(prop::sample::select(
                &["/etc/passwd", "/home/x", "git status"][..],
            )),
            prop::option::of(prop::sample::select(&["admin", "viewer", ""][..])),
        )
            .prop_map(|(tool, command, path, role)| {
                let mut input = json!({"command": command});
                if let Some(path) = path {
                    input["path"] = json!(path);
                }
                call(tool, input, role)
            })
    }

    proptest! {
        #[test]
        fn the_indexed_policy_decides_like_the_straightforward_scan(
            rules in a_policy(),
            calls in prop::collection::vec(a_call(), 1..8),
        ) {
            let policy = compile(rules);
            for call in &calls {
                prop_assert_eq!(policy.decide(call), policy.decide_linear(call));
            }
        }
    }

    /// A policy of `n` rules of every condition kind, none of which matches
    /// the table's calls but the ones written for them.
    pub(crate) fn large_policy(n: usize) -> Value {
        let rules: Vec<Value> = (0..n)
            .map(|i| {
                let (field, op, value) = match i % 6 {
                    0 => ("tool_name", "eq", json!(format!("tool{i}"))),
                    1 => ("user_role", "in", json!([format!("role{i}"), format!("team{i}")])),
                    2 => ("command", "contains", json!(format!("--flag{i}"))),
                    3 => ("args.path", "glob", json!(format!("/srv/data{i}/**"))),
                    4 => ("command", "matches", json!(format!("^deploy{i}\\s+\\w+$"))),
                    _ => ("thread_id", "ne", json!(format!("thread{i}"))),
                };
                let action = ["deny", "ask", "allow"][i % 3];
                // The `ne` rules also need a tool no call of the table names.
                let mut when = vec![json!({"field": field, "op": op, "value": value})];
                if op == "ne" {
                    when.push(json!({"field": "tool_name", "op": "eq", "value": format!("ne{i}")}));
                }
                json!({"id": format!("r{i}"), "priority": (i % 5) as i64, "when": when, "action": action})
            })
            .collect();
        json!(rules)
    }

    #[test]
    fn ten_thousand_rules_of_every_kind_decide_like_the_straightforward_scan() {
        let policy = compile(large_policy(10_000));
        let table = [
            (
                call("bash", json!({"command": "git status"}), None),
                "rules#default",
            ),
            (call("tool6", json!({}), None), "rules#r6"),
            (call("x", json!({}), Some("team7")), "rules#r7"),
            (
                call("bash", json!({"command": "ls --flag8"}), None),
                "rules#r8",
            ),
            (
                call("read_file", json!({"path": "/srv/data9/a"}), None),
                "rules#r9",
            ),
            (
                call("bash", json!({"command": "deploy10 prod"}), None),
                "rules#r10",
            ),
            (
                call("bash", json!({"command": "deploy10 prod now"}), None),
                "rules#default",
            ),
            (call("ne11", json!({}), None), "rules#r11"),
            (call("tool9996", json!({}), None), "rules#r9996"),
        ];
        for (call, expected) in &table {
            let decision = policy.decide(call);
            assert_eq!(policy.decide_linear(call), decision);
            assert_eq!(decision.policy_id.as_deref(), Some(*expected), "{call:?}");
        }
    }
}
