//! command-guard in Rust: see `examples/providers/README.md` for the policy,
//! which the Python and JavaScript twins implement too.

use serde::Deserialize;
use warden_provider::{Call, ConfigError, Decision, Provider};

const POLICY_ID: &str = "command-guard.v1";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    blocked_tools: Vec<String>,
    #[serde(default)]
    ask_tools: Vec<String>,
    #[serde(default)]
    blocked_commands: Vec<String>,
    #[serde(default)]
    read_only_roles: Vec<String>,
    #[serde(default)]
    write_tools: Vec<String>,
}

struct CommandGuard {
    config: Config,
}

impl Provider for CommandGuard {
    const NAME: &'static str = "command-guard";
    type Config = Config;

    fn configure(config: Config) -> Result<Self, ConfigError> {
        Ok(CommandGuard { config })
    }

    fn evaluate(&self, call: &Call) -> Decision {
        self.decide(call).with_policy_id(POLICY_ID)
    }
}

impl CommandGuard {
    fn decide(&self, call: &Call) -> Decision {
        let c = &self.config;
        let tool = call.tool_name();
        let listed = |list: &[String], item: &str| list.iter().any(|t| t == item);
        if listed(&c.blocked_tools, tool) {
            return Decision::deny("guard.tool_blocked", format!("tool '{tool}' is blocked"));
        }
        if let Some(role) = call.user_role()
            && listed(&c.read_only_roles, role)
            && listed(&c.write_tools, tool)
        {
            return Decision::deny(
                "guard.read_only",
                format!("role '{role}' may not use '{tool}'"),
            );
        }
        if let Some(command) = call.command()
            && let Some(fragment) = c
                .blocked_commands
                .iter()
                .find(|f| command.contains(f.as_str()))
        {
            return Decision::deny(
                "guard.command_blocked",
                format!("the command contains '{fragment}'"),
            );
        }
        if listed(&c.ask_tools, tool) {
            if call.is_subagent() {
                return Decision::deny(
                    "guard.subagent_needs_approval",
                    format!("a subagent cannot get approval for '{tool}'"),
                );
            }
            return Decision::ask("guard.needs_approval", format!("'{tool}' needs approval"));
        }
        Decision::allow()
    }
}

warden_provider::export!(CommandGuard);
