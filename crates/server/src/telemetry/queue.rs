//! Where traces and lines wait for the exporter: bounded, and the exporter
//! is woken only when a batch is full or its interval is up. A channel would
//! wake it for every call, a context switch per call that a two-core machine
//! pays for in every other call's time.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// What waits for the exporter, encoded ([`super::otlp::span`],
/// [`super::otlp::log_record`]).
pub(super) enum Item {
    /// One call's spans.
    Trace { spans: usize, encoded: Vec<u8> },
    /// One decision log line.
    Line(Vec<u8>),
}

impl Item {
    /// The signal it is counted under in `/metrics`.
    pub(super) fn signal(&self) -> &'static str {
        match self {
            Item::Trace { .. } => "traces",
            Item::Line(_) => "logs",
        }
    }
}

/// The queue, shared by the calls that push and the exporter that takes.
pub(super) struct Queue {
    waiting: Mutex<Waiting>,
    ready: Condvar,
    /// How many items may wait (`telemetry.buffer`).
    capacity: usize,
    /// How many make a batch worth waking the exporter for.
    batch: usize,
}

#[derive(Default)]
struct Waiting {
    items: Vec<Item>,
    closed: bool,
}

impl Queue {
    pub(super) fn new(capacity: usize, batch: usize) -> Queue {
        Queue {
            waiting: Mutex::new(Waiting::default()),
            ready: Condvar::new(),
            capacity,
            batch: batch.min(capacity),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `item`, or gives it back when the queue is full or closed.
    pub(super) fn push(&self, item: Item) -> Result<(), Item> {
        let mut waiting = self.lock();
        if waiting.closed || waiting.items.len() >= self.capacity {
            return Err(item);
        }
        waiting.items.push(item);
        if waiting.items.len() == self.batch {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// Waits until a batch is waiting, `due` has come, or the queue is
    /// closed; takes what waits. `None` once closed and empty.
    pub(super) fn take(&self, due: Instant) -> Option<Vec<Item>> {
        let mut waiting = self.lock();
        while waiting.items.len() < self.batch && !waiting.closed {
            let left = due.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            waiting = self
                .ready
                .wait_timeout(waiting, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        if waiting.closed && waiting.items.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut waiting.items))
    }

    /// Takes no more items; the exporter sends what waits and stops.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }
}
