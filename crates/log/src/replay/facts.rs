//! What a decision line keeps for replay beside the logged arguments: the
//! context the pipeline believed, and what logging left out or changed. The
//! writer fills it (`ArgumentPolicy::replay_facts`); [`super::read`] reads it.

use serde::{Deserialize, Serialize};
use warden_types::CallContext;

/// What a line keeps for `warden replay` (present only where the operator
/// opted in the tool's arguments), so that a replay rebuilds the call as the
/// live pipeline judged it and never invents a field.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayFacts {
    /// The call's context as the pipeline believed it from its caller (the
    /// keys only an internal caller or an asserting token may set are left
    /// out where they were not believed), without the ids and the time the
    /// line logs already; strings redacted and capped.
    pub context: CallContext,
    /// The arguments of the call that the operator did not opt in (names,
    /// redacted): not logged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<String>,
    /// What the redactor changed: argument names, and `context.<key>` for a
    /// context key or a logged id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
    /// What was cut at the log's cap (500 characters), named
    /// as in `redacted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<String>,
    /// The arguments (objects and arrays) logged as their JSON text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub as_text: Vec<String>,
}
