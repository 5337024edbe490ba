//! Announcements between the daemons that share one store: a pause made or
//! answered on one node reaches the consoles of every other, through the
//! database itself (PostgreSQL's `LISTEN`/`NOTIFY`), not a bus of its own.
//!
//! An announcement only tells readers to look: the store stays the truth.
//! A message lost (a node that was disconnected while it was sent) is made
//! good by [`Heard::Gap`], after which a reader reads its list again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use warden_types::error::StoreError;

/// The largest message [`Announcer::announce`] takes: PostgreSQL refuses a
/// `NOTIFY` payload of 8000 bytes or more. A longer one is the caller's to
/// replace by a shorter (a "read the list again").
pub const MAX_MESSAGE: usize = 7900;

/// What a listener hears.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// A message some daemon announced (this one's own included).
    Message(String),
    /// The listener lost the database and is listening again: messages sent
    /// in between were missed.
    Gap,
}

/// Says messages to, and hears them from, every daemon sharing the store.
pub trait Announcer: Send + Sync {
    /// Sends `message` (at most [`MAX_MESSAGE`] bytes) to every listener,
    /// this daemon's included.
    fn announce(&self, message: &str) -> Result<(), StoreError>;

    /// Starts listening on a thread of its own: `heard` is called with each
    /// message in the order they were sent, and with [`Heard::Gap`] whenever
    /// the listener reconnected. Listening stops when the returned handle is
    /// dropped. Errors only when the first connection cannot be made.
    fn listen(&self, heard: Box<dyn FnMut(Heard) + Send>) -> Result<Listening, StoreError>;
}

/// A listener's thread, stopped (within its poll interval) when dropped.
pub struct Listening {
    stop: Arc<AtomicBool>,
}

impl Listening {
    /// A handle that stops the thread watching `stop`.
    pub fn new(stop: Arc<AtomicBool>) -> Listening {
        Listening { stop }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
