//! The allowlist provider: DeerFlow's built-in `AllowlistProvider`, as a sandboxed
//! component. Config: `allowed_tools` (absent: no allowlist; empty: nothing is
//! allowed) and `denied_tools`. The allowlist is checked first.

use serde::Deserialize;
use warden_provider::{Call, ConfigError, Decision, Provider};

/// The reason code of both denials, as in DeerFlow.
const NOT_ALLOWED: &str = "oap.tool_not_allowed";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    allowed_tools: Option<Vec<String>>,
    denied_tools: Option<Vec<String>>,
}

struct Allowlist {
    allowed: Option<Vec<String>>,
    denied: Vec<String>,
}

impl Provider for Allowlist {
    const NAME: &'static str = "allowlist";
    type Config = Config;

    fn configure(config: Config) -> Result<Self, ConfigError> {
        Ok(Allowlist {
            allowed: config.allowed_tools,
            denied: config.denied_tools.unwrap_or_default(),
        })
    }

    fn evaluate(&self, call: &Call) -> Decision {
        let tool = call.tool_name();
        let listed = |list: &[String]| list.iter().any(|t| t == tool);
        if self
            .allowed
            .as_deref()
            .is_some_and(|allowed| !listed(allowed))
        {
            return Decision::deny(NOT_ALLOWED, format!("tool '{tool}' not in allowlist"));
        }
        if listed(&self.denied) {
            return Decision::deny(NOT_ALLOWED, format!("tool '{tool}' is denied"));
        }
        Decision::allow()
    }
}

warden_provider::export!(
    Allowlist,
    config_schema = include_str!("../config.schema.json")
);
