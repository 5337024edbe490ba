//! OpenTelemetry: a trace per judged call and, where asked, the decision
//! log's lines as log records, sent over OTLP/HTTP (protobuf) to a
//! collector (`telemetry:` in the configuration; off by default, and then
//! nothing here runs).
//!
//! A call's trace is an `execute_tool {tool}` span (the GenAI semantic
//! conventions' name and attributes where they exist) with child spans for
//! the approval store's check and each pipeline stage, and Warden's own
//! attributes under `warden.`; a model response through the approval gate
//! is a `warden tool_calls` span with an `execute_tool` span per call. It carries
//! no tool argument and no reason message (which may quote one): only names,
//! ids, verdicts, codes and the deciding rule's text and place in the
//! configuration. A harness's `traceparent` continues its trace.
//!
//! Spans and lines wait for the exporter in one bounded queue; when it is
//! full, what does not fit is counted (`warden_telemetry_dropped_total`)
//! and a warning is logged, never dropped silently. The decision log file
//! stays the source of truth.

mod export;
pub mod otlp;
mod queue;
pub mod traceparent;

pub use self::export::Counters;

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use http::HeaderMap;
use serde::Deserialize;
use warden::Evaluation;
use warden_types::approval::GateOutcome;
use warden_types::evaluation::Risk;
use warden_types::request::ToolCall;

use self::otlp::{Attribute, Kind, Span, Value};
use self::queue::{Item, Queue};
use self::traceparent::TraceParent;

/// `telemetry:` in the configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP base address (`http://127.0.0.1:4318`):
    /// traces go to `/v1/traces` under it, log records to `/v1/logs`.
    pub otlp_endpoint: String,
    /// `service.name` of everything sent.
    #[serde(default = "default_service_name")]
    pub service_name: String,
    /// The share of calls traced, 0.0-1.0, where the harness sent no
    /// `traceparent` (one that does decides by its own sampled flag).
    #[serde(default = "one")]
    pub sample_ratio: f64,
    /// Also send each decision log line as a log record.
    #[serde(default)]
    pub logs: bool,
    /// How many traces and lines may wait for the exporter; past that they
    /// are counted and dropped.
    #[serde(default = "default_buffer")]
    pub buffer: usize,
    /// How often the exporter sends what waits, in milliseconds.
    #[serde(default = "default_interval")]
    pub export_interval_ms: u64,
}

fn default_service_name() -> String {
    "warden".into()
}

fn one() -> f64 {
    1.0
}

fn default_buffer() -> usize {
    2048
}

fn default_interval() -> u64 {
    1000
}

impl TelemetryConfig {
    /// Checks what the types alone cannot; the error names the key.
    pub fn check(&self) -> Result<(), (String, String)> {
        export::Endpoint::parse(&self.otlp_endpoint)
            .map_err(|message| ("otlp_endpoint".to_string(), message))?;
        if self.service_name.trim().is_empty() {
            return Err(("service_name".into(), "must not be empty".into()));
        }
        if !(0.0..=1.0).contains(&self.sample_ratio) {
            return Err((
                "sample_ratio".into(),
                format!("{} is outside 0.0-1.0", self.sample_ratio),
            ));
        }
        if !(1..=1_000_000).contains(&self.buffer) {
            return Err((
                "buffer".into(),
                format!("{} is out of range 1..=1000000", self.buffer),
            ));
        }
        if !(10..=60_000).contains(&self.export_interval_ms) {
            return Err((
                "export_interval_ms".into(),
                format!("{} is out of range 10..=60000", self.export_interval_ms),
            ));
        }
        Ok(())
    }
}

/// The daemon's telemetry, when `telemetry:` is configured.
pub struct Telemetry {
    sample_ratio: f64,
    logs: bool,
    queue: Arc<Queue>,
    counters: Counters,
    /// When a drop was last warned of, in seconds since the epoch.
    warned_at: AtomicU64,
    exporter: Mutex<Option<JoinHandle<()>>>,
}

impl Telemetry {
    /// Starts the exporter's thread; `node_name` is `service.instance.id`.
    pub fn start(
        config: &TelemetryConfig,
        node_name: &str,
        counters: Counters,
    ) -> std::io::Result<Arc<Telemetry>> {
        let endpoint = export::Endpoint::parse(&config.otlp_endpoint)
            .map_err(|message| std::io::Error::new(std::io::ErrorKind::InvalidInput, message))?;
        let resource = otlp::resource(&[
            ("service.name", Value::Str(&config.service_name)),
            ("service.instance.id", Value::Str(node_name)),
            ("service.version", Value::Str(env!("CARGO_PKG_VERSION"))),
        ]);
        // Every counter shows, at zero, from the start: an alarm on a rise
        // needs the series to exist.
        for counter in [&counters.exported, &counters.dropped, &counters.failed] {
            for signal in ["traces", "logs"] {
                counter.with_label_values(&[signal]);
            }
        }
        let queue = Arc::new(Queue::new(config.buffer, export::MAX_BATCH));
        let waiting = queue.clone();
        let exporter = export::Exporter {
            endpoint,
            resource,
            interval: Duration::from_millis(config.export_interval_ms),
            counters: counters.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("warden-telemetry".into())
            .spawn(move || exporter.run(waiting))?;
        Ok(Arc::new(Telemetry {
            sample_ratio: config.sample_ratio,
            logs: config.logs,
            queue,
            counters,
            warned_at: AtomicU64::new(0),
            exporter: Mutex::new(Some(thread)),
        }))
    }

    /// Whether decision log lines are sent too.
    pub fn sends_logs(&self) -> bool {
        self.logs
    }

    /// Sends `call`'s trace, if it is sampled: the request's span from
    /// `request`'s start to now, and a span per stage of `evaluation`. The
    /// trace continues the request's `traceparent` header, or else the
    /// call's `context.traceparent` (an MCP request's `_meta.traceparent`,
    /// which `warden mcp` passes on).
    pub fn trace(
        &self,
        request: &RequestTrace,
        call: &ToolCall,
        evaluation: &Evaluation,
        decision_id: &str,
    ) {
        let parent = request.parent.or_else(|| {
            call.context
                .traceparent
                .as_deref()
                .and_then(TraceParent::parse)
        });
        let Some((trace_id, parent)) = self.sampled(parent) else {
            return;
        };
        let end_ns = request.start_ns + nanos(request.clock.elapsed());
        let root_id = span_id();
        let name = format!("execute_tool {}", call.tool_name);
        // The deciding rules' places, `file:line`.
        let places: Vec<String> = evaluation
            .cause
            .iter()
            .flat_map(|cause| &cause.rules)
            .filter_map(|r| Some(format!("{}:{}", r.file.as_deref()?, r.line?)))
            .collect();
        let mut encoded = Vec::with_capacity(1024);
        let mut spans = 1 + evaluation.stages.len();
        let attributes = call_attributes(call, evaluation, decision_id, &places);
        let root = request.span(trace_id, root_id, parent, &name, end_ns, attributes);
        otlp::span(&mut encoded, &root);
        // On the judging thread, the approval store's check of the thread
        // came first (what judging took beyond the pipeline's own time),
        // then the stages, one after another, each for its measured time.
        let mut at = end_ns;
        if let Some((start, took)) = request.judging() {
            at = start;
            let store = took.saturating_sub(evaluation.duration_us.saturating_mul(1000));
            let attributes = vec![("warden.stage", Value::Str("approval_store"))];
            let span = step(
                trace_id,
                root_id,
                "approval store",
                (at, at + store),
                attributes,
            );
            otlp::span(&mut encoded, &span);
            spans += 1;
            at += store;
        }
        for stage in &evaluation.stages {
            let took = stage.duration_us.saturating_mul(1000);
            let mut attributes: Vec<Attribute> = vec![
                ("warden.stage", Value::Str(&stage.stage)),
                ("warden.verdict", Value::Str(stage.verdict.as_str())),
                (
                    "warden.reason_codes",
                    Value::Strs(stage.codes.iter().map(String::as_str).collect()),
                ),
            ];
            if let Some(digest) = &stage.digest {
                attributes.push(("warden.provider.digest", Value::Str(digest)));
            }
            if let Some(fuel) = stage.fuel_used {
                attributes.push((
                    "warden.provider.fuel_used",
                    Value::Int(i64::try_from(fuel).unwrap_or(i64::MAX)),
                ));
            }
            if let Some(risk) = stage.classifier.as_ref().and_then(|c| c.risk) {
                let risk = match risk {
                    Risk::Low => "low",
                    Risk::High => "high",
                };
                attributes.push(("warden.classifier.risk", Value::Str(risk)));
            }
            let end = (at + took).min(end_ns.max(at));
            let mut span = step(trace_id, root_id, &stage.stage, (at, end), attributes);
            span.error = stage.error_detail.as_deref();
            otlp::span(&mut encoded, &span);
            at += took;
        }
        self.enqueue(Item::Trace { spans, encoded });
    }

    /// Sends a model response's trace through the approval gate, if it is
    /// sampled: the request's span (`warden tool_calls`) from `request`'s
    /// start to now, and an `execute_tool {tool}` span per call, each over
    /// the judging thread's time for the whole response (the gate times no
    /// call apart).
    pub fn trace_gate(&self, request: &RequestTrace, outcome: &GateOutcome) {
        let Some((trace_id, parent)) = self.sampled(request.parent) else {
            return;
        };
        let end_ns = request.start_ns + nanos(request.clock.elapsed());
        let root_id = span_id();
        let mut attributes: Vec<Attribute> = vec![
            ("gen_ai.conversation.id", Value::Str(&outcome.thread_id)),
            ("warden.run.id", Value::Str(&outcome.run_id)),
            ("warden.run_state", Value::Str(outcome.run_state.as_str())),
            (
                "warden.generation",
                Value::Int(i64::try_from(outcome.generation).unwrap_or(i64::MAX)),
            ),
        ];
        if let Some(approval_id) = &outcome.approval_id {
            attributes.push(("warden.approval_id", Value::Str(approval_id)));
        }
        let mut encoded = Vec::with_capacity(512 * (1 + outcome.calls.len()));
        let name = "warden tool_calls";
        let root = request.span(trace_id, root_id, parent, name, end_ns, attributes);
        otlp::span(&mut encoded, &root);
        let judged = request
            .judging()
            .map_or((end_ns, end_ns), |(start, took)| (start, start + took));
        let names: Vec<String> = outcome
            .calls
            .iter()
            .map(|call| format!("execute_tool {}", call.name))
            .collect();
        for (call, name) in outcome.calls.iter().zip(&names) {
            let mut attributes: Vec<Attribute> = vec![
                ("gen_ai.operation.name", Value::Str("execute_tool")),
                ("gen_ai.tool.name", Value::Str(&call.name)),
                ("warden.status", Value::Str(call.status.as_str())),
                (
                    "warden.reason_codes",
                    Value::Strs(call.reasons.iter().map(|r| r.code.as_str()).collect()),
                ),
            ];
            if let Some(id) = &call.id {
                attributes.push(("gen_ai.tool.call.id", Value::Str(id)));
            }
            if let Some(decided_by) = &call.decided_by {
                attributes.push(("warden.decided_by", Value::Str(decided_by)));
            }
            otlp::span(
                &mut encoded,
                &step(trace_id, root_id, name, judged, attributes),
            );
        }
        self.enqueue(Item::Trace {
            spans: 1 + outcome.calls.len(),
            encoded,
        });
    }

    /// Sends one decision log line as a log record.
    pub fn line(&self, line: &[u8]) {
        let mut encoded = Vec::with_capacity(line.len() + 64);
        otlp::log_record(&mut encoded, now_ns(), &String::from_utf8_lossy(line));
        self.enqueue(Item::Line(encoded));
    }

    /// The trace id and the parent span of a sampled request; `None` when
    /// it is not traced.
    fn sampled(&self, parent: Option<TraceParent>) -> Option<([u8; 16], Option<[u8; 8]>)> {
        match parent {
            Some(parent) => parent
                .sampled
                .then_some((parent.trace_id, Some(parent.span_id))),
            None => {
                let trace_id = trace_id();
                // As OpenTelemetry's ratio sampler: the id's low 8 bytes
                // against the ratio's share of their range.
                let low = u64::from_be_bytes(trace_id[8..].try_into().unwrap_or_default());
                let traced = self.sample_ratio >= 1.0
                    || (low as f64) < self.sample_ratio * (u64::MAX as f64);
                traced.then_some((trace_id, None))
            }
        }
    }

    fn enqueue(&self, item: Item) {
        if let Err(item) = self.queue.push(item) {
            let signal = item.signal();
            self.counters.dropped.with_label_values(&[signal]).inc();
            self.warn_of_drops(signal);
        }
    }

    /// Logs a warning for the first drop, then at most once a minute.
    fn warn_of_drops(&self, signal: &str) {
        let now = now_ns() / 1_000_000_000;
        let last = self.warned_at.load(Ordering::Relaxed);
        if (last == 0 || now >= last + 60)
            && self
                .warned_at
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let dropped: u64 = ["traces", "logs"]
                .iter()
                .map(|s| self.counters.dropped.with_label_values(&[s]).get())
                .sum();
            tracing::warn!(
                signal,
                dropped,
                "the telemetry queue is full: traces and lines are dropped (counted in \
                 warden_telemetry_dropped_total); the collector is slow or unreachable, or \
                 telemetry.buffer is too small"
            );
        }
    }

    /// Stops taking items and waits (at most a few seconds) for the exporter
    /// to send what waits.
    pub fn stop(&self) {
        self.queue.close();
        if let Some(thread) = self
            .exporter
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = thread.join();
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A request's start and the harness's trace context, read before its body.
#[derive(Debug)]
pub struct RequestTrace {
    start_ns: u64,
    clock: Instant,
    parent: Option<TraceParent>,
    trace_state: String,
    /// When the judging thread began on the call, and for how long it
    /// judged (the approval store's check, then the pipeline).
    judged: Option<(Instant, Duration)>,
}

impl RequestTrace {
    /// Now, with the harness's `traceparent` and `tracestate` headers.
    pub fn start(headers: &HeaderMap) -> RequestTrace {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let parent = header("traceparent").and_then(TraceParent::parse);
        // Passed on only with a parent, and only if it is short and plain.
        let trace_state = parent
            .and(header("tracestate"))
            .filter(|s| s.len() <= 512 && s.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .unwrap_or_default()
            .to_string();
        RequestTrace {
            start_ns: now_ns(),
            clock: Instant::now(),
            parent,
            trace_state,
            judged: None,
        }
    }

    /// When the judging thread began (in nanoseconds since the epoch) and
    /// how long it judged, in nanoseconds.
    fn judging(&self) -> Option<(u64, u64)> {
        let (started, took) = self.judged?;
        let start = self.start_ns + nanos(started.saturating_duration_since(self.clock));
        Some((start, nanos(took)))
    }

    /// The request's own span, from its start to `end_ns`, under the
    /// harness's span where there is one.
    fn span<'a>(
        &'a self,
        trace_id: [u8; 16],
        span_id: [u8; 8],
        parent: Option<[u8; 8]>,
        name: &'a str,
        end_ns: u64,
        attributes: Vec<Attribute<'a>>,
    ) -> Span<'a> {
        Span {
            trace_id,
            span_id,
            parent,
            remote_parent: parent.is_some(),
            trace_state: &self.trace_state,
            name,
            kind: Kind::Server,
            start_ns: self.start_ns,
            end_ns,
            attributes,
            error: None,
        }
    }

    /// Records when the judging thread began on the call and how long it
    /// took ([`timed`]).
    pub fn judged(&mut self, (started, took): (Instant, Duration)) {
        self.judged = Some((started, took));
    }
}

/// Runs `work` (on the judging thread), with when it began and how long it
/// took, for [`RequestTrace::judged`].
pub fn timed<T>(work: impl FnOnce() -> T) -> (T, (Instant, Duration)) {
    let started = Instant::now();
    let done = work();
    (done, (started, started.elapsed()))
}

/// A step inside Warden's answer to a call: a child of the request's span.
fn step<'a>(
    trace_id: [u8; 16],
    parent: [u8; 8],
    name: &'a str,
    (start_ns, end_ns): (u64, u64),
    attributes: Vec<Attribute<'a>>,
) -> Span<'a> {
    Span {
        trace_id,
        span_id: span_id(),
        parent: Some(parent),
        remote_parent: false,
        trace_state: "",
        name,
        kind: Kind::Internal,
        start_ns,
        end_ns,
        attributes,
        error: None,
    }
}

/// The request span's attributes: the GenAI conventions' for the tool call,
/// Warden's for the decision. Never an argument, never a reason's message.
fn call_attributes<'a>(
    call: &'a ToolCall,
    evaluation: &'a Evaluation,
    decision_id: &'a str,
    places: &'a [String],
) -> Vec<Attribute<'a>> {
    let context = &call.context;
    let mut attributes: Vec<Attribute> = vec![
        ("gen_ai.operation.name", Value::Str("execute_tool")),
        ("gen_ai.tool.name", Value::Str(&call.tool_name)),
    ];
    let optional = [
        ("gen_ai.tool.call.id", &call.tool_call_id),
        ("gen_ai.agent.id", &context.agent_id),
        ("gen_ai.conversation.id", &context.thread_id),
        ("warden.run.id", &context.run_id),
        ("warden.policy_id", &evaluation.policy_id),
        ("warden.decided_by", &evaluation.decided_by),
    ];
    for (key, value) in optional {
        if let Some(value) = value {
            attributes.push((key, Value::Str(value)));
        }
    }
    attributes.extend([
        ("warden.verdict", Value::Str(evaluation.verdict.as_str())),
        (
            "warden.reason_codes",
            Value::Strs(evaluation.reasons.iter().map(|r| r.code.as_str()).collect()),
        ),
        (
            "warden.generation",
            Value::Int(i64::try_from(evaluation.generation).unwrap_or(i64::MAX)),
        ),
        ("warden.decision_id", Value::Str(decision_id)),
    ]);
    if let Some(cause) = &evaluation.cause {
        if !cause.rules.is_empty() {
            attributes.push((
                "warden.rule",
                Value::Strs(cause.rules.iter().map(|r| r.text.as_str()).collect()),
            ));
        }
        if !places.is_empty() {
            attributes.push((
                "warden.rule.source",
                Value::Strs(places.iter().map(String::as_str).collect()),
            ));
        }
        if let Some(approver) = &cause.approver {
            attributes.push(("warden.approver", Value::Str(approver)));
        }
    }
    attributes
}

/// Now, in nanoseconds since the epoch (OTLP's time).
fn now_ns() -> u64 {
    nanos(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

thread_local! {
    /// A SplitMix64 stream per thread, seeded from the operating system:
    /// ids need to be unique, not secret.
    static IDS: Cell<u64> = Cell::new({
        let mut seed = [0u8; 8];
        let _ = getrandom::fill(&mut seed);
        u64::from_le_bytes(seed)
    });
}

fn next_id() -> u64 {
    IDS.with(|state| {
        let mut z = state.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        state.set(z);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

fn span_id() -> [u8; 8] {
    loop {
        let id = next_id();
        if id != 0 {
            return id.to_be_bytes();
        }
    }
}

fn trace_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&next_id().to_be_bytes());
    id[8..].copy_from_slice(&span_id());
    id
}
