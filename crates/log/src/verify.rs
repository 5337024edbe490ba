//! Checks a chained decision log ([`crate::chain`]): the chain line by line,
//! the checkpoints in the log, the checkpoint file kept outside it and, given
//! the public key, every signature. It reads any bytes: a line that is not
//! JSON, a link or a checkpoint of the wrong shape is a problem reported with
//! its line number, never a panic.
//!
//! Lines written before the chain existed (with no `chain` field) are read as
//! they are, before the first chained line; after it, one is a problem.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Verifier as _, VerifyingKey};
use serde_json::Value;

use crate::chain::{Checkpoint, Link, SIGNATURE_PREFIX, genesis, line_hash};

/// One thing wrong, where: the line of the log (or of the checkpoint file), from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `log` or `checkpoints`: the file the line is in.
    pub file: &'static str,
    /// The line, from 1; 0 for the file as a whole.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{} line {}: {}", self.file, self.line, self.message)
        }
    }
}

/// What the verifier found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines in the log.
    pub lines: u64,
    /// Lines from before the chain (no `chain` field), at its start.
    pub unchained: u64,
    /// The first and last `seq` of the chained lines.
    pub seqs: Option<(u64, u64)>,
    /// Whether the first chained line continues an earlier file (its `prev`
    /// is not the start of a chain).
    pub continues_earlier_file: bool,
    /// Checkpoints in the log.
    pub checkpoints: u64,
    /// Checkpoints in the log and in the checkpoint file whose signature was verified.
    pub signatures_verified: u64,
    /// Checkpoints of the checkpoint file matched against this log's lines.
    pub external_matched: u64,
    /// Checkpoints of the checkpoint file for lines before this log's first
    /// (an earlier, rotated file).
    pub external_earlier: u64,
    /// Checkpoints of the checkpoint file for lines after this log's last,
    /// when it ends with the checkpoint of a rotation the checkpoint file
    /// records too (a later file).
    pub external_later: u64,
    /// Chained lines after the last checkpoint (in the log or the file): what
    /// a cut at the end could remove unseen.
    pub unvouched_tail: u64,
    /// Everything wrong, in order.
    pub problems: Vec<Problem>,
}

impl Report {
    /// True when nothing is wrong.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Verifies `log` (the file's bytes), against `checkpoints` (the checkpoint
/// file's bytes) when given, checking signatures with `key` when given (then
/// an unsigned checkpoint is a problem too).
pub fn verify(log: &[u8], checkpoints: Option<&[u8]>, key: Option<&VerifyingKey>) -> Report {
    let mut report = Report::default();
    let external = checkpoints.map(|bytes| read_checkpoint_file(bytes, key, &mut report));
    let problem = |report: &mut Report, line: u64, message: String| {
        report.problems.push(Problem {
            file: "log",
            line,
            message,
        });
    };
    let body = log.strip_suffix(b"\n").unwrap_or(log);
    if log.last().is_some_and(|&b| b != b'\n') {
        problem(
            &mut report,
            body.split(|&b| b == b'\n').count() as u64,
            "the last line has no line break: it was cut while being written, or after".into(),
        );
    }
    // The previous line's hash and seq (None: unchained, or not readable).
    let mut previous: Option<(String, Option<u64>)> = None;
    let mut chained_since: Option<u64> = None;
    let mut last_vouched: Option<u64> = None;
    // The log's last line, if it is a checkpoint that ends a rotated file.
    let mut rotated_end: Option<Checkpoint> = None;
    // seq → (line, hash) of the lines an external checkpoint names.
    let mut named: BTreeMap<u64, (u64, String)> = BTreeMap::new();
    if log.is_empty() {
        return finish(report, external, named, last_vouched, None);
    }
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let n = i as u64 + 1;
        report.lines = n;
        rotated_end = None;
        let hash = line_hash(raw);
        let parsed: Option<serde_json::Map<String, Value>> = match serde_json::from_slice(raw) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        };
        let Some(mut object) = parsed else {
            problem(
                &mut report,
                n,
                "not a JSON object: the line was edited, or torn by a crash".into(),
            );
            previous = Some((hash, None));
            continue;
        };
        let Some(link) = object.remove("chain") else {
            match chained_since {
                Some(first) => problem(
                    &mut report,
                    n,
                    format!(
                        "no chain link, after line {first} started the chain: the line was inserted, or its link removed"
                    ),
                ),
                None => report.unchained += 1,
            }
            previous = Some((hash, None));
            continue;
        };
        let link: Link = match serde_json::from_value(link) {
            Ok(link) => link,
            Err(err) => {
                problem(
                    &mut report,
                    n,
                    format!("the chain link is malformed: {err}"),
                );
                previous = Some((hash, None));
                continue;
            }
        };
        chained_since.get_or_insert(n);
        match &previous {
            None => {
                report.continues_earlier_file = link.prev != genesis();
            }
            Some((prev_hash, prev_seq)) => {
                if &link.prev != prev_hash {
                    problem(
                        &mut report,
                        n,
                        format!(
                            "the chain breaks: the line names {} as the one before it, which hashes to {prev_hash}: a line was edited, deleted, inserted or reordered",
                            link.prev
                        ),
                    );
                } else if let Some(prev_seq) = prev_seq
                    && prev_seq.checked_add(1) != Some(link.seq)
                {
                    problem(
                        &mut report,
                        n,
                        format!("seq {} follows seq {prev_seq}", link.seq),
                    );
                }
            }
        }
        report.seqs = Some(match report.seqs {
            None => (link.seq, link.seq),
            Some((first, _)) => (first, link.seq),
        });
        if let Some(external) = &external
            && external.contains_key(&link.seq)
        {
            named.insert(link.seq, (n, hash.clone()));
        }
        if let Some(checkpoint) = object.remove("checkpoint") {
            report.checkpoints += 1;
            match serde_json::from_value::<Checkpoint>(checkpoint) {
                Err(err) => problem(
                    &mut report,
                    n,
                    format!("the checkpoint is malformed: {err}"),
                ),
                Ok(checkpoint) => {
                    let before = previous.as_ref();
                    let matches = before
                        .is_some_and(|(h, s)| *h == checkpoint.hash && *s == Some(checkpoint.seq));
                    if !matches {
                        problem(
                            &mut report,
                            n,
                            format!(
                                "the checkpoint vouches for seq {} with hash {}, which is not the line before it",
                                checkpoint.seq, checkpoint.hash
                            ),
                        );
                    } else {
                        last_vouched = Some(checkpoint.seq);
                    }
                    if let Some(message) = check_signature(&checkpoint, key) {
                        problem(&mut report, n, message);
                    } else if key.is_some() {
                        report.signatures_verified += 1;
                    }
                    if checkpoint.rotated {
                        rotated_end = Some(checkpoint);
                    }
                }
            }
        }
        previous = Some((hash, Some(link.seq)));
    }
    finish(report, external, named, last_vouched, rotated_end)
}

/// Matches the checkpoint file against the lines it names, and counts the
/// tail no checkpoint vouches for.
fn finish(
    mut report: Report,
    external: Option<BTreeMap<u64, (u64, Checkpoint)>>,
    named: BTreeMap<u64, (u64, String)>,
    mut last_vouched: Option<u64>,
    rotated_end: Option<Checkpoint>,
) -> Report {
    if let Some(external) = external {
        // A file that ends with a rotation the checkpoint file records was
        // followed by another: the checkpoints after it are that file's.
        let rotated = rotated_end.filter(|end| {
            external
                .get(&end.seq)
                .is_some_and(|(_, c)| c.rotated && c.hash == end.hash)
        });
        for (seq, (line, checkpoint)) in external {
            let problem = |message: String| Problem {
                file: "checkpoints",
                line,
                message,
            };
            match report.seqs {
                Some((first, _)) if seq < first => report.external_earlier += 1,
                Some((_, last)) if seq <= last => match named.get(&seq) {
                    Some((_, hash)) if *hash == checkpoint.hash => {
                        report.external_matched += 1;
                        last_vouched = last_vouched.max(Some(seq));
                    }
                    Some((n, hash)) => report.problems.push(problem(format!(
                        "vouches for seq {seq} with hash {}, but that line (log line {n}) hashes to {hash}: the log was rewritten",
                        checkpoint.hash
                    ))),
                    None => report.problems.push(problem(format!(
                        "vouches for seq {seq}, which no line of the log carries: the log was rewritten"
                    ))),
                },
                Some(_) if rotated.is_some() => report.external_later += 1,
                Some((_, last)) => report.problems.push(problem(format!(
                    "vouches for seq {seq}, but the log ends at seq {last}: lines were cut from its end"
                ))),
                None => report.problems.push(problem(format!(
                    "vouches for seq {seq}, but the log has no chained line: it was emptied or replaced"
                ))),
            }
        }
    }
    if let Some((first, last)) = report.seqs {
        report.unvouched_tail = match last_vouched {
            Some(v) => last.saturating_sub(v),
            None => last.saturating_sub(first).saturating_add(1),
        };
    }
    report
}

/// The checkpoint file, by seq (a later one for the same seq wins: both are
/// checked against the same line), its own problems reported.
fn read_checkpoint_file(
    bytes: &[u8],
    key: Option<&VerifyingKey>,
    report: &mut Report,
) -> BTreeMap<u64, (u64, Checkpoint)> {
    let mut out = BTreeMap::new();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return out;
    }
    for (i, raw) in body.split(|&b| b == b'\n').enumerate() {
        let n = i as u64 + 1;
        let problem = |message: String| Problem {
            file: "checkpoints",
            line: n,
            message,
        };
        match serde_json::from_slice::<Checkpoint>(raw) {
            Err(err) => report
                .problems
                .push(problem(format!("not a checkpoint: {err}"))),
            Ok(checkpoint) => {
                if let Some(message) = check_signature(&checkpoint, key) {
                    report.problems.push(problem(message));
                } else if key.is_some() {
                    report.signatures_verified += 1;
                }
                out.insert(checkpoint.seq, (n, checkpoint));
            }
        }
    }
    out
}

/// What is wrong with a checkpoint's signature under `key`, if anything.
/// Without a key nothing is checked.
fn check_signature(checkpoint: &Checkpoint, key: Option<&VerifyingKey>) -> Option<String> {
    let key = key?;
    let Some(signature) = &checkpoint.signature else {
        return Some(format!(
            "the checkpoint for seq {} is not signed, and a key was given",
            checkpoint.seq
        ));
    };
    let bytes = signature
        .strip_prefix(SIGNATURE_PREFIX)
        .and_then(|b| BASE64.decode(b).ok())
        .and_then(|b| Signature::from_slice(&b).ok());
    let Some(signature) = bytes else {
        return Some(format!(
            "the checkpoint for seq {} has a malformed signature",
            checkpoint.seq
        ));
    };
    key.verify(&checkpoint.signed_bytes(), &signature)
        .err()
        .map(|_| {
            format!(
                "the signature of the checkpoint for seq {} does not verify with the key given: the checkpoint was forged or edited",
                checkpoint.seq
            )
        })
}
