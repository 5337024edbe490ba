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
    /// The combined verdict: the strictest of every stage's.
    pub verdict: Verdict,
    /// `verdict == allow`, for harnesses that only look at a boolean.
    pub allow: bool,
    /// Why: the reasons of the stages that decided, then notices of context that was ignored;
    /// every message redacted of secrets and long quotes.
    pub reasons: Vec<Reason>,
    /// The policy the first deciding stage named, if any.
    pub policy_id: Option<String>,
    /// What the stages that reached the verdict attached (a passport's id, ...), the earliest
    /// winning a shared key.
    pub metadata: Map<String, Value>,
    /// The stage whose opinion decided: `provider:<name>`, ...
    pub decided_by: Option<String>,
    /// What decided, by name: the stage, the rule with its file and line, the
    /// provider's name, version and digest, the passport. Absent from older
    /// daemons and where nothing decided (an allow no stage spoke for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<crate::cause::Cause>,
    /// The interaction mode the call was judged under.
    pub interaction_mode: InteractionMode,
    /// Whether a human could be asked about this call, as the pipeline
    /// applied it: an interactive run whose harness cannot resume, or a
    /// subagent, is `never` though its mode is `interactive`. Absent where the
    /// call was refused before its context was read, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<HumanReach>,
    /// What every stage that ran said, in order.
    pub stages: Vec<StageReport>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<DecisionRecord>,
    /// The provider set that judged the call.
    pub generation: u64,
    /// The pipeline's time for this call, in microseconds.
    pub duration_us: u64,
    /// The time every time-based rule judged against (RFC 3339): the host's
    /// clock, or an internal caller's `context.timestamp`.
    pub judged_at: String,
}

/// One stage's contribution, for the caller and the audit log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StageReport {
    /// Which stage: `provider:<name>`, `permissions`, `triage`, `approval`, ...
    pub stage: String,
    /// This stage's own verdict.
    pub verdict: Verdict,
    /// The codes of this stage's reasons.
    pub codes: Vec<String>,
    /// The stage's time, in microseconds.
    pub duration_us: u64,
    /// A provider stage's component SHA-256, hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The WebAssembly fuel a provider's call used; absent when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
    /// Why a provider failed, as a stable code (`warden.timeout`, `warden.trap`, ...); absent when it answered.
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
    /// The classifier's name in the config.
    pub name: String,
    /// Its opinion; absent when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// True when the opinion came from the cache rather than a call.
    pub cached: bool,
    /// Why the classifier failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The classifier's opinion of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Nothing in the call needs a human's eye.
    Low,
    /// The call deserves a human's eye (triage asks).
    High,
}

/// Whether a human could be asked about a call, as the pipeline applied it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HumanReach {
    /// A human can be asked: an ask pauses the call for approval.
    Pause,
    /// Nobody is there by the run's nature (its mode, or where it started):
    /// an ask is a deny, a listed tool follows `hitl_approval.non_interactive`.
    Unattended,
    /// A subagent, or a harness that cannot pause and resume: never asked.
    Never,
}

impl HumanReach {
    /// The reach as the log and the API spell it (`pause`, `unattended`, `never`).
    pub fn as_str(self) -> &'static str {
        match self {
            HumanReach::Pause => "pause",
            HumanReach::Unattended => "unattended",
            HumanReach::Never => "never",
        }
    }
}

/// How a run interacts with humans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum InteractionMode {
    /// A human is at hand; an ask pauses the run for them (the default).
    Interactive,
    /// An unattended job (`non_interactive: true`): nobody can be asked.
    Scheduled,
    /// Started from a channel such as GitHub (`channel_name: "github"`): nobody can be asked.
    Webhook,
    /// Clarification disabled (`disable_clarification: true`): the agent acts alone.
    Autonomous,
}

impl InteractionMode {
    /// Every mode, for listings and error messages.
    pub const ALL: [InteractionMode; 4] = [
        InteractionMode::Interactive,
        InteractionMode::Autonomous,
        InteractionMode::Webhook,
        InteractionMode::Scheduled,
    ];

    /// The mode as requests and the config spell it (`interactive`, ...).
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
    /// A fresh UUID for this record.
    pub decision_id: String,
    /// The policy the first deciding stage named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_id: Option<String>,
    /// The agent: `guardrails.passport` when configured, else the context's `agent_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The passport's owner, when a passport provider judged the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<String>,
    /// The passport's assurance level, when a passport provider judged the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assurance_level: Option<String>,
    /// `verdict == allow`.
    pub allow: bool,
    /// The combined verdict.
    pub verdict: Verdict,
    /// The reasons, as the evaluation gives them.
    pub reasons: Vec<Reason>,
    /// The tool the call named.
    pub tool_name: String,
    /// The model's tool call id, when the call carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// `sha256:` + hex SHA-256 of the JCS of `{tool_name, tool_input}`: binds
    /// the record to the call it judged.
    pub request_digest: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// Seconds after `created_at` for which the decision may be relied on.
    pub expires_in: u64,
    /// The digest of the passport that judged the call, as its provider reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passport_digest: Option<String>,
    /// The id of the key that signed (`signing.kid`), for a verifier to pick the public key.
    pub kid: String,
    /// `ed25519:` + base64 signature over the RFC 8785 JSON of the record without this field.
    pub signature: String,
}
