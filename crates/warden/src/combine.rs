//! How the stages' opinions make one decision: the strictest verdict wins,
//! and the stages that reached it say why.

use warden_types::codes;
use warden_types::decision::{Decision, Reason, Verdict};

/// The opinion of one named stage of the pipeline.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StageOpinion {
    /// `permissions`, `provider:<name>`, `triage`, ...
    pub(crate) stage: String,
    pub(crate) decision: Decision,
}

/// Combines stage opinions: the strictest verdict wins; the reasons are those of
/// every stage that reached that verdict (in order, without repeats); the policy
/// id that of the first such stage that gave a reason (or else the first named);
/// the metadata that of all of them, the earliest winning a shared key. A deny or ask without any
/// reason gets `oap.denied`. No opinions at all is an allow.
pub(crate) fn combine(opinions: &[StageOpinion]) -> (Decision, Option<String>) {
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

    /// Properties over generated opinions (proptest): the combined verdict is
    /// never looser than the strictest input, and a verdict that is not an
    /// allow always says why.
    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn verdict() -> impl Strategy<Value = Verdict> {
            prop_oneof![
                Just(Verdict::Allow),
                Just(Verdict::Ask),
                Just(Verdict::Deny)
            ]
        }

        fn opinion() -> impl Strategy<Value = StageOpinion> {
            let reason =
                ("[a-z]{1,4}\\.[a-z_]{1,8}", "[ -~]{0,12}").prop_map(|(c, m)| Reason::new(c, m));
            (
                "[a-z:]{1,10}",
                verdict(),
                prop::collection::vec(reason, 0..3),
            )
                .prop_map(|(stage, verdict, reasons)| StageOpinion {
                    stage,
                    decision: Decision::new(verdict, reasons),
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 1024,
                failure_persistence: None,
                ..ProptestConfig::default()
            })]

            #[test]
            fn combining_never_yields_a_verdict_looser_than_the_strictest_input(
                opinions in prop::collection::vec(opinion(), 0..8),
            ) {
                let (decision, decided_by) = combine(&opinions);
                let strictest = opinions.iter().map(|o| o.decision.verdict).max();
                prop_assert_eq!(decision.verdict, strictest.unwrap_or(Verdict::Allow));
                for o in &opinions {
                    prop_assert!(decision.verdict >= o.decision.verdict);
                }
                if decision.verdict != Verdict::Allow {
                    prop_assert!(!decision.reasons.is_empty());
                    let by = decided_by.expect("a stage decided");
                    prop_assert!(opinions.iter().any(|o| o.stage == by && o.decision.verdict == decision.verdict));
                }
            }

            #[test]
            fn adding_an_opinion_never_loosens_the_verdict(
                opinions in prop::collection::vec(opinion(), 0..8),
                extra in opinion(),
            ) {
                let before = combine(&opinions).0.verdict;
                let mut more = opinions;
                more.push(extra);
                prop_assert!(combine(&more).0.verdict >= before);
            }
        }
    }
}
