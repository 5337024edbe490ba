//! `warden log verify`: a decision log chained and signed with a key
//! `warden keygen` made, checked by the real binary, intact and tampered.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use warden_log::{ChainOptions, CheckpointKey, Fsync, JsonLines, Options, Rotation};

fn warden_cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .output()
        .unwrap()
}

/// A signed, chained log of 12 lines (a checkpoint every 5) in `dir`: the
/// log, its checkpoint file and the public key's path.
fn signed_log(dir: &std::path::Path) -> [String; 3] {
    let prefix = dir.join("ops");
    assert!(
        warden_cli(&["keygen", "--out", prefix.to_str().unwrap()])
            .status
            .success()
    );
    let key = warden::signing::read_signing_key(&dir.join("ops.key")).unwrap();
    let log_path = dir.join("decisions.jsonl");
    let checkpoints = dir.join("decisions.jsonl.checkpoints");
    let log = JsonLines::open_with_options(
        &log_path,
        Options {
            fsync: Fsync::Interval,
            interval: Duration::from_millis(20),
            chain: Some(ChainOptions {
                every: 5,
                checkpoints: checkpoints.clone(),
                key: Some(CheckpointKey {
                    key,
                    kid: "oap:owner:example.com:ops".into(),
                }),
            }),
            rotation: Rotation::default(),
        },
    )
    .unwrap();
    for i in 0..12 {
        log.append(&json!({"decision_id": format!("d-{i}"), "verdict": "allow"}));
    }
    drop(log);
    [log_path, checkpoints, dir.join("ops.pub")].map(|p| p.display().to_string())
}

/// `warden log verify` of a log with its checkpoint file and the public key.
fn verify_signed(log: &str, checkpoints: &str, public: &str) -> (Output, String) {
    let out = warden_cli(&[
        "log",
        "verify",
        log,
        "--checkpoints",
        checkpoints,
        "--key",
        public,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

#[test]
fn log_verify_says_intact_for_an_untouched_log_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let [log, checkpoints, public] = signed_log(dir.path());
    let (out, stdout) = verify_signed(&log, &checkpoints, &public);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("intact"), "{stdout}");
    assert!(stdout.contains("signatures verified: 5"), "{stdout}");
}

#[test]
fn log_verify_names_the_line_where_the_chain_breaks_and_exits_one() {
    let dir = tempfile::tempdir().unwrap();
    let [log, checkpoints, public] = signed_log(dir.path());
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replacen("\"d-2\"", "\"d-X\"", 1)).unwrap();
    let (out, stdout) = verify_signed(&log, &checkpoints, &public);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("broken: log line 4: the chain breaks"),
        "{stdout}"
    );
}

#[test]
fn log_verify_exits_two_on_a_file_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    let out = warden_cli(&["log", "verify", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.jsonl"));
}
