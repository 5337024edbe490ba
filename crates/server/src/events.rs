//! Pause events: a pause was made, or a pause was resolved. The routes publish
//! them once the pause (or its answer) is stored and logged; the console's
//! event stream and the webhook notifier read them. Nothing waits on a reader:
//! a slow reader misses events and is told to read the list again.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

/// Events a reader may fall behind by before it is told to resynchronise.
const CAPACITY: usize = 256;

/// Pauses remembered, so that a retried submission (which gets the stored
/// pause back) is not announced twice.
const REMEMBERED: usize = 4096;

/// What happened to a pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseKind {
    /// A run paused for a human.
    Paused,
    /// A resume or a clear answered it.
    Resolved,
}

impl PauseKind {
    /// The kind as the event stream spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseKind::Paused => "paused",
            PauseKind::Resolved => "resolved",
        }
    }
}

/// One pause event, as the console's event stream sends it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PauseEvent {
    /// Paused or resolved.
    pub kind: PauseKind,
    /// The approval that paused or was answered.
    pub approval_id: String,
    /// The thread it belongs to.
    pub thread_id: String,
    /// The principal (token name) whose thread paused (for a pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The run that paused.
    pub run_id: String,
    /// The tools waiting for a human (for a pause), in request order.
    pub tools: Vec<String>,
    /// When the event was published (RFC 3339).
    pub at: String,
}

/// What a reader hears.
#[derive(Clone, Debug)]
pub enum Signal {
    /// A pause began or was answered.
    Pause(Arc<PauseEvent>),
    /// Pauses changed in a way no single event says (approvals expired by
    /// the sweeper): read the list again.
    Resync,
}

/// The daemon's pause events: a broadcast channel, and the signal that ends
/// every stream at shutdown.
pub struct Events {
    sender: broadcast::Sender<Signal>,
    closing: watch::Sender<bool>,
    announced: Mutex<Announced>,
    /// Event streams open now.
    streams: Arc<AtomicUsize>,
}

/// An open event stream's place among [`Events::open_stream`]'s, given back
/// when the stream ends.
pub struct StreamTurn {
    streams: Arc<AtomicUsize>,
}

impl Drop for StreamTurn {
    fn drop(&mut self) {
        self.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

#[derive(Default)]
struct Announced {
    order: VecDeque<String>,
    ids: HashSet<String>,
}

/// A reader of the events, until the daemon shuts down.
pub struct Subscription {
    /// The events, from the moment of subscribing.
    pub events: broadcast::Receiver<Signal>,
    /// Becomes true when the daemon shuts down: the reader ends its stream.
    pub closing: watch::Receiver<bool>,
}

impl Default for Events {
    fn default() -> Self {
        Events::new()
    }
}

impl Events {
    /// No reader yet, nothing announced.
    pub fn new() -> Events {
        let (sender, _) = broadcast::channel(CAPACITY);
        let (closing, _) = watch::channel(false);
        Events {
            sender,
            closing,
            announced: Mutex::new(Announced::default()),
            streams: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Publishes `event` to every reader. A pause already announced is not
    /// announced again: returns false, publishing nothing.
    pub fn publish(&self, event: PauseEvent) -> bool {
        if event.kind == PauseKind::Paused {
            let mut announced = self.announced.lock().unwrap_or_else(|e| e.into_inner());
            if !announced.ids.insert(event.approval_id.clone()) {
                return false;
            }
            announced.order.push_back(event.approval_id.clone());
            if announced.order.len() > REMEMBERED
                && let Some(oldest) = announced.order.pop_front()
            {
                announced.ids.remove(&oldest);
            }
        }
        // No reader is not an error: nobody is watching.
        let _ = self.sender.send(Signal::Pause(Arc::new(event)));
        true
    }

    /// Tells every reader to read the list again.
    pub fn resync(&self) {
        let _ = self.sender.send(Signal::Resync);
    }

    /// A new reader of the events published from now on.
    pub fn subscribe(&self) -> Subscription {
        Subscription {
            events: self.sender.subscribe(),
            closing: self.closing.subscribe(),
        }
    }

    /// Ends every stream: the daemon is shutting down, and a stream that never
    /// ends would hold the shutdown for its whole deadline.
    pub fn close(&self) {
        let _ = self.closing.send(true);
    }

    /// A place for one more event stream, unless `cap` are open: each holds a
    /// connection for as long as it lasts, and the API's callers need some.
    pub fn open_stream(&self, cap: usize) -> Option<StreamTurn> {
        self.streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < cap).then_some(open + 1)
            })
            .ok()
            .map(|_| StreamTurn {
                streams: self.streams.clone(),
            })
    }

    /// Readers now.
    pub fn readers(&self) -> usize {
        self.sender.receiver_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: PauseKind, id: &str) -> PauseEvent {
        PauseEvent {
            kind,
            approval_id: id.into(),
            thread_id: "t".into(),
            principal: Some("p".into()),
            run_id: "r".into(),
            tools: vec!["bash".into()],
            at: String::new(),
        }
    }

    #[test]
    fn a_pause_is_announced_once_however_often_it_is_published() {
        let events = Events::new();
        let mut sub = events.subscribe();
        assert!(events.publish(event(PauseKind::Paused, "a")));
        assert!(!events.publish(event(PauseKind::Paused, "a")));
        assert!(events.publish(event(PauseKind::Resolved, "a")));
        let kind = |signal: Signal| match signal {
            Signal::Pause(event) => event.kind,
            Signal::Resync => panic!("a resync"),
        };
        assert_eq!(kind(sub.events.try_recv().unwrap()), PauseKind::Paused);
        assert_eq!(kind(sub.events.try_recv().unwrap()), PauseKind::Resolved);
        assert!(sub.events.try_recv().is_err());
    }

    #[test]
    fn streams_past_the_cap_are_refused_until_one_ends() {
        let events = Events::new();
        let first = events.open_stream(2).unwrap();
        let _second = events.open_stream(2).unwrap();
        assert!(events.open_stream(2).is_none());
        drop(first);
        assert!(events.open_stream(2).is_some());
    }

    #[test]
    fn closing_reaches_every_reader() {
        let events = Events::new();
        let sub = events.subscribe();
        events.close();
        assert!(*sub.closing.borrow());
    }
}
