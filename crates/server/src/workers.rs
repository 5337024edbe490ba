//! The judging pool: the threads that run the pipeline (the native core and the
//! guest calls) and the approval store's blocking calls, so that the async
//! workers, which accept connections and answer `/healthz` and `/metrics`, never
//! wait for a provider running to its timeout or for a locked database.
//!
//! A fixed number of threads (one per core by default) take jobs from one
//! queue. At most `workers + depth` jobs are admitted at once (running or
//! waiting); one more is refused at once: the caller answers with a deny
//! (`warden.overloaded`) or 503, never waits.
//!
//! A job that cannot keep its thread long may run on the caller's own thread
//! instead ([`WorkerPool::at_once`]), but only while the pool has nothing
//! else to do: then handing it over would only add two wake-ups of parked
//! threads, the largest cost of a call at one connection (docs/benchmarks.md).
//! Counting it as busy keeps a second one off the other async worker, so
//! that one always stays free for `/healthz` and new connections.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// The threads that judge calls, with their queue.
pub struct WorkerPool {
    jobs: SyncSender<Job>,
    workers: usize,
    depth: usize,
    /// Jobs queued or running.
    busy: Arc<AtomicUsize>,
}

/// Why a job did not run to its end.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PoolError {
    /// Every judging thread is busy and the queue is full.
    #[error(
        "the daemon is overloaded: its {workers} workers are busy and {depth} calls are waiting (server.limits.workers, queue_depth)"
    )]
    Full {
        /// The judging threads (`server.limits.workers`).
        workers: usize,
        /// How many calls may wait for one (`server.limits.queue_depth`).
        depth: usize,
    },
    /// The principal has as many calls queued or being judged as it may.
    #[error(
        "the daemon is overloaded by {principal}: {cap} of its calls are queued or being judged (server.limits.max_queued_per_principal)"
    )]
    PrincipalFull {
        /// The principal, by token name or address.
        principal: String,
        /// `server.limits.max_queued_per_principal`.
        cap: usize,
    },
    /// The job panicked (its thread lives on).
    #[error("the job panicked")]
    Panicked,
}

impl PoolError {
    /// Refused for want of room (the call may be retried), not lost.
    pub fn is_overload(&self) -> bool {
        matches!(
            self,
            PoolError::Full { .. } | PoolError::PrincipalFull { .. }
        )
    }
}

impl WorkerPool {
    /// Starts `workers` threads sharing a queue of `depth` jobs.
    pub fn start(workers: usize, depth: usize) -> std::io::Result<WorkerPool> {
        // Admission keeps the jobs in the channel under its bound.
        let (jobs, queue) = sync_channel::<Job>(workers + depth);
        let queue = Arc::new(Mutex::new(queue));
        for i in 0..workers {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("warden-judge-{i}"))
                .spawn(move || work(&queue))?;
        }
        Ok(WorkerPool {
            jobs,
            workers,
            depth,
            busy: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Runs `job` on a worker and waits for its result, or fails at once when
    /// the queue is full.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let full = PoolError::Full {
            workers: self.workers,
            depth: self.depth,
        };
        if self.busy.fetch_add(1, Ordering::AcqRel) >= self.workers + self.depth {
            self.busy.fetch_sub(1, Ordering::AcqRel);
            return Err(full);
        }
        let (answer, result) = oneshot::channel();
        let busy = self.busy.clone();
        let job: Job = Box::new(move || {
            // A panic is reported to the caller; the worker carries on.
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(job));
            busy.fetch_sub(1, Ordering::AcqRel);
            // The caller may have gone (its connection closed): nothing to do.
            let _ = answer.send(outcome);
        });
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.jobs.try_send(job)
        {
            self.busy.fetch_sub(1, Ordering::AcqRel);
            return Err(full);
        }
        match result.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) | Err(_) => Err(PoolError::Panicked),
        }
    }

    /// Runs `job` on this thread when the pool is idle (nothing queued or
    /// running, this job included while it runs): `Some` of its outcome, or
    /// `None` when the pool is busy or `job` itself declined (returned
    /// `None`), so that the caller hands the work to the pool instead.
    pub fn at_once<T>(&self, job: impl FnOnce() -> Option<T>) -> Option<Result<T, PoolError>> {
        self.busy
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        // A panic is reported as on a worker; the caller's thread carries on.
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(job));
        self.busy.fetch_sub(1, Ordering::AcqRel);
        match outcome {
            Ok(Some(value)) => Some(Ok(value)),
            Ok(None) => None,
            Err(_) => Some(Err(PoolError::Panicked)),
        }
    }

    /// Jobs queued or running, for the metrics.
    pub fn busy(&self) -> usize {
        self.busy.load(Ordering::Acquire)
    }

    /// How many judging threads the pool runs.
    pub fn workers(&self) -> usize {
        self.workers
    }
}

fn work(queue: &Mutex<Receiver<Job>>) {
    loop {
        // One idle worker waits on the queue at a time; the others wait for
        // the lock, which is released as soon as a job is taken.
        let job = match queue.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(job) => job,
            // The pool is gone.
            Err(_) => return,
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::time::Duration;

    #[tokio::test]
    async fn a_job_runs_on_a_worker_and_gives_its_result() {
        let pool = WorkerPool::start(2, 4).unwrap();
        let name = pool
            .run(|| std::thread::current().name().map(str::to_string))
            .await
            .unwrap();
        assert!(name.unwrap().starts_with("warden-judge-"));
    }

    #[tokio::test]
    async fn one_job_past_the_workers_and_the_queue_is_refused_at_once() {
        let pool = Arc::new(WorkerPool::start(1, 1).unwrap());
        let release = Arc::new(Barrier::new(2));
        // One job holds the worker, one waits in the queue.
        let admitted: Vec<_> = (0..2)
            .map(|_| {
                let (pool, release) = (pool.clone(), release.clone());
                tokio::spawn(async move { pool.run(move || release.wait()).await })
            })
            .collect();
        while pool.busy() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let refused = pool.run(|| ()).await;
        assert_eq!(
            refused,
            Err(PoolError::Full {
                workers: 1,
                depth: 1
            })
        );
        // Let the first job go, then the second (each waits for this thread).
        release.wait();
        release.wait();
        for job in admitted {
            job.await.unwrap().unwrap();
        }
        assert_eq!(pool.busy(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_queued_while_every_worker_is_busy_all_run() {
        // Two workers held, six jobs queued behind them: the workers take
        // them all once free, though none was queued while a worker waited.
        let pool = Arc::new(WorkerPool::start(2, 6).unwrap());
        let release = Arc::new(Barrier::new(3));
        let held: Vec<_> = (0..2)
            .map(|_| {
                let (pool, release) = (pool.clone(), release.clone());
                tokio::spawn(async move { pool.run(move || release.wait()).await })
            })
            .collect();
        while pool.busy() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let queued: Vec<_> = (0..6)
            .map(|i| {
                let pool = pool.clone();
                tokio::spawn(async move { pool.run(move || i * 10).await })
            })
            .collect();
        while pool.busy() < 8 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        release.wait();
        for job in held {
            job.await.unwrap().unwrap();
        }
        let mut results = Vec::new();
        for job in queued {
            results.push(job.await.unwrap().unwrap());
        }
        assert_eq!(results, [0, 10, 20, 30, 40, 50]);
        assert_eq!(pool.busy(), 0);
    }

    #[test]
    fn a_job_runs_at_once_on_the_callers_thread_while_the_pool_is_idle() {
        let pool = WorkerPool::start(1, 1).unwrap();
        let here = std::thread::current().id();
        let ran = pool.at_once(|| Some(std::thread::current().id()));
        assert_eq!(ran, Some(Ok(here)));
        assert_eq!(pool.busy(), 0);
    }

    #[tokio::test]
    async fn no_job_runs_at_once_while_another_is_being_judged() {
        let pool = Arc::new(WorkerPool::start(1, 1).unwrap());
        let release = Arc::new(Barrier::new(2));
        let held = {
            let (pool, release) = (pool.clone(), release.clone());
            tokio::spawn(async move { pool.run(move || release.wait()).await })
        };
        while pool.busy() < 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(pool.at_once(|| Some(())), None);
        release.wait();
        held.await.unwrap().unwrap();
    }

    #[test]
    fn a_job_judged_at_once_keeps_a_second_one_off_the_other_thread() {
        let pool = WorkerPool::start(1, 1).unwrap();
        let nested = pool.at_once(|| Some(pool.at_once(|| Some(()))));
        assert_eq!(nested, Some(Ok(None)));
    }

    #[test]
    fn a_job_that_declines_to_run_at_once_leaves_the_pool_idle() {
        let pool = WorkerPool::start(1, 1).unwrap();
        assert_eq!(pool.at_once(|| None::<()>), None);
        assert_eq!(pool.busy(), 0);
        assert_eq!(
            pool.at_once(|| -> Option<()> { panic!("on purpose") }),
            Some(Err(PoolError::Panicked))
        );
        assert_eq!(pool.busy(), 0);
    }

    #[tokio::test]
    async fn a_panicking_job_is_reported_and_the_worker_survives() {
        let pool = WorkerPool::start(1, 1).unwrap();
        assert_eq!(
            pool.run(|| panic!("on purpose")).await,
            Err::<(), _>(PoolError::Panicked)
        );
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }
}
