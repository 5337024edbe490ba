//! Verdicts, reasons and decisions: the vocabulary every stage of the pipeline
//! speaks, and the rule that combines them (the strictest verdict wins).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::codes;

/// An opinion on a tool call. Ordered: `Allow < Ask < Deny`; the strictest wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
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
    pub code: String,
    #[serde(default)]
    pub message: String,
}

impl Reason {
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
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub policy_id: Option<String>,
    pub metadata: Map<String, Value>,
}

impl Decision {
    pub fn new(verdict: Verdict, reasons: Vec<Reason>) -> Self {
        Decision {
            verdict,
            reasons,
            policy_id: None,
            metadata: Map::new(),
        }
    }

    pub fn allow(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Allow, vec![Reason::new(code, message)])
    }

    pub fn ask(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Ask, vec![Reason::new(code, message)])
    }

    pub fn deny(code: &str, message: impl Into<String>) -> Self {
        Decision::new(Verdict::Deny, vec![Reason::new(code, message)])
    }

    pub fn with_policy(mut self, policy_id: impl Into<String>) -> Self {
        self.policy_id = Some(policy_id.into());
        self
    }

    pub fn with_meta(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }

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

/// The opinion of one named stage of the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub struct StageOpinion {
    /// `permissions`, `provider:<name>`, `triage`, ...
    pub stage: String,
    pub decision: Decision,
}

/// Combines stage opinions: the strictest verdict wins; the reasons are those of
/// every stage that reached that verdict (in order, without repeats); the policy
/// id that of the first such stage that gave a reason (or else the first named);
/// the metadata that of all of them, the earliest winning a shared key. A deny or ask without any
/// reason gets `oap.denied`. No opinions at all is an allow.
pub fn combine(opinions: &[StageOpinion]) -> (Decision, Option<String>) {
    let Some(verdict) = opinions.iter().map(|o| o.decision.verdict).max() else {
        return (Decision::new(Verdict::Allow, vec![]), None);
    };
    let deciding: Vec<&StageOpinion> = opinions
        .iter()
        .filter(|o| o.decision.verdict == verdict)
        .collect();
    let mut reasons: Vec<Reason> = Vec::new();
    for reason in deciding.iter().flat_map(|o| &o.decision.reasons) {
        if !reasons.contains(reason) {
            reasons.push(reason.clone());
        }
    }
    if reasons.is_empty() && verdict != Verdict::Allow {
        reasons.push(Reason::new(codes::DENIED, "blocked by guardrail policy"));
    }
    // The stage that speaks for the decision: the first with the final verdict
    // that gave a reason (a silent allow has nothing to say). The policy id is
    // the first any such stage names, and the metadata all of theirs (the
    // speaking stage's first, then the others' in order, the first to set a key
    // winning it), so that an allow by several stages keeps what each recorded.
    let first = deciding
        .iter()
        .find(|o| !o.decision.reasons.is_empty())
        .unwrap_or(&deciding[0]);
    let mut metadata = first.decision.metadata.clone();
    for other in &deciding {
        for (key, value) in &other.decision.metadata {
            metadata.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    let decision = Decision {
        verdict,
        reasons,
        policy_id: first
            .decision
            .policy_id
            .clone()
            .or_else(|| deciding.iter().find_map(|o| o.decision.policy_id.clone())),
        metadata,
    };
    (decision, Some(first.stage.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opinion(stage: &str, decision: Decision) -> StageOpinion {
        StageOpinion {
            stage: stage.into(),
            decision,
        }
    }

    #[test]
    fn verdicts_are_ordered_allow_ask_deny() {
        assert!(Verdict::Allow < Verdict::Ask && Verdict::Ask < Verdict::Deny);
    }

    #[test]
    fn the_strictest_opinion_decides() {
        let (d, by) = combine(&[
            opinion("a", Decision::allow("oap.allowed", "")),
            opinion("b", Decision::deny("x.no", "no").with_policy("p.b")),
            opinion("c", Decision::ask("x.maybe", "maybe")),
        ]);
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(d.reasons, vec![Reason::new("x.no", "no")]);
        assert_eq!(d.policy_id.as_deref(), Some("p.b"));
        assert_eq!(by.as_deref(), Some("b"));
    }

    #[test]
    fn reasons_of_every_stage_with_the_final_verdict_are_kept_once() {
        let (d, _) = combine(&[
            opinion("a", Decision::ask("x.one", "1")),
            opinion("b", Decision::allow("oap.allowed", "")),
            opinion("c", Decision::ask("x.two", "2")),
            opinion("d", Decision::ask("x.one", "1")),
        ]);
        assert_eq!(d.verdict, Verdict::Ask);
        let codes: Vec<_> = d.reasons.iter().map(|r| r.code.as_str()).collect();
        assert_eq!(codes, ["x.one", "x.two"]);
    }

    #[test]
    fn a_silent_stage_does_not_speak_for_the_decision() {
        let (d, by) = combine(&[
            opinion("quiet", Decision::new(Verdict::Allow, vec![])),
            opinion("p", Decision::allow("oap.allowed", "").with_policy("p.v1")),
        ]);
        assert_eq!(by.as_deref(), Some("p"));
        assert_eq!(d.policy_id.as_deref(), Some("p.v1"));
    }

    #[test]
    fn an_allow_by_several_stages_keeps_what_each_recorded() {
        let (d, _) = combine(&[
            opinion("a", Decision::allow("oap.allowed", "").with_meta("k", "a")),
            opinion(
                "b",
                Decision::allow("oap.allowed", "")
                    .with_policy("p.b")
                    .with_meta("k", "b")
                    .with_meta("passport_id", "pp"),
            ),
        ]);
        assert_eq!(d.policy_id.as_deref(), Some("p.b"));
        assert_eq!(d.metadata["k"], "a");
        assert_eq!(d.metadata["passport_id"], "pp");
    }

    #[test]
    fn a_deny_without_reasons_gets_the_generic_code() {
        let (d, _) = combine(&[opinion("a", Decision::new(Verdict::Deny, vec![]))]);
        assert_eq!(d.reasons[0].code, codes::DENIED);
    }

    #[test]
    fn no_opinion_is_an_allow() {
        let (d, by) = combine(&[]);
        assert!(d.is_allow());
        assert_eq!(by, None);
    }
}
