//! How an approval ends: where it is in its life, and what resolved it. Apart
//! from the approval bodies because the approval error names them too.

use serde::{Deserialize, Serialize};

/// How a pending approval was resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ResolvedBy {
    /// A resume, attributed to the run that carries the paused calls on.
    Resume {
        /// The run that carries the answered calls on.
        run_id: String,
    },
    /// An operator's clear (`warden approvals clear`, the clear route, the
    /// console's reject-all): every pending call rejected.
    Clear {
        /// Who cleared: the operator's or the relayed human's name.
        actor: String,
        /// Why, as the clear gave it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Nobody answered within `hitl_approval.expire_after`: every pending call
    /// rejected, so that the run can go on.
    Expiry {
        /// The configured wait, as written (`30m`).
        after: String,
    },
}

impl ResolvedBy {
    /// The status an approval resolved this way has.
    pub fn status(&self) -> ApprovalStatus {
        match self {
            ResolvedBy::Resume { .. } => ApprovalStatus::Resumed,
            ResolvedBy::Clear { .. } => ApprovalStatus::Cleared,
            ResolvedBy::Expiry { .. } => ApprovalStatus::Expired,
        }
    }
}

/// Where an approval is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a human; its run is `waiting_for_input`.
    Pending,
    /// Consumed by a resume.
    Resumed,
    /// Rejected as a whole by an operator.
    Cleared,
    /// Unanswered for `hitl_approval.expire_after`: rejected as a whole.
    Expired,
}

impl ApprovalStatus {
    /// The status as the wire and the store spell it (`pending`, `resumed`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Resumed => "resumed",
            ApprovalStatus::Cleared => "cleared",
            ApprovalStatus::Expired => "expired",
        }
    }

    /// The status spelled so; `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        [
            ApprovalStatus::Pending,
            ApprovalStatus::Resumed,
            ApprovalStatus::Cleared,
            ApprovalStatus::Expired,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}
