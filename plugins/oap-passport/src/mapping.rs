//! Which capability a tool needs: rules over the lower-cased tool name, the
//! first matching rule wins. The operator's rules come first; the shipped
//! ones (DeerFlow's tool names and the reference evaluator's families) follow
//! unless `replace_default_mapping` drops them.

use serde::Deserialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Match {
    Exact,
    Prefix,
    Contains,
}

#[derive(Clone, Debug)]
struct Rule {
    how: Match,
    pattern: String,
    capability: String,
}

/// A rule as the operator writes it: exactly one of `exact`, `prefix`,
/// `contains`, and the capability.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    #[serde(default)]
    exact: Option<String>,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    contains: Option<String>,
    capability: String,
}

/// The shipped mapping, in order.
const DEFAULTS: &[(Match, &str, &str)] = &[
    (Match::Prefix, "git.", "code.repository.merge"),
    (Match::Prefix, "mcp.", "mcp.tool.execute"),
    (Match::Prefix, "mcp__", "mcp.tool.execute"),
    (Match::Prefix, "exec.", "system.command.execute"),
    (Match::Prefix, "system.", "system.command.execute"),
    (Match::Contains, "bash", "system.command.execute"),
    (Match::Contains, "shell", "system.command.execute"),
    (Match::Contains, "exec", "system.command.execute"),
    (Match::Contains, "command", "system.command.execute"),
    (Match::Contains, "process", "system.command.execute"),
    (Match::Prefix, "message", "messaging.send"),
    (Match::Contains, "messaging", "messaging.send"),
    (Match::Contains, "email", "messaging.send"),
    (Match::Contains, "slack", "messaging.send"),
    (Match::Contains, "sms", "messaging.send"),
    (Match::Contains, "payment.refund", "finance.payment.refund"),
    (Match::Contains, "payment.charge", "finance.payment.charge"),
    (Match::Prefix, "database.", "data.export"),
    (Match::Contains, "data.export", "data.export"),
    (Match::Contains, "write_file", "data.file.write"),
    (Match::Contains, "str_replace", "data.file.write"),
    (Match::Contains, "file.write", "data.file.write"),
    (Match::Contains, "file.edit", "data.file.write"),
    (Match::Prefix, "edit", "data.file.write"),
    (Match::Prefix, "write", "data.file.write"),
    (Match::Contains, "read_file", "data.file.read"),
    (Match::Contains, "file.read", "data.file.read"),
    (Match::Contains, "view_image", "data.file.read"),
    (Match::Contains, "present_file", "data.file.read"),
    (Match::Exact, "ls", "data.file.read"),
    (Match::Prefix, "read", "data.file.read"),
    (Match::Contains, "web_search", "web.fetch"),
    (Match::Contains, "web_fetch", "web.fetch"),
    (Match::Contains, "image_search", "web.fetch"),
    (Match::Contains, "webfetch", "web.fetch"),
    (Match::Contains, "web.search", "web.fetch"),
    (Match::Contains, "web.fetch", "web.fetch"),
    (Match::Exact, "ask_clarification", "agent.session.create"),
    (Match::Contains, "task", "agent.session.create"),
];

/// Tool name → capability.
#[derive(Clone, Debug)]
pub struct Mapping {
    rules: Vec<Rule>,
}

impl Mapping {
    /// The operator's rules, then (unless replaced) the shipped ones.
    pub fn new(specs: Vec<RuleSpec>, replace_defaults: bool) -> Result<Mapping, String> {
        let mut rules = Vec::new();
        for (i, spec) in specs.into_iter().enumerate() {
            let at = format!("tool_mapping[{i}]");
            let given: Vec<(Match, String)> = [
                (Match::Exact, spec.exact),
                (Match::Prefix, spec.prefix),
                (Match::Contains, spec.contains),
            ]
            .into_iter()
            .filter_map(|(how, p)| p.map(|p| (how, p)))
            .collect();
            let [(how, pattern)] = given.as_slice() else {
                return Err(format!(
                    "{at}: give exactly one of `exact`, `prefix`, `contains`"
                ));
            };
            if pattern.is_empty() {
                return Err(format!("{at}: the pattern is empty"));
            }
            if spec.capability.is_empty() {
                return Err(format!("{at}.capability: must not be empty"));
            }
            rules.push(Rule {
                how: *how,
                pattern: pattern.to_lowercase(),
                capability: spec.capability,
            });
        }
        if !replace_defaults {
            rules.extend(DEFAULTS.iter().map(|&(how, pattern, capability)| Rule {
                how,
                pattern: pattern.into(),
                capability: capability.into(),
            }));
        }
        Ok(Mapping { rules })
    }

    /// The capability the tool needs, if any rule maps it.
    pub fn capability(&self, tool: &str) -> Option<&str> {
        let name = tool.to_ascii_lowercase();
        self.rules
            .iter()
            .find(|r| match r.how {
                Match::Exact => name == r.pattern,
                Match::Prefix => name.starts_with(&r.pattern),
                // A plain scan: names and patterns are short, and building a
                // two-way searcher per rule (as `str::contains` does) costs more.
                Match::Contains => name
                    .as_bytes()
                    .windows(r.pattern.len())
                    .any(|w| w == r.pattern.as_bytes()),
            })
            .map(|r| r.capability.as_str())
    }
}

/// The policy pack id of a capability (`system.command.execute.v1`).
pub fn policy_id(capability: &str) -> String {
    match capability {
        "messaging.send" => "messaging.message.send.v1".into(),
        "data.export" => "data.export.create.v1".into(),
        other => format!("{other}.v1"),
    }
}
