//! The answer for one tool call: the verdict, its reasons, what every stage
//! said, and the signed record when the host signs. The daemon sends exactly
//! this; the Rust and Python clients read it back.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::decision::{Reason, Verdict};

/// The answer for one tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Evaluation {
    pub verdict: Verdict,
    /// `verdict == allow`, for harnesses that only look at a boolean.
    pub allow: bool,
    pub reasons: Vec<Reason>,
    pub policy_id: Option<String>,
    pub metadata: Map<String, Value>,
    /// The stage whose opinion decided: `provider:<name>`, ...
    pub decided_by: Option<String>,
    pub interaction_mode: InteractionMode,
    /// What every stage that ran said, in order.
    pub stages: Vec<StageReport>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<DecisionRecord>,
    /// The provider set that judged the call.
    pub generation: u64,
    pub duration_us: u64,
    /// The time every time-based rule judged against (RFC 3339): the host's
    /// clock, or an internal caller's `context.timestamp`.
    pub judged_at: String,
}

/// One stage's contribution, for the caller and the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StageReport {
    pub stage: String,
    pub verdict: Verdict,
    pub codes: Vec<String>,
    pub duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<Cow<'static, str>>,
    /// Triage: what the risk classifier said, and whether from its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierReport>,
}

/// Triage's risk classifier in a stage report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClassifierReport {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    pub cached: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The classifier's opinion of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Low,
    High,
}

/// How a run interacts with humans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum InteractionMode {
    Interactive,
    Scheduled,
    Webhook,
    Autonomous,
}

impl InteractionMode {
    pub const ALL: [InteractionMode; 4] = [
        InteractionMode::Interactive,
        InteractionMode::Autonomous,
        InteractionMode::Webhook,
        InteractionMode::Scheduled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            InteractionMode::Interactive => "interactive",
            InteractionMode::Scheduled => "scheduled",
            InteractionMode::Webhook => "webhook",
            InteractionMode::Autonomous => "autonomous",
        }
    }

    /// Exact, case-sensitive: `Interactive` is not a mode.
    pub fn parse(text: &str) -> Option<InteractionMode> {
        InteractionMode::ALL
            .into_iter()
            .find(|m| m.as_str() == text)
    }
}

/// A signed decision record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DecisionRecord {
    pub decision_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assurance_level: Option<String>,
    pub allow: bool,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// `sha256:` + hex SHA-256 of the JCS of `{tool_name, tool_input}`: binds
    /// the record to the call it judged.
    pub request_digest: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// Seconds after `created_at` for which the decision may be relied on.
    pub expires_in: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passport_digest: Option<String>,
    pub kid: String,
    pub signature: String,
}
