//! Shadow judgments: the opinion of a provider with `mode: shadow`, given on
//! the same call as the live ones but after the answer is decided, and never
//! in it. They run on a bounded queue owned by the facade, with a thread of
//! their own, so that a shadow can never slow or starve a live call: a job
//! that finds the queue full, or is still waiting [`MAX_QUEUE_WAIT`] after
//! its call began, is shed and counted, never waited for.
//!
//! What a live call pays is kept small: the call goes over as one JSON text
//! written into a buffer that an earlier job used (no allocation, and no
//! memory of the live thread freed by the shadow thread), the policy it is
//! judged on is handed over once for all the jobs that share it (not a
//! reference count per job), and what the live and the shadow side each
//! write sits on cache lines of its own (docs/benchmarks.md says what each
//! of these cost before).
//!
//! The caller of [`crate::Warden::evaluate_shadowed`] gets a [`Shadow`]
//! handle and says what to do with the outcome ([`Shadow::then`]); the
//! daemon holds the call's decision log line until then. The line is held at
//! most [`MAX_QUEUE_WAIT`] plus one judgment by the shadow providers (their
//! limits' worst case).

use std::borrow::Cow;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use warden_types::Evaluation;
use warden_types::decision::{Decision, Reason, Verdict};
use warden_types::request::{CallContext, ToolCall};

/// How many shadow judgments may wait for the shadow thread (the one it is
/// running included); one more is shed, and so are the next ones until an
/// eighth of the queue has drained (so that a shadow that cannot keep up
/// does not make the full queue's flag change on every call).
pub const QUEUE_DEPTH: usize = 256;

/// Once the queue was full, jobs are queued again when no more than this
/// many wait.
const LOW_WATER: usize = QUEUE_DEPTH - QUEUE_DEPTH / 8;

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

/// A cache line (two, for the prefetcher's pairs) of its own: what the live
/// threads write and what the shadow thread writes must not share one, or
/// each write of one side takes the line from the other's core.
#[repr(align(128))]
#[derive(Default)]
struct Line<T>(T);

/// Read on every call, written seldom.
#[derive(Default)]
struct Flags {
    /// The queue is full: a live call sheds its job without making it. Set
    /// and cleared under the queue's lock, read without it.
    full: AtomicBool,
    /// The thread is parked (or about to be) and must be woken for a job.
    idle: AtomicBool,
    /// The queue was dropped: the thread ends.
    closed: AtomicBool,
}

/// Written by the shadow thread.
#[derive(Default)]
struct Done {
    /// Shed after queueing: waited too long, or the judgment failed.
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

/// A shadow judgment: the call, handed over as the text [`hand`] wrote,
/// judged again on its base (the policy it is judged by) and compared with
/// its live answer. The pipeline makes it; the queue only runs it, knowing
/// nothing of how.
pub(crate) trait Judging: Send + 'static {
    type Base: Send + Sync + 'static;
    fn judge(self, base: &Self::Base, text: &[u8]) -> Option<ShadowJudgment>;
}

/// One call to judge again with the shadow providers.
struct Job<W: Judging> {
    work: W,
    /// The base of this job and the next ones, when it is not the previous
    /// job's: handed over once, not per job (a count of references kept
    /// per job would be a word both threads write on every call).
    base: Option<Arc<W::Base>>,
    /// The call, as [`hand`] wrote it.
    text: Vec<u8>,
    queued: Instant,
    /// `None` when nobody will ask for the outcome: only the counts see it.
    pending: Option<Arc<Mutex<Pending>>>,
}

/// The jobs waiting, in a ring of places that each keep the buffer of the
/// last job queued there, for the next one: a job and the buffer a live
/// call takes for its next job share the cache lines that cross between the
/// cores anyway.
struct Queue<W: Judging> {
    places: Box<[Place<W>]>,
    /// The place of the oldest job waiting.
    head: usize,
    /// Jobs waiting, the running one not included.
    len: usize,
    /// The place of the job the thread is running (until it next takes the
    /// lock).
    running: Option<usize>,
    /// The base the last job queued was handed with (or took from the one
    /// before it).
    base: Option<Arc<W::Base>>,
}

/// One place of the queue's ring.
struct Place<W: Judging> {
    job: Option<Job<W>>,
    /// The buffer of the last job queued here, once the thread ran it.
    spare: Vec<u8>,
}

impl<W: Judging> Queue<W> {
    fn new() -> Queue<W> {
        let places = (0..QUEUE_DEPTH)
            .map(|_| Place {
                job: None,
                spare: Vec::new(),
            })
            .collect();
        Queue {
            places,
            head: 0,
            len: 0,
            running: None,
            base: None,
        }
    }

    /// Jobs queued and not yet settled, the one running included.
    fn waiting(&self) -> usize {
        self.len + usize::from(self.running.is_some())
    }

    /// Queues `job`, for which there is room (`waiting()` is below
    /// [`QUEUE_DEPTH`], so the running job's place is not this one); the
    /// buffer its place kept, for the caller's next job.
    fn push(&mut self, job: Job<W>) -> Vec<u8> {
        let place = &mut self.places[(self.head + self.len) % QUEUE_DEPTH];
        self.len += 1;
        place.job = Some(job);
        std::mem::take(&mut place.spare)
    }

    /// The oldest job, now the running one. With none, the next job goes
    /// where the last one ran, whose buffer is the one used last.
    fn pop(&mut self) -> Option<Job<W>> {
        if self.len == 0 {
            if let Some(at) = self.running.take() {
                self.head = at;
            }
            return None;
        }
        let at = self.head;
        self.head = (at + 1) % QUEUE_DEPTH;
        self.len -= 1;
        self.running = Some(at);
        self.places[at].job.take()
    }

    /// Puts the running job's buffer back in its place.
    fn give_back(&mut self, text: Vec<u8>) {
        if let Some(at) = self.running {
            self.places[at].spare = text;
        }
    }
}

/// A buffer larger than this (a call with a large argument) is freed once
/// its job is done, not kept for another: what the spare buffers and each
/// calling thread's keep stays small.
const SPARE_MAX: usize = 16 * 1024;

thread_local! {
    /// The buffer this thread writes its next call into: the one a job left
    /// in the place this thread's last job took, so that handing a call
    /// over allocates nothing once the places have buffers, and no memory
    /// this thread allocated is freed by the shadow thread (mimalloc hands
    /// such memory back through the allocating thread's pages, which that
    /// thread then gathers: most of what a shadow cost a live call, measured).
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// What the live side and the shadow thread share.
struct Shared<W: Judging> {
    queue: Line<Mutex<Queue<W>>>,
    flags: Line<Flags>,
    /// Jobs shed at once (the queue was full), by the live threads.
    shed_at_once: Line<AtomicU64>,
    done: Line<Done>,
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
pub(crate) struct ShadowQueue<W: Judging> {
    shared: Arc<Shared<W>>,
    /// `None` when the thread could not be started: every job is shed.
    thread: Option<std::thread::Thread>,
}

impl<W: Judging> ShadowQueue<W> {
    /// Starts the shadow thread. It ends when the queue is dropped.
    pub(crate) fn start() -> ShadowQueue<W> {
        let shared = Arc::new(Shared {
            queue: Line(Mutex::new(Queue::new())),
            flags: Line::default(),
            shed_at_once: Line::default(),
            done: Line::default(),
        });
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

    /// Queues a call's shadow judgment on `base`, made by `hand` (which
    /// writes the call into the buffer it is given) only when there is room
    /// for it: shed at once when the queue is full, before anything of the
    /// call is written. `since` is when the call began: its job waits at
    /// most [`MAX_QUEUE_WAIT`] from then. With `listen`, the handle for its
    /// outcome; without, only the counts see it, and nothing is made for an
    /// outcome nobody asks for.
    pub(crate) fn submit(
        &self,
        listen: bool,
        since: Instant,
        base: &Arc<W::Base>,
        hand: impl FnOnce(&mut Vec<u8>) -> Option<W>,
    ) -> Option<Shadow> {
        let flags = &self.shared.flags.0;
        let shed = || {
            self.shared.shed_at_once.0.fetch_add(1, Ordering::Relaxed);
            listen.then(|| Shadow::settled(ShadowOutcome::Shed))
        };
        let Some(thread) = &self.thread else {
            return shed();
        };
        // A flag only read here, which stays in this core's cache while the
        // shadow thread keeps up.
        if flags.full.load(Ordering::Relaxed) {
            return shed();
        }
        let mut text = SCRATCH.take();
        text.clear();
        let Some(work) = hand(&mut text) else {
            SCRATCH.set(text);
            return shed();
        };
        let pending = listen.then(|| Shadow::new(Slot::Waiting));
        let mut queue = lock(&self.shared.queue.0);
        // Several live threads may pass the look above at once.
        if queue.waiting() >= QUEUE_DEPTH {
            drop(queue);
            SCRATCH.set(text);
            return shed();
        }
        // Jobs are taken in the order they are queued: a base handed with
        // one job serves the jobs after it until another is handed.
        let base = match &queue.base {
            Some(last) if Arc::ptr_eq(last, base) => None,
            _ => {
                queue.base = Some(base.clone());
                Some(base.clone())
            }
        };
        let spare = queue.push(Job {
            work,
            base,
            text,
            queued: since,
            pending: pending.as_ref().map(|shadow| shadow.pending.clone()),
        });
        if queue.waiting() >= QUEUE_DEPTH {
            flags.full.store(true, Ordering::Relaxed);
        }
        drop(queue);
        SCRATCH.set(spare);
        // The thread sets `idle` before it looks at the queue a last time,
        // under the queue's lock: either it saw this job, or its flag is
        // seen here (the lock orders the two). A load first, so that a busy
        // thread's flag is only read, not written.
        if flags.idle.load(Ordering::Acquire) && flags.idle.swap(false, Ordering::AcqRel) {
            thread.unpark();
        }
        pending
    }

    /// Waits until every judgment queued is settled (its outcome handed
    /// on), for at most `bound`; whether they all were.
    pub(crate) fn settle(&self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        while lock(&self.shared.queue.0).waiting() > 0 {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// The counts since start.
    pub(crate) fn counts(&self) -> ShadowCounts {
        let done = &self.shared.done.0;
        let mut differences = Vec::new();
        for live in VERDICTS {
            for shadow in VERDICTS {
                let n = done.transitions[index(live)][index(shadow)].load(Ordering::Relaxed);
                if live != shadow && n > 0 {
                    differences.push(((live, shadow), n));
                }
            }
        }
        ShadowCounts {
            shed: self.shared.shed_at_once.0.load(Ordering::Relaxed)
                + done.shed.load(Ordering::Relaxed),
            judged: done.judged.load(Ordering::Relaxed),
            differences,
        }
    }
}

impl<W: Judging> Drop for ShadowQueue<W> {
    fn drop(&mut self) {
        self.shared.flags.0.closed.store(true, Ordering::SeqCst);
        if let Some(thread) = &self.thread {
            thread.unpark();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn work<W: Judging>(shared: &Shared<W>) {
    let flags = &shared.flags.0;
    let mut last_job = Instant::now();
    // The buffer of the job just done, for the next job queued in its place.
    let mut spent: Option<Vec<u8>> = None;
    // The base the jobs are judged on, as the last one that carried one said.
    let mut base: Option<Arc<W::Base>> = None;
    loop {
        let next = {
            let mut queue = lock(&shared.queue.0);
            if let Some(text) = spent.take() {
                queue.give_back(text);
            }
            let next = queue.pop();
            if flags.full.load(Ordering::Relaxed) && queue.waiting() <= LOW_WATER {
                flags.full.store(false, Ordering::Relaxed);
            }
            next
        };
        if let Some(mut job) = next {
            if let Some(next_base) = job.base.take() {
                base = Some(next_base);
            }
            spent = run(job, base.as_deref(), &shared.done.0);
            last_job = Instant::now();
            continue;
        }
        if flags.closed.load(Ordering::SeqCst) {
            return;
        }
        if last_job.elapsed() < IDLE_AFTER {
            std::thread::sleep(NAP);
            continue;
        }
        flags.idle.store(true, Ordering::SeqCst);
        let mut queue = lock(&shared.queue.0);
        if queue.len == 0 && !flags.closed.load(Ordering::SeqCst) {
            // An idle thread keeps no policy alive (a reload may have
            // replaced it): the next job is handed its base again.
            queue.base = None;
            base = None;
            drop(queue);
            // A spurious return only means one more look at the queue.
            std::thread::park();
        } else {
            drop(queue);
        }
        flags.idle.store(false, Ordering::SeqCst);
        last_job = Instant::now();
    }
}

/// Runs one job; its buffer back, emptied, unless it grew too large to keep.
fn run<W: Judging>(job: Job<W>, base: Option<&W::Base>, done: &Done) -> Option<Vec<u8>> {
    let Job {
        work,
        mut text,
        queued,
        pending,
        ..
    } = job;
    let outcome = if queued.elapsed() > MAX_QUEUE_WAIT {
        done.shed.fetch_add(1, Ordering::Relaxed);
        ShadowOutcome::Shed
    } else {
        // A panic in a shadow judgment sheds it; the thread carries on.
        // Without a base (never: the first job after a park carries one),
        // the job is shed.
        let judged =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work.judge(base?, &text)));
        match judged {
            Ok(Some(judgment)) => {
                done.judged.fetch_add(1, Ordering::Relaxed);
                done.transitions[index(judgment.live)][index(judgment.verdict)]
                    .fetch_add(1, Ordering::Relaxed);
                ShadowOutcome::Judged(judgment)
            }
            Ok(None) | Err(_) => {
                done.shed.fetch_add(1, Ordering::Relaxed);
                ShadowOutcome::Shed
            }
        }
    };
    if let Some(pending) = pending {
        settle(&pending, outcome);
    }
    (text.capacity() <= SPARE_MAX).then(|| {
        text.clear();
        text
    })
}

/// Writes what a live call hands its shadow judgment into `text`, as one
/// JSON text: the call, the live answer in short (verdict, deciding stage,
/// reason codes), and the opinions of the live providers it asked, in
/// order, for a judgment that reuses them. One buffer, and nothing of the
/// live call's memory, goes to the shadow thread, which reads it back on
/// its own side ([`Handed::read`]). `input_text` is the call's `tool_input`
/// as JSON when the live side wrote it already (for the providers): it is
/// copied, not written again. Arrays, not objects: no key to write.
pub(crate) fn hand<'a>(
    text: &mut Vec<u8>,
    call: &ToolCall,
    input_text: Option<&str>,
    live: &Evaluation,
    opinions: impl Iterator<Item = HandedOpinion<&'a Decision>> + Clone,
) -> serde_json::Result<()> {
    let head = (&call.tool_name, &call.tool_call_id, &call.context);
    text.push(b'[');
    serde_json::to_writer(&mut *text, &head)?;
    text.push(b',');
    match input_text {
        Some(input) => text.extend_from_slice(input.as_bytes()),
        None => serde_json::to_writer(&mut *text, &call.tool_input)?,
    }
    text.push(b',');
    let codes = live.reasons.iter().map(|reason| reason.code.as_str());
    let live = Live(live.verdict, live.decided_by.as_deref(), Seq(codes));
    serde_json::to_writer(&mut *text, &live)?;
    text.push(b',');
    serde_json::to_writer(&mut *text, &Seq(opinions))?;
    text.push(b']');
    Ok(())
}

/// The live answer a shadow judgment is compared with: the verdict, the
/// deciding stage and the reason codes.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Live<S, C>(Verdict, Option<S>, C);

/// One provider's opinion: its decision, the fuel it used and its failure's
/// code. The live side hands it over with the decision borrowed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HandedOpinion<D> {
    pub(crate) decision: D,
    pub(crate) fuel_used: Option<u64>,
    pub(crate) error_detail: Option<Cow<'static, str>>,
}

/// How [`HandedOpinion`] is read: an array, the decision's fields in it.
type OpinionFields = (
    Verdict,
    Vec<(String, String)>,
    Option<String>,
    serde_json::Map<String, serde_json::Value>,
    Option<u64>,
    Option<Cow<'static, str>>,
);

impl Serialize for HandedOpinion<&Decision> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = self.decision;
        let reasons = Seq(d.reasons.iter().map(|r| (&r.code, &r.message)));
        let fields = (
            d.verdict,
            reasons,
            d.policy_id.as_ref(),
            &d.metadata,
            self.fuel_used,
            self.error_detail.as_deref(),
        );
        fields.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for HandedOpinion<Decision> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (verdict, reasons, policy_id, metadata, fuel_used, error_detail): OpinionFields =
            Deserialize::deserialize(deserializer)?;
        let reasons = reasons
            .into_iter()
            .map(|(code, message)| Reason { code, message })
            .collect();
        Ok(HandedOpinion {
            decision: Decision {
                verdict,
                reasons,
                policy_id,
                metadata,
            },
            fuel_used,
            error_detail,
        })
    }
}

/// A sequence written from an iterator, without collecting it first.
struct Seq<I>(I);

impl<I> Serialize for Seq<I>
where
    I: Iterator + Clone,
    I::Item: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.clone())
    }
}

/// What [`hand`] wrote, read back on the shadow thread.
#[derive(Debug)]
pub(crate) struct Handed {
    pub(crate) call: ToolCall,
    pub(crate) live: Live<String, Vec<String>>,
    pub(crate) opinions: Vec<HandedOpinion<Decision>>,
}

impl Handed {
    /// `None` only if `text` is not what [`hand`] writes: every field of a
    /// call is written and read back unchanged (a test holds it), and an
    /// argument nests at most [`warden_types::request::MAX_INPUT_DEPTH`]
    /// deep, within what the reader takes.
    pub(crate) fn read(text: &[u8]) -> Option<Handed> {
        type Head = (String, Option<String>, CallContext);
        let ((tool_name, tool_call_id, context), tool_input, live, opinions): (Head, _, _, _) =
            serde_json::from_slice(text).ok()?;
        let call = ToolCall {
            tool_name,
            tool_input,
            tool_call_id,
            context,
        };
        Some(Handed {
            call,
            live,
            opinions,
        })
    }
}

/// Compares a shadow evaluation with the live answer.
pub(crate) fn judgment(live: &Live<String, Vec<String>>, shadow: Evaluation) -> ShadowJudgment {
    let Live(verdict, decided_by, codes) = live;
    let differs = *verdict != shadow.verdict
        || *decided_by != shadow.decided_by
        || !codes.iter().eq(shadow.reasons.iter().map(|r| &r.code));
    ShadowJudgment {
        verdict: shadow.verdict,
        reasons: shadow.reasons,
        decided_by: shadow.decided_by,
        live: *verdict,
        differs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's judgment: any closure.
    type Judge = Box<dyn FnOnce() -> Option<ShadowJudgment> + Send>;

    impl Judging for Judge {
        type Base = ();
        fn judge(self, _base: &(), _text: &[u8]) -> Option<ShadowJudgment> {
            self()
        }
    }

    /// The base of a test's jobs: none to speak of.
    fn base() -> Arc<()> {
        Arc::new(())
    }

    fn handed(call: &ToolCall, live: &Evaluation, opinions: &[HandedOpinion<Decision>]) -> Handed {
        handed_with(call, None, live, opinions)
    }

    fn handed_with(
        call: &ToolCall,
        input_text: Option<&str>,
        live: &Evaluation,
        opinions: &[HandedOpinion<Decision>],
    ) -> Handed {
        let mut text = Vec::new();
        let opinions = opinions.iter().map(|o| HandedOpinion {
            decision: &o.decision,
            fuel_used: o.fuel_used,
            error_detail: o.error_detail.clone(),
        });
        hand(&mut text, call, input_text, live, opinions).unwrap();
        Handed::read(&text).unwrap()
    }

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
        let live = evaluation("allow", "permissions", &[]);
        let handed = handed(&call, &live, &[]);
        // Every field, in order, numbers as they were read.
        assert_eq!(format!("{:?}", handed.call), format!("{call:?}"));
        // The same with the arguments' text as the providers were given it.
        let input = call.tool_input.to_string();
        let handed = handed_with(&call, Some(&input), &live, &[]);
        assert_eq!(format!("{:?}", handed.call), format!("{call:?}"));
    }

    #[test]
    fn the_live_answer_and_opinions_handed_over_are_those_the_live_side_had() {
        let live = evaluation("deny", "provider:b", &["b.no", "b.also"]);
        let decision: Decision = serde_json::from_value(serde_json::json!({
            "verdict": "allow", "policy_id": "p-1",
            "reasons": [{"code": "a.yes", "message": "listed \u{1F600}"}],
            "metadata": {"rule": "bash", "rule_pointer": "/allowed_tools/0", "n": 1.5}
        }))
        .unwrap();
        let opinions = [
            HandedOpinion {
                decision: decision.clone(),
                fuel_used: Some(1234),
                error_detail: None,
            },
            HandedOpinion {
                decision: Decision::new(Verdict::Deny, Vec::new()),
                fuel_used: None,
                error_detail: Some(Cow::Borrowed("timeout")),
            },
        ];
        let handed = handed(
            &ToolCall::new("bash", serde_json::json!({})),
            &live,
            &opinions,
        );
        assert_eq!(handed.opinions, opinions);
        let codes = vec!["b.no".to_string(), "b.also".to_string()];
        let expected = Live(Verdict::Deny, Some("provider:b".to_string()), codes);
        assert_eq!(handed.live, expected);
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

    fn submit(queue: &ShadowQueue<Judge>, judge: impl FnOnce() -> Judge) -> Shadow {
        queue
            .submit(true, Instant::now(), &base(), |_| Some(judge()))
            .unwrap()
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
        let live = handed(&ToolCall::new("bash", serde_json::json!({})), &live, &[]).live;
        let same = |shadow: Evaluation| !judgment(&live, shadow).differs;
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
            outcome(submit(&queue, denying)),
            ShadowOutcome::Judged(_)
        ));
        // Long enough for the thread to stop napping and park.
        std::thread::sleep(IDLE_AFTER * 3);
        assert!(
            queue.shared.flags.0.idle.load(Ordering::SeqCst),
            "the thread did not park"
        );
        assert!(matches!(
            outcome(submit(&queue, denying)),
            ShadowOutcome::Judged(_)
        ));
        assert_eq!(queue.counts().judged, 2);
    }

    #[test]
    fn a_full_queue_sheds_without_making_the_job() {
        let queue = ShadowQueue::start();
        let (release, held) = std::sync::mpsc::channel::<()>();
        // The thread runs this one until released; the rest wait behind it.
        let running = submit(&queue, || {
            Box::new(move || {
                held.recv().ok();
                None
            })
        });
        for _ in 1..QUEUE_DEPTH {
            submit(&queue, denying);
        }
        let made = AtomicBool::new(false);
        let shed = queue
            .submit(true, Instant::now(), &base(), |_| {
                made.store(true, Ordering::SeqCst);
                Some(denying())
            })
            .unwrap();
        assert_eq!(outcome(shed), ShadowOutcome::Shed);
        assert!(!made.load(Ordering::SeqCst), "the shed job was made");
        release.send(()).unwrap();
        assert_eq!(outcome(running), ShadowOutcome::Shed);
        assert!(queue.settle(Duration::from_secs(10)));
        assert_eq!(queue.counts().judged, QUEUE_DEPTH as u64 - 1);
    }

    #[test]
    fn a_full_queue_takes_jobs_again_once_an_eighth_of_it_has_drained() {
        let queue = ShadowQueue::start();
        // Each job waits for a token, so the test says how many are judged.
        let tokens = Arc::new((Mutex::new(0usize), std::sync::Condvar::new()));
        let waiting = || {
            let tokens = tokens.clone();
            move || -> Judge {
                Box::new(move || {
                    let (count, more) = &*tokens;
                    let mut count = more.wait_while(lock(count), |n| *n == 0).unwrap();
                    *count -= 1;
                    None
                })
            }
        };
        let give = |n: usize| {
            *lock(&tokens.0) += n;
            tokens.1.notify_all();
        };
        let queued = |queue: &ShadowQueue<Judge>| {
            let made = AtomicBool::new(false);
            let make = waiting();
            queue.submit(false, Instant::now(), &base(), |_| {
                made.store(true, Ordering::SeqCst);
                Some(make())
            });
            made.load(Ordering::SeqCst)
        };
        for _ in 0..QUEUE_DEPTH {
            assert!(queued(&queue));
        }
        assert!(!queued(&queue), "a full queue took a job");
        // One judged: room for one, but not yet an eighth drained.
        give(1);
        let drained_to = |n: usize| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while lock(&queue.shared.queue.0).waiting() > n && Instant::now() < deadline {
                std::thread::yield_now();
            }
        };
        drained_to(QUEUE_DEPTH - 1);
        assert!(
            !queued(&queue),
            "the queue took a job before an eighth drained"
        );
        give(QUEUE_DEPTH - LOW_WATER - 1);
        drained_to(LOW_WATER);
        assert!(
            queued(&queue),
            "the queue took no job once an eighth drained"
        );
        give(QUEUE_DEPTH);
        assert!(queue.settle(Duration::from_secs(10)));
    }

    #[test]
    fn a_job_nobody_listens_to_is_counted() {
        let queue = ShadowQueue::start();
        assert!(
            queue
                .submit(false, Instant::now(), &base(), |_| Some(denying()))
                .is_none()
        );
        assert!(queue.settle(Duration::from_secs(10)));
        let counts = queue.counts();
        assert_eq!(counts.judged, 1);
        assert_eq!(
            counts.differences,
            vec![((Verdict::Allow, Verdict::Deny), 1)]
        );
    }

    /// A test's job that says which base it was judged on.
    struct Which(std::sync::mpsc::Sender<&'static str>);

    impl Judging for Which {
        type Base = &'static str;
        fn judge(self, base: &&'static str, _text: &[u8]) -> Option<ShadowJudgment> {
            self.0.send(base).unwrap();
            None
        }
    }

    #[test]
    fn each_job_is_judged_on_the_base_it_was_queued_with() {
        let queue = ShadowQueue::start();
        let (a, b) = (Arc::new("a"), Arc::new("b"));
        let (sent, received) = std::sync::mpsc::channel();
        for base in [&a, &a, &b, &b, &a] {
            let which = Which(sent.clone());
            queue.submit(false, Instant::now(), base, |_| Some(which));
        }
        let seen: Vec<_> = (0..5)
            .map(|_| received.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert_eq!(seen, ["a", "a", "b", "b", "a"]);
    }

    #[test]
    fn a_parked_thread_keeps_no_base_alive() {
        let queue = ShadowQueue::start();
        let base = Arc::new(());
        assert!(matches!(
            queue
                .submit(true, Instant::now(), &base, |_| Some(denying()))
                .map(outcome),
            Some(ShadowOutcome::Judged(_))
        ));
        // Once the thread has stopped napping and parked.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Arc::strong_count(&base) > 1 && Instant::now() < deadline {
            std::thread::sleep(IDLE_AFTER);
        }
        assert_eq!(Arc::strong_count(&base), 1);
    }

    #[test]
    fn the_buffer_a_job_was_handed_in_serves_a_later_call() {
        let queue = ShadowQueue::start();
        let mut capacities = Vec::new();
        for _ in 0..3 {
            queue.submit(false, Instant::now(), &base(), |text| {
                capacities.push(text.capacity());
                text.extend_from_slice(&[b' '; 100]);
                Some(denying())
            });
            // The job done, its buffer back in its place.
            assert!(queue.settle(Duration::from_secs(10)));
        }
        // The first call wrote into a new buffer and took its place's (none
        // yet: a new one) for its next; the second's job went where the
        // first's ran, and the third wrote into the buffer it left there.
        assert_eq!(capacities[..2], [0, 0]);
        assert!(capacities[2] >= 100, "{capacities:?}");
    }
}
