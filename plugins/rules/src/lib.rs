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

use policy::{Policy, PolicySpec};

struct Rules {
    policy: Policy,
}

impl Provider for Rules {
    const NAME: &'static str = "rules";
    /// The policy inline, or `{"policy": "<YAML or JSON text>"}`: read as a
    /// value first so that either shape gets errors that name the field.
    type Config = serde_json::Value;

    fn configure(config: serde_json::Value) -> Result<Self, ConfigError> {
        let (spec, at) = match config.get("policy") {
            Some(text) => {
                let Some(text) = text.as_str() else {
                    return Err(ConfigError::field(
                        "policy",
                        "must be the policy as YAML or JSON text",
                    ));
                };
                if config.as_object().is_some_and(|m| m.len() > 1) {
                    return Err(ConfigError::new(
                        "give the policy either inline (rules, default, policy_id) or as text under `policy`, not both",
                    ));
                }
                (parse_document(text)?, "/policy")
            }
            None => (inline(config)?, ""),
        };
        Ok(Rules {
            policy: Policy::compile(spec)?.placed_at(at),
        })
    }

    fn evaluate(&self, call: &Call) -> Decision {
        self.policy.decide(call)
    }
}

/// The inline policy, with errors naming the field.
fn inline(config: serde_json::Value) -> Result<PolicySpec, ConfigError> {
    serde_path_to_error::deserialize(config).map_err(|err| {
        let path = err.path().to_string();
        let message = err.into_inner().to_string();
        if path == "." {
            ConfigError::new(message)
        } else {
            ConfigError::field(path, message)
        }
    })
}

/// A policy document (YAML, or JSON, which is YAML); the YAML parser's errors
/// already name the field and the line in the document.
fn parse_document(text: &str) -> Result<PolicySpec, ConfigError> {
    serde_norway::from_str(text).map_err(|err| ConfigError::field("policy", err.to_string()))
}

warden_provider::export!(Rules, config_schema = include_str!("../config.schema.json"));
