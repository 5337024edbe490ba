//! The allowlist provider: DeerFlow's built-in `AllowlistProvider`, as a sandboxed
//! component. Config: `allowed_tools` (absent: no allowlist; empty: nothing is
//! allowed) and `denied_tools`. The allowlist is checked first.

use std::cell::RefCell;

use serde::Deserialize;

wit_bindgen::generate!({ path: "../../wit", world: "guardrail-provider" });

use exports::warden::guardrail::provider::Guest;
use warden::guardrail::types::{Decision, ProviderInfo, Reason, ToolCall, Verdict};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    allowed_tools: Option<Vec<String>>,
    denied_tools: Option<Vec<String>>,
}

thread_local! {
    static CONFIG: RefCell<Config> = RefCell::new(Config::default());
}

struct Allowlist;

impl Guest for Allowlist {
    fn info() -> ProviderInfo {
        ProviderInfo {
            name: "allowlist".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn configure(config: String) -> Result<(), String> {
        let config: Config =
            serde_json::from_str(&config).map_err(|e| format!("allowlist config: {e}"))?;
        CONFIG.with(|c| *c.borrow_mut() = config);
        Ok(())
    }

    fn evaluate(call: ToolCall) -> Decision {
        CONFIG.with(|c| judge(&c.borrow(), &call.tool_name))
    }
}

fn judge(config: &Config, tool: &str) -> Decision {
    let listed = |list: &Option<Vec<String>>| list.as_ref().map(|l| l.iter().any(|t| t == tool));
    if listed(&config.allowed_tools) == Some(false) {
        return deny(format!("tool '{tool}' not in allowlist"));
    }
    if listed(&config.denied_tools) == Some(true) {
        return deny(format!("tool '{tool}' is denied"));
    }
    Decision {
        verdict: Verdict::Allow,
        reasons: vec![Reason {
            code: "oap.allowed".into(),
            message: String::new(),
        }],
        policy_id: None,
        metadata: "{}".into(),
    }
}

fn deny(message: String) -> Decision {
    Decision {
        verdict: Verdict::Deny,
        reasons: vec![Reason {
            code: "oap.tool_not_allowed".into(),
            message,
        }],
        policy_id: None,
        metadata: "{}".into(),
    }
}

export!(Allowlist);
