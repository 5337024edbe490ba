//! Which threads wait for a human, known on this node without a round trip
//! to a shared database: the answer to evaluate's "does this call's thread
//! wait?" for the many calls whose thread does not.
//!
//! The database stays the one that decides. The index only ever answers
//! "this thread has no pending approval" ([`Waiting::known_free`]); a thread
//! it lists is looked up in the database, and so is every thread while the
//! index is not fresh. It is kept by the database's own notifications (a
//! trigger on the approvals table, so that no write can skip it), read on a
//! connection of its own that proves itself every [`HEARTBEAT`]: a
//! notification committed before a heartbeat was sent arrives before its
//! answer. The index is fresh for [`WINDOW`] after the last heartbeat sent
//! and answered, so a thread paused on another node is known here at most
//! [`WINDOW`] later (in practice, the notification's own delay: a tenth of a
//! millisecond on loopback); past that, with the database slow or gone, every
//! call asks the database again, which answers or fails closed.

use std::collections::HashMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// How long after a heartbeat the index may answer: the longest a node may
/// judge a call on a thread another node has just paused as if it did not
/// wait.
pub const WINDOW: Duration = Duration::from_millis(100);

/// How often the index's connection proves itself.
pub const HEARTBEAT: Duration = Duration::from_millis(20);

/// A thread, as the database's notifications name it: the SHA-256 of the
/// principal, a zero byte and the thread id (neither holds a zero byte), so
/// that every notification has the same short length.
pub type ThreadKey = [u8; 32];

/// The threads with a pending approval, each with that approval's id.
pub struct Waiting {
    threads: RwLock<HashMap<ThreadKey, String>>,
    /// Nanoseconds after `base` until which the index may answer; 0: never.
    fresh_until: AtomicU64,
    base: Instant,
}

impl Default for Waiting {
    fn default() -> Self {
        Waiting::new()
    }
}

impl Waiting {
    /// Empty, and not fresh.
    pub fn new() -> Waiting {
        Waiting {
            threads: RwLock::default(),
            fresh_until: AtomicU64::new(0),
            base: Instant::now(),
        }
    }

    /// The key of a principal's thread.
    pub fn key(principal: &str, thread_id: &str) -> ThreadKey {
        let mut hash = Sha256::new();
        hash.update(principal.as_bytes());
        hash.update([0]);
        hash.update(thread_id.as_bytes());
        hash.finalize().into()
    }

    /// True only when the index is fresh and the thread has no pending
    /// approval in it: then the call need not ask the database.
    pub fn known_free(&self, principal: &str, thread_id: &str) -> bool {
        let now = self.base.elapsed().as_nanos() as u64;
        if now >= self.fresh_until.load(Ordering::Acquire) {
            return false;
        }
        let key = Waiting::key(principal, thread_id);
        !self
            .threads
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&key)
    }

    /// This node paused the thread (and committed): known at once, without
    /// waiting for the notification.
    pub fn paused(&self, principal: &str, thread_id: &str, approval_id: &str) {
        self.write()
            .insert(Waiting::key(principal, thread_id), approval_id.to_string());
    }

    /// Applies one notification: `+KEY APPROVAL_ID` (the thread waits on
    /// that approval) or `-KEY APPROVAL_ID` (that approval no longer waits;
    /// a newer one on the same thread stays). Errors on anything else.
    pub fn apply(&self, message: &str) -> Result<(), String> {
        let unreadable = || format!("an unreadable notification of a waiting thread: {message:?}");
        let (sign, rest) = message.split_at_checked(1).ok_or_else(unreadable)?;
        let (key, approval_id) = rest.split_once(' ').ok_or_else(unreadable)?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(key, &mut bytes).map_err(|_| unreadable())?;
        let mut threads = self.write();
        match sign {
            "+" => {
                threads.insert(bytes, approval_id.to_string());
            }
            "-" => {
                if threads.get(&bytes).is_some_and(|id| id == approval_id) {
                    threads.remove(&bytes);
                }
            }
            _ => return Err(unreadable()),
        }
        Ok(())
    }

    /// Replaces the whole index by what the database holds now.
    pub fn replace(&self, threads: HashMap<ThreadKey, String>) {
        *self.write() = threads;
    }

    /// The index may answer until `deadline`.
    pub fn fresh_until(&self, deadline: Instant) {
        let nanos = deadline.saturating_duration_since(self.base).as_nanos() as u64;
        self.fresh_until.store(nanos, Ordering::Release);
    }

    /// The index may not answer until it is fresh again.
    pub fn stale(&self) {
        self.fresh_until.store(0, Ordering::Release);
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<ThreadKey, String>> {
        self.threads.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Waiting {
        let waiting = Waiting::new();
        waiting.fresh_until(Instant::now() + Duration::from_secs(60));
        waiting
    }

    fn told(sign: char, principal: &str, thread: &str, approval: &str) -> String {
        format!(
            "{sign}{} {approval}",
            hex::encode(Waiting::key(principal, thread))
        )
    }

    #[test]
    fn a_stale_index_knows_no_thread_free() {
        let waiting = Waiting::new();
        assert!(!waiting.known_free("p", "t"));
        let waiting = fresh();
        assert!(waiting.known_free("p", "t"));
        waiting.stale();
        assert!(!waiting.known_free("p", "t"));
    }

    #[test]
    fn a_thread_told_waiting_is_not_free_until_its_approval_is_told_done() {
        let waiting = fresh();
        waiting.apply(&told('+', "p", "t", "apr_1")).unwrap();
        assert!(!waiting.known_free("p", "t"));
        assert!(waiting.known_free("p", "other"));
        assert!(waiting.known_free("q", "t"));
        waiting.apply(&told('-', "p", "t", "apr_1")).unwrap();
        assert!(waiting.known_free("p", "t"));
    }

    #[test]
    fn an_older_approval_told_done_leaves_a_newer_pause_of_the_thread() {
        let waiting = fresh();
        waiting.paused("p", "t", "apr_2");
        waiting.apply(&told('-', "p", "t", "apr_1")).unwrap();
        assert!(!waiting.known_free("p", "t"));
    }

    #[test]
    fn an_unreadable_notification_is_an_error() {
        let waiting = fresh();
        for message in ["", "+", "+nothex apr", "*00 apr", "+00 apr"] {
            assert!(waiting.apply(message).is_err(), "{message:?}");
        }
    }
}
