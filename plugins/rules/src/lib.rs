//! The rules provider: DeerFlow's example of a custom, context-aware provider,
//! done properly. An ordered list of rules with priorities over the request's
//! fields (`tool_name`, `user_role`, `role_tool_key`, `command`, `message`,
//! `thread_id`, `agent_id`, any argument by path, ...), with the operators
//! `eq`, `ne`, `in`, `contains`, `glob` and `matches` (a regex, compiled once),
//! the actions `allow`, `ask` and `deny`, and a default action. Every decision
//! names the rule that decided, in `policy_id` (`<policy>#<rule>`) and in the
//! metadata (`rule`, and `rule_pointer`: where the rule is written in the
//! configuration, as a JSON pointer the host turns into a file and a line).
//!
//! The policy is the provider's config, inline (`rules:`, `default:`,
//! `policy_id:`), or a YAML or JSON document as text under `policy:`.

mod condition;
mod index;
mod policy;

use warden_provider::{Call, ConfigError, Decision, Provider};

use policy::{Given, Policy, PolicySpec, ProviderConfig};

struct Rules {
    policy: Policy,
}

impl Provider for Rules {
    const NAME: &'static str = "rules";
    type Config = ProviderConfig;

    fn configure(config: ProviderConfig) -> Result<Self, ConfigError> {
        let (spec, at) = match config.given()? {
            Given::Inline(spec) => (spec, ""),
            Given::Document(text) => (parse_document(&text)?, "/policy"),
        };
        Ok(Rules {
            policy: Policy::compile(spec)?.placed_at(at),
        })
    }

    fn evaluate(&self, call: &Call) -> Decision {
        self.policy.decide(call)
    }
}

/// A policy document (YAML, or JSON, which is YAML); the YAML parser's errors
/// already name the field and the line in the document.
fn parse_document(text: &str) -> Result<PolicySpec, ConfigError> {
    serde_norway::from_str(text).map_err(|err| ConfigError::field("policy", err.to_string()))
}

warden_provider::export!(Rules, config_schema = include_str!("../config.schema.json"));

#[cfg(test)]
mod tests {
    use warden_provider::configure_json;

    use super::Rules;

    /// The error `configure` gives for `config`, as "field: message".
    fn refusal(config: &str) -> String {
        match configure_json::<Rules>(config) {
            Ok(_) => panic!("{config} was accepted"),
            Err(err) => format!("{}: {}", err.field_path().unwrap_or("."), err.message()),
        }
    }

    #[test]
    fn a_policy_given_both_inline_and_as_text_is_refused() {
        let err = refusal(r#"{"policy": "rules: []", "default": "allow"}"#);
        assert!(err.contains("either inline"), "{err}");
    }

    #[test]
    fn a_policy_text_that_is_not_text_is_refused_naming_the_field() {
        let err = refusal(r#"{"policy": {"rules": []}}"#);
        assert_eq!(err, "policy: must be the policy as YAML or JSON text");
    }

    #[test]
    fn a_null_default_is_refused_not_read_as_absent() {
        let err = refusal(r#"{"default": null, "rules": []}"#);
        assert!(err.starts_with("default: "), "{err}");
    }

    #[test]
    fn a_rule_field_in_error_is_named_by_its_path() {
        let config = r#"{"rules": [{"id": "a", "action": "allow"},
            {"id": "b", "action": "allow", "when": [{"field": "command", "op": "like", "value": "x"}]}]}"#;
        let err = refusal(config);
        assert!(err.starts_with("rules[1].when[0].op: "), "{err}");
    }

    #[test]
    fn a_policy_given_as_text_decides_like_the_same_policy_inline() {
        let inline = r#"{"default": "allow", "rules": [{"id": "no-rm", "action": "deny",
            "when": [{"field": "tool_name", "op": "eq", "value": "rm"}]}]}"#;
        let text = serde_json::json!({"policy": inline}).to_string();
        for config in [inline, text.as_str()] {
            let rules = configure_json::<Rules>(config).expect("the policy loads");
            let decision = rules
                .policy
                .decide(&warden_provider::Call::new("rm", serde_json::json!({})));
            assert_eq!(decision.verdict, warden_provider::Verdict::Deny, "{config}");
        }
    }
}
