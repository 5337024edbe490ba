//! Sign-in throttling: each source address may present a wrong credential (a
//! bearer token that is not configured, a console sign-in with one) a few
//! times in a row (`server.limits.auth_failures_burst`), then at a slow
//! steady rate (`auth_failures_per_minute`). Past that, every request of that
//! address that presents a credential is refused before the credential is
//! looked at, so that a right guess cannot be told from a wrong one.
//!
//! A token bucket per address, written here rather than taken from a
//! rate-limiting crate because of those two needs: the check before the
//! credential only *looks* at the bucket (a request that then succeeds takes
//! nothing), and the table stays bounded however many addresses fail
//! ([`MAX_SOURCES`]). IPv6 addresses are counted by their /64 network, which
//! one host is usually given whole.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Put on an answer that refused a credential its handler checked (a console
/// sign-in), so that admission (`crate::admission::admit`) counts it against the source address.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CredentialRefused;

/// Addresses tracked at most. An address whose bucket has refilled is
/// forgotten first; past that, the one closest to refilled.
pub const MAX_SOURCES: usize = 16_384;

/// How many failures an address may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    /// Failures in a row before the first refusal.
    pub burst: u32,
    /// Failures allowed a minute after that.
    pub per_minute: u32,
}

impl Quota {
    fn per_second(self) -> f64 {
        f64::from(self.per_minute.max(1)) / 60.0
    }
}

/// Where failures are counted: an IPv4 address, or an IPv6 /64.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Source(IpAddr);

impl Source {
    fn of(address: IpAddr) -> Source {
        match address {
            IpAddr::V4(_) => Source(address),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Source(IpAddr::V4(v4)),
                None => {
                    let network = u128::from(v6) & !((1u128 << 64) - 1);
                    Source(IpAddr::V6(network.into()))
                }
            },
        }
    }
}

/// Failures an address may still have, as of `at`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    allowance: f64,
    at: Instant,
}

impl Bucket {
    fn at(self, now: Instant, quota: Quota) -> f64 {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * quota.per_second();
        (self.allowance + earned).min(f64::from(quota.burst))
    }
}

/// The failures of every address that failed lately.
#[derive(Default)]
pub struct SignInThrottle {
    buckets: Mutex<HashMap<Source, Bucket>>,
}

impl SignInThrottle {
    pub fn new() -> SignInThrottle {
        SignInThrottle::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Source, Bucket>> {
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `address` may present a credential now; if not, how long
    /// until it may.
    pub fn check(&self, address: IpAddr, quota: Quota, now: Instant) -> Result<(), Duration> {
        match self.lock().get(&Source::of(address)) {
            Some(bucket) => match bucket.at(now, quota) {
                left if left >= 1.0 => Ok(()),
                left => Err(until_one(left, quota)),
            },
            None => Ok(()),
        }
    }

    /// Counts a failure of `address`; when it used the last of the
    /// allowance, how long the address is now refused.
    pub fn failed(&self, address: IpAddr, quota: Quota, now: Instant) -> Option<Duration> {
        let source = Source::of(address);
        let mut buckets = self.lock();
        if !buckets.contains_key(&source) && buckets.len() >= MAX_SOURCES {
            make_room(&mut buckets, quota, now);
        }
        let bucket = buckets.entry(source).or_insert(Bucket {
            allowance: f64::from(quota.burst),
            at: now,
        });
        let left = (bucket.at(now, quota) - 1.0).max(0.0);
        *bucket = Bucket {
            allowance: left,
            at: now,
        };
        (left < 1.0).then(|| until_one(left, quota))
    }

    /// Addresses tracked now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// How long until an allowance of `left` reaches one failure.
fn until_one(left: f64, quota: Quota) -> Duration {
    Duration::from_secs_f64(((1.0 - left) / quota.per_second()).max(0.0))
}

/// Forgets every address whose allowance has refilled (it is as if it never
/// failed); if none has, the one closest to refilled.
fn make_room(buckets: &mut HashMap<Source, Bucket>, quota: Quota, now: Instant) {
    let full = f64::from(quota.burst);
    buckets.retain(|_, bucket| bucket.at(now, quota) < full);
    if buckets.len() >= MAX_SOURCES {
        let closest = buckets
            .iter()
            .max_by(|a, b| a.1.at(now, quota).total_cmp(&b.1.at(now, quota)))
            .map(|(source, _)| *source);
        if let Some(source) = closest {
            buckets.remove(&source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: Quota = Quota {
        burst: 3,
        per_minute: 6,
    };

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    /// A wait, to the nearest millisecond.
    fn ms(wait: Duration) -> u128 {
        (wait.as_secs_f64() * 1000.0).round() as u128
    }

    #[test]
    fn an_address_is_refused_after_its_burst_and_allowed_again_as_it_refills() {
        let throttle = SignInThrottle::new();
        let (a, t0) = (ip("192.0.2.1"), Instant::now());
        assert_eq!(throttle.failed(a, QUOTA, t0), None);
        assert_eq!(throttle.failed(a, QUOTA, t0), None);
        assert_eq!(throttle.check(a, QUOTA, t0), Ok(()));
        // The third uses the last of the burst: one failure per 10 s after.
        assert_eq!(throttle.failed(a, QUOTA, t0).map(ms), Some(10_000));
        assert_eq!(throttle.check(a, QUOTA, t0).map_err(ms), Err(10_000));
        let later = t0 + Duration::from_secs(4);
        assert_eq!(throttle.check(a, QUOTA, later).map_err(ms), Err(6_000));
        assert_eq!(
            throttle.check(a, QUOTA, t0 + Duration::from_secs(10)),
            Ok(())
        );
    }

    #[test]
    fn a_check_takes_nothing_from_the_allowance() {
        let throttle = SignInThrottle::new();
        let (a, now) = (ip("192.0.2.1"), Instant::now());
        throttle.failed(a, QUOTA, now);
        for _ in 0..100 {
            assert_eq!(throttle.check(a, QUOTA, now), Ok(()));
        }
        assert_eq!(throttle.failed(a, QUOTA, now), None);
    }

    #[test]
    fn addresses_are_counted_apart_and_ipv6_by_its_64_network() {
        let throttle = SignInThrottle::new();
        let now = Instant::now();
        for _ in 0..3 {
            throttle.failed(ip("2001:db8:1:2::1"), QUOTA, now);
        }
        assert!(
            throttle
                .check(ip("2001:db8:1:2::ffff"), QUOTA, now)
                .is_err()
        );
        assert_eq!(throttle.check(ip("2001:db8:1:3::1"), QUOTA, now), Ok(()));
        assert_eq!(throttle.check(ip("192.0.2.1"), QUOTA, now), Ok(()));
        for _ in 0..3 {
            throttle.failed(ip("::ffff:192.0.2.9"), QUOTA, now);
        }
        assert!(throttle.check(ip("192.0.2.9"), QUOTA, now).is_err());
    }

    #[test]
    fn the_table_stays_bounded_however_many_addresses_fail() {
        let throttle = SignInThrottle::new();
        let now = Instant::now();
        for i in 0..(MAX_SOURCES as u32 + 100) {
            throttle.failed(IpAddr::V4(i.into()), QUOTA, now);
        }
        assert_eq!(throttle.len(), MAX_SOURCES);
        // Refilled addresses are forgotten first.
        let later = now + Duration::from_secs(60);
        throttle.failed(ip("198.51.100.1"), QUOTA, later);
        assert_eq!(throttle.len(), 1);
    }
}
