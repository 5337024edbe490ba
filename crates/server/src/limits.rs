//! The `server.limits:` block: what one request may send, how long a client may
//! take over each part of it, how many connections and bodies the daemon holds
//! at once (and how many of them one principal may hold), the threads that
//! judge calls, and how many wrong credentials an address may present. Every
//! limit has a default that is safe against a client that never finishes, and
//! a range that keeps the daemon useful.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The `server.limits:` block.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct HttpLimits {
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The deepest JSON nesting accepted in a request body.
    pub max_json_depth: usize,
    /// The most connections open at once; lowered to fit the open-file limit.
    /// At the cap, the connection idle the longest is closed for a new one.
    pub max_connections: usize,
    /// The most requests whose body is being read or judged at once: memory
    /// for bodies stays under this times `max_body_bytes`. Others wait for a
    /// turn up to `body_read_timeout_ms`, then get 503 `overloaded`.
    pub max_concurrent_bodies: usize,
    /// How many of those one principal (a token, or the source address of a
    /// request without a valid one) may hold; its other requests wait for
    /// one of its own turns. Above `max_concurrent_bodies`: all of them.
    pub max_bodies_per_principal: usize,
    /// From the first byte of a request to the end of its headers.
    pub header_read_timeout_ms: u64,
    /// How long a connection may wait for its next request.
    pub idle_timeout_ms: u64,
    /// A body is given this long, plus one second for every
    /// `min_body_bytes_per_s` bytes that arrive; past it, 408 `body_timeout`.
    pub body_read_timeout_ms: u64,
    /// The slowest rate at which a body may arrive, past the first
    /// `body_read_timeout_ms`.
    pub min_body_bytes_per_s: u64,
    /// On SIGTERM: how long calls in flight may take to finish before their
    /// connections are dropped.
    pub shutdown_timeout_ms: u64,
    /// Threads that judge calls (the pipeline and the approval store); 0: one
    /// per core.
    pub workers: usize,
    /// Calls that may wait for a worker; past it a call is denied at once with
    /// `warden.overloaded`.
    pub queue_depth: usize,
    /// Calls of one principal that may be queued or judged at once; past it
    /// its call is denied at once with `warden.overloaded`. Above `workers +
    /// queue_depth`: all of them.
    pub max_queued_per_principal: usize,
    /// How long a write to the approval store waits for another process's
    /// transaction before it fails (closed).
    pub store_busy_timeout_ms: u64,
    /// A call is judged on the async thread that read it, with no hand-off
    /// to a judging thread, when the judging threads are idle, the store
    /// answers at once whether its thread waits for a human, and the
    /// configuration's worst case (its providers' and classifier's time
    /// limits, as `warden.Warden`'s `worst_case_ms` in Python) is within this
    /// many milliseconds; so an async thread never waits on a provider longer
    /// than this. 0: every call is judged on a judging thread.
    pub inline_budget_ms: u64,
    /// Wrong credentials (bearer tokens, console sign-ins) one source address
    /// may present in a row before it is refused 429.
    pub auth_failures_burst: u32,
    /// Wrong credentials an address may present a minute past the burst.
    pub auth_failures_per_minute: u32,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: warden_types::request::MAX_REQUEST_BYTES,
            max_json_depth: warden_types::request::MAX_INPUT_DEPTH,
            max_connections: 1024,
            max_concurrent_bodies: 32,
            max_bodies_per_principal: 16,
            header_read_timeout_ms: 10_000,
            idle_timeout_ms: 30_000,
            body_read_timeout_ms: 10_000,
            min_body_bytes_per_s: 16 * 1024,
            shutdown_timeout_ms: 10_000,
            workers: 0,
            queue_depth: 256,
            max_queued_per_principal: 64,
            store_busy_timeout_ms: 250,
            inline_budget_ms: 25,
            auth_failures_burst: 10,
            auth_failures_per_minute: 10,
        }
    }
}

impl HttpLimits {
    /// Ranges that keep the daemon both useful and safe.
    pub fn check(&self) -> Result<(), String> {
        let range = |key: &str, value: u64, lo: u64, hi: u64| {
            if (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "server.limits.{key}: {value} is out of range {lo}..={hi}"
                ))
            }
        };
        range("max_body_bytes", self.max_body_bytes as u64, 1024, 16 << 20)?;
        range("max_json_depth", self.max_json_depth as u64, 2, 256)?;
        range("max_connections", self.max_connections as u64, 1, 1 << 20)?;
        range(
            "max_concurrent_bodies",
            self.max_concurrent_bodies as u64,
            1,
            1 << 16,
        )?;
        range(
            "max_bodies_per_principal",
            self.max_bodies_per_principal as u64,
            1,
            1 << 16,
        )?;
        range(
            "header_read_timeout_ms",
            self.header_read_timeout_ms,
            100,
            600_000,
        )?;
        range("idle_timeout_ms", self.idle_timeout_ms, 100, 3_600_000)?;
        range(
            "body_read_timeout_ms",
            self.body_read_timeout_ms,
            100,
            600_000,
        )?;
        range(
            "min_body_bytes_per_s",
            self.min_body_bytes_per_s,
            1,
            1 << 30,
        )?;
        range("shutdown_timeout_ms", self.shutdown_timeout_ms, 0, 600_000)?;
        range("workers", self.workers as u64, 0, 1024)?;
        range("queue_depth", self.queue_depth as u64, 1, 1 << 20)?;
        range(
            "max_queued_per_principal",
            self.max_queued_per_principal as u64,
            1,
            1 << 20,
        )?;
        range(
            "store_busy_timeout_ms",
            self.store_busy_timeout_ms,
            1,
            60_000,
        )?;
        range("inline_budget_ms", self.inline_budget_ms, 0, 1_000)?;
        range(
            "auth_failures_burst",
            self.auth_failures_burst.into(),
            1,
            100_000,
        )?;
        range(
            "auth_failures_per_minute",
            self.auth_failures_per_minute.into(),
            1,
            1_000_000,
        )?;
        Ok(())
    }

    /// `header_read_timeout_ms`: how long a request's headers may take.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }

    /// `idle_timeout_ms`: how long a keep-alive connection may wait for its next request.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }

    /// `body_read_timeout_ms`: how long a body, and the turns to read it, may take.
    pub fn body_read_timeout(&self) -> Duration {
        Duration::from_millis(self.body_read_timeout_ms)
    }

    /// `shutdown_timeout_ms`: how long a shutdown waits for requests in flight.
    pub fn shutdown_timeout(&self) -> Duration {
        Duration::from_millis(self.shutdown_timeout_ms)
    }

    /// `store_busy_timeout_ms`: how long a write waits for another process's lock on the approval store.
    pub fn store_busy_timeout(&self) -> Duration {
        Duration::from_millis(self.store_busy_timeout_ms)
    }

    /// `inline_budget_ms`: the longest a call judged on an async thread may keep it.
    pub fn inline_budget(&self) -> Duration {
        Duration::from_millis(self.inline_budget_ms)
    }

    /// The judging threads: `workers`, or one per core.
    pub fn worker_count(&self) -> usize {
        match self.workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        }
    }

    /// The body turns one principal may hold: `max_bodies_per_principal`,
    /// at most all of them.
    pub fn bodies_per_principal(&self) -> usize {
        self.max_bodies_per_principal
            .min(self.max_concurrent_bodies)
    }

    /// The calls one principal may have queued or judged:
    /// `max_queued_per_principal`, at most all the pool admits.
    pub fn queued_per_principal(&self) -> usize {
        self.max_queued_per_principal
            .min(self.worker_count() + self.queue_depth)
    }

    /// How many wrong credentials an address may present.
    pub(crate) fn auth_quota(&self) -> crate::throttle::Quota {
        crate::throttle::Quota {
            burst: self.auth_failures_burst,
            per_minute: self.auth_failures_per_minute,
        }
    }

    /// The limits only a restart applies, by key, for a reload's warnings.
    pub(super) fn fixed_at_start(&self) -> [(&'static str, u64); 7] {
        [
            ("max_connections", self.max_connections as u64),
            ("max_concurrent_bodies", self.max_concurrent_bodies as u64),
            (
                "max_bodies_per_principal",
                self.max_bodies_per_principal as u64,
            ),
            ("workers", self.workers as u64),
            ("queue_depth", self.queue_depth as u64),
            (
                "max_queued_per_principal",
                self.max_queued_per_principal as u64,
            ),
            ("store_busy_timeout_ms", self.store_busy_timeout_ms),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_in_range() {
        HttpLimits::default().check().unwrap();
    }

    #[test]
    fn a_principal_share_above_the_whole_is_the_whole() {
        let limits = HttpLimits {
            max_concurrent_bodies: 4,
            workers: 1,
            queue_depth: 2,
            ..HttpLimits::default()
        };
        assert_eq!(limits.bodies_per_principal(), 4);
        assert_eq!(limits.queued_per_principal(), 3);
        let defaults = HttpLimits::default();
        assert_eq!(defaults.bodies_per_principal(), 16);
    }

    #[test]
    fn a_limit_out_of_range_is_refused_naming_it() {
        let limits = HttpLimits {
            min_body_bytes_per_s: 0,
            ..HttpLimits::default()
        };
        let err = limits.check().unwrap_err();
        assert!(err.contains("server.limits.min_body_bytes_per_s"), "{err}");
    }
}
