//! Verdicts, reasons and decisions: the vocabulary every stage of the pipeline
//! speaks (the library combines them: the strictest verdict wins).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An opinion on a tool call. Ordered: `Allow < Ask < Deny`; the strictest wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The call may run.
    Allow,
    /// A human must approve the call first; where nobody can be asked, a deny.
    Ask,
    /// The call must not run.
    Deny,
}

impl Verdict {
    /// The verdict as the wire spells it (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, not `write_str`: a width (`{verdict:<5}`) lines up columns.
        f.pad(self.as_str())
    }
}

/// Why a stage reached its verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Reason {
    /// A stable, machine-readable code (`warden.*` for the host's, a provider's own otherwise).
    pub code: String,
    /// For a human; may be empty.
    #[serde(default)]
    pub message: String,
}

impl Reason {
    /// A reason with this code and message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Reason {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// One stage's opinion, or the combined decision of all stages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, most important first.
    pub reasons: Vec<Reason>,
    /// The policy that decided, when the stage names one.
    pub policy_id: Option<String>,
    /// Free-form facts for the caller and the audit log (a passport's id, a failure's detail code).
    pub metadata: Map<String, Value>,
}

impl Decision {
    /// A decision with no policy id and no metadata.
    pub fn new(verdict: Verdict, reasons: Vec<Reason>) -> Self {
        Decision {
            verdict,
            reasons,
            policy_id: None,
            metadata: Map::new(),
        }
    }

    /// An allow with one reason.
    pub fn allow(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Allow, vec![Reason::new(code, message)])
    }

    /// An ask with one reason.
    pub fn ask(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Ask, vec![Reason::new(code, message)])
    }

    /// A deny with one reason.
    pub fn deny(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Deny, vec![Reason::new(code, message)])
    }

    /// Names the policy that decided.
    pub fn with_policy(mut self, policy_id: impl Into<String>) -> Self {
        self.policy_id = Some(policy_id.into());
        self
    }

    /// Adds one metadata entry, replacing the key's earlier value.
    pub fn with_meta(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }

    /// True for an allow.
    pub fn is_allow(&self) -> bool {
        self.verdict == Verdict::Allow
    }
}

/// What a provider's (or a classifier's) failure becomes: the operator's
/// `on_error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Deny the call.
    Deny,
    /// Ask a human (a deny where nobody can be asked).
    Ask,
    /// Allow the call, with the failure in the reasons (advisory providers).
    Allow,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_ordered_allow_ask_deny() {
        assert!(Verdict::Allow < Verdict::Ask && Verdict::Ask < Verdict::Deny);
    }
}
