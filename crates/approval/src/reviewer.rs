//! Who answers an approval, and on whose authority: a human in the console, or
//! a relay (an agent harness) that carries a human's answer.

use serde::{Deserialize, Serialize};

use crate::error::ApprovalError;
use crate::validate::check_id;

/// What a credential may do with approvals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authority {
    /// An approver (or an admin, where the operator lets admins approve):
    /// answers any principal's pauses, in its own name.
    Approver,
    /// A token with `relay: true`: relays the answer of the human it names
    /// in `reviewer`, to its own principal's pauses only.
    Relay,
    /// Anything else (an agent's own token): may not answer.
    Denied,
}

/// Who answers an approval: the human, and the token that relayed the answer
/// when a harness did. A relay answers only its own principal's pauses; a
/// human (an approver token, the console, the command line) any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reviewer {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<String>,
}

impl Reviewer {
    /// A human answering in their own name.
    pub fn human(name: impl Into<String>) -> Self {
        Reviewer {
            name: name.into(),
            relayed_by: None,
        }
    }

    /// A human's answer, relayed by the token named `by`.
    pub fn relayed(name: impl Into<String>, by: impl Into<String>) -> Self {
        Reviewer {
            name: name.into(),
            relayed_by: Some(by.into()),
        }
    }

    /// Who answers, for a caller with `authority` holding the token named
    /// `token` (of `role`, for the message), which names `claimed` as the
    /// reviewer. An approver answers in its own name; a relay must name the
    /// human; nobody else may answer (403 `approver_required`).
    pub fn authorize(
        token: &str,
        role: &str,
        authority: Authority,
        claimed: Option<&str>,
    ) -> Result<Reviewer, ApprovalError> {
        match (authority, claimed) {
            (Authority::Denied, _) => Err(ApprovalError::ApproverRequired {
                token: token.to_string(),
                role: role.to_string(),
            }),
            (Authority::Approver, None) => Ok(Reviewer::human(token)),
            (Authority::Approver, Some(name)) if name == token => Ok(Reviewer::human(token)),
            (Authority::Approver, Some(name)) => Err(ApprovalError::ReviewerMismatch {
                token: token.to_string(),
                reviewer: name.to_string(),
            }),
            (Authority::Relay, None) => Err(ApprovalError::InvalidDecision {
                field: "reviewer".into(),
                message: format!("the relay token '{token}' must name the human who answered"),
            }),
            (Authority::Relay, Some(name)) => {
                check_id("reviewer", name).map_err(ApprovalError::in_answer)?;
                Ok(Reviewer::relayed(name, token))
            }
        }
    }

    /// The principal whose approvals this reviewer may answer (`None`: any).
    pub fn scope(&self) -> Option<&str> {
        self.relayed_by.as_deref()
    }

    /// "alice", or "alice, relayed by gateway".
    pub fn describe(&self) -> String {
        match &self.relayed_by {
            Some(by) => format!("{}, relayed by {by}", self.name),
            None => self.name.clone(),
        }
    }
}
