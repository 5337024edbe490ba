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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use warden_types::Evaluation;
use warden_types::decision::{Reason, Verdict};
use warden_types::request::ToolCall;

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

impl ShadowOutcome {
    /// What a decision log line records of it.
    pub fn logged(&self) -> warden_log::LoggedShadow {
        match self {
            ShadowOutcome::Judged(j) => warden_log::LoggedShadow::judged(
                j.verdict,
                j.differs,
                j.decided_by.as_deref(),
                &j.reasons,
            ),
            ShadowOutcome::Shed => warden_log::LoggedShadow::shed(),
        }
    }
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

/// What the library itself does with an outcome (its own decision log's
/// line), besides what the handle's holder says with [`Shadow::then`].
type Observer = Box<dyn FnOnce(&ShadowOutcome) + Send>;

/// A job's slot and the library's observer of its outcome.
struct Pending {
    slot: Slot,
    observer: Option<Observer>,
}

/// The pending shadow judgment of one call.
pub struct Shadow {
    pending: Arc<Mutex<Pending>>,
}

impl Shadow {
    fn new(slot: Slot) -> Shadow {
        Shadow {
            pending: Arc::new(Mutex::new(Pending {
                slot,
                observer: None,
            })),
        }
    }

    fn settled(outcome: ShadowOutcome) -> Shadow {
        Shadow::new(Slot::Ready(outcome))
    }

    /// Runs `done` with the outcome once it is known: at once when it is
    /// already, else on the shadow thread when the judgment ends (or is shed).
    pub fn then(self, done: impl FnOnce(ShadowOutcome) + Send + 'static) {
        let mut pending = lock(&self.pending);
        match std::mem::replace(&mut pending.slot, Slot::Done) {
            Slot::Ready(outcome) => {
                drop(pending);
                done(outcome);
            }
            _ => pending.slot = Slot::Then(Box::new(done)),
        }
    }

    /// Has the library see the outcome too (before the holder's `then`): at
    /// once when it is known already.
    pub(crate) fn observe(&self, observer: impl FnOnce(&ShadowOutcome) + Send + 'static) {
        let mut pending = lock(&self.pending);
        if let Slot::Ready(outcome) = &pending.slot {
            let outcome = outcome.clone();
            drop(pending);
            observer(&outcome);
        } else {
            pending.observer = Some(Box::new(observer));
        }
    }
}

fn settle(pending: &Mutex<Pending>, outcome: ShadowOutcome) {
    let mut pending = lock(pending);
    // The library's own (a log line's append): run under the lock, so that
    // the outcome is not copied for it.
    if let Some(observer) = pending.observer.take() {
        observer(&outcome);
    }
    match std::mem::replace(&mut pending.slot, Slot::Done) {
        Slot::Then(done) => {
            drop(pending);
            done(outcome);
        }
        // Nobody is waiting yet (or ever: the handle was dropped).
        _ => pending.slot = Slot::Ready(outcome),
    }
}

/// A shadow judgment: the call judged again, compared with its live answer.
/// The pipeline makes it; the queue only runs it, knowing nothing of how.
pub(crate) type Judge = Box<dyn FnOnce() -> Option<ShadowJudgment> + Send>;

/// One call to judge again with the shadow providers.
struct Job {
    judge: Judge,
    queued: Instant,
    pending: Arc<Mutex<Pending>>,
}

/// What the live side and the shadow thread share.
#[derive(Default)]
struct Shared {
    jobs: Mutex<VecDeque<Job>>,
    stats: Stats,
    /// The thread is parked (or about to be) and must be woken for a job.
    idle: AtomicBool,
    /// The queue was dropped: the thread ends.
    closed: AtomicBool,
}

/// How long the shadow thread naps between looks at the queue while calls
/// keep coming: a live call then hands its job over without a wake-up (a
/// system call and a context switch on the other core, most of what the
/// hand-off cost), at the price of this much more latency for the shadow's
/// outcome, which nobody waits for.
const NAP: Duration = Duration::from_micros(200);

/// After this long without a job the thread parks, so that an idle Warden
/// costs nothing, and the next job wakes it.
const IDLE_AFTER: Duration = Duration::from_millis(20);

/// The shadow queue and its thread.
pub(crate) struct ShadowQueue {
    shared: Arc<Shared>,
    /// `None` when the thread could not be started: every job is shed.
    thread: Option<std::thread::Thread>,
}

impl ShadowQueue {
    /// Starts the shadow thread. It ends when the queue is dropped.
    pub(crate) fn start() -> ShadowQueue {
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        // Without a thread every job is shed: live calls are served either way.
        let thread = match std::thread::Builder::new()
            .name("warden-shadow".into())
            .spawn(move || work(&theirs))
        {
            Ok(handle) => Some(handle.thread().clone()),
            Err(err) => {
                tracing::error!(%err, "cannot start the shadow thread: shadow judgments are shed");
                None
            }
        };
        ShadowQueue { shared, thread }
    }

    /// Queues a call's shadow judgment, made by `judge` only when there is
    /// room for it: shed at once when the queue is full, before anything of
    /// the call is copied.
    pub(crate) fn submit(&self, judge: impl FnOnce() -> Judge) -> Shadow {
        let stats = &self.shared.stats;
        let Some(thread) = &self.thread else {
            stats.shed.fetch_add(1, Ordering::Relaxed);
            return Shadow::settled(ShadowOutcome::Shed);
        };
        if stats.pending.fetch_add(1, Ordering::AcqRel) >= QUEUE_DEPTH as u64 {
            stats.pending.fetch_sub(1, Ordering::AcqRel);
            stats.shed.fetch_add(1, Ordering::Relaxed);
            return Shadow::settled(ShadowOutcome::Shed);
        }
        let shadow = Shadow::new(Slot::Waiting);
        let job = Job {
            judge: judge(),
            queued: Instant::now(),
            pending: shadow.pending.clone(),
        };
        lock(&self.shared.jobs).push_back(job);
        // Paired with the thread's store before it looks at the queue a last
        // time: either it sees this job, or this sees it idle and wakes it.
        // A load first, so that a busy thread's flag is only read, not written.
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.shared.idle.load(Ordering::SeqCst) && self.shared.idle.swap(false, Ordering::SeqCst)
        {
            thread.unpark();
        }
        shadow
    }

    /// Waits until every queued judgment is settled (its outcome handed on),
    /// for at most `bound`; whether they all were.
    pub(crate) fn settle(&self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        while self.shared.stats.pending.load(Ordering::Acquire) > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// The counts since start.
    pub(crate) fn counts(&self) -> ShadowCounts {
        let stats = &self.shared.stats;
        let mut differences = Vec::new();
        for live in VERDICTS {
            for shadow in VERDICTS {
                let n = stats.transitions[index(live)][index(shadow)].load(Ordering::Relaxed);
                if live != shadow && n > 0 {
                    differences.push(((live, shadow), n));
                }
            }
        }
        ShadowCounts {
            shed: stats.shed.load(Ordering::Relaxed),
            judged: stats.judged.load(Ordering::Relaxed),
            differences,
        }
    }
}

impl Drop for ShadowQueue {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn work(shared: &Shared) {
    let mut last_job = Instant::now();
    loop {
        let next = lock(&shared.jobs).pop_front();
        if let Some(job) = next {
            run(job, &shared.stats);
            last_job = Instant::now();
            continue;
        }
        if shared.closed.load(Ordering::SeqCst) {
            return;
        }
        if last_job.elapsed() < IDLE_AFTER {
            std::thread::sleep(NAP);
            continue;
        }
        shared.idle.store(true, Ordering::SeqCst);
        if lock(&shared.jobs).is_empty() && !shared.closed.load(Ordering::SeqCst) {
            // A spurious return only means one more look at the queue.
            std::thread::park();
        }
        shared.idle.store(false, Ordering::SeqCst);
        last_job = Instant::now();
    }
}

fn run(job: Job, stats: &Stats) {
    if job.queued.elapsed() > MAX_QUEUE_WAIT {
        stats.shed.fetch_add(1, Ordering::Relaxed);
        settle(&job.pending, ShadowOutcome::Shed);
        stats.pending.fetch_sub(1, Ordering::AcqRel);
        return;
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
    settle(&job.pending, outcome);
    stats.pending.fetch_sub(1, Ordering::AcqRel);
}

/// A call on its way to the shadow thread, as its JSON text. A copy of the
/// call would be an allocation per string and per map, each then freed on the
/// shadow thread; memory freed on a thread other than the one that allocated
/// it goes back to the allocating thread's pages, which that thread (the live
/// one) gathers on its next allocations. Measured on the deny-everything
/// shadow benchmark, that was most of what a shadow cost the live call
/// (docs/benchmarks.md): one buffer is one such free. The shadow thread reads
/// the call back on its own side.
pub(crate) struct HandedCall(Vec<u8>);

impl HandedCall {
    /// The call's JSON text; `None` only if the call cannot be written as
    /// JSON, which a call read from JSON always can.
    pub(crate) fn of(call: &ToolCall) -> Option<HandedCall> {
        serde_json::to_vec(call).ok().map(HandedCall)
    }

    /// The call again, as the live side had it: every field of a
    /// [`ToolCall`] is written and read back unchanged (a test holds it), and
    /// an argument nests at most [`warden_types::request::MAX_INPUT_DEPTH`]
    /// deep, within what the reader takes.
    pub(crate) fn call(&self) -> Option<ToolCall> {
        serde_json::from_slice(&self.0).ok()
    }
}

/// What a shadow judgment is compared with: the live answer's verdict, and
/// a digest of its deciding stage and reason codes, taken without copying
/// anything of the evaluation (the live call pays for what it hands over).
/// Two causes that differ and share a 64-bit digest would be taken for the
/// same: the line would then lack the shadow's cause, never its verdict.
pub(crate) struct Live {
    verdict: Verdict,
    cause: u64,
}

impl Live {
    pub(crate) fn of(evaluation: &Evaluation) -> Live {
        Live {
            verdict: evaluation.verdict,
            cause: cause_digest(evaluation),
        }
    }
}

fn cause_digest(evaluation: &Evaluation) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    evaluation.decided_by.hash(&mut hasher);
    for reason in &evaluation.reasons {
        reason.code.hash(&mut hasher);
    }
    hasher.finish()
}

/// Compares a shadow evaluation with the live answer.
pub(crate) fn judgment(live: &Live, shadow: Evaluation) -> ShadowJudgment {
    let differs = live.verdict != shadow.verdict || live.cause != cause_digest(&shadow);
    ShadowJudgment {
        verdict: shadow.verdict,
        reasons: shadow.reasons,
        decided_by: shadow.decided_by,
        live: live.verdict,
        differs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_handed_to_the_shadow_thread_is_the_call_the_live_side_judged() {
        let text = r#"{
            "tool_name": "bash",
            "tool_call_id": "call-1",
            "tool_input": {"command": "git status", "z": 1, "a": [-0.0, 0.1, 1e300,
                18446744073709551615, -9223372036854775808, null, true, "\u00e9\n"],
                "nested": {"b": {}, "a": []}},
            "context": {"agent_id": "a", "thread_id": "t", "run_id": "r", "user_id": "u",
                "user_role": "admin", "oauth_provider": "github", "oauth_id": "42",
                "is_subagent": true, "timestamp": "2026-12-07T01:02:03Z", "cwd": "/w",
                "home": "/h", "interaction_mode": "scheduled", "non_interactive": false,
                "disable_clarification": true, "channel_name": "c", "can_resume": false,
                "run_origin": "im", "mcp_server": "fs", "mcp_client": "claude",
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
        }"#;
        let call: ToolCall = serde_json::from_str(text).unwrap();
        let handed = HandedCall::of(&call).unwrap().call().unwrap();
        // Every field, in order, numbers as they were read.
        assert_eq!(format!("{handed:?}"), format!("{call:?}"));
    }

    fn denying() -> Judge {
        Box::new(|| {
            Some(ShadowJudgment {
                verdict: Verdict::Deny,
                reasons: Vec::new(),
                decided_by: None,
                live: Verdict::Allow,
                differs: true,
            })
        })
    }

    fn outcome(shadow: Shadow) -> ShadowOutcome {
        let (sent, received) = std::sync::mpsc::channel();
        shadow.then(move |outcome| sent.send(outcome).unwrap());
        received.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    fn evaluation(verdict: &str, decided_by: &str, codes: &[&str]) -> Evaluation {
        let reasons: Vec<_> = codes
            .iter()
            .map(|code| serde_json::json!({"code": code, "message": ""}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "verdict": verdict, "allow": verdict == "allow", "reasons": reasons,
            "policy_id": null, "metadata": {}, "decided_by": decided_by,
            "interaction_mode": "autonomous", "stages": [], "generation": 1,
            "duration_us": 1, "judged_at": "2026-12-06T00:00:00Z"
        }))
        .unwrap()
    }

    #[test]
    fn a_shadow_with_the_live_verdict_differs_by_its_stage_or_its_codes() {
        let live = evaluation("deny", "provider:a", &["a.no"]);
        let same = |shadow: Evaluation| !judgment(&Live::of(&live), shadow).differs;
        assert!(same(evaluation("deny", "provider:a", &["a.no"])));
        assert!(!same(evaluation("deny", "provider:b", &["a.no"])));
        assert!(!same(evaluation("deny", "provider:a", &["a.other"])));
        assert!(!same(evaluation("deny", "provider:a", &["a.no", "a.too"])));
        assert!(!same(evaluation("allow", "provider:a", &["a.no"])));
    }

    #[test]
    fn a_job_queued_after_the_thread_went_idle_wakes_it() {
        let queue = ShadowQueue::start();
        assert!(matches!(
            outcome(queue.submit(denying)),
            ShadowOutcome::Judged(_)
        ));
        // Long enough for the thread to stop napping and park.
        std::thread::sleep(IDLE_AFTER * 3);
        assert!(
            queue.shared.idle.load(Ordering::SeqCst),
            "the thread did not park"
        );
        assert!(matches!(
            outcome(queue.submit(denying)),
            ShadowOutcome::Judged(_)
        ));
        assert_eq!(queue.counts().judged, 2);
    }

    #[test]
    fn a_full_queue_sheds_without_making_the_job() {
        let queue = ShadowQueue::start();
        let (release, held) = std::sync::mpsc::channel::<()>();
        // The thread runs this one until released; the rest wait behind it.
        let running = queue.submit(|| {
            Box::new(move || {
                held.recv().ok();
                None
            })
        });
        for _ in 1..QUEUE_DEPTH {
            queue.submit(denying);
        }
        let made = AtomicBool::new(false);
        let shed = queue.submit(|| {
            made.store(true, Ordering::SeqCst);
            denying()
        });
        assert_eq!(outcome(shed), ShadowOutcome::Shed);
        assert!(!made.load(Ordering::SeqCst), "the shed job was made");
        release.send(()).unwrap();
        assert_eq!(outcome(running), ShadowOutcome::Shed);
        assert!(queue.settle(Duration::from_secs(10)));
        assert_eq!(queue.counts().judged, QUEUE_DEPTH as u64 - 1);
    }
}
