//! A shadow configuration (`shadow: {config, until, sample}`): a whole
//! candidate judges a sample of the calls on the shadow queue, never in the
//! answer, until its end; `Warden::promote` makes it live in one swap and
//! `Warden::rollback` undoes that.

use std::path::Path;
use std::sync::mpsc;

use crate::common::*;
use warden::{Caller, Config, Error, ShadowOutcome, Verdict, Warden};

/// A provider block: the hostile fixture named `name`, answering `verdict`
/// with `code`.
fn answering(name: &str, verdict: &str, code: &str) -> String {
    format!(
        "guardrails:\n  providers:\n    - name: {name}\n      wasm: {}\n      config: {{verdict: {verdict}, code: {code}}}\n",
        guest("hostile").display()
    )
}

/// A live set whose provider `live` allows every call, shadowed by
/// `candidate.yaml` (written with `candidate`) as `shadow` says.
fn shadowed(dir: &Path, candidate: &str, shadow: &str) -> Result<Warden, Error> {
    std::fs::write(dir.join("candidate.yaml"), candidate).unwrap();
    let live = format!(
        "{}shadow: {shadow}\ndata_dir: data\n",
        answering("live", "allow", "live.yes")
    );
    std::fs::write(dir.join("warden.yaml"), live).unwrap();
    Warden::new(&Config::load(&dir.join("warden.yaml"))?)
}

const FOREVER: &str = "{config: candidate.yaml, until: '2999-01-01T00:00:00Z'}";

/// Judges `n` calls: the answers, and the shadow outcome of each call that
/// has one, once all settled.
fn judge(warden: &Warden, n: usize) -> (Vec<Verdict>, Vec<ShadowOutcome>) {
    let (sent, outcomes) = mpsc::channel();
    let mut answers = Vec::new();
    for i in 0..n {
        let call = call("bash", cmd(&format!("echo {i}")));
        let (evaluation, shadow) = warden.evaluate_shadowed(&call, Caller::Agent).unwrap();
        answers.push(evaluation.verdict);
        if let Some(shadow) = shadow {
            let sent = sent.clone();
            shadow.then(move |o| sent.send(o).unwrap());
        }
    }
    assert!(warden.settle_shadows(), "every shadow judgment settles");
    drop(sent);
    (answers, outcomes.iter().collect())
}

#[test]
fn a_deny_everything_candidate_changes_no_answer_and_every_judgment_records_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = answering("strict", "deny", "candidate.no");
    let warden = shadowed(dir.path(), &candidate, FOREVER).unwrap();
    let (answers, outcomes) = judge(&warden, 10);
    assert!(answers.iter().all(|v| *v == Verdict::Allow), "{answers:?}");
    assert_eq!(outcomes.len(), 10);
    for outcome in &outcomes {
        let ShadowOutcome::Judged(judgment) = outcome else {
            panic!("not judged: {outcome:?}");
        };
        assert_eq!(
            (judgment.live, judgment.verdict),
            (Verdict::Allow, Verdict::Deny)
        );
        assert!(judgment.differs);
        assert_eq!(judgment.decided_by.as_deref(), Some("provider:strict"));
        assert_eq!(judgment.reasons[0].code, "candidate.no");
    }
    let counts = warden.shadow_counts();
    assert_eq!((counts.judged, counts.shed), (10, 0));
    assert_eq!(
        counts.differences,
        vec![((Verdict::Allow, Verdict::Deny), 10)]
    );
}

#[test]
fn a_sample_of_zero_judges_no_call() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = answering("strict", "deny", "candidate.no");
    let shadow = "{config: candidate.yaml, until: '2999-01-01T00:00:00Z', sample: 0.0}";
    let warden = shadowed(dir.path(), &candidate, shadow).unwrap();
    let (answers, outcomes) = judge(&warden, 10);
    assert_eq!(answers.len(), 10);
    assert!(outcomes.is_empty(), "{outcomes:?}");
    assert_eq!(warden.shadow_counts().judged, 0);
}

#[test]
fn a_sample_of_a_quarter_judges_one_call_in_four() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = answering("strict", "deny", "candidate.no");
    let shadow = "{config: candidate.yaml, until: '2999-01-01T00:00:00Z', sample: 0.25}";
    let warden = shadowed(dir.path(), &candidate, shadow).unwrap();
    let (_, outcomes) = judge(&warden, 40);
    assert_eq!(outcomes.len(), 10);
}

#[test]
fn a_past_until_judges_no_call_and_leaves_nothing_to_promote() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = answering("strict", "deny", "candidate.no");
    let shadow = "{config: candidate.yaml, until: '2020-01-01T00:00:00Z'}";
    let warden = shadowed(dir.path(), &candidate, shadow).unwrap();
    let (_, outcomes) = judge(&warden, 5);
    assert!(outcomes.is_empty(), "{outcomes:?}");
    let err = warden.promote().unwrap_err().to_string();
    assert!(
        err.contains("ended at 2020-01-01T00:00:00") && err.contains("unloaded"),
        "{err}"
    );
}

#[test]
fn an_invalid_candidate_is_refused_naming_its_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let err = shadowed(dir.path(), "triage: {detectr: true}\n", FOREVER)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("candidate.yaml: triage.detectr"), "{err}");
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn a_candidate_whose_provider_cannot_load_is_refused_naming_the_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = "guardrails:\n  providers:\n    - {name: gone, wasm: missing.wasm}\n";
    let err = shadowed(dir.path(), candidate, FOREVER)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.starts_with("shadow configuration "), "{err}");
    assert!(
        err.contains("candidate.yaml: ") && err.contains("gone"),
        "{err}"
    );
}

#[test]
fn a_missing_candidate_is_refused_naming_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("warden.yaml"),
        "shadow: {config: nowhere.yaml, until: '2999-01-01T00:00:00Z'}\n",
    )
    .unwrap();
    let err = Warden::new(&Config::load(&dir.path().join("warden.yaml")).unwrap())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("nowhere.yaml"), "{err}");
}

#[test]
fn an_until_that_is_not_a_time_is_refused_naming_the_file_and_key() {
    let err = Config::parse(
        "shadow:\n  config: c.yaml\n  until: tomorrow\n",
        "live.yaml",
        ".".into(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("live.yaml: shadow.until: "), "{err}");
    assert!(
        err.contains("'tomorrow' is not an RFC 3339 time such as 2026-12-24T18:00:00Z"),
        "{err}"
    );
    assert!(err.contains("(line "), "{err}");
}

#[test]
fn a_sample_outside_zero_to_one_is_refused() {
    for sample in ["1.5", "-0.1", ".nan"] {
        let err = Config::parse(
            &format!(
                "shadow: {{config: c.yaml, until: '2999-01-01T00:00:00Z', sample: {sample}}}\n"
            ),
            "live.yaml",
            ".".into(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("live.yaml: shadow.sample: "), "{err}");
        assert!(err.contains("is outside 0.0-1.0"), "{err}");
    }
}

#[test]
fn a_candidate_with_a_shadow_of_its_own_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let err = shadowed(dir.path(), FOREVER_SHADOW_OF_ITS_OWN, FOREVER)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("candidate.yaml: shadow: a candidate cannot have"),
        "{err}"
    );
}

const FOREVER_SHADOW_OF_ITS_OWN: &str =
    "shadow: {config: other.yaml, until: '2999-01-01T00:00:00Z'}\n";

#[test]
fn promote_makes_the_candidate_live_and_rollback_restores_the_previous_answers() {
    let dir = tempfile::tempdir().unwrap();
    let candidate = answering("strict", "deny", "candidate.no");
    let warden = shadowed(dir.path(), &candidate, FOREVER).unwrap();
    assert_eq!(eval(&warden, "bash", cmd("ls")).verdict, Verdict::Allow);
    let (report, file) = warden.promote().unwrap();
    assert!(file.name.ends_with("candidate.yaml"), "{}", file.name);
    assert_eq!(report.config_sha256, file.sha256);
    assert_eq!(report.providers[0].name, "strict");
    let promoted = eval(&warden, "bash", cmd("ls"));
    assert_eq!(promoted.verdict, Verdict::Deny);
    assert_eq!(codes(&promoted)[0], "candidate.no");
    assert_eq!(promoted.generation, report.generation);
    // The promoted set has no shadow: a second promotion has nothing to do.
    assert!(matches!(warden.promote(), Err(Error::NoShadow { .. })));

    let back = warden.rollback().unwrap();
    assert_eq!(back.generation, report.previous_generation);
    assert_eq!(eval(&warden, "bash", cmd("ls")).verdict, Verdict::Allow);
    assert!(matches!(warden.rollback(), Err(Error::NothingToRollBack)));
}

#[test]
fn promote_without_a_shadow_configuration_is_refused() {
    let warden = warden(&answering("live", "allow", "live.yes"));
    let err = warden.promote().unwrap_err();
    assert_eq!(
        err.to_string(),
        "nothing to promote: the live set has no shadow configuration (`shadow:`)"
    );
    assert!(matches!(warden.rollback(), Err(Error::NothingToRollBack)));
}

#[test]
fn calls_in_flight_during_promote_are_answered_by_one_set_or_the_other_never_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    // Both sets deny, each with its own stage and code: a mix shows.
    std::fs::write(
        dir.path().join("candidate.yaml"),
        answering("beta", "deny", "set.b"),
    )
    .unwrap();
    let live = format!(
        "{}shadow: {FOREVER}\ndata_dir: data\n",
        answering("alpha", "deny", "set.a")
    );
    std::fs::write(dir.path().join("warden.yaml"), live).unwrap();
    let warden = Warden::new(&Config::load(&dir.path().join("warden.yaml")).unwrap()).unwrap();
    let before = warden.snapshot().generation();
    let (promoted, rolled_back) = std::thread::scope(|scope| {
        let judges: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..300)
                        .map(|i| eval(&warden, "bash", cmd(&format!("echo {i}"))))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let (report, _) = warden.promote().unwrap();
        let back = warden.rollback().unwrap();
        let promoted = report.generation;
        let answers: Vec<_> = judges.into_iter().flat_map(|j| j.join().unwrap()).collect();
        for e in &answers {
            let seen = (e.generation, e.decided_by.as_deref().unwrap(), codes(e)[0]);
            let a = (before, "provider:alpha", "set.a");
            let b = (promoted, "provider:beta", "set.b");
            assert!(seen == a || seen == b, "a mixed answer: {seen:?}");
            let stages: Vec<_> = e.stages.iter().map(|s| s.stage.as_str()).collect();
            assert!(
                !(stages.contains(&"provider:alpha") && stages.contains(&"provider:beta")),
                "{stages:?}"
            );
        }
        (promoted, back.generation)
    });
    assert_ne!(promoted, before);
    assert_eq!(rolled_back, before);
}
