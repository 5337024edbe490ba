//! Giving up the GIL while Rust works, and taking it back without falling
//! asleep where a moment's wait would do.
//!
//! A call here holds the GIL for about a third of its time (the arguments
//! read, the `Evaluation` made) and runs without it for the rest. Two threads
//! judging at once should then overlap: one judges while the other holds the
//! GIL. But CPython's GIL is not fair. A thread that wants it back while the
//! other holds it sleeps on a condition variable; on a virtual machine its
//! wake-up takes longer than the other thread's whole turn without the GIL, so
//! by the time it runs, the other has taken the GIL again, and it sleeps again
//! until the switch interval (5 ms) forces a turn. Measured here, two threads
//! then judged about half as many calls as one.
//!
//! So a thread coming back from Rust first waits, spinning, while the GIL is
//! held by another thread that took it back here a moment ago (it is most
//! likely making its answer and about to give the GIL up again), for no longer
//! than [`WINDOW`] after that thread took it. A holder that has been in Python
//! longer is doing something else: then the thread goes straight to the GIL,
//! as it would without this. What is recorded is a hint, never a lock: a stale
//! or racing record costs at most one bounded spin or one ordinary wait.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::Python;

/// How long after a thread took the GIL back here another waits for it to be
/// given up. A few calls' worth of making answers: far less than a sleeping
/// thread's wake-up costs, and bounded even if the holder went on to do
/// something else.
const WINDOW: Duration = Duration::from_micros(20);

/// The thread that last took the GIL back here and, as far as this module
/// knows, holds it still (0: none).
static HOLDER: AtomicUsize = AtomicUsize::new(0);
/// When it took it, in nanoseconds since [`EPOCH`].
static HELD_SINCE: AtomicU64 = AtomicU64::new(0);
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

thread_local! {
    static TOKEN: u8 = const { 0 };
}

/// This thread, as a non-zero number unique among live threads.
fn this_thread() -> usize {
    TOKEN.with(|t| t as *const u8 as usize)
}

fn now() -> u64 {
    EPOCH.elapsed().as_nanos() as u64
}

/// Runs `work` without the GIL (as `Python::detach`) and takes the GIL back
/// as described above.
pub fn detach<T, F>(py: Python<'_>, work: F) -> T
where
    F: Send + FnOnce() -> T,
    T: Send,
{
    let me = this_thread();
    let _ = HOLDER.compare_exchange(me, 0, Ordering::Release, Ordering::Relaxed);
    let out = py.detach(move || {
        let out = work();
        wait_for_turn(me);
        out
    });
    HELD_SINCE.store(now(), Ordering::Relaxed);
    HOLDER.store(me, Ordering::Release);
    out
}

/// Spins while another thread that took the GIL back here less than
/// [`WINDOW`] ago may still hold it.
fn wait_for_turn(me: usize) {
    let holder = HOLDER.load(Ordering::Acquire);
    if holder == 0 || holder == me {
        return;
    }
    let deadline = HELD_SINCE.load(Ordering::Relaxed) + WINDOW.as_nanos() as u64;
    while now() < deadline {
        let holder = HOLDER.load(Ordering::Acquire);
        if holder == 0 || holder == me {
            return;
        }
        std::hint::spin_loop();
    }
}
