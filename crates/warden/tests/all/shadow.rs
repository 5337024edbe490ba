//! Shadow providers (`mode: shadow`): judged on the same calls as the live
//! ones, under the same limits, after the answer is decided, and never in it.
//! A shadow that cannot keep up is shed and counted.

use std::sync::mpsc;

use crate::common::*;
use serde_json::{Value, json};
use warden::{Caller, ShadowOutcome, Verdict, Warden};

/// A live provider that allows every call, and `shadow` beside it.
fn with_shadow(shadow: Value, limits: Value) -> Warden {
    warden(&format!(
        "guardrails:\n  providers:\n    - name: live\n      wasm: hostile.wasm\n    - name: candidate\n      wasm: hostile.wasm\n      mode: shadow\n      config: {shadow}\n      limits: {limits}\n"
    ))
}

/// Judges `n` calls; every answer and every shadow outcome, once all settled.
fn judge(warden: &Warden, n: usize) -> (Vec<Verdict>, Vec<ShadowOutcome>) {
    let (sent, outcomes) = mpsc::channel();
    let mut answers = Vec::new();
    for i in 0..n {
        let call = call("bash", cmd(&format!("echo {i}")));
        let (evaluation, shadow) = warden.evaluate_shadowed(&call, Caller::Agent).unwrap();
        answers.push(evaluation.verdict);
        let sent = sent.clone();
        shadow
            .expect("a shadow judgment for every call")
            .then(move |o| {
                sent.send(o).unwrap();
            });
    }
    assert!(warden.settle_shadows(), "every shadow judgment settles");
    drop(sent);
    (answers, outcomes.iter().collect())
}

#[test]
fn a_deny_everything_shadow_changes_no_answer_and_every_judgment_records_the_difference() {
    let warden = with_shadow(
        json!({"verdict": "deny", "code": "candidate.no"}),
        json!({}),
    );
    let (answers, outcomes) = judge(&warden, 20);
    assert!(answers.iter().all(|v| *v == Verdict::Allow), "{answers:?}");
    assert_eq!(outcomes.len(), 20);
    for outcome in &outcomes {
        let ShadowOutcome::Judged(judgment) = outcome else {
            panic!("not judged: {outcome:?}");
        };
        assert_eq!(judgment.live, Verdict::Allow);
        assert_eq!(judgment.verdict, Verdict::Deny);
        assert!(judgment.differs);
        assert_eq!(judgment.decided_by.as_deref(), Some("provider:candidate"));
        assert_eq!(judgment.reasons[0].code, "candidate.no");
    }
    let counts = warden.shadow_counts();
    assert_eq!(counts.judged, 20);
    assert_eq!(counts.shed, 0);
    assert_eq!(
        counts.differences,
        vec![((Verdict::Allow, Verdict::Deny), 20)]
    );
}

#[test]
fn a_shadow_that_agrees_records_no_difference() {
    let warden = with_shadow(json!({}), json!({}));
    let (_, outcomes) = judge(&warden, 3);
    for outcome in &outcomes {
        let ShadowOutcome::Judged(judgment) = outcome else {
            panic!("not judged: {outcome:?}");
        };
        assert_eq!(judgment.verdict, Verdict::Allow);
        assert!(!judgment.differs, "{judgment:?}");
    }
    assert!(warden.shadow_counts().differences.is_empty());
}

#[test]
fn a_set_without_a_shadow_queues_nothing() {
    let warden = hostile(json!({}), json!({}));
    let (_, shadow) = warden
        .evaluate_shadowed(&call("bash", cmd("ls")), Caller::Agent)
        .unwrap();
    assert!(shadow.is_none());
}

#[test]
fn a_shadow_is_not_shown_as_a_live_provider() {
    let warden = with_shadow(json!({"verdict": "deny"}), json!({}));
    let evaluation = eval(&warden, "bash", cmd("ls"));
    let stages: Vec<_> = evaluation.stages.iter().map(|s| s.stage.as_str()).collect();
    assert!(!stages.contains(&"provider:candidate"), "{stages:?}");
    let listed: Vec<_> = warden
        .providers()
        .providers
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(listed, ["live"]);
}

#[test]
fn a_looping_shadow_that_cannot_keep_up_is_shed_with_a_count_and_no_answer_changes() {
    // Each shadow judgment runs to its 100 ms timeout: 300 calls in a burst
    // overflow the queue (or outwait it), and those are shed.
    let warden = with_shadow(
        json!({"behaviour": "infinite_loop"}),
        json!({"timeout_ms": 100, "fuel": 1u64 << 45}),
    );
    let (answers, outcomes) = judge(&warden, 300);
    assert!(answers.iter().all(|v| *v == Verdict::Allow));
    let shed = outcomes
        .iter()
        .filter(|o| **o == ShadowOutcome::Shed)
        .count();
    assert!(shed > 0, "none shed");
    let counts = warden.shadow_counts();
    assert_eq!(counts.shed as usize, shed);
    assert_eq!((counts.judged + counts.shed) as usize, 300);
    // What was judged is the provider's failure, a deny, as a live one's.
    for outcome in &outcomes {
        if let ShadowOutcome::Judged(judgment) = outcome {
            assert_eq!(judgment.verdict, Verdict::Deny);
            assert!(judgment.reasons.iter().any(|r| r.code == "warden.timeout"));
        }
    }
}

#[test]
fn a_memory_bomb_shadow_is_contained_by_its_limits_and_changes_no_answer() {
    let warden = with_shadow(
        json!({"behaviour": "memory_bomb"}),
        json!({"memory_mb": 16, "timeout_ms": 5000}),
    );
    let (answers, outcomes) = judge(&warden, 3);
    assert!(answers.iter().all(|v| *v == Verdict::Allow));
    for outcome in &outcomes {
        let ShadowOutcome::Judged(judgment) = outcome else {
            panic!("not judged: {outcome:?}");
        };
        assert_eq!(judgment.verdict, Verdict::Deny);
        assert!(
            judgment
                .reasons
                .iter()
                .any(|r| r.code == "warden.memory_limit")
        );
    }
}

#[test]
fn a_shadow_that_refuses_its_configuration_refuses_the_set_at_reload() {
    let warden = with_shadow(json!({}), json!({}));
    let broken = config(
        "guardrails:\n  providers:\n    - name: live\n      wasm: hostile.wasm\n    - name: candidate\n      wasm: hostile.wasm\n      mode: shadow\n      config: {behaviour: refuse_config}\n",
    );
    assert!(warden.reload(&broken, "x").is_err());
    assert_eq!(eval(&warden, "bash", cmd("ls")).verdict, Verdict::Allow);
}

#[test]
fn the_librarys_own_decision_log_records_the_shadows_verdict_on_the_calls_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(
        "guardrails:\n  providers:\n    - name: live\n      wasm: hostile.wasm\n    - name: candidate\n      wasm: hostile.wasm\n      mode: shadow\n      config: {verdict: deny, code: candidate.no}\n",
    );
    config.set_data_dir(dir.path());
    let warden = Warden::new(&config).unwrap();
    warden.log_decisions(&config).unwrap();
    let (_, outcomes) = judge(&warden, 3);
    assert_eq!(outcomes.len(), 3, "the holder's own `then` still runs");
    let log = warden.decision_log().unwrap();
    log.flush();
    let text = std::fs::read_to_string(log.path().unwrap()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l.get("verdict").is_some())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    for line in &lines {
        assert_eq!(line["verdict"], "allow", "{line}");
        assert_eq!(line["shadow"]["outcome"], "judged", "{line}");
        assert_eq!(line["shadow"]["verdict"], "deny", "{line}");
        assert_eq!(line["shadow"]["differs"], true, "{line}");
        assert_eq!(
            line["shadow"]["reasons"][0]["code"], "candidate.no",
            "{line}"
        );
    }
}
