//! `mcp.tool.execute` and `messaging.send`. Their lists (servers, tools,
//! tool prefixes, recipients) are looked up in sets, not scanned (issue 28).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::passport::Limits;
use crate::{Check, Denial, Outcome, deny};

/// The `mcp.tool.execute` limits of a passport, compiled.
#[derive(Debug, Default)]
pub struct McpPolicy {
    servers: Option<HashSet<String>>,
    tools: Option<HashSet<String>>,
    prefixes: Option<PrefixSet>,
}

impl McpPolicy {
    pub fn compile(limits: Option<&Limits>) -> McpPolicy {
        let Some(limits) = limits else {
            return McpPolicy::default();
        };
        let set = |list: &Option<Vec<String>>| list.as_ref().map(|l| l.iter().cloned().collect());
        McpPolicy {
            servers: set(&limits.allowed_servers),
            tools: set(&limits.allowed_tools),
            prefixes: limits.allowed_tool_prefixes.as_deref().map(PrefixSet::new),
        }
    }
}

/// Prefixes, looked up by each length a listed prefix has: as many lookups
/// as there are distinct lengths no longer than the name.
#[derive(Debug, Default)]
struct PrefixSet {
    prefixes: HashSet<String>,
    /// Ascending.
    lengths: Vec<usize>,
}

impl PrefixSet {
    fn new(prefixes: &[String]) -> PrefixSet {
        let mut lengths: Vec<usize> = prefixes.iter().map(String::len).collect();
        lengths.sort_unstable();
        lengths.dedup();
        PrefixSet {
            prefixes: prefixes.iter().cloned().collect(),
            lengths,
        }
    }

    /// Whether `name` starts with one of the prefixes.
    fn starts(&self, name: &str) -> bool {
        self.lengths
            .iter()
            .take_while(|&&len| len <= name.len())
            .any(|&len| name.is_char_boundary(len) && self.prefixes.contains(&name[..len]))
    }
}

/// The `messaging.send` limits of a passport, compiled.
#[derive(Debug, Default)]
pub struct MessagingPolicy {
    /// Trimmed, ASCII lower-case: compared ignoring ASCII case.
    recipients: Option<HashSet<String>>,
    approval_required: bool,
}

impl MessagingPolicy {
    pub fn compile(limits: Option<&Limits>) -> MessagingPolicy {
        let Some(limits) = limits else {
            return MessagingPolicy::default();
        };
        MessagingPolicy {
            recipients: (limits.allowed_recipients.as_ref())
                .map(|r| r.iter().map(|r| recipient_key(r)).collect()),
            approval_required: limits.approval_required == Some(true),
        }
    }
}

fn recipient_key(recipient: &str) -> String {
    recipient.trim().to_ascii_lowercase()
}

/// The server and tool of an MCP call: from the tool name (`mcp__server__tool`,
/// `mcp.server.tool`), else from the `server` and `tool` arguments.
fn mcp_target<'a>(
    tool: &'a str,
    args: &'a Map<String, Value>,
) -> (Option<&'a str>, Option<&'a str>) {
    let split = if let Some(rest) = tool.strip_prefix("mcp__") {
        rest.split_once("__")
    } else if let Some(rest) = tool.strip_prefix("mcp.") {
        rest.split_once('.')
    } else {
        None
    };
    match split {
        Some((server, name)) if !server.is_empty() && !name.is_empty() => {
            (Some(server), Some(name))
        }
        _ => (
            args.get("server").and_then(Value::as_str),
            args.get("tool").and_then(Value::as_str),
        ),
    }
}

pub fn mcp(policy: &McpPolicy, tool: &str, args: &Map<String, Value>) -> Check {
    let (server, name) = mcp_target(tool, args);
    if let Some(servers) = &policy.servers
        && !server.is_some_and(|s| servers.contains(s))
    {
        return Err(deny(
            "oap.mcp_server_not_allowed",
            format!(
                "MCP server '{}' is not in allowed_servers",
                server.unwrap_or("?")
            ),
        ));
    }
    let tools = policy.tools.as_ref();
    let prefixes = policy.prefixes.as_ref();
    if tools.is_some() || prefixes.is_some() {
        let ok = name.is_some_and(|n| {
            tools.is_some_and(|t| t.contains(n) || t.contains(tool))
                || prefixes.is_some_and(|p| p.starts(n))
        });
        if !ok {
            return Err(deny(
                "oap.mcp_tool_not_allowed",
                format!("MCP tool '{}' is not allowed", name.unwrap_or(tool)),
            ));
        }
    }
    Ok(())
}

pub fn messaging(policy: &MessagingPolicy, args: &Map<String, Value>) -> Check {
    if let Some(allowed) = &policy.recipients {
        let mut recipients: Vec<&str> = Vec::new();
        for key in ["to", "recipient", "recipients", "channel"] {
            match args.get(key) {
                Some(Value::String(s)) => recipients.push(s),
                Some(Value::Array(items)) => {
                    for item in items {
                        match item.as_str() {
                            Some(s) => recipients.push(s),
                            None => {
                                return Err(deny(
                                    "oap.invalid_tool_arguments",
                                    format!("`{key}` must list strings"),
                                ));
                            }
                        }
                    }
                }
                Some(_) => {
                    return Err(deny(
                        "oap.invalid_tool_arguments",
                        format!("`{key}` must be a string or a list"),
                    ));
                }
                None => {}
            }
        }
        if recipients.is_empty() {
            return Err(deny(
                "oap.missing_required_context",
                "the passport limits the recipients: the call must name them (`to`, `recipient`, `recipients`, `channel`)",
            ));
        }
        if let Some(r) = recipients
            .iter()
            .find(|r| !allowed.contains(&recipient_key(r)))
        {
            return Err(deny(
                "oap.recipient_not_allowed",
                format!("'{r}' is not in allowed_recipients"),
            ));
        }
    }
    if policy.approval_required {
        return Err(Denial {
            verdict: Outcome::Ask,
            code: "oap.approval_required",
            message: "the passport requires a human's approval to send messages".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn name() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(&["", "a", "b", "_", "é", "A"][..]),
            0..5,
        )
        .prop_map(|parts| parts.concat())
    }

    fn limits(value: Value) -> Limits {
        serde_json::from_value(value).unwrap()
    }

    fn args(value: Value) -> Map<String, Value> {
        serde_json::from_value(value).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn the_prefix_set_finds_a_prefix_where_the_scan_does(
            prefixes in prop::collection::vec(name(), 0..8),
            names in prop::collection::vec(name(), 1..8),
        ) {
            let set = PrefixSet::new(&prefixes);
            for n in &names {
                let scanned = prefixes.iter().any(|p| n.starts_with(p.as_str()));
                prop_assert_eq!(set.starts(n), scanned, "{}", n);
            }
        }

        #[test]
        fn the_recipient_set_allows_what_the_scan_allows(
            allowed in prop::collection::vec(name(), 0..6),
            recipient in name(),
            pad in prop::sample::select(&["", " ", "\t"][..]),
        ) {
            let allowed: Vec<String> = allowed.iter().map(|a| format!("{pad}{a}")).collect();
            let policy = MessagingPolicy::compile(Some(&limits(json!({"allowed_recipients": allowed}))));
            let scanned = allowed.iter().any(|a| a.trim().eq_ignore_ascii_case(recipient.trim()));
            let judged = messaging(&policy, &args(json!({"to": format!("{recipient}{pad}")})));
            // An empty recipient is a recipient like any other here.
            prop_assert_eq!(judged.is_ok(), scanned);
        }
    }

    #[test]
    fn a_tool_is_allowed_by_name_by_full_name_or_by_prefix() {
        let policy = McpPolicy::compile(Some(&limits(json!({
            "allowed_servers": ["git", "fs"],
            "allowed_tools": ["status", "mcp__fs__read"],
            "allowed_tool_prefixes": ["list_", "lé"],
        }))));
        let judge = |tool: &str| mcp(&policy, tool, &Map::new()).map_err(|d| d.code);
        assert_eq!(judge("mcp__git__status"), Ok(()));
        assert_eq!(judge("mcp__fs__read"), Ok(()));
        assert_eq!(judge("mcp__fs__list_dir"), Ok(()));
        assert_eq!(judge("mcp__git__list_"), Ok(()));
        assert_eq!(judge("mcp__git__push"), Err("oap.mcp_tool_not_allowed"));
        assert_eq!(judge("mcp__git__read"), Err("oap.mcp_tool_not_allowed"));
        assert_eq!(judge("mcp__web__status"), Err("oap.mcp_server_not_allowed"));
        assert_eq!(judge("mcp__git__l"), Err("oap.mcp_tool_not_allowed"));
    }
}
