//! Principals and their shares: who a request counts against, and at most
//! how much of something the daemon has a fixed number of (body turns, places
//! in the judging queue) each may hold. Admission names the principal and
//! keeps it with the request; the judging pool reads it back.

use std::collections::HashMap;
use std::fmt;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// What a request's share of the daemon is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Who {
    /// A configured token, by name: every agent holding it.
    Token(Arc<str>),
    /// A request without a valid credential, by source address.
    Client(IpAddr),
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Who::Token(name) => write!(f, "the token '{name}'"),
            Who::Client(address) => write!(f, "the client {address}"),
        }
    }
}

tokio::task_local! {
    /// The principal of the request being answered.
    pub(crate) static PRINCIPAL: Who;
}

/// The principal of the request this task answers, if it passed admission.
pub(crate) fn current() -> Option<Who> {
    PRINCIPAL.try_with(Clone::clone).ok()
}

/// Every principal's share of something the daemon has a fixed number of
/// (body turns, places in the judging queue): at most `cap` each. A
/// principal's entry lives only while one of its requests holds or waits for
/// a place, so the table stays as small as the requests in flight.
pub(crate) struct Shares {
    cap: usize,
    open: Mutex<HashMap<Who, Entry>>,
}

struct Entry {
    places: Arc<Semaphore>,
    /// Shares holding or waiting for a place.
    users: usize,
}

/// One principal's place (or its wait for one), given back when dropped.
pub(crate) struct Share {
    shares: Arc<Shares>,
    who: Who,
    permit: Option<OwnedSemaphorePermit>,
}

impl Shares {
    pub(crate) fn new(cap: usize) -> Arc<Shares> {
        Arc::new(Shares {
            cap,
            open: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Who, Entry>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A share of `who`'s places, not yet holding one.
    fn join(self: &Arc<Self>, who: &Who) -> (Share, Arc<Semaphore>) {
        let mut open = self.lock();
        let entry = open.entry(who.clone()).or_insert_with(|| Entry {
            places: Arc::new(Semaphore::new(self.cap)),
            users: 0,
        });
        entry.users += 1;
        let places = entry.places.clone();
        let share = Share {
            shares: self.clone(),
            who: who.clone(),
            permit: None,
        };
        (share, places)
    }

    /// Waits for one of `who`'s places (first come, first served).
    pub(crate) async fn wait(self: &Arc<Self>, who: &Who) -> Share {
        let (mut share, places) = self.join(who);
        share.permit = Some(places.acquire_owned().await.expect("never closed"));
        share
    }

    /// One of `who`'s places if one is free now.
    pub(crate) fn try_take(self: &Arc<Self>, who: &Who) -> Option<Share> {
        let (mut share, places) = self.join(who);
        share.permit = Some(places.try_acquire_owned().ok()?);
        Some(share)
    }

    /// Principals holding or waiting for a place.
    #[cfg(test)]
    fn principals(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.permit.take();
        let mut open = self.shares.lock();
        if let Some(entry) = open.get_mut(&self.who) {
            entry.users -= 1;
            if entry.users == 0 {
                open.remove(&self.who);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn token(name: &str) -> Who {
        Who::Token(name.into())
    }

    #[tokio::test]
    async fn a_principal_holds_at_most_its_cap_and_another_is_not_held_back() {
        let shares = Shares::new(2);
        let held = [
            shares.try_take(&token("a")).unwrap(),
            shares.try_take(&token("a")).unwrap(),
        ];
        assert!(shares.try_take(&token("a")).is_none());
        assert!(shares.try_take(&token("b")).is_some());
        drop(held);
        assert!(shares.try_take(&token("a")).is_some());
    }

    #[tokio::test]
    async fn a_waiter_gets_the_place_given_back() {
        let shares = Shares::new(1);
        let held = shares.try_take(&token("a")).unwrap();
        let waiter = {
            let shares = shares.clone();
            tokio::spawn(async move { shares.wait(&token("a")).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(held);
        let share = waiter.await.unwrap();
        assert!(share.permit.is_some());
    }

    #[tokio::test]
    async fn a_principal_is_forgotten_once_no_request_holds_or_waits() {
        let shares = Shares::new(1);
        let held = shares.try_take(&token("a")).unwrap();
        // A wait given up (a timeout) leaves nothing behind.
        let gave_up =
            tokio::time::timeout(Duration::from_millis(10), shares.wait(&token("a"))).await;
        assert!(gave_up.is_err());
        assert!(shares.try_take(&token("a")).is_none());
        assert_eq!(shares.principals(), 1);
        drop(held);
        assert_eq!(shares.principals(), 0);
    }
}
