//! What a replay found: coverage first (what could be judged again, and why
//! the rest could not), then the transitions (logged verdict to new verdict),
//! then each changed call with what decided it on each side.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use warden_types::Evaluation;
use warden_types::decision::Verdict;

use super::read::{LoggedCall, LoggedSide, SideReason, Skip};

/// A change of verdict: `allow->deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Transition {
    /// The logged verdict.
    pub from: Verdict,
    /// The candidate's.
    pub to: Verdict,
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}->{}", self.from, self.to)
    }
}

impl std::str::FromStr for Transition {
    type Err = String;

    /// `allow->deny`, `deny->allow`, ... (`allow`, `ask`, `deny`).
    fn from_str(text: &str) -> Result<Self, String> {
        let verdict = |v: &str| match v.trim() {
            "allow" => Ok(Verdict::Allow),
            "ask" => Ok(Verdict::Ask),
            "deny" => Ok(Verdict::Deny),
            other => Err(format!(
                "'{other}' in '{text}' is not a verdict (allow, ask, deny)"
            )),
        };
        let (from, to) = text
            .split_once("->")
            .ok_or_else(|| format!("'{text}' is not a transition (like allow->deny)"))?;
        Ok(Transition {
            from: verdict(from)?,
            to: verdict(to)?,
        })
    }
}

impl Serialize for Transition {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Which lines were judged again, and why the others were not.
#[derive(Debug, Default, Serialize)]
pub struct Coverage {
    /// Every line of the log, checkpoints and blank lines included.
    pub lines_read: u64,
    /// Decision lines judged again and counted in the transitions.
    pub rejudged: u64,
    /// Decision lines whose logged answer was not the policy's alone (the
    /// thread waited for a human; the approval store or the daemon could not
    /// judge): judged against the policy only, counted apart.
    pub approval_dependent: u64,
    /// Lines not judged again, by reason.
    pub not_rejudged: BTreeMap<&'static str, u64>,
    /// The lines the log itself got wrong (malformed, fields missing, a
    /// request the parser refuses), by line number.
    pub problems: Vec<Problem>,
}

/// A line of the log that could not be read as a decision.
#[derive(Debug, Serialize)]
pub struct Problem {
    /// Its number, from 1.
    pub line: u64,
    /// The reason, as coverage counts it.
    pub reason: &'static str,
    /// What is wrong.
    pub message: String,
}

/// A call whose verdict the candidate changes.
#[derive(Debug, Serialize)]
pub struct Change {
    /// Its line, from 1.
    pub line: u64,
    /// The line's decision id.
    pub decision_id: String,
    /// The tool.
    pub tool_name: String,
    /// What the log says decided it.
    pub logged: LoggedSide,
    /// What decided it against the candidate.
    pub replayed: LoggedSide,
}

/// What a replay found.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// Which lines were judged again.
    pub coverage: Coverage,
    /// Counts by logged verdict and new verdict, unchanged ones included.
    pub transitions: BTreeMap<Transition, u64>,
    /// The same, for the approval-dependent lines (policy only).
    pub approval_dependent_transitions: BTreeMap<Transition, u64>,
    /// The calls whose verdict changed, in the log's order (approval-dependent
    /// lines left out).
    pub changed: Vec<Change>,
}

impl Report {
    /// The transitions among `watched` that occurred, with their counts: a
    /// CI gate fails on any.
    pub fn occurred(&self, watched: &[Transition]) -> Vec<(Transition, u64)> {
        watched
            .iter()
            .filter_map(|t| self.transitions.get(t).map(|n| (*t, *n)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    pub(crate) fn judged(&mut self, line: u64, logged: LoggedCall, evaluation: &Evaluation) {
        self.coverage.lines_read += 1;
        let transition = Transition {
            from: logged.logged.verdict,
            to: evaluation.verdict,
        };
        if logged.approval_dependent {
            self.coverage.approval_dependent += 1;
            *self
                .approval_dependent_transitions
                .entry(transition)
                .or_default() += 1;
            return;
        }
        self.coverage.rejudged += 1;
        *self.transitions.entry(transition).or_default() += 1;
        if transition.from != transition.to {
            self.changed.push(Change {
                line,
                decision_id: logged.decision_id,
                tool_name: logged.call.tool_name,
                logged: logged.logged,
                replayed: side(evaluation),
            });
        }
    }

    pub(crate) fn skipped(&mut self, line: u64, skip: &Skip) {
        self.coverage.lines_read += 1;
        *self.coverage.not_rejudged.entry(skip.code()).or_default() += 1;
        if let Some(message) = skip.problem() {
            self.coverage.problems.push(Problem {
                line,
                reason: skip.code(),
                message: message.to_string(),
            });
        }
    }

    /// The report for a person: coverage, transitions, then at most `show`
    /// changed calls.
    pub fn render(&self, show: usize) -> String {
        use std::fmt::Write as _;
        let c = &self.coverage;
        let mut out = String::new();
        let not: u64 = c.not_rejudged.values().sum();
        let _ = writeln!(out, "coverage");
        let _ = writeln!(out, "  lines read           {}", c.lines_read);
        let _ = writeln!(out, "  re-judged            {}", c.rejudged);
        let _ = writeln!(
            out,
            "  approval-dependent   {} (judged against the policy only, counted apart)",
            c.approval_dependent
        );
        let _ = writeln!(out, "  not re-judged        {not}");
        for (reason, n) in &c.not_rejudged {
            let _ = writeln!(out, "    {reason:<22} {n}");
        }
        for p in &c.problems {
            let _ = writeln!(out, "  line {}: {}: {}", p.line, p.reason, p.message);
        }
        for (title, counts) in [
            ("transitions", &self.transitions),
            (
                "approval-dependent transitions (policy only)",
                &self.approval_dependent_transitions,
            ),
        ] {
            let _ = writeln!(out, "{title}");
            for (t, n) in counts {
                let mark = if t.from == t.to { "" } else { "  (changed)" };
                let _ = writeln!(out, "  {:<12} {n}{mark}", t.to_string());
            }
        }
        let _ = writeln!(out, "changed calls: {}", self.changed.len());
        for change in self.changed.iter().take(show) {
            let _ = writeln!(
                out,
                "  line {} {} {}: {} -> {}",
                change.line,
                change.decision_id,
                change.tool_name,
                change.logged.verdict,
                change.replayed.verdict
            );
            for (label, s) in [("logged  ", &change.logged), ("replayed", &change.replayed)] {
                let _ = writeln!(out, "    {label} {}", describe(s));
            }
        }
        if self.changed.len() > show {
            let _ = writeln!(
                out,
                "  ... {} more (--show N, or --json for all)",
                self.changed.len() - show
            );
        }
        out
    }
}

/// `decided by provider:oap (sha256:...) policy P: code: message; ...`
fn describe(side: &LoggedSide) -> String {
    let mut text = format!(
        "{} decided by {}",
        side.verdict,
        side.decided_by.as_deref().unwrap_or("-")
    );
    if let Some(digest) = &side.digest {
        text.push_str(&format!(" ({digest})"));
    }
    if let Some(policy) = &side.policy_id {
        text.push_str(&format!(" policy {policy}"));
    }
    let reasons: Vec<String> = side
        .reasons
        .iter()
        .map(|r| match r.message.as_str() {
            "" => r.code.clone(),
            m => format!("{}: {m}", r.code),
        })
        .collect();
    if !reasons.is_empty() {
        text.push_str(&format!(": {}", reasons.join("; ")));
    }
    text
}

/// The candidate's side of a judgment.
fn side(evaluation: &Evaluation) -> LoggedSide {
    let digest = evaluation.decided_by.as_deref().and_then(|by| {
        evaluation
            .stages
            .iter()
            .find(|s| s.stage == by)
            .and_then(|s| s.digest.clone())
    });
    LoggedSide {
        verdict: evaluation.verdict,
        decided_by: evaluation.decided_by.clone(),
        digest,
        policy_id: evaluation.policy_id.clone(),
        reasons: evaluation
            .reasons
            .iter()
            .map(|r| SideReason {
                code: r.code.clone(),
                message: r.message.clone(),
            })
            .collect(),
    }
}
