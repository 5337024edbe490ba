//! Pause events: a pause was made, or a pause was resolved. The routes publish
//! them once the pause (or its answer) is stored and logged; the console's
//! event stream and the webhook notifier read them. Nothing waits on a reader:
//! a slow reader misses events and is told to read the list again.
//!
//! Daemons that share one store (PostgreSQL) tell each other their events
//! through it ([`warden_approval::announce`]), so that a pause made on one
//! node reaches every node's console. Each node hears another's events about
//! as fast as the database delivers them (milliseconds); one it missed
//! (while the database was away) becomes a resync.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use warden_approval::announce::{Announcer, Heard, Listening, MAX_MESSAGE};
use warden_approval::store::StoreError;

/// Events a reader may fall behind by before it is told to resynchronise.
const CAPACITY: usize = 256;

/// Pauses remembered, so that a retried submission (which gets the stored
/// pause back) is not announced twice.
const REMEMBERED: usize = 4096;

/// Events one node may have waiting to be told to the others; past it (the
/// database is slow or away) an event is not told, with a warning in the
/// log, and the other nodes' consoles catch up on their next read.
const TELLING: usize = 1024;

/// What happened to a pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    local: Local,
    closing: watch::Sender<bool>,
    /// Event streams open now.
    streams: Arc<AtomicUsize>,
    /// The other daemons on this store, where it is shared.
    others: Option<Others>,
}

/// This node's readers, and the pauses already announced to them.
#[derive(Clone)]
struct Local {
    sender: broadcast::Sender<Signal>,
    announced: Arc<Mutex<Announced>>,
}

/// The daemons sharing this node's store: a thread tells them this node's
/// events (in order, without holding up the route that published one), and
/// the store's listener brings theirs.
struct Others {
    /// This daemon among them, to know its own events when they come back.
    me: String,
    telling: std::sync::mpsc::SyncSender<String>,
    _listening: Listening,
}

/// An event as it travels between daemons; no event means "read the list
/// again".
#[derive(Serialize, Deserialize)]
struct Told {
    from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event: Option<PauseEvent>,
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

impl Local {
    /// Sends `event` to this node's readers, unless it is a pause already
    /// announced: returns false then, sending nothing.
    fn publish(&self, event: PauseEvent) -> bool {
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

    fn resync(&self) {
        let _ = self.sender.send(Signal::Resync);
    }

    /// What another daemon told: its event, or a resync for anything this
    /// node cannot read (or missed).
    fn heard(&self, me: &str, heard: Heard) {
        match heard {
            Heard::Gap => self.resync(),
            Heard::Message(text) => match serde_json::from_str::<Told>(&text) {
                Ok(told) if told.from == me => {}
                Ok(Told {
                    event: Some(event), ..
                }) => {
                    self.publish(event);
                }
                Ok(Told { event: None, .. }) => self.resync(),
                Err(err) => {
                    tracing::debug!(%err, "a pause event from another node that this one cannot read");
                    self.resync();
                }
            },
        }
    }
}

impl Events {
    /// No reader yet, nothing announced, no other daemon.
    pub fn new() -> Events {
        let (sender, _) = broadcast::channel(CAPACITY);
        let (closing, _) = watch::channel(false);
        Events {
            local: Local {
                sender,
                announced: Arc::default(),
            },
            closing,
            streams: Arc::new(AtomicUsize::new(0)),
            others: None,
        }
    }

    /// As [`Events::new`], sharing events with the other daemons on a store
    /// through its `announcer`: this node's go to them, theirs come to this
    /// node's readers. Errors when the store cannot be listened to.
    pub fn shared(announcer: Arc<dyn Announcer>) -> Result<Events, StoreError> {
        let mut events = Events::new();
        let me = node_instance();
        let local = events.local.clone();
        let heard_by = me.clone();
        let listening = announcer.listen(Box::new(move |heard| local.heard(&heard_by, heard)))?;
        let (telling, told) = std::sync::mpsc::sync_channel::<String>(TELLING);
        std::thread::Builder::new()
            .name("warden-pause-tell".into())
            .spawn(move || {
                // Ends when the events are dropped (the sender with them).
                for message in told {
                    if let Err(err) = announcer.announce(&message) {
                        tracing::warn!(%err, "other nodes were not told of a pause event; their consoles catch up on their next read");
                    }
                }
            })
            .map_err(|e| StoreError::Open {
                path: "pause events".into(),
                message: format!("starting the thread that tells other nodes: {e}"),
            })?;
        events.others = Some(Others {
            me,
            telling,
            _listening: listening,
        });
        Ok(events)
    }

    /// Publishes `event` to every reader, on this node and (where the store
    /// is shared) on the others. A pause already announced is not announced
    /// again: returns false, publishing nothing.
    pub fn publish(&self, event: PauseEvent) -> bool {
        let Some(others) = &self.others else {
            return self.local.publish(event);
        };
        if !self.local.publish(event.clone()) {
            return false;
        }
        others.tell(Some(event));
        true
    }

    /// Tells every reader, on every node, to read the list again.
    pub fn resync(&self) {
        self.local.resync();
        if let Some(others) = &self.others {
            others.tell(None);
        }
    }

    /// A new reader of the events published from now on.
    pub fn subscribe(&self) -> Subscription {
        Subscription {
            events: self.local.sender.subscribe(),
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
        self.local.sender.receiver_count()
    }
}

impl Others {
    /// Hands `event` (or a resync) to the telling thread. An event too long
    /// for the database's notifications goes as a resync; one the thread has
    /// no room for is dropped with a warning (the others' readers then miss
    /// it until their next read of the list).
    fn tell(&self, event: Option<PauseEvent>) {
        let told = |event| {
            serde_json::to_string(&Told {
                from: self.me.clone(),
                event,
            })
            .unwrap_or_default()
        };
        let mut message = told(event);
        if message.len() > MAX_MESSAGE {
            message = told(None);
        }
        if self.telling.try_send(message).is_err() {
            tracing::warn!("a pause event was not told to other nodes: the database is behind");
        }
    }
}

/// An id for this daemon among those sharing its store, fresh at each start.
fn node_instance() -> String {
    let mut bytes = [0u8; 12];
    // Without randomness, the process id and the time tell nodes apart too.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        bytes[..4].copy_from_slice(&std::process::id().to_le_bytes());
        bytes[4..].copy_from_slice(&(now as u64).to_le_bytes());
    }
    hex::encode(bytes)
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

    fn told(from: &str, event: Option<PauseEvent>) -> Heard {
        Heard::Message(
            serde_json::to_string(&Told {
                from: from.into(),
                event,
            })
            .unwrap(),
        )
    }

    fn signals(sub: &mut Subscription) -> Vec<String> {
        std::iter::from_fn(|| sub.events.try_recv().ok())
            .map(|signal| match signal {
                Signal::Pause(event) => format!("{} {}", event.kind.as_str(), event.approval_id),
                Signal::Resync => "resync".into(),
            })
            .collect()
    }

    #[test]
    fn another_nodes_pause_reaches_this_nodes_readers_once() {
        let events = Events::new();
        let mut sub = events.subscribe();
        let heard = told("node-b", Some(event(PauseKind::Paused, "a")));
        events.local.heard("node-a", heard.clone());
        events.local.heard("node-a", heard);
        events.local.heard(
            "node-a",
            told("node-b", Some(event(PauseKind::Resolved, "a"))),
        );
        assert_eq!(signals(&mut sub), ["paused a", "resolved a"]);
        // Told of it already, this node does not announce it again.
        assert!(!events.publish(event(PauseKind::Paused, "a")));
    }

    #[test]
    fn a_nodes_own_events_coming_back_are_not_heard_twice() {
        let events = Events::new();
        let mut sub = events.subscribe();
        events.local.heard(
            "node-a",
            told("node-a", Some(event(PauseKind::Paused, "a"))),
        );
        events.local.heard("node-a", told("node-a", None));
        assert!(signals(&mut sub).is_empty());
    }

    #[test]
    fn a_gap_an_unreadable_message_or_another_nodes_resync_is_a_resync() {
        let events = Events::new();
        let mut sub = events.subscribe();
        events.local.heard("node-a", Heard::Gap);
        events
            .local
            .heard("node-a", Heard::Message("{not json".into()));
        events.local.heard("node-a", told("node-b", None));
        assert_eq!(signals(&mut sub), ["resync", "resync", "resync"]);
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
