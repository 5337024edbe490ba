//! Standing grants: "approve, and allow the same call (or the calls this
//! permission rule matches) in this thread (or for this agent) for N minutes".
//! A grant is given with an approval, by the human who approves, and is never
//! wider than they chose: it is bound to the principal whose call they
//! approved, to one thread unless they chose the agent, and to the exact
//! canonical call unless they wrote a rule. A rule grant covers a call the way
//! an allow rule does (`Rule::covers`): every command the call would run,
//! every path it targets, every domain it fetches must match, and nothing in
//! it may hide from the analysis; so approving `git status` with
//! `Bash(git status*)` does not cover `git status; rm -rf ./src`. The rule must
//! cover the call the human approved, and covers nothing else later. A grant
//! answers a question a human would have been asked (an ask, or a tool under
//! `hitl_approval`); it never overrides a deny.

use serde_json::Value;
use sha2::{Digest, Sha256};

use warden::Snapshot;
use warden_policy::canonical::CanonicalCall;
use warden_policy::rules::Rule;
use warden_types::decision::Reason;
use warden_types::error::ApprovalError;
use warden_types::request::ToolCall;

pub use warden_types::approval::{Grant, GrantRequest, GrantScope, GrantTarget, MAX_GRANT_MINUTES};

/// A call allowed by a standing grant instead of waiting for a human.
use warden_types::codes::APPROVAL_GRANT;

/// What a grant request must satisfy on its own, its rule's syntax included;
/// `at` names it in the body.
pub fn check_grant(request: &GrantRequest, at: &str) -> Result<(), ApprovalError> {
    request.check(at)?;
    if let Some(rule) = &request.rule {
        Rule::parse(rule).map_err(|e| ApprovalError::InvalidDecision {
            field: format!("{at}.rule"),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// What the gate does with grants: give one with an approval, and ask whether
/// one allows a call (the grant itself is a wire type in `warden-types`).
pub trait GrantExt: Sized {
    /// The grant an approver asked for with their approval of `call`, a call
    /// of the paused approval `approval_id` of `principal`, or why
    /// it cannot be given (a rule that does not match the approved call would
    /// allow more than the human looked at).
    fn for_approved(
        snapshot: &Snapshot,
        request: &GrantRequest,
        at: &str,
        call: &ToolCall,
        principal_and_approval: (&str, &str),
        granted_by: &str,
        now_ms: i64,
    ) -> Result<Self, ApprovalError>;

    /// Whether it allows `call` at `now_ms`: live, on the call's thread, and
    /// matching the call.
    fn allows(&self, snapshot: &Snapshot, call: &ToolCall, now_ms: i64) -> bool;

    /// The reason of a call this grant allows.
    fn reason(&self) -> Reason;
}

impl GrantExt for Grant {
    fn for_approved(
        snapshot: &Snapshot,
        request: &GrantRequest,
        at: &str,
        call: &ToolCall,
        (principal, approval_id): (&str, &str),
        granted_by: &str,
        now_ms: i64,
    ) -> Result<Grant, ApprovalError> {
        check_grant(request, at)?;
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
                if let Err(why) = rule_covers(&rule, &snapshot.permissions().canonical(call)) {
                    return Err(ApprovalError::InvalidDecision {
                        field: format!("{at}.rule"),
                        message: format!(
                            "'{text}' does not match the approved call to '{}' ({why}): a grant allows no more than the call it approves",
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
            principal: principal.to_string(),
            thread_id: match request.scope {
                GrantScope::Thread => call.context.thread_id.clone(),
                GrantScope::Agent => None,
            },
            target,
            approval_id: approval_id.to_string(),
            granted_by: granted_by.to_string(),
            created_at: rfc3339(now_ms),
            expires_at: rfc3339(expires_at_ms),
            expires_at_ms,
            revoked_at: None,
            revoked_by: None,
        })
    }

    fn allows(&self, snapshot: &Snapshot, call: &ToolCall, now_ms: i64) -> bool {
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
            GrantTarget::Rule { rule } => Rule::parse(rule).is_ok_and(|rule| {
                rule_covers(&rule, &snapshot.permissions().canonical(call)).is_ok()
            }),
        }
    }

    fn reason(&self) -> Reason {
        let what = match &self.target {
            GrantTarget::Call { .. } => "the same call".to_string(),
            GrantTarget::Rule { rule } => format!("calls matching '{rule}'"),
        };
        let scope = match &self.thread_id {
            Some(_) => "in this thread",
            None => "for this agent",
        };
        Reason::new(
            APPROVAL_GRANT,
            format!(
                "allowed by grant {} from {} ({what} {scope}, until {})",
                self.grant_id, self.granted_by, self.expires_at
            ),
        )
    }
}

/// Whether a rule grant covers a call: as the rule under `permissions.allow`
/// would allow it, with every part matched and nothing hidden (an allow rule
/// only asks about what the analysis cannot see through or hides characters,
/// and a grant must not answer that question for a human); otherwise why not.
fn rule_covers(rule: &Rule, call: &CanonicalCall) -> Result<(), String> {
    if !rule.covers(call) {
        return Err("it must match every command, path or domain the call names".into());
    }
    if let Some(opaque) = call.opaque.first() {
        return Err(format!("part of the call cannot be analysed: {opaque}"));
    }
    if let Some(hidden) = call.suspicious.first() {
        return Err(format!("the call hides characters: {hidden}"));
    }
    Ok(())
}

/// Which grants to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrantFilter {
    /// Only this principal's grants (all principals' when `None`).
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
        let err = check_grant(&request, "decisions[0].grant").unwrap_err();
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
        let err = check_grant(&request, "decisions[1].grant").unwrap_err();
        assert!(err.to_string().contains("decisions[1].grant.rule"), "{err}");
    }
}
