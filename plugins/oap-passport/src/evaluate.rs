//! One tool call, in the standard's order; the first failure decides:
//! 1. the call's shape (tool name, argument size and nesting);
//! 2. the passport (status, spec version, expiry at the call's timestamp);
//! 3. the tool's capability (mapped, and granted by the passport);
//! 4. that capability's limits.

use serde_json::{Map, Value};

use crate::config::Configured;
use crate::passport::{SPEC_VERSION, Status, parse_time};
use crate::warden::guardrail::types::ToolCall;
use crate::{Check, command, deny, files, mapping, quantities, tools, web};

/// Arguments larger than this (as JSON text) are refused.
pub const MAX_ARGUMENTS_BYTES: usize = 100 * 1024;
/// Arguments nested deeper than this are refused.
pub const MAX_ARGUMENTS_DEPTH: usize = 10;
const MAX_TOOL_NAME: usize = 128;

/// The outcome and the policy id of the decision.
pub fn evaluate(configured: &Configured, call: &ToolCall) -> (Check, String) {
    let mut policy_id = "unknown".to_string();
    let outcome = judge(configured, call, &mut policy_id);
    (outcome, policy_id)
}

fn judge(c: &Configured, call: &ToolCall, policy_id: &mut String) -> Check {
    let tool = call.tool_name.as_str();
    let name_ok = !tool.is_empty()
        && tool.len() <= MAX_TOOL_NAME
        && tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !name_ok {
        return Err(deny(
            "oap.invalid_tool_name",
            "tool names are 1-128 characters: letters, digits, '.', '_', '-'",
        ));
    }
    if call.tool_input.len() > MAX_ARGUMENTS_BYTES {
        return Err(deny(
            "oap.context_too_large",
            format!(
                "the arguments are {} bytes; the limit is {MAX_ARGUMENTS_BYTES}",
                call.tool_input.len()
            ),
        ));
    }
    let args: Map<String, Value> = match serde_json::from_str(&call.tool_input) {
        Ok(Value::Object(map)) => map,
        _ => {
            return Err(deny(
                "oap.invalid_tool_arguments",
                "the arguments are not a JSON object",
            ));
        }
    };
    if depth(&args) > MAX_ARGUMENTS_DEPTH {
        return Err(deny(
            "oap.context_too_nested",
            format!("the arguments nest deeper than {MAX_ARGUMENTS_DEPTH} levels"),
        ));
    }

    let passport = &c.passport;
    if passport.status != Status::Active {
        return Err(deny(
            "oap.passport_suspended",
            format!(
                "passport {} is {}",
                passport.passport_id,
                passport.status.as_str()
            ),
        ));
    }
    if passport.spec_version != SPEC_VERSION {
        return Err(deny(
            "oap.passport_version_mismatch",
            format!(
                "passport spec_version is '{}'; this evaluator implements {SPEC_VERSION}",
                passport.spec_version
            ),
        ));
    }
    if let Some(expiry) = passport.expiry() {
        // The call's time comes from the host, never from the sandbox's clock.
        let now = parse_time(&call.timestamp).map_err(|e| {
            deny(
                "oap.passport_expired",
                format!("cannot tell whether the passport has expired: {e}"),
            )
        })?;
        if now >= expiry {
            return Err(deny(
                "oap.passport_expired",
                format!(
                    "passport {} expired at {}",
                    passport.passport_id,
                    passport.expires_at.as_deref().unwrap_or_default()
                ),
            ));
        }
    }

    let Some(capability) = c.mapping.capability(tool) else {
        return Err(deny(
            "oap.unknown_capability",
            format!("tool '{tool}' maps to no capability"),
        ));
    };
    *policy_id = mapping::policy_id(capability);
    if !passport.grants(capability) {
        return Err(deny(
            "oap.unknown_capability",
            format!("the passport does not grant {capability} (needed by tool '{tool}')"),
        ));
    }
    let limits = passport.limits.get(capability);
    match capability {
        "system.command.execute" => command::check(&c.command, &args),
        "data.file.read" => files::check(&c.read, &args, false),
        "data.file.write" => files::check(&c.write, &args, true),
        "web.fetch" => web::check(&c.web, &args),
        "mcp.tool.execute" => tools::mcp(&c.mcp, tool, &args),
        "messaging.send" => tools::messaging(&c.messaging, &args),
        "data.export" => quantities::export(limits, &args),
        "finance.payment.refund" | "finance.payment.charge" => quantities::payment(limits, &args),
        "code.repository.merge" => quantities::pull_request(limits, &args),
        _ => Ok(()),
    }
}

/// Nesting depth of the arguments object (a flat object is 1).
fn depth(args: &Map<String, Value>) -> usize {
    fn value(v: &Value) -> usize {
        match v {
            Value::Array(items) => 1 + items.iter().map(value).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(value).max().unwrap_or(0),
            _ => 0,
        }
    }
    1 + args.values().map(value).max().unwrap_or(0)
}
