//! What decided a call, for a person and an auditor: the stage, and within it
//! the rule (its text and its place in the configuration), the provider (name,
//! version, digest), the passport, or the human who answered.

use serde::{Deserialize, Serialize};

/// Where something is written in the configuration: a file and a line.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SourcePosition {
    /// The file, as the configuration named it (the main file's path as
    /// loaded, or an included file's path as resolved).
    pub file: String,
    /// The line, from 1.
    pub line: u32,
}

impl std::fmt::Display for SourcePosition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// A rule that decided: its text and, where known, its place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RuleRef {
    /// The rule as written (a permission rule), or its id (a rules-provider rule).
    pub text: String,
    /// The file the rule is written in; absent where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its line in that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl RuleRef {
    /// A rule with its place, when known.
    pub fn new(text: impl Into<String>, at: Option<&SourcePosition>) -> Self {
        RuleRef {
            text: text.into(),
            file: at.map(|p| p.file.clone()),
            line: at.map(|p| p.line),
        }
    }

    /// `file:line`, when the place is known.
    pub fn place(&self) -> Option<String> {
        Some(format!("{}:{}", self.file.as_ref()?, self.line?))
    }
}

/// The provider that decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProviderRef {
    /// Its name in the configuration.
    pub name: String,
    /// The version its component reports.
    pub version: String,
    /// Its component's SHA-256, hex.
    pub digest: String,
}

/// What decided a call: the deciding stage and, within it, what there is to
/// name. Added beside the older `decided_by`, `policy_id` and `metadata`,
/// which keep their meaning.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cause {
    /// The stage whose opinion decided (`permissions`, `provider:<name>`, ...).
    pub stage: String,
    /// The rules that decided, in the stage that has rules: one deny or ask
    /// rule, or every allow rule that together covered the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleRef>,
    /// The provider that decided, when a provider did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderRef>,
    /// The passport the deciding stage judged by, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passport_id: Option<String>,
    /// The human who answered, for a call a human approved or rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
}
