//! A bounded pool of warm instances. At most `capacity` instances are alive at
//! once; a call takes an idle one, or the right to create one, or waits for one
//! until its deadline and then fails. Instances that are not handed back (after
//! a trap or any error) are dropped and free their place.
//!
//! A thread gets back the instance it used last when that one is idle: an
//! instance's memory is in the cache of the core that used it, so one last
//! used on another core is slower on every call, where making a new one is
//! paid once (measured: two threads judging on one Warden each took about a
//! quarter longer per call while they traded instances; docs/benchmarks.md).
//! So a thread whose instance is out makes one of its own while there is
//! room, and takes another thread's only when there is none.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

pub(crate) struct InstancePool<I> {
    state: Mutex<PoolState<I>>,
    freed: Condvar,
    capacity: usize,
}

struct PoolState<I> {
    /// Each with the thread that used it last ([`NOBODY`]: none yet).
    idle: Vec<(I, usize)>,
    /// Instances alive: idle, or out with a caller.
    live: usize,
    /// Callers waiting for a place: a freed place wakes one only when there is
    /// one (a condition variable's notify is a system call even when nobody waits).
    waiting: usize,
}

/// What a pool looks like right now, for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PoolUsage {
    /// The most instances the pool keeps (`pool_size`).
    pub capacity: usize,
    /// Instances alive now, idle or serving a call.
    pub live: usize,
    /// Instances alive and free for the next call.
    pub idle: usize,
}

/// The right to use one place of the pool, with the idle instance found there
/// (if any). Hand the instance back with [`Slot::release`]; dropping the slot
/// without doing so discards the instance and frees the place.
pub(crate) struct Slot<'p, I> {
    pool: &'p InstancePool<I>,
    pub(crate) instance: Option<I>,
    released: bool,
}

/// The owner of an instance no thread has used yet (one made at load).
const NOBODY: usize = 0;

/// This thread, as a number no other living thread has: the address of a
/// thread-local (never 0). A thread that ends may pass its number to a new
/// one, which then merely finds the old thread's instances its own.
fn this_thread() -> usize {
    thread_local! {
        static HERE: u8 = const { 0 };
    }
    HERE.with(|here| std::ptr::from_ref(here).addr())
}

impl<I> InstancePool<I> {
    pub(crate) fn new(capacity: usize) -> Self {
        InstancePool {
            state: Mutex::new(PoolState {
                idle: Vec::with_capacity(capacity),
                live: 0,
                waiting: 0,
            }),
            freed: Condvar::new(),
            capacity,
        }
    }

    fn lock(&self) -> MutexGuard<'_, PoolState<I>> {
        // A panic while holding the lock leaves the state consistent (every
        // update is a single push, pop or counter change), so carry on.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place in the pool, waiting until `deadline` at most: this
    /// thread's idle instance, or one nobody has used, or the right to make
    /// one, or another thread's idle instance, in that order.
    pub(crate) fn acquire(&self, deadline: Instant) -> Option<Slot<'_, I>> {
        let me = this_thread();
        let mut state = self.lock();
        loop {
            let ours = |owner: usize| owner == me || owner == NOBODY;
            if let Some(at) = state.idle.iter().rposition(|(_, owner)| ours(*owner)) {
                let (instance, _) = state.idle.swap_remove(at);
                return Some(self.slot(Some(instance)));
            }
            if state.live < self.capacity {
                state.live += 1;
                return Some(self.slot(None));
            }
            if let Some((instance, _)) = state.idle.pop() {
                return Some(self.slot(Some(instance)));
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            state.waiting += 1;
            state = self
                .freed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            state.waiting -= 1;
        }
    }

    /// Puts an instance that was created outside a call (at load) into the pool.
    pub(crate) fn seed(&self, instance: I) {
        let mut state = self.lock();
        if state.live < self.capacity {
            state.live += 1;
            state.idle.push((instance, NOBODY));
        }
    }

    fn slot(&self, instance: Option<I>) -> Slot<'_, I> {
        Slot {
            pool: self,
            instance,
            released: false,
        }
    }

    /// Wakes one waiting caller, if any, after a place was freed.
    fn wake_one(&self, state: MutexGuard<'_, PoolState<I>>) {
        let waiting = state.waiting > 0;
        drop(state);
        if waiting {
            self.freed.notify_one();
        }
    }

    pub(crate) fn usage(&self) -> PoolUsage {
        let state = self.lock();
        PoolUsage {
            capacity: self.capacity,
            live: state.live,
            idle: state.idle.len(),
        }
    }
}

impl<I> Slot<'_, I> {
    /// Hands a healthy instance back for the next call.
    pub(crate) fn release(mut self, instance: I) {
        self.released = true;
        let mut state = self.pool.lock();
        state.idle.push((instance, this_thread()));
        self.pool.wake_one(state);
    }
}

impl<I> Drop for Slot<'_, I> {
    fn drop(&mut self) {
        if !self.released {
            // Drop the instance outside the lock; only the place is shared.
            drop(self.instance.take());
            let mut state = self.pool.lock();
            state.live -= 1;
            self.pool.wake_one(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_millis(20)
    }

    #[test]
    fn a_released_instance_is_reused() {
        let pool = InstancePool::new(1);
        let slot = pool.acquire(soon()).unwrap();
        assert!(slot.instance.is_none());
        slot.release(7);
        assert_eq!(pool.acquire(soon()).unwrap().instance, Some(7));
    }

    /// Another thread takes a place and hands `instance` back in it.
    fn used_on_another_thread(pool: &InstancePool<u8>, instance: u8) {
        std::thread::scope(|s| {
            s.spawn(|| pool.acquire(soon()).unwrap().release(instance));
        });
    }

    #[test]
    fn a_thread_gets_back_the_instance_it_used_last() {
        let pool = InstancePool::new(4);
        let mine = pool.acquire(soon()).unwrap();
        used_on_another_thread(&pool, 2);
        // The other thread's instance is idle, and the newer one.
        mine.release(1);
        used_on_another_thread(&pool, 3);
        assert_eq!(pool.acquire(soon()).unwrap().instance, Some(1));
    }

    #[test]
    fn a_thread_makes_an_instance_of_its_own_before_it_takes_another_threads() {
        let pool = InstancePool::new(2);
        used_on_another_thread(&pool, 1);
        assert!(pool.acquire(soon()).unwrap().instance.is_none());
    }

    #[test]
    fn a_full_pool_hands_over_another_threads_idle_instance() {
        let pool = InstancePool::new(1);
        used_on_another_thread(&pool, 1);
        assert_eq!(pool.acquire(soon()).unwrap().instance, Some(1));
    }

    #[test]
    fn an_instance_made_at_load_serves_any_thread_first() {
        let pool = InstancePool::new(2);
        pool.seed(9);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(pool.acquire(soon()).unwrap().instance, Some(9)));
        });
    }

    #[test]
    fn a_dropped_slot_discards_its_instance_and_frees_the_place() {
        let pool = InstancePool::new(1);
        let mut slot = pool.acquire(soon()).unwrap();
        slot.instance = Some(1);
        drop(slot);
        assert_eq!(pool.usage().live, 0);
        assert!(pool.acquire(soon()).unwrap().instance.is_none());
    }

    #[test]
    fn a_full_pool_gives_up_at_the_deadline() {
        let pool: InstancePool<u8> = InstancePool::new(1);
        let _held = pool.acquire(soon()).unwrap();
        let start = Instant::now();
        assert!(
            pool.acquire(Instant::now() + Duration::from_millis(10))
                .is_none()
        );
        assert!(start.elapsed() >= Duration::from_millis(10));
    }

    #[test]
    fn a_waiting_call_gets_the_place_freed_by_another() {
        let pool: InstancePool<u8> = InstancePool::new(1);
        let held = pool.acquire(soon()).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                pool.acquire(Instant::now() + Duration::from_secs(5))
                    .is_some()
            });
            std::thread::sleep(Duration::from_millis(5));
            held.release(3);
            assert!(waiter.join().unwrap());
        });
    }

    #[test]
    fn a_waiting_call_gets_the_place_of_a_discarded_instance() {
        let pool: InstancePool<u8> = InstancePool::new(1);
        let held = pool.acquire(soon()).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                // Woken by the freed place, not by its deadline.
                let deadline = Instant::now() + Duration::from_secs(60);
                pool.acquire(deadline).is_some() && Instant::now() < deadline
            });
            while pool.lock().waiting == 0 {
                std::thread::yield_now();
            }
            drop(held);
            assert!(waiter.join().unwrap());
        });
    }

    #[test]
    fn every_waiting_call_gets_a_place_as_places_are_freed() {
        // Eight callers share two places, each holding its place across a
        // yield so that others wait; a lost wake-up would leave one asleep
        // until its deadline.
        let pool: InstancePool<u8> = InstancePool::new(2);
        std::thread::scope(|s| {
            let callers: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        (0..200).all(|_| {
                            let deadline = Instant::now() + Duration::from_secs(60);
                            let Some(mut slot) = pool.acquire(deadline) else {
                                return false;
                            };
                            let instance = slot.instance.take().unwrap_or(1);
                            std::thread::yield_now();
                            slot.release(instance);
                            Instant::now() < deadline
                        })
                    })
                })
                .collect();
            for caller in callers {
                assert!(caller.join().unwrap());
            }
        });
        assert_eq!(pool.lock().waiting, 0);
    }

    #[test]
    fn a_call_that_gave_up_waiting_is_no_longer_counted() {
        let pool: InstancePool<u8> = InstancePool::new(1);
        let _held = pool.acquire(soon()).unwrap();
        assert!(
            pool.acquire(Instant::now() + Duration::from_millis(5))
                .is_none()
        );
        assert_eq!(pool.lock().waiting, 0);
    }
}
