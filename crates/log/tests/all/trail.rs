//! The tamper-evident trail: a chained log written by the real writer, then
//! edited, cut, reordered or forged on disk, and checked by the verifier that
//! `warden log verify` runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use warden_log::chain::Chain;
use warden_log::{
    ChainOptions, CheckpointKey, Fsync, JsonLines, Options, Report, Rotation, verify,
};

const SEED: [u8; 32] = [7; 32];

fn key() -> CheckpointKey {
    CheckpointKey {
        key: SigningKey::from_bytes(&SEED),
        kid: "oap:owner:example.com:warden-1".into(),
    }
}

struct Trail {
    _dir: tempfile::TempDir,
    log: PathBuf,
    checkpoints: PathBuf,
}

impl Trail {
    fn new() -> Trail {
        let dir = tempfile::tempdir().unwrap();
        Trail {
            log: dir.path().join("decisions.jsonl"),
            checkpoints: dir.path().join("decisions.jsonl.checkpoints"),
            _dir: dir,
        }
    }

    /// Writes `n` decision-like lines, numbered from `from`, through the real
    /// writer (a checkpoint every `every` lines), and closes it.
    fn write(&self, from: usize, n: usize, every: u64, signed: bool) {
        self.write_rotating(from, n, every, signed, Rotation::default());
    }

    /// As `write`, rotated as `rotation` says, each line written out alone
    /// (so that rotation is considered before each).
    fn write_rotating(&self, from: usize, n: usize, every: u64, signed: bool, rotation: Rotation) {
        let log = JsonLines::open_with_options(
            &self.log,
            Options {
                fsync: Fsync::Interval,
                interval: Duration::from_millis(20),
                chain: Some(ChainOptions {
                    every,
                    checkpoints: self.checkpoints.clone(),
                    key: signed.then(key),
                }),
                rotation,
            },
        )
        .unwrap();
        for i in from..from + n {
            log.append(
                &json!({"decision_id": format!("d-{i}"), "verdict": "allow", "tool_name": "bash"}),
            );
            if rotation != Rotation::default() {
                log.flush();
            }
        }
    }

    /// The log's files, oldest first: the rotated ones (named by the time
    /// they were rotated), then the current one.
    fn files(&self) -> Vec<PathBuf> {
        let dir = self.log.parent().unwrap();
        let mut rotated: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                name.starts_with("decisions.") && name.ends_with(".jsonl") && *p != self.log
            })
            .collect();
        rotated.sort();
        rotated.push(self.log.clone());
        rotated
    }

    fn lines(&self) -> Vec<String> {
        read_lines(&self.log)
    }

    fn set_lines(&self, lines: &[String]) {
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&self.log, text).unwrap();
    }

    fn verify(&self, with_checkpoints: bool, signed: bool) -> Report {
        let log = std::fs::read(&self.log).unwrap();
        let external = with_checkpoints.then(|| std::fs::read(&self.checkpoints).unwrap());
        let public = key().key.verifying_key();
        verify(&log, external.as_deref(), signed.then_some(&public))
    }
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The log's decision lines with their links and checkpoints removed, changed
/// by `edit`, and chained again from the start (with checkpoints, signed by
/// `forger` if given): what someone who can write the file but does not hold
/// the key can make.
fn rechain(
    lines: &[String],
    edit: impl Fn(&mut Vec<Value>),
    forger: Option<CheckpointKey>,
) -> Vec<String> {
    let mut records: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("checkpoint").is_none())
        .map(|mut v| {
            v.as_object_mut().unwrap().remove("chain");
            v
        })
        .collect();
    edit(&mut records);
    let mut chain = Chain::resume(b"", 10, forger);
    let mut out = Vec::new();
    for record in &records {
        chain.link(&serde_json::to_vec(record).unwrap(), &mut out);
    }
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn problems(report: &Report) -> String {
    report
        .problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn an_untouched_log_verifies_with_its_checkpoints_and_signatures() {
    let trail = Trail::new();
    trail.write(0, 25, 10, true);
    let report = trail.verify(true, true);
    assert!(report.ok(), "{}", problems(&report));
    // 25 decisions and a checkpoint after the 10th and the 20th.
    assert_eq!((report.lines, report.checkpoints), (27, 2));
    // The two in the log and the closing one in the file.
    assert_eq!(report.external_matched, 3);
    assert_eq!(report.signatures_verified, 5);
    assert_eq!(report.unvouched_tail, 0);
}

#[test]
fn every_line_carries_the_hash_of_the_one_before() {
    let trail = Trail::new();
    trail.write(0, 3, 0, false);
    let lines = trail.lines();
    for pair in lines.windows(2) {
        let next: Value = serde_json::from_str(&pair[1]).unwrap();
        assert_eq!(
            next["chain"]["prev"],
            warden_log::chain::line_hash(pair[0].as_bytes())
        );
    }
    // The record's own fields are kept as they were.
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["decision_id"], "d-0");
}

#[test]
fn an_edited_line_is_detected_where_the_chain_breaks() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    let mut lines = trail.lines();
    lines[4] = lines[4].replace("\"allow\"", "\"deny\"");
    trail.set_lines(&lines);
    let report = trail.verify(false, false);
    assert_eq!(report.problems.len(), 1, "{}", problems(&report));
    assert_eq!(report.problems[0].line, 6);
    assert!(report.problems[0].message.contains("the chain breaks"));
}

#[test]
fn a_deleted_line_is_detected() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    let mut lines = trail.lines();
    lines.remove(3);
    trail.set_lines(&lines);
    let report = trail.verify(false, false);
    assert!(!report.ok());
    assert_eq!(report.problems[0].line, 4, "{}", problems(&report));
}

#[test]
fn reordered_lines_are_detected() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    let mut lines = trail.lines();
    lines.swap(2, 3);
    trail.set_lines(&lines);
    let report = trail.verify(false, false);
    assert!(!report.ok());
    assert_eq!(report.problems[0].line, 3, "{}", problems(&report));
}

#[test]
fn an_inserted_line_without_a_link_is_detected() {
    let trail = Trail::new();
    trail.write(0, 5, 10, false);
    let mut lines = trail.lines();
    lines.insert(
        2,
        json!({"decision_id": "forged", "verdict": "allow"}).to_string(),
    );
    trail.set_lines(&lines);
    let report = trail.verify(false, false);
    assert!(!report.ok());
    assert_eq!(report.problems[0].line, 3, "{}", problems(&report));
}

#[test]
fn a_cut_at_the_end_is_seen_only_with_the_checkpoint_file() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    let lines = trail.lines();
    // Cut right after the last checkpoint in the log: the chain is whole.
    trail.set_lines(&lines[..22]);
    assert!(trail.verify(false, false).ok());
    let report = trail.verify(true, false);
    assert!(!report.ok());
    assert!(
        problems(&report).contains("lines were cut from its end"),
        "{}",
        problems(&report)
    );
}

#[test]
fn a_file_forged_and_rechained_whole_is_caught_by_the_checkpoint_file() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    let forged = rechain(
        &trail.lines(),
        |records| records[4]["verdict"] = json!("deny"),
        None,
    );
    trail.set_lines(&forged);
    // The chain and the checkpoints in the file agree with each other...
    assert!(trail.verify(false, false).ok());
    // ...but not with the checkpoints shipped outside.
    let report = trail.verify(true, false);
    assert!(
        problems(&report).contains("the log was rewritten"),
        "{}",
        problems(&report)
    );
}

#[test]
fn a_file_forged_and_rechained_whole_is_caught_by_the_signatures() {
    let trail = Trail::new();
    trail.write(0, 25, 10, true);
    let impostor = CheckpointKey {
        key: SigningKey::from_bytes(&[9; 32]),
        kid: key().kid,
    };
    let forged = rechain(
        &trail.lines(),
        |records| {
            records.remove(7);
        },
        Some(impostor),
    );
    trail.set_lines(&forged);
    assert!(
        trail.verify(false, false).ok(),
        "the chain alone cannot tell"
    );
    let report = trail.verify(false, true);
    assert!(
        problems(&report).contains("does not verify with the key given"),
        "{}",
        problems(&report)
    );
    // Unsigned checkpoints do not pass for signed ones either.
    let forged = rechain(&trail.lines(), |_| {}, None);
    trail.set_lines(&forged);
    assert!(problems(&trail.verify(false, true)).contains("is not signed"));
}

#[test]
fn a_replaced_file_is_caught_by_the_checkpoint_file() {
    let trail = Trail::new();
    trail.write(0, 25, 10, false);
    std::fs::write(&trail.log, "").unwrap();
    let report = trail.verify(true, false);
    assert!(
        problems(&report).contains("emptied or replaced"),
        "{}",
        problems(&report)
    );
}

#[test]
fn a_reopened_log_continues_its_chain() {
    let trail = Trail::new();
    trail.write(0, 5, 10, true);
    trail.write(5, 5, 10, true);
    let report = trail.verify(true, true);
    assert!(report.ok(), "{}", problems(&report));
    assert_eq!(report.seqs, Some((0, 9)));
    // Each close left a checkpoint in the file for the last line.
    assert_eq!(report.external_matched, 2);
}

#[test]
fn lines_written_before_the_chain_still_read() {
    let trail = Trail::new();
    std::fs::write(
        &trail.log,
        "{\"decision_id\":\"old-1\"}\n{\"decision_id\":\"old-2\"}\n",
    )
    .unwrap();
    trail.write(0, 3, 10, false);
    let report = trail.verify(true, false);
    assert!(report.ok(), "{}", problems(&report));
    assert_eq!((report.unchained, report.seqs), (2, Some((0, 2))));
}

#[test]
fn a_line_torn_by_a_crash_is_reported_and_the_chain_goes_on_after_it() {
    let trail = Trail::new();
    trail.write(0, 3, 10, false);
    let mut text = std::fs::read_to_string(&trail.log).unwrap();
    text.push_str("{\"decision_id\":\"torn");
    std::fs::write(&trail.log, text).unwrap();
    trail.write(3, 2, 10, false);
    let report = trail.verify(true, false);
    assert_eq!(report.problems.len(), 1, "{}", problems(&report));
    assert_eq!(report.problems[0].line, 4);
    assert!(report.problems[0].message.contains("torn"));
}

#[test]
fn the_verifier_reads_any_bytes_without_panicking() {
    for bytes in [
        &b""[..],
        b"\n\n",
        b"{\"chain\":7}\n",
        b"{\"chain\":{\"seq\":0,\"prev\":\"x\"},\"checkpoint\":{}}\n",
        b"\xff\xfe\n",
        b"[1,2]\n",
    ] {
        let _ = verify(bytes, Some(bytes), Some(&key().key.verifying_key()));
    }
}

fn by_size() -> Rotation {
    Rotation {
        max_bytes: Some(1000),
        max_age: None,
    }
}

#[test]
fn rotation_by_size_loses_no_line_and_carries_the_chain_across_files() {
    let trail = Trail::new();
    trail.write_rotating(0, 40, 0, true, by_size());
    let files = trail.files();
    assert!(files.len() >= 4, "{files:?}");
    // Every file but the last ends with the checkpoint of its rotation.
    let mut all = Vec::new();
    for file in &files[..files.len() - 1] {
        let last = read_lines(file).pop().unwrap();
        let last: Value = serde_json::from_str(&last).unwrap();
        assert_eq!(last["checkpoint"]["rotated"], true, "{}", file.display());
    }
    for file in &files {
        all.extend(std::fs::read(file).unwrap());
    }
    // The files, in order, are one chain: every decision, none twice.
    let checkpoints = std::fs::read(&trail.checkpoints).unwrap();
    let public = key().key.verifying_key();
    let report = verify(&all, Some(&checkpoints), Some(&public));
    assert!(report.ok(), "{}", problems(&report));
    let decisions: Vec<String> = String::from_utf8(all)
        .unwrap()
        .lines()
        .filter_map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["decision_id"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(
        decisions,
        (0..40).map(|i| format!("d-{i}")).collect::<Vec<_>>()
    );
}

#[test]
fn each_rotated_file_verifies_alone_against_the_shared_checkpoint_file() {
    let trail = Trail::new();
    trail.write_rotating(0, 40, 0, false, by_size());
    let checkpoints = std::fs::read(&trail.checkpoints).unwrap();
    let files = trail.files();
    for (i, file) in files.iter().enumerate() {
        let report = verify(&std::fs::read(file).unwrap(), Some(&checkpoints), None);
        assert!(report.ok(), "{}: {}", file.display(), problems(&report));
        assert_eq!(report.continues_earlier_file, i > 0, "{}", file.display());
    }
}

#[test]
fn a_rotated_file_cut_after_a_checkpoint_is_still_seen() {
    let trail = Trail::new();
    trail.write_rotating(0, 40, 3, false, by_size());
    let checkpoints = std::fs::read(&trail.checkpoints).unwrap();
    let first = trail.files()[0].clone();
    let lines = read_lines(&first);
    // Cut the rotation's checkpoint and the lines before it back to a periodic one.
    let cut = lines
        .iter()
        .rposition(|l| l.contains("\"checkpoint\"") && !l.contains("\"rotated\""))
        .unwrap();
    let mut text = lines[..=cut].join("\n");
    text.push('\n');
    let report = verify(text.as_bytes(), Some(&checkpoints), None);
    assert!(
        problems(&report).contains("cut from its end"),
        "{}",
        problems(&report)
    );
}

#[test]
fn a_file_is_rotated_once_old_enough_or_large_enough_and_never_empty() {
    let start = std::time::Instant::now();
    let rotation = Rotation {
        max_bytes: Some(100),
        max_age: Some(Duration::from_secs(60)),
    };
    assert!(!rotation.due(99, start, start));
    assert!(rotation.due(100, start, start));
    assert!(rotation.due(1, start, start + Duration::from_secs(60)));
    assert!(!rotation.due(0, start, start + Duration::from_secs(600)));
    assert!(!Rotation::default().due(u64::MAX, start, start + Duration::from_secs(600)));
}

#[test]
fn the_decision_log_is_chained_by_default_with_its_checkpoint_file_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = warden_log::DecisionLog::open(&warden_log::DecisionLogConfig::default(), dir.path())
        .unwrap();
    let call: warden_types::ToolCall =
        serde_json::from_value(json!({"tool_name": "bash", "tool_input": {"command": "ls"}}))
            .unwrap();
    let evaluation: warden_types::Evaluation = serde_json::from_value(json!({
        "verdict": "allow", "allow": true, "reasons": [], "metadata": {},
        "interaction_mode": "interactive", "stages": [], "generation": 1,
        "duration_us": 5, "judged_at": "2026-01-02T03:04:06Z"
    }))
    .unwrap();
    log.record(&call, &evaluation, None);
    log.record(&call, &evaluation, None);
    drop(log);
    let text = std::fs::read(dir.path().join("decisions.jsonl")).unwrap();
    let checkpoints = std::fs::read(dir.path().join("decisions.jsonl.checkpoints")).unwrap();
    let report = verify(&text, Some(&checkpoints), None);
    assert!(report.ok(), "{}", problems(&report));
    assert_eq!((report.seqs, report.external_matched), (Some((0, 1)), 1));
}
