//! Replay: a decision log's calls judged again against a candidate policy, to
//! see what it would decide differently before it serves (`warden replay`).
//!
//! - [`facts`]: what a line keeps for replay beside its arguments;
//! - [`read`]: each line rebuilt into the call the live pipeline judged
//!   (through the daemon's request parser), or the reason it cannot be: the
//!   arguments were not logged, or were redacted or cut, or the line is not a
//!   decision the policy alone made. Nothing is invented.
//! - [`report`]: the coverage, the transitions and the changed calls.
//!
//! The judging itself is the caller's (the `warden` library's
//! `Warden::evaluate`, given as a closure), so that this crate stays below the
//! library. A rebuilt call is judged as an internal caller's: its context holds
//! only what the live caller was believed, and its clock is the time the live
//! call was judged at.

pub mod facts;
pub mod read;
pub mod report;

use std::num::NonZeroUsize;

use warden_types::request::{RequestError, ToolCall};
use warden_types::{Caller, Evaluation};

pub use read::{Entry, LoggedCall, LoggedSide, SideReason, Skip, read_line};
pub use report::{Change, Coverage, Problem, Report, Transition};

/// What judges a rebuilt call: the candidate's `Warden::evaluate`.
pub type Judge<'a> = dyn Fn(&ToolCall, Caller) -> Result<Evaluation, RequestError> + Sync + 'a;

/// One line's outcome, before it is counted.
enum Outcome {
    Judged(Box<(LoggedCall, Result<Evaluation, RequestError>)>),
    Skipped(Skip),
    Other,
}

/// Replays every line of `log` through `judge` on `threads` threads (at
/// least one), and reports in the log's order.
pub fn replay(log: &[u8], threads: NonZeroUsize, judge: &Judge<'_>) -> Report {
    let lines: Vec<&[u8]> = log
        .strip_suffix(b"\n")
        .unwrap_or(log)
        .split(|b| *b == b'\n')
        .filter(|_| !log.is_empty())
        .collect();
    let chunk = lines.len().div_ceil(threads.get()).max(1);
    let outcomes: Vec<Vec<Outcome>> = std::thread::scope(|scope| {
        let workers: Vec<_> = lines
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|l| outcome(l, judge)).collect()))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a replay thread panicked"))
            .collect()
    });
    let mut report = Report::default();
    for (index, outcome) in outcomes.into_iter().flatten().enumerate() {
        let line = index as u64 + 1;
        match outcome {
            Outcome::Judged(judged) => match *judged {
                (logged, Ok(evaluation)) => report.judged(line, logged, &evaluation),
                (_, Err(err)) => {
                    report.skipped(line, &Skip::Invalid(format!("judging refused it: {err}")))
                }
            },
            Outcome::Skipped(skip) => report.skipped(line, &skip),
            Outcome::Other => report.coverage.lines_read += 1,
        }
    }
    report
}

fn outcome(line: &[u8], judge: &Judge<'_>) -> Outcome {
    match read_line(line) {
        Entry::Call(logged) => {
            let evaluation = judge(&logged.call, Caller::Internal);
            Outcome::Judged(Box::new((*logged, evaluation)))
        }
        Entry::Skipped(skip) => Outcome::Skipped(skip),
        Entry::Other => Outcome::Other,
    }
}
