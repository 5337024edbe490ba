//! The policy: rules ordered by priority (highest first; equal priorities keep
//! the order they are written in), each a list of conditions that must all
//! hold and an action; the first rule that matches decides, and the default
//! action decides when none does. Checked and compiled once in `configure`.

use std::collections::HashMap;

use serde::Deserialize;
use warden_provider::{Call, ConfigError, Decision, Verdict};

use crate::condition::{Condition, ConditionSpec};

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
    id: String,
    priority: i64,
    conditions: Vec<Condition>,
    action: Action,
    code: String,
    message: String,
}

/// A compiled policy, rules in the order they are tried.
#[derive(Debug)]
pub struct Policy {
    policy_id: String,
    default: Action,
    rules: Vec<Rule>,
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
        Ok(Policy {
            policy_id: spec.policy_id,
            default: spec.default,
            rules,
        })
    }

    /// The decision of the first matching rule, or of the default action.
    pub fn decide(&self, call: &Call) -> Decision {
        match self
            .rules
            .iter()
            .find(|rule| rule.conditions.iter().all(|c| c.holds(call)))
        {
            Some(rule) => Decision::new(rule.action.verdict(), &rule.code, &rule.message)
                .with_policy_id(format!("{}#{}", self.policy_id, rule.id))
                .with_metadata("rule", rule.id.as_str())
                .with_metadata("priority", rule.priority),
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
