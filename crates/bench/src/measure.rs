//! Timing calls one by one: percentiles, mean and throughput, and the markdown
//! row the benchmarks print.

use std::time::{Duration, Instant};

use serde::Serialize;

/// One measured scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub scenario: String,
    pub threads: usize,
    pub calls: usize,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    /// Calls per second over all threads.
    pub throughput: f64,
}

/// The calls made before a scenario of `calls` is timed: a tenth of them,
/// at least ten.
fn warm_up(calls: usize, op: &dyn Fn()) {
    for _ in 0..(calls / 10).max(10) {
        op();
    }
}

/// Runs `op` `calls` times on each of `threads` threads after a warm-up, timing
/// every call.
pub fn measure(
    scenario: &str,
    threads: usize,
    calls: usize,
    op: &(dyn Fn() + Sync),
) -> Measurement {
    warm_up(calls, op);
    let started = Instant::now();
    let samples: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut local = Vec::with_capacity(calls);
                    for _ in 0..calls {
                        let t = Instant::now();
                        op();
                        local.push(t.elapsed());
                    }
                    local
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("benchmark thread"))
            .collect()
    });
    summary(scenario, threads, samples, Some(started.elapsed()))
}

/// The measurement of timed calls: percentiles, mean and the throughput over
/// `wall` (without it, over the calls' own time, as when calls of two kinds
/// alternate).
pub fn summary(
    scenario: &str,
    threads: usize,
    mut samples: Vec<Duration>,
    wall: Option<Duration>,
) -> Measurement {
    samples.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |q: f64| us(samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)]);
    let wall = wall.unwrap_or_else(|| samples.iter().sum());
    Measurement {
        scenario: scenario.to_string(),
        threads,
        calls: samples.len(),
        p50_us: at(0.50),
        p99_us: at(0.99),
        mean_us: samples.iter().map(|d| us(*d)).sum::<f64>() / samples.len() as f64,
        throughput: samples.len() as f64 / wall.as_secs_f64(),
    }
}

/// The markdown table row for a measurement.
pub fn markdown_row(m: &Measurement) -> String {
    format!(
        "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.0} |",
        m.scenario, m.threads, m.calls, m.p50_us, m.p99_us, m.mean_us, m.throughput
    )
}

/// The markdown table header for measurements.
pub const MARKDOWN_HEADER: &str = "| scenario | threads | calls | p50 µs | p99 µs | mean µs | calls/s |\n|---|---|---|---|---|---|---|";

/// What the kernel says of the calling thread (`/proc/thread-self/schedstat`):
/// nanoseconds on a CPU, nanoseconds waiting for one, and times scheduled in.
// Used by the scale scenarios.
fn schedstat() -> Option<[u64; 3]> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some([fields.next()??, fields.next()??, fields.next()??])
}

/// Like [`measure`] on one thread, and besides the calls the kernel did not
/// take the CPU from (no wait for a CPU, no new time slice during the call):
/// a tail the machine causes shows in the first and not in the second, a tail
/// the code causes in both. `None` for the second where the kernel does not
/// say (not Linux) or no call ran undisturbed.
pub fn measure_undisturbed(
    scenario: &str,
    calls: usize,
    op: &dyn Fn(),
) -> (Measurement, Option<Measurement>) {
    warm_up(calls, op);
    let started = Instant::now();
    let mut all = Vec::with_capacity(calls);
    let mut undisturbed = Vec::with_capacity(calls);
    let mut known = true;
    for _ in 0..calls {
        let before = schedstat();
        let t = Instant::now();
        op();
        let elapsed = t.elapsed();
        let after = schedstat();
        all.push(elapsed);
        match (before, after) {
            (Some(b), Some(a)) if a[1] == b[1] && a[2] == b[2] => undisturbed.push(elapsed),
            (Some(_), Some(_)) => {}
            _ => known = false,
        }
    }
    let wall = started.elapsed();
    let rest = (known && !undisturbed.is_empty()).then(|| {
        let name = format!("{scenario} (the {} not descheduled)", undisturbed.len());
        summary(&name, 1, undisturbed, None)
    });
    (summary(scenario, 1, all, Some(wall)), rest)
}

/// Times the calls of several scenarios on one thread in alternating blocks
/// of `block` calls each (`calls` per scenario in all), running `between`
/// after each block: every scenario then meets the same states of the
/// machine. Here the speed of a thread moves by half for tens of
/// milliseconds at a time (the virtual machine's host, by all signs), which
/// decided comparisons of scenarios measured one after the other, each on
/// its own thread.
pub fn measure_alternating(
    scenarios: &[(&str, &dyn Fn())],
    calls: usize,
    block: usize,
    between: &dyn Fn(usize),
) -> Vec<Measurement> {
    let block = block.clamp(1, calls.max(1));
    for (i, (_, op)) in scenarios.iter().enumerate() {
        warm_up(calls, *op);
        between(i);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(calls); scenarios.len()];
    let mut done = 0;
    while done < calls {
        let n = block.min(calls - done);
        for (i, (_, op)) in scenarios.iter().enumerate() {
            for _ in 0..n {
                let t = Instant::now();
                op();
                samples[i].push(t.elapsed());
            }
            between(i);
        }
        done += n;
    }
    scenarios
        .iter()
        .zip(samples)
        .map(|((name, _), samples)| summary(name, 1, samples, None))
        .collect()
}
