//! The daemon's metrics, served at `/metrics` in the Prometheus text format:
//! decisions by verdict, deciding stage and reason code; latency histograms;
//! provider failures by detail code; pool usage; reloads and swaps; load,
//! admission refusals and wrong credentials; MCP calls by server and tool.

use std::collections::HashSet;
use std::sync::RwLock;
use std::time::{Duration, SystemTime};

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

use warden::Evaluation;
use warden::Snapshot;
use warden_types::decision::{Reason, Verdict};

/// Distinct reason codes tracked at most; the rest count as `other`, so a
/// provider inventing codes cannot grow the metrics without bound.
const MAX_REASON_CODES: usize = 256;

/// Distinct MCP server and tool pairs tracked at most; the rest count as
/// `other`: any agent may name a server in a call's context.
const MAX_MCP_TOOLS: usize = 256;

/// The label for what falls past a cap.
const OTHER: &str = "other";

/// A label set that grows to a cap, then folds every new value into `other`.
struct Bounded {
    known: RwLock<HashSet<String>>,
    cap: usize,
}

impl Bounded {
    fn new(cap: usize) -> Bounded {
        Bounded {
            known: RwLock::new(HashSet::new()),
            cap,
        }
    }

    /// Whether `value` is a label: known, or let in while there is room.
    fn admit(&self, value: &str) -> bool {
        if self
            .known
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(value)
        {
            return true;
        }
        let mut known = self.known.write().unwrap_or_else(|e| e.into_inner());
        if known.len() < self.cap {
            known.insert(value.to_string());
            true
        } else {
            known.contains(value)
        }
    }
}

/// The daemon's Prometheus metrics (`GET /metrics`): requests, decisions,
/// providers, admission and load.
pub struct Metrics {
    registry: Registry,
    decisions: IntCounterVec,
    reasons: IntCounterVec,
    provider_verdicts: IntCounterVec,
    provider_failures: IntCounterVec,
    evaluate_seconds: HistogramVec,
    provider_seconds: HistogramVec,
    http_requests: IntCounterVec,
    http_seconds: HistogramVec,
    pool_instances: IntGaugeVec,
    pool_capacity: IntGaugeVec,
    generation: IntGauge,
    reloads: IntCounterVec,
    reload_failures: IntCounterVec,
    last_reload_ok: IntGauge,
    last_reload_success: IntGauge,
    log_write_errors: IntCounter,
    load: IntGaugeVec,
    auth_failures: IntCounterVec,
    auth_throttled: IntCounterVec,
    admission_refused: IntCounterVec,
    notify: super::notify::Counters,
    known_codes: Bounded,
    mcp_calls: IntCounterVec,
    known_mcp_tools: Bounded,
    shadow_shed: IntCounter,
    judged_at_once: IntCounter,
    shadow_differences: IntCounterVec,
    telemetry: super::telemetry::Counters,
}

/// How loaded the daemon is right now.
#[derive(Clone, Copy, Debug, Default)]
pub struct Load {
    /// Connections open.
    pub connections: usize,
    /// `server.limits.max_connections`.
    pub max_connections: usize,
    /// Calls queued for a judging thread or being judged.
    pub jobs: usize,
    /// Judging threads.
    pub workers: usize,
    /// Body turns held (requests whose body is read or judged).
    pub bodies: usize,
    /// `server.limits.max_concurrent_bodies`.
    pub max_bodies: usize,
}

/// 10 µs to ~5 s, doubling.
fn latency_buckets() -> Vec<f64> {
    prometheus::exponential_buckets(10e-6, 2.0, 20).expect("valid buckets")
}

impl Metrics {
    /// The counters the telemetry exporter and its queue increment.
    pub fn telemetry_counters(&self) -> super::telemetry::Counters {
        self.telemetry.clone()
    }

    /// The counters the webhook notifier increments.
    pub fn notify_counters(&self) -> super::notify::Counters {
        self.notify.clone()
    }

    /// Every counter at zero.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
            let c = IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric");
            registry
                .register(Box::new(c.clone()))
                .expect("unique metric");
            c
        }
        fn gauge(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
            let g = IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric");
            registry
                .register(Box::new(g.clone()))
                .expect("unique metric");
            g
        }
        fn histogram(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
            let h = HistogramVec::new(
                HistogramOpts::new(name, help).buckets(latency_buckets()),
                labels,
            )
            .expect("valid metric");
            registry
                .register(Box::new(h.clone()))
                .expect("unique metric");
            h
        }
        fn single(registry: &Registry, name: &str, help: &str) -> IntGauge {
            let g = IntGauge::new(name, help).expect("valid metric");
            registry
                .register(Box::new(g.clone()))
                .expect("unique metric");
            g
        }
        let log_write_errors = IntCounter::new(
            "warden_decision_log_write_errors_total",
            "Decision log lines that could not be written.",
        )
        .expect("valid metric");
        registry
            .register(Box::new(log_write_errors.clone()))
            .expect("unique metric");
        let plain = |name: &str, help: &str| {
            let c = IntCounter::new(name, help).expect("valid metric");
            registry
                .register(Box::new(c.clone()))
                .expect("unique metric");
            c
        };
        let notify = super::notify::Counters {
            sent: plain(
                "warden_notify_sent_total",
                "Pause notices a webhook accepted (hitl_approval.notify).",
            ),
            failed: plain(
                "warden_notify_failed_total",
                "Pause notices given up after every try.",
            ),
            retried: plain(
                "warden_notify_retries_total",
                "Tries of a pause notice after a failed one.",
            ),
        };
        let start = single(
            &registry,
            "warden_start_time_seconds",
            "When the daemon started, in seconds since the epoch.",
        );
        start.set(unix_seconds(SystemTime::now()));
        let shadow_shed = plain(
            "warden_shadow_shed_total",
            "Shadow judgments (mode: shadow) shed unjudged: the shadow queue was full, or they waited in it too long.",
        );
        let judged_at_once = plain(
            "warden_judged_at_once_total",
            "Calls judged on the async thread that read them, with no hand-off to a judging thread (server.limits.inline_budget_ms).",
        );
        let telemetry = super::telemetry::Counters {
            exported: counter(
                &registry,
                "warden_telemetry_exported_total",
                "Spans and log records the OTLP collector accepted, by signal (traces, logs).",
                &["signal"],
            ),
            dropped: counter(
                &registry,
                "warden_telemetry_dropped_total",
                "Traces and decision lines dropped because the telemetry queue was full (telemetry.buffer), by signal; the decision log file still has every line.",
                &["signal"],
            ),
            failed: counter(
                &registry,
                "warden_telemetry_failed_total",
                "Spans and log records the OTLP collector refused or did not answer for in time, by signal.",
                &["signal"],
            ),
        };
        Metrics {
            notify,
            telemetry,
            shadow_shed,
            judged_at_once,
            shadow_differences: counter(
                &registry,
                "warden_shadow_differences_total",
                "Calls whose shadow verdict differs from the live one, by transition (from the live verdict to the shadow's).",
                &["from", "to"],
            ),
            decisions: counter(
                &registry,
                "warden_decisions_total",
                "Decisions, by verdict and by the stage that decided.",
                &["verdict", "decided_by"],
            ),
            mcp_calls: counter(
                &registry,
                "warden_mcp_calls_total",
                "Calls judged for an MCP gateway (warden mcp), by server, tool and verdict; pairs past the first 256 count as server and tool \"other\".",
                &["server", "tool", "verdict"],
            ),
            known_mcp_tools: Bounded::new(MAX_MCP_TOOLS),
            reasons: counter(
                &registry,
                "warden_decision_reasons_total",
                "Reason codes given with decisions, by verdict.",
                &["verdict", "code"],
            ),
            provider_verdicts: counter(
                &registry,
                "warden_provider_verdicts_total",
                "Opinions given by each provider, by verdict (failures included).",
                &["provider", "verdict"],
            ),
            provider_failures: counter(
                &registry,
                "warden_provider_failures_total",
                "Provider failures, by detail code (warden.timeout, warden.trap, ...).",
                &["provider", "detail"],
            ),
            evaluate_seconds: histogram(
                &registry,
                "warden_evaluate_duration_seconds",
                "Time to judge one call through the whole pipeline.",
                &[],
            ),
            provider_seconds: histogram(
                &registry,
                "warden_provider_duration_seconds",
                "Time one provider took on one call.",
                &["provider"],
            ),
            http_requests: counter(
                &registry,
                "warden_http_requests_total",
                "HTTP requests, by route and status.",
                &["route", "status"],
            ),
            http_seconds: histogram(
                &registry,
                "warden_http_request_duration_seconds",
                "Time to answer one HTTP request, body included.",
                &["route"],
            ),
            pool_instances: gauge(
                &registry,
                "warden_pool_instances",
                "Warm instances of each provider of the live set: live (idle or in use) and idle.",
                &["provider", "state"],
            ),
            pool_capacity: gauge(
                &registry,
                "warden_pool_capacity",
                "The most instances each provider of the live set may have.",
                &["provider"],
            ),
            generation: single(
                &registry,
                "warden_provider_set_generation",
                "The generation of the provider set serving calls.",
            ),
            reloads: counter(
                &registry,
                "warden_reloads_total",
                "Reload attempts, by trigger (admin, signal, watch; promote and rollback for those swaps) and outcome (swapped, failed).",
                &["trigger", "outcome"],
            ),
            reload_failures: counter(
                &registry,
                "warden_reload_failures_total",
                "Failed reloads, by what failed.",
                &["error"],
            ),
            last_reload_ok: single(
                &registry,
                "warden_config_last_reload_successful",
                "1 if the last reload swapped in the new provider set, 0 if it failed.",
            ),
            last_reload_success: single(
                &registry,
                "warden_config_last_reload_success_timestamp_seconds",
                "When a provider set was last swapped in (or first loaded).",
            ),
            log_write_errors,
            load: gauge(
                &registry,
                "warden_daemon_load",
                "Open connections and their cap, and calls queued or being judged and the judging threads.",
                &["what"],
            ),
            auth_failures: counter(
                &registry,
                "warden_auth_failures_total",
                "Wrong credentials presented (bearer tokens, console sign-ins), by credential.",
                &["credential"],
            ),
            auth_throttled: counter(
                &registry,
                "warden_auth_throttled_total",
                "Requests refused 429 because their source address presented too many wrong credentials, by credential.",
                &["credential"],
            ),
            admission_refused: counter(
                &registry,
                "warden_admission_refused_total",
                "Requests refused (503) or calls denied (warden.overloaded) for want of room, by the limit reached.",
                &["limit"],
            ),
            known_codes: Bounded::new(MAX_REASON_CODES),
            registry,
        }
    }

    /// Counts one decision by verdict, deciding stage and reason codes.
    pub fn decision(&self, verdict: Verdict, decided_by: Option<&str>, reasons: &[Reason]) {
        let verdict = verdict.as_str();
        self.decisions
            .with_label_values(&[verdict, decided_by.unwrap_or("none")])
            .inc();
        for reason in reasons {
            let code = self.code_label(&reason.code);
            self.reasons.with_label_values(&[verdict, code]).inc();
        }
    }

    /// Counts one evaluated call, with what each provider said and how long it took.
    pub fn observe(&self, e: &Evaluation) {
        self.decision(e.verdict, e.decided_by.as_deref(), &e.reasons);
        self.evaluate_seconds
            .with_label_values(&[] as &[&str])
            .observe(micros(e.duration_us));
        for stage in &e.stages {
            let Some(provider) = stage.stage.strip_prefix("provider:") else {
                continue;
            };
            self.provider_verdicts
                .with_label_values(&[provider, stage.verdict.as_str()])
                .inc();
            self.provider_seconds
                .with_label_values(&[provider])
                .observe(micros(stage.duration_us));
            if let Some(detail) = stage.error_detail.as_deref() {
                self.provider_failures
                    .with_label_values(&[provider, detail])
                    .inc();
            }
        }
    }

    fn code_label<'a>(&self, code: &'a str) -> &'a str {
        if self.known_codes.admit(code) {
            code
        } else {
            OTHER
        }
    }

    /// Counts one call judged for an MCP gateway (`context.mcp_server` set):
    /// by server, tool (the name's part after `mcp__<server>__`, else the
    /// whole name) and verdict.
    pub fn mcp_call(&self, server: &str, tool_name: &str, verdict: Verdict) {
        let (server, tool) = self.mcp_labels(server, tool_name);
        self.mcp_calls
            .with_label_values(&[server, tool, verdict.as_str()])
            .inc();
    }

    fn mcp_labels<'a>(&self, server: &'a str, tool_name: &'a str) -> (&'a str, &'a str) {
        let tool = tool_name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_prefix(server))
            .and_then(|rest| rest.strip_prefix("__"))
            .unwrap_or(tool_name);
        // The pair as one key: a server and a tool name joined by a byte
        // neither label may hold ambiguously.
        if self.known_mcp_tools.admit(&format!("{server}\u{0}{tool}")) {
            (server, tool)
        } else {
            (OTHER, OTHER)
        }
    }

    /// Counts one HTTP request.
    pub fn http(&self, route: &str, status: u16, took: Duration) {
        self.http_requests
            .with_label_values(&[route, status_label(status)])
            .inc();
        self.http_seconds
            .with_label_values(&[route])
            .observe(took.as_secs_f64());
    }

    /// A wrong credential of the kind `credential` (`bearer`, `console`).
    pub fn auth_failed(&self, credential: &str) {
        self.auth_failures.with_label_values(&[credential]).inc();
    }

    /// A request refused 429 for its address's wrong credentials.
    pub fn auth_throttled(&self, credential: &str) {
        self.auth_throttled.with_label_values(&[credential]).inc();
    }

    /// A request or call refused for want of room under `limit`.
    pub fn admission_refused(&self, limit: &str) {
        self.admission_refused.with_label_values(&[limit]).inc();
    }

    /// A provider set went live (at start or by a swap).
    pub fn swapped(&self, trigger: Option<&str>, generation: u64) {
        if let Some(trigger) = trigger {
            self.reloads.with_label_values(&[trigger, "swapped"]).inc();
        }
        self.generation.set(generation as i64);
        self.last_reload_ok.set(1);
        self.last_reload_success
            .set(unix_seconds(SystemTime::now()));
    }

    /// A reload failed; the old set keeps serving.
    pub fn reload_failed(&self, trigger: &str, error: &str) {
        self.reloads.with_label_values(&[trigger, "failed"]).inc();
        self.reload_failures.with_label_values(&[error]).inc();
        self.last_reload_ok.set(0);
    }

    /// Records how loaded the daemon is, for the next render.
    pub fn load(&self, load: Load) {
        for (what, value) in [
            ("connections", load.connections),
            ("max_connections", load.max_connections),
            ("jobs", load.jobs),
            ("workers", load.workers),
            ("bodies", load.bodies),
            ("max_bodies", load.max_bodies),
        ] {
            self.load.with_label_values(&[what]).set(value as i64);
        }
    }

    /// A call was judged on its async thread (`server.limits.inline_budget_ms`).
    pub fn judged_at_once(&self) {
        self.judged_at_once.inc();
    }

    /// Brings the shadow counters up to the library's counts (which only grow).
    pub fn shadow(&self, counts: &warden::ShadowCounts) {
        let counted = self.shadow_shed.get();
        if counts.shed > counted {
            self.shadow_shed.inc_by(counts.shed - counted);
        }
        for ((from, to), n) in &counts.differences {
            let c = self
                .shadow_differences
                .with_label_values(&[from.as_str(), to.as_str()]);
            if *n > c.get() {
                c.inc_by(n - c.get());
            }
        }
    }

    /// The metrics as Prometheus text, with the pools of the live set and the
    /// log's write errors read now.
    pub fn render(&self, live: &Snapshot, log_write_errors: u64) -> (String, String) {
        self.pool_instances.reset();
        self.pool_capacity.reset();
        for provider in live.providers().providers() {
            let usage = provider.pool_usage();
            let name = provider.name();
            self.pool_capacity
                .with_label_values(&[name])
                .set(usage.capacity as i64);
            self.pool_instances
                .with_label_values(&[name, "live"])
                .set(usage.live as i64);
            self.pool_instances
                .with_label_values(&[name, "idle"])
                .set(usage.idle as i64);
        }
        let counted = self.log_write_errors.get();
        if log_write_errors > counted {
            self.log_write_errors.inc_by(log_write_errors - counted);
        }
        let encoder = TextEncoder::new();
        let mut out = Vec::new();
        if let Err(err) = encoder.encode(&self.registry.gather(), &mut out) {
            tracing::error!(%err, "cannot encode the metrics");
        }
        (
            encoder.format_type().to_string(),
            String::from_utf8_lossy(&out).into_owned(),
        )
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

fn micros(us: u64) -> f64 {
    us as f64 / 1e6
}

fn unix_seconds(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn status_label(status: u16) -> &'static str {
    match status {
        200 => "200",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        405 => "405",
        413 => "413",
        415 => "415",
        422 => "422",
        429 => "429",
        500 => "500",
        503 => "503",
        s if s < 300 => "2xx",
        s if s < 500 => "4xx",
        _ => "5xx",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_past_the_cap_count_as_other() {
        let metrics = Metrics::new();
        for i in 0..MAX_REASON_CODES {
            assert_eq!(
                metrics.code_label(&format!("x.code_{i}")),
                format!("x.code_{i}")
            );
        }
        assert_eq!(metrics.code_label("x.one_too_many"), "other");
        assert_eq!(metrics.code_label("x.code_0"), "x.code_0");
    }

    #[test]
    fn mcp_tools_are_labelled_by_server_and_tool_and_past_the_cap_as_other() {
        let metrics = Metrics::new();
        assert_eq!(
            metrics.mcp_labels("fs", "mcp__fs__read_file"),
            ("fs", "read_file")
        );
        // A name not of the server's form keeps its whole self.
        assert_eq!(metrics.mcp_labels("fs", "bash"), ("fs", "bash"));
        for i in 2..MAX_MCP_TOOLS {
            let name = format!("mcp__fs__t{i}");
            assert_eq!(metrics.mcp_labels("fs", &name), ("fs", &name[9..]));
        }
        assert_eq!(
            metrics.mcp_labels("fs", "mcp__fs__one_too_many"),
            ("other", "other")
        );
        assert_eq!(
            metrics.mcp_labels("fs", "mcp__fs__read_file"),
            ("fs", "read_file")
        );
    }

    #[test]
    fn a_failed_reload_clears_the_success_gauge_and_a_swap_sets_it() {
        let metrics = Metrics::new();
        metrics.reload_failed("admin", "load");
        assert_eq!(metrics.last_reload_ok.get(), 0);
        metrics.swapped(Some("watch"), 7);
        assert_eq!(metrics.last_reload_ok.get(), 1);
        assert_eq!(metrics.generation.get(), 7);
    }
}
