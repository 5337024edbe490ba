//! The reload gate: a provider's vectors (`vectors:` beside its pin) run
//! against the new build at every load and reload, before the atomic switch;
//! a failing vector refuses the set, naming the provider and the vector, and
//! the previous set keeps serving.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::common::*;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use warden::{Caller, Error, LoadError, Verdict, Warden};

const ALLOWS_BASH: &str = r#"{"name": "bash is allowed", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "allow"}}"#;
const DENIES_RM: &str = r#"{"name": "rm is denied", "request": {"tool_name": "rm", "tool_input": {}}, "expect": {"verdict": "deny", "code": "fixture.verdict"}}"#;

/// A vectors file holding `lines`, in a directory that lives as long as it.
struct Vectors {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn vectors(lines: &[&str]) -> Vectors {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    Vectors { _dir: dir, path }
}

/// The hostile fixture, pinned by its real digest, behaving as `behaviour`
/// says, with `vectors` as its gate.
fn pinned_hostile(behaviour: Value, vectors: &Path) -> String {
    let digest = hex::encode(Sha256::digest(std::fs::read(guest("hostile")).unwrap()));
    format!(
        "guardrails:\n  providers:\n    - name: hostile\n      wasm: hostile.wasm\n      sha256: {digest}\n      config: {behaviour}\n      vectors: {}\n",
        vectors.display()
    )
}

fn gate_refusal(err: &Error) -> &str {
    match err {
        Error::Load(LoadError::Vectors { message, .. }) => message,
        other => panic!("not refused by the gate: {other}"),
    }
}

#[test]
fn a_trapping_build_with_a_correct_pin_is_refused_at_reload_while_every_call_is_served() {
    let gate = vectors(&[ALLOWS_BASH]);
    let warden = warden(&pinned_hostile(json!({}), &gate.path));
    let serving = warden.health().generation;
    let trapping = config(&pinned_hostile(json!({"behaviour": "panic"}), &gate.path));

    let reloaded = AtomicBool::new(false);
    let (started, running) = std::sync::mpsc::channel();
    let (calls, failed) = std::thread::scope(|scope| {
        let load = scope.spawn(|| {
            let mut calls = 0usize;
            let mut failed = Vec::new();
            let call = call("read_file", empty());
            loop {
                let done = reloaded.load(Ordering::Acquire);
                match warden.evaluate(&call, Caller::Agent) {
                    Ok(e) if e.verdict == Verdict::Allow && e.generation == serving => {}
                    other => failed.push(format!("{other:?}")),
                }
                calls += 1;
                if calls == 1 {
                    started.send(()).unwrap();
                }
                // One more call after the attempt ended, on the set left serving.
                if done {
                    return (calls, failed);
                }
            }
        });
        running.recv().unwrap();
        let err = warden.reload(&trapping, "trapping").unwrap_err();
        reloaded.store(true, Ordering::Release);
        let message = gate_refusal(&err);
        assert!(
            message
                .starts_with("vector 'bash is allowed' (line 1) fails: expected allow, got deny"),
            "{err}"
        );
        assert!(
            err.to_string().starts_with("provider 'hostile': vectors "),
            "{err}"
        );
        load.join().unwrap()
    });
    assert!(calls >= 2, "{calls}");
    assert!(
        failed.is_empty(),
        "{} of {calls} calls were not served by the previous set, the first: {}",
        failed.len(),
        failed[0]
    );
    assert_eq!(warden.health().generation, serving);
}

#[test]
fn a_set_whose_vectors_pass_goes_live() {
    let gate = vectors(&[ALLOWS_BASH]);
    let warden = warden(&pinned_hostile(json!({}), &gate.path));
    let serving = warden.health().generation;
    let denying = vectors(&[DENIES_RM]);
    let report = warden
        .reload(
            &config(&pinned_hostile(json!({"verdict": "deny"}), &denying.path)),
            "denying",
        )
        .unwrap();
    assert!(report.generation > serving);
    assert_eq!(warden.health().generation, report.generation);
    assert_eq!(eval(&warden, "rm", empty()).verdict, Verdict::Deny);
}

#[test]
fn a_failing_vector_is_named_with_its_line_and_both_answers() {
    let gate = vectors(&[
        r#"{"name": "rm is denied", "request": {"tool_name": "rm", "tool_input": {}}, "expect": {"verdict": "deny"}}"#,
        "# the next one fails",
        r#"{"name": "bash is asked", "request": {"tool_name": "bash", "tool_input": {}}, "expect": {"verdict": "ask"}}"#,
    ]);
    let err = Warden::new(&config(&pinned_hostile(
        json!({"verdict": "deny"}),
        &gate.path,
    )))
    .err()
    .expect("refused at load");
    assert!(
        gate_refusal(&err).starts_with(
            "vector 'bash is asked' (line 3) fails: expected ask, got deny fixture.verdict"
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains(&format!("vectors {}:", gate.path.display())),
        "{err}"
    );
}

#[test]
fn a_missing_or_malformed_vectors_file_refuses_the_provider_naming_the_file() {
    let gate = vectors(&[r#"{"request": {"tool_name": "bash"}, "expect": {"verdict": "maybe"}}"#]);
    let err = Warden::new(&config(&pinned_hostile(json!({}), &gate.path)))
        .err()
        .unwrap();
    assert!(gate_refusal(&err).contains(":1: expect.verdict:"), "{err}");

    let missing = gate.path.with_file_name("absent.jsonl");
    let err = Warden::new(&config(&pinned_hostile(json!({}), &missing)))
        .err()
        .unwrap();
    assert!(gate_refusal(&err).starts_with("cannot read"), "{err}");
    assert!(err.to_string().contains("absent.jsonl"), "{err}");
}
