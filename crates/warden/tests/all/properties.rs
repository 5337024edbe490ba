//! Properties of combining verdicts, over generated opinions (proptest): the
//! combined verdict is never looser than the strictest input, and a verdict
//! that is not an allow always says why.

use proptest::prelude::*;
use warden_types::decision::{Decision, Reason, StageOpinion, Verdict, combine};

fn verdict() -> impl Strategy<Value = Verdict> {
    prop_oneof![
        Just(Verdict::Allow),
        Just(Verdict::Ask),
        Just(Verdict::Deny)
    ]
}

fn opinion() -> impl Strategy<Value = StageOpinion> {
    let reason = ("[a-z]{1,4}\\.[a-z_]{1,8}", "[ -~]{0,12}").prop_map(|(c, m)| Reason::new(c, m));
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
