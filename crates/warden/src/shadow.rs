//! Shadow judgments: the opinion of a provider with `mode: shadow`, given on
//! the same call as the live ones but after the answer is decided, and never
//! in it. They run on a bounded queue owned by the facade, with a thread of
//! their own, so that a shadow can never slow or starve a live call: a job
//! that finds the queue full, or waited in it longer than [`MAX_QUEUE_WAIT`],
//! is shed and counted, never waited for.
//!
//! The caller of [`crate::Warden::evaluate_shadowed`] gets a [`Shadow`]
//! handle and says what to do with the outcome ([`Shadow::then`]); the
//! daemon holds the call's decision log line until then. The line is held at
//! most [`MAX_QUEUE_WAIT`] plus one judgment by the shadow providers (their
//! limits' worst case).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use warden_types::Evaluation;
use warden_types::decision::{Reason, Verdict};

/// How many shadow judgments may wait for the shadow thread; one more is shed.
pub const QUEUE_DEPTH: usize = 256;

/// How long a shadow judgment may wait in the queue before it is shed
/// instead of run: a shadow that cannot keep up falls behind by no more.
pub const MAX_QUEUE_WAIT: Duration = Duration::from_secs(1);

/// What became of one call's shadow judgment.
#[derive(Clone, Debug, PartialEq)]
pub enum ShadowOutcome {
    /// The shadow providers judged the call.
    Judged(ShadowJudgment),
    /// Not judged: the queue was full, or the job waited too long in it.
    Shed,
}

/// The answer the call would have had with its shadow providers live.
#[derive(Clone, Debug, PartialEq)]
pub struct ShadowJudgment {
    /// The verdict.
    pub verdict: Verdict,
    /// Why.
    pub reasons: Vec<Reason>,
    /// The stage whose opinion decided.
    pub decided_by: Option<String>,
    /// The live verdict, for the transition.
    pub live: Verdict,
    /// Whether the verdict, the deciding stage or the reason codes differ
    /// from the live answer's.
    pub differs: bool,
}

/// Counts of shadow judgments since start, for `/metrics`.
#[derive(Debug, Default)]
pub struct ShadowCounts {
    /// Judgments shed (queue full, or waited too long).
    pub shed: u64,
    /// Judgments made.
    pub judged: u64,
    /// Judgments whose verdict differs from the live one, by transition
    /// `(live, shadow)`.
    pub differences: Vec<((Verdict, Verdict), u64)>,
}

const VERDICTS: [Verdict; 3] = [Verdict::Allow, Verdict::Ask, Verdict::Deny];

fn index(verdict: Verdict) -> usize {
    match verdict {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

#[derive(Default)]
struct Stats {
    /// Queued and not yet settled.
    pending: AtomicU64,
    shed: AtomicU64,
    judged: AtomicU64,
    /// `[live][shadow]`.
    transitions: [[AtomicU64; 3]; 3],
}

/// Where a job's outcome goes: waiting for it, or for what to do with it.
enum Slot {
    Waiting,
    Ready(ShadowOutcome),
    Then(Box<dyn FnOnce(ShadowOutcome) + Send>),
    Done,
}

/// The pending shadow judgment of one call.
pub struct Shadow {
    slot: Arc<Mutex<Slot>>,
}

impl Shadow {
    fn settled(outcome: ShadowOutcome) -> Shadow {
        Shadow {
            slot: Arc::new(Mutex::new(Slot::Ready(outcome))),
        }
    }

    /// Runs `done` with the outcome once it is known: at once when it is
    /// already, else on the shadow thread when the judgment ends (or is shed).
    pub fn then(self, done: impl FnOnce(ShadowOutcome) + Send + 'static) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *slot, Slot::Done) {
            Slot::Ready(outcome) => {
                drop(slot);
                done(outcome);
            }
            _ => *slot = Slot::Then(Box::new(done)),
        }
    }
}

fn settle(slot: &Mutex<Slot>, outcome: ShadowOutcome) {
    let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
    match std::mem::replace(&mut *slot, Slot::Done) {
        Slot::Then(done) => {
            drop(slot);
            done(outcome);
        }
        // Nobody is waiting yet (or ever: the handle was dropped).
        _ => *slot = Slot::Ready(outcome),
    }
}

/// A shadow judgment: the call judged again, compared with its live answer.
/// The pipeline makes it; the queue only runs it, knowing nothing of how.
pub(crate) type Judge = Box<dyn FnOnce() -> Option<ShadowJudgment> + Send>;

/// One call to judge again with the shadow providers.
struct Job {
    judge: Judge,
    queued: Instant,
    slot: Arc<Mutex<Slot>>,
}

/// The shadow queue and its thread.
pub(crate) struct ShadowQueue {
    jobs: SyncSender<Job>,
    stats: Arc<Stats>,
}

impl ShadowQueue {
    /// Starts the shadow thread. It ends when the queue is dropped.
    pub(crate) fn start() -> ShadowQueue {
        let (jobs, queue) = sync_channel::<Job>(QUEUE_DEPTH);
        let stats = Arc::new(Stats::default());
        let counted = stats.clone();
        // Without a thread every job is shed (the sender finds the queue
        // disconnected): live calls are served either way.
        if let Err(err) = std::thread::Builder::new()
            .name("warden-shadow".into())
            .spawn(move || work(&queue, &counted))
        {
            tracing::error!(%err, "cannot start the shadow thread: shadow judgments are shed");
        }
        ShadowQueue { jobs, stats }
    }

    /// Queues a call's shadow judgment; shed at once when the queue is full.
    pub(crate) fn submit(&self, judge: Judge) -> Shadow {
        let slot = Arc::new(Mutex::new(Slot::Waiting));
        let job = Job {
            judge,
            queued: Instant::now(),
            slot: slot.clone(),
        };
        self.stats.pending.fetch_add(1, Ordering::AcqRel);
        match self.jobs.try_send(job) {
            Ok(()) => Shadow { slot },
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.stats.pending.fetch_sub(1, Ordering::AcqRel);
                self.stats.shed.fetch_add(1, Ordering::Relaxed);
                Shadow::settled(ShadowOutcome::Shed)
            }
        }
    }

    /// Waits until every queued judgment is settled (its outcome handed on),
    /// for at most `bound`; whether they all were.
    pub(crate) fn settle(&self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        while self.stats.pending.load(Ordering::Acquire) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// The counts since start.
    pub(crate) fn counts(&self) -> ShadowCounts {
        let mut differences = Vec::new();
        for live in VERDICTS {
            for shadow in VERDICTS {
                let n = self.stats.transitions[index(live)][index(shadow)].load(Ordering::Relaxed);
                if live != shadow && n > 0 {
                    differences.push(((live, shadow), n));
                }
            }
        }
        ShadowCounts {
            shed: self.stats.shed.load(Ordering::Relaxed),
            judged: self.stats.judged.load(Ordering::Relaxed),
            differences,
        }
    }
}

fn work(queue: &Receiver<Job>, stats: &Stats) {
    while let Ok(job) = queue.recv() {
        if job.queued.elapsed() > MAX_QUEUE_WAIT {
            stats.shed.fetch_add(1, Ordering::Relaxed);
            settle(&job.slot, ShadowOutcome::Shed);
            stats.pending.fetch_sub(1, Ordering::AcqRel);
            continue;
        }
        // A panic in a shadow judgment sheds it; the thread carries on.
        let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job.judge));
        let outcome = match judged {
            Ok(Some(judgment)) => {
                stats.judged.fetch_add(1, Ordering::Relaxed);
                stats.transitions[index(judgment.live)][index(judgment.verdict)]
                    .fetch_add(1, Ordering::Relaxed);
                ShadowOutcome::Judged(judgment)
            }
            Ok(None) | Err(_) => {
                stats.shed.fetch_add(1, Ordering::Relaxed);
                ShadowOutcome::Shed
            }
        };
        settle(&job.slot, outcome);
        stats.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Compares a shadow evaluation with the live one.
pub(crate) fn judgment(live: &Evaluation, shadow: Evaluation) -> ShadowJudgment {
    let codes = |e: &Evaluation| e.reasons.iter().map(|r| r.code.clone()).collect::<Vec<_>>();
    let differs = live.verdict != shadow.verdict
        || live.decided_by != shadow.decided_by
        || codes(live) != codes(&shadow);
    ShadowJudgment {
        verdict: shadow.verdict,
        reasons: shadow.reasons,
        decided_by: shadow.decided_by,
        live: live.verdict,
        differs,
    }
}
