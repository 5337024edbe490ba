//! `mcp.tool.execute` and `messaging.send`.

use serde_json::{Map, Value};

use crate::passport::Limits;
use crate::{Check, Denial, Outcome, deny};

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

pub fn mcp(limits: Option<&Limits>, tool: &str, args: &Map<String, Value>) -> Check {
    let Some(limits) = limits else { return Ok(()) };
    let (server, name) = mcp_target(tool, args);
    if let Some(servers) = &limits.allowed_servers
        && !server.is_some_and(|s| servers.iter().any(|a| a == s))
    {
        return Err(deny(
            "oap.mcp_server_not_allowed",
            format!(
                "MCP server '{}' is not in allowed_servers",
                server.unwrap_or("?")
            ),
        ));
    }
    let tools = limits.allowed_tools.as_ref();
    let prefixes = limits.allowed_tool_prefixes.as_ref();
    if tools.is_some() || prefixes.is_some() {
        let ok = name.is_some_and(|n| {
            tools.is_some_and(|t| t.iter().any(|a| a == n || a == tool))
                || prefixes.is_some_and(|p| p.iter().any(|a| n.starts_with(a.as_str())))
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

pub fn messaging(limits: Option<&Limits>, args: &Map<String, Value>) -> Check {
    let Some(limits) = limits else { return Ok(()) };
    if let Some(allowed) = &limits.allowed_recipients {
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
        if let Some(r) = recipients.iter().find(|r| {
            !allowed
                .iter()
                .any(|a| a.trim().eq_ignore_ascii_case(r.trim()))
        }) {
            return Err(deny(
                "oap.recipient_not_allowed",
                format!("'{r}' is not in allowed_recipients"),
            ));
        }
    }
    if limits.approval_required == Some(true) {
        return Err(Denial {
            verdict: Outcome::Ask,
            code: "oap.approval_required",
            message: "the passport requires a human's approval to send messages".into(),
        });
    }
    Ok(())
}
