//! The decision log: one JSON line per decision, for audits and incident review.
//! A record names the call (decision, thread, run and tool-call ids, tool name),
//! the outcome (verdict, reasons capped at 500 characters, policy id) and what
//! judged it (every stage, with provider digests, duration, fuel and failure
//! detail). Tool arguments are left out unless the operator opts in, field by
//! field; the fields logged are redacted first, by the one redactor
//! (`crate::redact`) that also cleans reason messages when they are made. The
//! caller's ids and the tool name are logged with only their secret-shaped
//! parts replaced: an id without a secret is logged as it is, one with a
//! secret keeps the rest, for tracing.
//!
//! With `fsync: interval` (the default) a call never waits for the disk: its
//! line goes into a buffer, written out by a background thread every
//! `fsync_interval_ms` (20 by default) and at shutdown, and synced by another
//! right after (a slow disk delays the sync, never the next write). With
//! `fsync: always` the answer waits until its line is synced.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use warden::Evaluation;
use warden_approval::{CallOutcome, CallStatus, DecisionKind, GateOutcome, Resolution, ResolvedBy};
use warden_policy::clock::now_rfc3339;
use warden_policy::redact::{MAX_REASON_CHARS, PatternError, Redactor};
use warden_types::decision::Verdict;
use warden_types::request::ToolCall;

/// The most characters kept of a reason message or a logged argument.
pub const MAX_LOGGED_CHARS: usize = MAX_REASON_CHARS;

pub use warden_policy::redact::REDACTED;

/// The `decision_log:` block of the configuration.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DecisionLogConfig {
    /// False: no decision is logged.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The log file, relative to the data directory.
    #[serde(default = "default_path")]
    pub path: PathBuf,
    /// Tool arguments to log, opted in field by field: tool name (or `*` for
    /// every tool) to the top-level argument names kept. Absent: none.
    #[serde(default)]
    pub arguments: BTreeMap<String, Vec<String>>,
    /// Extra regular expressions whose matches are replaced by `[REDACTED]` in
    /// logged arguments and reason messages, after the built-in ones (tokens,
    /// keys, passwords).
    #[serde(default)]
    pub redact: Vec<String>,
    /// When a decision reaches the disk: `interval` (the default) or `always`.
    #[serde(default)]
    pub fsync: Fsync,
    /// With `fsync: interval`, how often the lines are written out and synced:
    /// the most a kill -9 or a power cut can lose.
    #[serde(default = "default_fsync_interval")]
    pub fsync_interval_ms: u64,
}

/// When the decision log's lines reach the disk.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    /// Written out and synced every `fsync_interval_ms`: a kill -9 or a power
    /// cut loses at most the decisions of the last interval.
    #[default]
    Interval,
    /// An answer is sent only once its line is written and synced: nothing
    /// answered is lost, at the price of waiting for the disk (one sync
    /// serves every answer waiting at that moment).
    Always,
}

impl Default for DecisionLogConfig {
    fn default() -> Self {
        DecisionLogConfig {
            enabled: true,
            path: default_path(),
            arguments: BTreeMap::new(),
            redact: Vec::new(),
            fsync: Fsync::default(),
            fsync_interval_ms: default_fsync_interval(),
        }
    }
}

fn default_fsync_interval() -> u64 {
    DEFAULT_FSYNC_INTERVAL_MS
}

fn yes() -> bool {
    true
}

fn default_path() -> PathBuf {
    PathBuf::from("decisions.jsonl")
}

/// Why the decision log could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionLogError {
    #[error(transparent)]
    Pattern(#[from] PatternError),
    #[error("decision_log.arguments.{tool}: an argument name must not be empty")]
    EmptyField { tool: String },
    #[error("decision_log.fsync_interval_ms: {0} is out of range 1..=60000")]
    Interval(u64),
    #[error("cannot open the log {path}: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
}

/// Which arguments are logged and how they are cleaned; swapped on reload.
pub struct ArgumentPolicy {
    fields: BTreeMap<String, Vec<String>>,
    redactor: Redactor,
}

impl ArgumentPolicy {
    /// Checks the whole `decision_log` block (on start and on every reload)
    /// and compiles its argument policy.
    pub fn new(config: &DecisionLogConfig) -> Result<ArgumentPolicy, DecisionLogError> {
        if !(1..=60_000).contains(&config.fsync_interval_ms) {
            return Err(DecisionLogError::Interval(config.fsync_interval_ms));
        }
        for (tool, fields) in &config.arguments {
            if fields.iter().any(|f| f.is_empty()) {
                return Err(DecisionLogError::EmptyField { tool: tool.clone() });
            }
        }
        Ok(ArgumentPolicy {
            fields: config.arguments.clone(),
            redactor: Redactor::new(&config.redact)?,
        })
    }

    /// The opted-in arguments of a call, redacted and capped; `None` when the
    /// operator opted in none for this tool.
    pub fn arguments(&self, call: &ToolCall) -> Option<Map<String, Value>> {
        self.arguments_of(&call.tool_name, &call.tool_input)
    }

    /// As [`ArgumentPolicy::arguments`], for a tool's name and arguments.
    pub fn arguments_of(&self, tool_name: &str, tool_input: &Value) -> Option<Map<String, Value>> {
        let wanted: Vec<&String> = [self.fields.get(tool_name), self.fields.get("*")]
            .into_iter()
            .flatten()
            .flatten()
            .collect();
        if wanted.is_empty() {
            return None;
        }
        let input = tool_input.as_object()?;
        let mut out = Map::new();
        for field in wanted {
            if let Some(value) = input.get(field.as_str()) {
                out.insert(field.clone(), self.clean(value));
            }
        }
        Some(out)
    }

    /// Strings are redacted and capped; other scalars are kept; objects and
    /// arrays are logged as their JSON text, redacted and capped.
    fn clean(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(cap(&self.redact(s))),
            Value::Array(_) | Value::Object(_) => {
                Value::String(cap(&self.redact(&value.to_string())))
            }
            scalar => scalar.clone(),
        }
    }

    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_owned()
    }

    /// The redactor of this policy's configuration.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }
}

/// At most [`MAX_LOGGED_CHARS`] characters, with `…` when cut.
pub fn cap(text: &str) -> String {
    warden_policy::redact::excerpt(text, MAX_LOGGED_CHARS)
}

/// Who asked, as the log records it.
#[derive(Clone, Debug, Serialize)]
pub struct Requester<'a> {
    /// The name of the token the caller presented.
    pub token: &'a str,
    pub role: &'a str,
}

/// One line of the decision log.
#[derive(Debug, Serialize)]
pub struct DecisionLine<'a> {
    pub decision_id: &'a str,
    pub time: String,
    /// The time the call was judged at: the host's, or an internal caller's.
    pub judged_at: &'a str,
    /// The caller's `context.timestamp`, recorded whether or not it was believed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_timestamp: Option<&'a str>,
    pub thread_id: Option<Cow<'a, str>>,
    pub run_id: Option<Cow<'a, str>>,
    pub tool_call_id: Option<Cow<'a, str>>,
    pub agent_id: Option<Cow<'a, str>>,
    pub tool_name: Cow<'a, str>,
    pub verdict: &'static str,
    pub reasons: Vec<LoggedReason>,
    pub policy_id: Option<&'a str>,
    pub decided_by: Option<&'a str>,
    pub interaction_mode: warden_policy::interaction::InteractionMode,
    /// The provider set that judged the call.
    pub generation: u64,
    pub stages: Vec<LoggedStage<'a>>,
    pub duration_us: u64,
    /// Fuel used by all providers together.
    pub fuel_used: u64,
    /// The first provider failure's detail code, if any.
    pub error_detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Requester<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<&'a warden_types::DecisionRecord>,
}

#[derive(Debug, Serialize)]
pub struct LoggedReason {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Serialize)]
pub struct LoggedStage<'a> {
    pub stage: &'a str,
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<&'a str>,
    pub duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_detail: Option<&'a str>,
}

impl<'a> DecisionLine<'a> {
    /// The record of one evaluated call; `arguments` as the policy allows,
    /// the caller's ids and the tool name cleaned by `redactor`.
    pub fn new(
        decision_id: &'a str,
        call: &'a ToolCall,
        evaluation: &'a Evaluation,
        caller: Option<Requester<'a>>,
        arguments: Option<Map<String, Value>>,
        redactor: &Redactor,
    ) -> Self {
        let ctx = &call.context;
        let id = |id: &'a Option<String>| id.as_deref().map(|id| redactor.redact(id));
        DecisionLine {
            decision_id,
            time: now_rfc3339(),
            judged_at: &evaluation.judged_at,
            call_timestamp: ctx.timestamp.as_deref(),
            thread_id: id(&ctx.thread_id),
            run_id: id(&ctx.run_id),
            tool_call_id: id(&call.tool_call_id),
            agent_id: id(&ctx.agent_id),
            tool_name: redactor.redact(&call.tool_name),
            verdict: evaluation.verdict.as_str(),
            reasons: evaluation
                .reasons
                .iter()
                .map(|r| LoggedReason {
                    code: cap(&r.code),
                    message: cap(&r.message),
                })
                .collect(),
            policy_id: evaluation.policy_id.as_deref(),
            decided_by: evaluation.decided_by.as_deref(),
            interaction_mode: evaluation.interaction_mode,
            generation: evaluation.generation,
            stages: evaluation
                .stages
                .iter()
                .map(|s| LoggedStage {
                    stage: &s.stage,
                    verdict: s.verdict.as_str(),
                    digest: s.digest.as_deref(),
                    duration_us: s.duration_us,
                    fuel_used: s.fuel_used,
                    error_detail: s.error_detail.as_deref(),
                })
                .collect(),
            duration_us: evaluation.duration_us,
            fuel_used: evaluation.stages.iter().filter_map(|s| s.fuel_used).sum(),
            error_detail: evaluation
                .stages
                .iter()
                .find_map(|s| s.error_detail.as_deref()),
            caller,
            arguments,
            decision_record: evaluation.decision_record.as_ref(),
        }
    }
}

/// One call of a model response, as the approval gate judged it
/// (`source: tool-calls`) or as a resume answered it (`source: resume`).
#[derive(Debug, Serialize)]
pub struct GateCallRecord<'a> {
    pub decision_id: String,
    pub time: String,
    pub source: &'static str,
    pub thread_id: Cow<'a, str>,
    pub run_id: Cow<'a, str>,
    pub tool_call_id: Option<Cow<'a, str>>,
    pub tool_name: Cow<'a, str>,
    /// `allow` (the tool runs), `ask` (it waits for a human) or `deny`.
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_decision: Option<DecisionKind>,
    /// Who answered (approved, rejected, edited or cleared), for a resume's
    /// calls: an approver's name, or the name a relay gave (see `relayed_by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<Cow<'a, str>>,
    /// The token that relayed the human's answer, when a harness did: then
    /// `reviewer` is the name it gave, one its `reviewers:` grants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relayed_by: Option<&'a str>,
    pub reasons: Vec<LoggedReason>,
    pub decided_by: Option<&'a str>,
    /// The provider set that judged the call (its digests are in `swaps.jsonl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Requester<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
}

/// The verdict a gate call's status means.
pub fn status_verdict(status: CallStatus) -> Verdict {
    match status {
        CallStatus::Run => Verdict::Allow,
        CallStatus::Pending => Verdict::Ask,
        CallStatus::Denied => Verdict::Deny,
    }
}

/// The decision log: a JSON-lines file and the argument policy.
pub struct DecisionLog {
    sink: Option<JsonLines>,
    policy: ArcSwap<ArgumentPolicy>,
}

impl DecisionLog {
    /// Opens (appends to) the log named by the configuration, relative to
    /// `data_dir`; a disabled log records nothing.
    pub fn open(config: &DecisionLogConfig, data_dir: &Path) -> Result<Self, DecisionLogError> {
        let policy = ArgumentPolicy::new(config)?;
        let sink = if config.enabled {
            Some(JsonLines::open_with(
                &data_dir.join(&config.path),
                config.fsync,
                Duration::from_millis(config.fsync_interval_ms),
            )?)
        } else {
            None
        };
        Ok(DecisionLog {
            sink,
            policy: ArcSwap::from_pointee(policy),
        })
    }

    /// Records one decision and returns its id: the signed record's, when the
    /// decision was signed, so that both name it the same.
    pub fn record(
        &self,
        call: &ToolCall,
        evaluation: &Evaluation,
        caller: Option<Requester<'_>>,
    ) -> String {
        let id = match &evaluation.decision_record {
            Some(record) => record.decision_id.clone(),
            None => new_decision_id(),
        };
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let arguments = policy.arguments(call);
            sink.append(&DecisionLine::new(
                &id,
                call,
                evaluation,
                caller,
                arguments,
                policy.redactor(),
            ));
        }
        id
    }

    /// Records every call of a model response the approval gate judged.
    pub fn record_gate(&self, outcome: &GateOutcome, caller: Option<Requester<'_>>) {
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            for call in &outcome.calls {
                sink.append(&gate_record(
                    "tool-calls",
                    &outcome.thread_id,
                    &outcome.run_id,
                    outcome.approval_id.as_deref(),
                    call,
                    Some(outcome.generation),
                    caller.clone(),
                    &policy,
                ));
            }
        }
    }

    /// Records every call a resume answered.
    pub fn record_resolution(&self, resolution: &Resolution, caller: Option<Requester<'_>>) {
        if let Some(sink) = &self.sink {
            let policy = self.policy.load();
            let run_id = match &resolution.resolved_by {
                ResolvedBy::Resume { run_id } => run_id.as_str(),
                _ => resolution.run_id.as_str(),
            };
            for call in &resolution.calls {
                let mut record = gate_record(
                    "resume",
                    &resolution.thread_id,
                    run_id,
                    Some(&resolution.approval_id),
                    call,
                    None,
                    caller.clone(),
                    &policy,
                );
                if call.decision.is_some() {
                    record.reviewer = resolution
                        .reviewer
                        .as_deref()
                        .map(|name| policy.redactor().redact(name));
                    record.relayed_by = resolution.relayed_by.as_deref();
                }
                sink.append(&record);
            }
        }
    }

    /// Applies a reloaded argument policy.
    pub fn set_policy(&self, policy: ArgumentPolicy) {
        self.policy.store(Arc::new(policy));
    }

    /// Lines that could not be written, since start.
    pub fn write_errors(&self) -> u64 {
        self.sink.as_ref().map_or(0, JsonLines::write_errors)
    }

    /// Writes out and syncs every queued line.
    pub fn flush(&self) {
        if let Some(sink) = &self.sink {
            sink.flush();
        }
    }

    /// With `fsync: always`, waits until every decision recorded so far is on
    /// the disk: an answer is sent only after its line is.
    pub async fn synced(&self) {
        if let Some(sink) = &self.sink {
            sink.synced().await;
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.sink.as_ref().map(|s| s.path.as_path())
    }
}

#[allow(clippy::too_many_arguments)]
fn gate_record<'a>(
    source: &'static str,
    thread_id: &'a str,
    run_id: &'a str,
    approval_id: Option<&'a str>,
    call: &'a CallOutcome,
    generation: Option<u64>,
    caller: Option<Requester<'a>>,
    policy: &ArgumentPolicy,
) -> GateCallRecord<'a> {
    let redactor = policy.redactor();
    GateCallRecord {
        decision_id: new_decision_id(),
        time: now_rfc3339(),
        source,
        thread_id: redactor.redact(thread_id),
        run_id: redactor.redact(run_id),
        tool_call_id: call.id.as_deref().map(|id| redactor.redact(id)),
        tool_name: redactor.redact(&call.name),
        verdict: status_verdict(call.status).as_str(),
        approval_id: approval_id.filter(|_| call.request_id.is_some()),
        request_id: call.request_id.as_deref(),
        human_decision: call.decision,
        reviewer: None,
        relayed_by: None,
        // The pipeline's reasons are clean already; a human's rejection
        // message is cleaned here.
        reasons: call
            .reasons
            .iter()
            .map(|r| LoggedReason {
                code: cap(&r.code),
                message: cap(&policy.redact(&r.message)),
            })
            .collect(),
        decided_by: call.decided_by.as_deref(),
        generation,
        caller,
        arguments: policy.arguments_of(&call.name, &call.args),
    }
}

/// A new decision id: a UUIDv7, so that ids sort by time.
pub fn new_decision_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// An append-only JSON-lines file. A line is copied into a buffer under a lock
/// (no system call, no thread to wake, on the caller's path); a background
/// thread writes the buffer out to the file every `fsync_interval_ms`
/// ([`Fsync::Interval`]) or as soon as a line is waiting ([`Fsync::Always`],
/// where callers wait for [`JsonLines::synced`]), and a second one syncs what
/// was written to the disk: one sync carries every line written meanwhile, and
/// a slow disk delays only the sync, never the next write, so that a kill of
/// the process loses at most the lines of one interval. [`JsonLines::flush`]
/// and dropping write and sync everything at once.
pub struct JsonLines {
    path: PathBuf,
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
    pending: Mutex<Pending>,
    /// A line is waiting (always), or the log is closing.
    woken: Condvar,
    file: File,
    /// Held while a batch is written, so that batches reach the file in the
    /// order they were taken.
    out: Mutex<Failing>,
    /// What the writer has written out, for the syncer.
    written: Mutex<Written>,
    /// The writer wrote a batch, or is closing.
    wrote: Condvar,
    /// The number of the last line written and synced.
    synced: tokio::sync::watch::Sender<u64>,
    errors: AtomicU64,
    /// Set while syncs fail, so that an outage is reported once.
    sync_failing: AtomicBool,
    fsync: Fsync,
    interval: Duration,
    path: String,
}

/// Lines appended and not yet written.
struct Pending {
    lines: Vec<u8>,
    /// Lines appended since the file was opened.
    appended: u64,
    stop: bool,
}

/// Set while writes fail, so that an outage is reported once.
struct Failing(bool);

/// The lines written out (or tried), by number, and whether the writer is done.
struct Written {
    upto: u64,
    stop: bool,
}

/// The default of `decision_log.fsync_interval_ms`.
pub const DEFAULT_FSYNC_INTERVAL_MS: u64 = 20;

impl JsonLines {
    /// Opens `path` for appending, creating it (0600) and its directory
    /// (0700), synced every [`DEFAULT_FSYNC_INTERVAL_MS`].
    pub fn open(path: &Path) -> Result<JsonLines, DecisionLogError> {
        Self::open_with(
            path,
            Fsync::Interval,
            Duration::from_millis(DEFAULT_FSYNC_INTERVAL_MS),
        )
    }

    /// As [`JsonLines::open`], synced as `fsync` says.
    pub fn open_with(
        path: &Path,
        fsync: Fsync,
        interval: Duration,
    ) -> Result<JsonLines, DecisionLogError> {
        let open_error = |source| DecisionLogError::Open {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            warden_runtime::data_dir::create_private_dir(dir).map_err(open_error)?;
        }
        let file = warden_runtime::data_dir::open_private_append(path).map_err(open_error)?;
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                lines: Vec::with_capacity(64 * 1024),
                appended: 0,
                stop: false,
            }),
            woken: Condvar::new(),
            file,
            out: Mutex::new(Failing(false)),
            written: Mutex::new(Written {
                upto: 0,
                stop: false,
            }),
            wrote: Condvar::new(),
            synced: tokio::sync::watch::Sender::new(0),
            errors: AtomicU64::new(0),
            sync_failing: AtomicBool::new(false),
            fsync,
            interval,
            path: path.display().to_string(),
        });
        let mut threads = Vec::with_capacity(2);
        for (name, run) in [
            ("warden-log", Shared::write_in_background as fn(&Shared)),
            ("warden-log-sync", Shared::sync_in_background),
        ] {
            let own = shared.clone();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || run(&own));
            match thread {
                Ok(thread) => threads.push(thread),
                Err(err) => {
                    // Stop the one already started.
                    JsonLines::stop(&shared, threads);
                    return Err(open_error(err));
                }
            }
        }
        Ok(JsonLines {
            path: path.to_path_buf(),
            shared,
            threads: Mutex::new(threads),
        })
    }

    /// Appends one record as a line.
    pub fn append(&self, record: &impl Serialize) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(err) => {
                tracing::error!(path = %self.path.display(), %err, "cannot serialise a log record");
                self.shared.errors.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        line.push(b'\n');
        let mut pending = self.shared.lock_pending();
        pending.lines.extend_from_slice(&line);
        pending.appended += 1;
        if self.shared.fsync == Fsync::Always {
            self.shared.woken.notify_one();
        }
    }

    /// With [`Fsync::Always`], waits until every line appended so far is on
    /// the disk (or failed to get there, which is counted); otherwise at once.
    pub async fn synced(&self) {
        if self.shared.fsync != Fsync::Always {
            return;
        }
        let target = self.shared.lock_pending().appended;
        let mut synced = self.shared.synced.subscribe();
        // The sender lives as long as `self`: this cannot fail.
        let _ = synced.wait_for(|done| *done >= target).await;
    }

    /// Writes out and syncs every line appended so far.
    pub fn flush(&self) {
        let upto = self.shared.write_out();
        self.shared.sync(upto);
    }

    pub fn write_errors(&self) -> u64 {
        self.shared.errors.load(Ordering::Relaxed)
    }

    /// Tells the threads to write and sync what is left and stop, and waits
    /// for them.
    fn stop(shared: &Shared, threads: Vec<JoinHandle<()>>) {
        shared.lock_pending().stop = true;
        shared.woken.notify_all();
        // The syncer stops once the writer has; if the writer never started,
        // tell the syncer here.
        shared.lock_written().stop = true;
        shared.wrote.notify_all();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_written(&self) -> std::sync::MutexGuard<'_, Written> {
        self.written.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes the waiting lines and writes them out (to the operating
    /// system, not yet the disk), in order; returns the number of the last.
    fn write_out(&self) -> u64 {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (lines, upto) = {
            let mut pending = self.lock_pending();
            let lines = std::mem::replace(&mut pending.lines, Vec::with_capacity(64 * 1024));
            (lines, pending.appended)
        };
        if !lines.is_empty() {
            match (&self.file).write_all(&lines) {
                Ok(()) => out.0 = false,
                Err(err) => {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                    if !out.0 {
                        tracing::error!(path = %self.path, %err, "cannot write the log; records are being lost");
                    }
                    out.0 = true;
                }
            }
        }
        upto
    }

    /// Syncs what was written to the disk and publishes that lines up to
    /// `upto` are there, after a failure too: a caller waits for the
    /// attempt, and a failed one is counted in
    /// `warden_decision_log_write_errors_total`.
    fn sync(&self, upto: u64) {
        match self.file.sync_data() {
            Ok(()) => self.sync_failing.store(false, Ordering::Relaxed),
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if !self.sync_failing.swap(true, Ordering::Relaxed) {
                    tracing::error!(path = %self.path, %err, "cannot sync the log; records may be lost");
                }
            }
        }
        self.synced.send_if_modified(|done| {
            let advanced = upto > *done;
            *done = (*done).max(upto);
            advanced
        });
    }

    /// The writer: takes the lines on a fixed cadence (`interval`: the time a
    /// write takes does not stretch it) or as soon as one waits (`always`),
    /// writes them out and hands them to the syncer.
    fn write_in_background(&self) {
        let mut due = Instant::now() + self.interval;
        loop {
            let stop = {
                let mut pending = self.lock_pending();
                match self.fsync {
                    Fsync::Always => {
                        while pending.lines.is_empty() && !pending.stop {
                            pending = self.woken.wait(pending).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    Fsync::Interval => loop {
                        let now = Instant::now();
                        if pending.stop || now >= due {
                            break;
                        }
                        pending = self
                            .woken
                            .wait_timeout(pending, due - now)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    },
                }
                pending.stop
            };
            let upto = self.write_out();
            {
                let mut written = self.lock_written();
                written.upto = written.upto.max(upto);
                written.stop |= stop;
            }
            self.wrote.notify_one();
            if stop {
                return;
            }
            due = (due + self.interval).max(Instant::now());
        }
    }

    /// The syncer: syncs whatever was written since its last sync.
    fn sync_in_background(&self) {
        let mut done = 0;
        loop {
            let (upto, stop) = {
                let mut written = self.lock_written();
                while written.upto <= done && !written.stop {
                    written = self.wrote.wait(written).unwrap_or_else(|e| e.into_inner());
                }
                (written.upto, written.stop)
            };
            if upto > done {
                self.sync(upto);
                done = upto;
            }
            if stop && self.lock_written().upto <= done {
                return;
            }
        }
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        JsonLines::stop(&self.shared, threads);
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(yaml: &str) -> ArgumentPolicy {
        let config: DecisionLogConfig = serde_norway::from_str(yaml).unwrap();
        ArgumentPolicy::new(&config).unwrap()
    }

    #[test]
    fn no_argument_is_logged_without_an_opt_in() {
        let call = ToolCall::new("bash", json!({"command": "ls"}));
        assert_eq!(policy("{}").arguments(&call), None);
    }

    #[test]
    fn only_the_opted_in_fields_are_logged() {
        let p = policy("arguments: {bash: [command]}");
        let call = ToolCall::new("bash", json!({"command": "ls", "env": {"A": "1"}}));
        assert_eq!(
            Value::Object(p.arguments(&call).unwrap()),
            json!({"command": "ls"})
        );
    }

    #[test]
    fn a_wildcard_opts_in_a_field_for_every_tool() {
        let p = policy("arguments: {'*': [path]}");
        let call = ToolCall::new("read_file", json!({"path": "/etc/hosts", "limit": 3}));
        assert_eq!(
            Value::Object(p.arguments(&call).unwrap()),
            json!({"path": "/etc/hosts"})
        );
    }

    #[test]
    fn secrets_in_logged_arguments_are_redacted() {
        let p = policy("arguments: {bash: [command]}");
        let command = "curl -H 'Authorization: Bearer abcdefgh12345' https://bob:hunter2@example.com?api_key=XYZ123";
        let call = ToolCall::new("bash", json!({ "command": command }));
        let logged = p.arguments(&call).unwrap()["command"].to_string();
        for secret in ["abcdefgh12345", "hunter2", "XYZ123"] {
            assert!(!logged.contains(secret), "{secret} leaked: {logged}");
        }
        assert!(logged.contains(REDACTED), "{logged}");
    }

    #[test]
    fn operator_patterns_are_redacted_too() {
        let p = policy("arguments: {bash: [command]}\nredact: ['acct-[0-9]+']");
        let call = ToolCall::new("bash", json!({"command": "bill acct-991 now"}));
        assert_eq!(
            p.arguments(&call).unwrap()["command"],
            json!("bill [REDACTED] now")
        );
    }

    #[test]
    fn an_invalid_pattern_is_refused_by_index() {
        let config: DecisionLogConfig = serde_norway::from_str("redact: ['ok', '(']").unwrap();
        let err = ArgumentPolicy::new(&config).err().unwrap().to_string();
        assert!(err.contains("decision_log.redact[1]"), "{err}");
    }

    #[test]
    fn appended_lines_are_in_the_file_after_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log/decisions.jsonl");
        let log = JsonLines::open(&path).unwrap();
        log.append(&json!({"n": 1}));
        log.flush();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\":1}\n");
    }

    #[test]
    fn lines_from_many_threads_stay_whole_and_all_are_written_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        let log = JsonLines::open(&path).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let log = &log;
                s.spawn(move || {
                    for i in 0..500 {
                        log.append(&json!({"t": t, "i": i, "pad": "x".repeat(100)}));
                    }
                });
            }
        });
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2000);
    }

    #[test]
    fn an_existing_log_is_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        std::fs::write(&path, "{\"old\":true}\n").unwrap();
        let log = JsonLines::open(&path).unwrap();
        log.append(&json!({"new": true}));
        drop(log);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }

    #[test]
    fn long_values_are_capped() {
        let long = "x".repeat(2 * MAX_LOGGED_CHARS);
        assert_eq!(cap(&long).chars().count(), MAX_LOGGED_CHARS + 1);
        assert_eq!(cap("short"), "short");
    }
}
