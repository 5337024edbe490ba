//! A provider's opinion on a call, built with [`Decision::allow`],
//! [`Decision::deny`] or [`Decision::ask`] and refined with a policy id,
//! further reasons and metadata.

use serde_json::{Map, Value};

use crate::bindings::warden::guardrail::types as wit;

/// Reason codes with a meaning shared by all providers: the host's own
/// (`warden_types::codes`), so that a provider and the host cannot disagree.
pub mod codes {
    /// `ALLOWED`: the call may run (the reason of
    /// [`Decision::allow`](crate::Decision::allow)). `HOST_PREFIX`: codes under
    /// it belong to the host, and a decision that uses one is refused as
    /// invalid (`warden.invalid_decision`).
    pub use warden_types::codes::{ALLOWED, HOST_PREFIX};
}

/// An opinion. The host orders them `Allow < Ask < Deny`, and the strictest
/// opinion of all stages decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// The call may run as far as this provider is concerned.
    Allow,
    /// A human should approve the call first (a deny where nobody can be asked).
    Ask,
    /// The call must not run.
    Deny,
}

impl Verdict {
    /// The verdict as the wire spells it: `allow`, `ask` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Why: a stable dotted code (`oap.tool_not_allowed`) and a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// The stable dotted code, e.g. `oap.tool_not_allowed`.
    pub code: String,
    /// A sentence for the person reading the decision.
    pub message: String,
}

/// A provider's opinion on one call.
///
/// ```
/// use warden_provider::{json, Decision, Verdict};
///
/// let d = Decision::deny("shell.destructive", "rm -rf is not allowed")
///     .with_policy_id("shell.v1")
///     .with_metadata("rule", "no-rm-rf");
/// assert_eq!(d.verdict, Verdict::Deny);
/// assert_eq!(d.code(), Some("shell.destructive"));
/// assert_eq!(d.metadata["rule"], json!("no-rm-rf"));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Decision {
    /// The opinion: allow, ask or deny.
    pub verdict: Verdict,
    /// Why; the first reason is the main one.
    pub reasons: Vec<Reason>,
    /// The policy that decided.
    pub policy_id: Option<String>,
    /// Extra facts for the audit log.
    pub metadata: Map<String, Value>,
}

impl Decision {
    /// Allow, with the reason `oap.allowed`.
    pub fn allow() -> Self {
        Decision::new(Verdict::Allow, codes::ALLOWED, "")
    }

    /// Deny, with a reason code and a message for the agent and the audit log.
    pub fn deny(code: impl Into<String>, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Deny, code, message)
    }

    /// Ask a human first, with a reason code and a message for the approver.
    pub fn ask(code: impl Into<String>, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Ask, code, message)
    }

    /// Any verdict with its main reason.
    pub fn new(verdict: Verdict, code: impl Into<String>, message: impl Into<String>) -> Self {
        Decision {
            verdict,
            reasons: vec![Reason {
                code: code.into(),
                message: message.into(),
            }],
            policy_id: None,
            metadata: Map::new(),
        }
    }

    /// Adds a further reason after the ones already given.
    pub fn with_reason(mut self, code: impl Into<String>, message: impl Into<String>) -> Self {
        self.reasons.push(Reason {
            code: code.into(),
            message: message.into(),
        });
        self
    }

    /// Names the policy that decided.
    pub fn with_policy_id(mut self, policy_id: impl Into<String>) -> Self {
        self.policy_id = Some(policy_id.into());
        self
    }

    /// Records a fact for the audit log.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The main reason's code.
    pub fn code(&self) -> Option<&str> {
        self.reasons.first().map(|r| r.code.as_str())
    }

    /// The main reason's message.
    pub fn message(&self) -> Option<&str> {
        self.reasons.first().map(|r| r.message.as_str())
    }
}

impl From<Decision> for wit::Decision {
    fn from(d: Decision) -> Self {
        wit::Decision {
            verdict: match d.verdict {
                Verdict::Allow => wit::Verdict::Allow,
                Verdict::Ask => wit::Verdict::Ask,
                Verdict::Deny => wit::Verdict::Deny,
            },
            reasons: d
                .reasons
                .into_iter()
                .map(|r| wit::Reason {
                    code: r.code,
                    message: r.message,
                })
                .collect(),
            policy_id: d.policy_id,
            metadata: if d.metadata.is_empty() {
                "{}".to_string()
            } else {
                Value::Object(d.metadata).to_string()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_carries_the_allowed_code() {
        let d = Decision::allow();
        assert_eq!(d.verdict, Verdict::Allow);
        assert_eq!(d.code(), Some("oap.allowed"));
        assert_eq!(d.message(), Some(""));
    }

    #[test]
    fn deny_and_ask_carry_their_reason_first() {
        let d = Decision::ask("x.review", "please look").with_reason("x.more", "detail");
        assert_eq!(d.verdict, Verdict::Ask);
        assert_eq!(d.code(), Some("x.review"));
        assert_eq!(d.reasons[1].code, "x.more");
        assert_eq!(Decision::deny("x.no", "no").verdict, Verdict::Deny);
    }

    #[test]
    fn verdicts_order_from_allow_to_deny() {
        assert!(Verdict::Allow < Verdict::Ask && Verdict::Ask < Verdict::Deny);
    }

    #[test]
    fn empty_metadata_becomes_an_empty_json_object() {
        assert_eq!(wit::Decision::from(Decision::allow()).metadata, "{}");
    }

    #[test]
    fn metadata_and_policy_id_reach_the_contract() {
        let d: wit::Decision = Decision::deny("a.b", "c")
            .with_policy_id("p.v1")
            .with_metadata("rule", "r1")
            .with_metadata("priority", 10)
            .into();
        assert_eq!(d.policy_id.as_deref(), Some("p.v1"));
        let meta: Value = serde_json::from_str(&d.metadata).unwrap();
        assert_eq!(meta, serde_json::json!({"rule": "r1", "priority": 10}));
        assert!(matches!(d.verdict, wit::Verdict::Deny));
    }
}
