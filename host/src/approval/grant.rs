//! Standing grants: "approve, and allow the same call (or the calls this
//! permission rule matches) in this thread (or for this agent) for N minutes".
//! A grant is given with an approval, by the human who approves, and is never
//! wider than they chose: it is bound to the principal whose call they
//! approved, to one thread unless they chose the agent, and to the exact
//! canonical call unless they wrote a rule, which must match the call they
//! approved. A grant answers a question a human would have been asked (an ask,
//! or a tool under `hitl_approval`); it never overrides a deny.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::ApprovalError;
use super::store::ApprovalRecord;
use crate::decision::Reason;
use crate::policy::rules::Rule;
use crate::registry::Snapshot;
use crate::request::ToolCall;

/// The longest grant, in minutes: a day.
pub const MAX_GRANT_MINUTES: u64 = 24 * 60;

/// A call allowed by a standing grant instead of waiting for a human.
pub const GRANTED: &str = "warden.approval_grant";

/// Where a grant holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GrantScope {
    /// The approved call's thread only.
    Thread,
    /// Every thread of the principal (the agent's token) that made the call.
    Agent,
}

/// What an approver asks for with an `approve` decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    /// `thread` (the default) or `agent`.
    #[serde(default = "thread_scope")]
    pub scope: GrantScope,
    /// How long it holds, from 1 to 1440 minutes.
    pub minutes: u64,
    /// A permission rule (`Bash(git push *)`) the approved call matches;
    /// absent: exactly the approved call (its tool and canonical arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

fn thread_scope() -> GrantScope {
    GrantScope::Thread
}

impl GrantRequest {
    /// What the request must satisfy on its own; `at` names it in the body.
    pub fn check(&self, at: &str) -> Result<(), ApprovalError> {
        let invalid = |field: &str, message: String| ApprovalError::InvalidDecision {
            field: format!("{at}.{field}"),
            message,
        };
        if !(1..=MAX_GRANT_MINUTES).contains(&self.minutes) {
            return Err(invalid(
                "minutes",
                format!("{} is out of range 1..={MAX_GRANT_MINUTES}", self.minutes),
            ));
        }
        if let Some(rule) = &self.rule {
            Rule::parse(rule).map_err(|e| invalid("rule", e.to_string()))?;
        }
        Ok(())
    }
}

/// What a grant allows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GrantTarget {
    /// Exactly this call: the tool, and the SHA-256 of its canonical arguments.
    Call { tool: String, args_sha256: String },
    /// The calls this permission rule matches.
    Rule { rule: String },
}

/// A standing grant, as stored and listed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub grant_id: String,
    /// The principal whose calls it allows.
    pub principal: String,
    /// The thread it holds on; `None` for every thread of the principal.
    pub thread_id: Option<String>,
    pub target: GrantTarget,
    /// The approval it was given with, and who gave it.
    pub approval_id: String,
    pub granted_by: String,
    pub created_at: String,
    pub expires_at: String,
    /// Milliseconds since the epoch, for the store's comparisons.
    pub expires_at_ms: i64,
    /// When it was revoked, and by whom.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_by: Option<String>,
}

impl Grant {
    /// The grant an approver asked for with their approval of `call`, a call
    /// of the `paused` approval's message, or why
    /// it cannot be given (a rule that does not match the approved call would
    /// allow more than the human looked at).
    pub fn for_approved(
        snapshot: &Snapshot,
        request: &GrantRequest,
        at: &str,
        call: &ToolCall,
        paused: &ApprovalRecord,
        granted_by: &str,
        now_ms: i64,
    ) -> Result<Grant, ApprovalError> {
        request.check(at)?;
        let target = match &request.rule {
            None => GrantTarget::Call {
                tool: call.tool_name.clone(),
                args_sha256: args_digest(&call.tool_input),
            },
            Some(text) => {
                let rule = Rule::parse(text).map_err(|e| ApprovalError::InvalidDecision {
                    field: format!("{at}.rule"),
                    message: e.to_string(),
                })?;
                if !rule.hits(&snapshot.permissions.canonical(call)) {
                    return Err(ApprovalError::InvalidDecision {
                        field: format!("{at}.rule"),
                        message: format!(
                            "'{text}' does not match the approved call to '{}': a grant allows no more than the call it approves",
                            call.tool_name
                        ),
                    });
                }
                GrantTarget::Rule {
                    rule: rule.text().to_string(),
                }
            }
        };
        let expires_at_ms = now_ms + (request.minutes as i64) * 60_000;
        Ok(Grant {
            grant_id: format!("grt_{}", uuid::Uuid::new_v4().simple()),
            principal: paused.principal.clone(),
            thread_id: match request.scope {
                GrantScope::Thread => call.context.thread_id.clone(),
                GrantScope::Agent => None,
            },
            target,
            approval_id: paused.approval_id.clone(),
            granted_by: granted_by.to_string(),
            created_at: rfc3339(now_ms),
            expires_at: rfc3339(expires_at_ms),
            expires_at_ms,
            revoked_at: None,
            revoked_by: None,
        })
    }

    /// Whether it allows `call` at `now_ms`: live, on the call's thread, and
    /// matching the call.
    pub fn allows(&self, snapshot: &Snapshot, call: &ToolCall, now_ms: i64) -> bool {
        if self.revoked_at.is_some() || now_ms >= self.expires_at_ms {
            return false;
        }
        if let Some(thread) = &self.thread_id
            && call.context.thread_id.as_ref() != Some(thread)
        {
            return false;
        }
        match &self.target {
            GrantTarget::Call { tool, args_sha256 } => {
                *tool == call.tool_name && *args_sha256 == args_digest(&call.tool_input)
            }
            GrantTarget::Rule { rule } => {
                Rule::parse(rule).is_ok_and(|rule| rule.hits(&snapshot.permissions.canonical(call)))
            }
        }
    }

    /// The reason of a call this grant allows.
    pub fn reason(&self) -> Reason {
        let what = match &self.target {
            GrantTarget::Call { .. } => "the same call".to_string(),
            GrantTarget::Rule { rule } => format!("calls matching '{rule}'"),
        };
        let scope = match &self.thread_id {
            Some(_) => "in this thread",
            None => "for this agent",
        };
        Reason::new(
            GRANTED,
            format!(
                "allowed by grant {} from {} ({what} {scope}, until {})",
                self.grant_id, self.granted_by, self.expires_at
            ),
        )
    }
}

/// Which grants to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrantFilter {
    pub principal: Option<String>,
    /// Expired and revoked ones too.
    pub include_inactive: bool,
}

/// The SHA-256 of a value's canonical JSON (RFC 8785): key order and number
/// spelling do not make two calls differ.
pub fn args_digest(args: &Value) -> String {
    let text = serde_json_canonicalizer::to_string(args).unwrap_or_else(|_| args.to_string());
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Milliseconds since the epoch as RFC 3339.
pub fn rfc3339(ms: i64) -> String {
    use time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_ignores_key_order() {
        assert_eq!(
            args_digest(&json!({"a": 1, "b": [true, null]})),
            args_digest(&json!({"b": [true, null], "a": 1}))
        );
        assert_ne!(args_digest(&json!({"a": 1})), args_digest(&json!({"a": 2})));
    }

    #[test]
    fn a_grant_longer_than_a_day_is_refused() {
        let request = GrantRequest {
            scope: GrantScope::Thread,
            minutes: MAX_GRANT_MINUTES + 1,
            rule: None,
        };
        let err = request.check("decisions[0].grant").unwrap_err();
        assert!(
            err.to_string().contains("decisions[0].grant.minutes"),
            "{err}"
        );
    }

    #[test]
    fn a_malformed_rule_is_refused_naming_the_field() {
        let request = GrantRequest {
            scope: GrantScope::Agent,
            minutes: 5,
            rule: Some("Bash(".into()),
        };
        let err = request.check("decisions[1].grant").unwrap_err();
        assert!(err.to_string().contains("decisions[1].grant.rule"), "{err}");
    }
}
