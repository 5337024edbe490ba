//! The decision log: one JSON line per decision, for audits and incident review.
//! A record names the call (decision, thread, run and tool-call ids, tool name),
//! the outcome (verdict, reasons capped at 500 characters, policy id) and what
//! judged it (every stage, with provider digests, duration, fuel and failure
//! detail). Tool arguments are left out unless the operator opts in, field by
//! field; the fields logged are redacted first.
//!
//! A call never waits for the disk: its line goes into a buffer, written out by
//! a background thread at least every 20 ms, when the buffer fills, and at
//! shutdown.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::approval::{CallOutcome, CallStatus, DecisionKind, GateOutcome, Resolution, ResolvedBy};
use crate::decision::Verdict;
use crate::pipeline::Evaluation;
use crate::request::{ToolCall, now_rfc3339};

/// The most characters kept of a reason message or a logged argument.
pub const MAX_LOGGED_CHARS: usize = 500;

/// What replaces a secret in a logged argument.
pub const REDACTED: &str = "[REDACTED]";

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
    /// logged arguments, after the built-in ones (tokens, keys, passwords).
    #[serde(default)]
    pub redact: Vec<String>,
}

impl Default for DecisionLogConfig {
    fn default() -> Self {
        DecisionLogConfig {
            enabled: true,
            path: default_path(),
            arguments: BTreeMap::new(),
            redact: Vec::new(),
        }
    }
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
    #[error(
        "decision_log.redact[{index}]: '{pattern}' is not a valid regular expression: {message}"
    )]
    Pattern {
        index: usize,
        pattern: String,
        message: String,
    },
    #[error("decision_log.arguments.{tool}: an argument name must not be empty")]
    EmptyField { tool: String },
    #[error("cannot open the log {path}: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
}

/// Which arguments are logged and how they are cleaned; swapped on reload.
pub struct ArgumentPolicy {
    fields: BTreeMap<String, Vec<String>>,
    redactions: Vec<(Regex, &'static str)>,
}

/// Secrets that are never logged, whatever the operator opted in.
const BUILTIN_REDACTIONS: &[(&str, &str)] = &[
    // `Authorization: Bearer abc`, `basic dXNlcjpwYXNz`
    (
        r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}",
        "$1 [REDACTED]",
    ),
    // password=..., api_key: ..., "secret": "..."
    (
        r#"(?i)\b([a-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential)[a-z0-9_-]*)("?\s*[=:]\s*"?)[^\s"',;&]+"#,
        "$1$2[REDACTED]",
    ),
    // user:password@ in URLs
    (r"://[^/\s:@]+:[^/\s@]+@", "://[REDACTED]@"),
    // AWS access key ids, GitHub, Slack and OpenAI-style tokens
    (r"\bAKIA[0-9A-Z]{16}\b", "[REDACTED]"),
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}\b", "[REDACTED]"),
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b", "[REDACTED]"),
    (r"\bsk-[A-Za-z0-9_-]{20,}\b", "[REDACTED]"),
    // PEM private keys, to the end marker or the end of the text
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
        "[REDACTED]",
    ),
];

impl ArgumentPolicy {
    pub fn new(config: &DecisionLogConfig) -> Result<ArgumentPolicy, DecisionLogError> {
        for (tool, fields) in &config.arguments {
            if fields.iter().any(|f| f.is_empty()) {
                return Err(DecisionLogError::EmptyField { tool: tool.clone() });
            }
        }
        let mut redactions: Vec<(Regex, &'static str)> = BUILTIN_REDACTIONS
            .iter()
            .map(|(p, r)| (Regex::new(p).expect("built-in redaction pattern"), *r))
            .collect();
        for (index, pattern) in config.redact.iter().enumerate() {
            let regex = Regex::new(pattern).map_err(|err| DecisionLogError::Pattern {
                index,
                pattern: pattern.clone(),
                message: err.to_string(),
            })?;
            redactions.push((regex, REDACTED));
        }
        Ok(ArgumentPolicy {
            fields: config.arguments.clone(),
            redactions,
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
        let mut out = std::borrow::Cow::Borrowed(text);
        for (regex, replacement) in &self.redactions {
            if let std::borrow::Cow::Owned(replaced) = regex.replace_all(&out, *replacement) {
                out = std::borrow::Cow::Owned(replaced);
            }
        }
        out.into_owned()
    }
}

/// At most [`MAX_LOGGED_CHARS`] characters, with `…` when cut.
pub fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_LOGGED_CHARS) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
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
    pub thread_id: Option<&'a str>,
    pub run_id: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub agent_id: Option<&'a str>,
    pub tool_name: &'a str,
    pub verdict: &'static str,
    pub reasons: Vec<LoggedReason>,
    pub policy_id: Option<&'a str>,
    pub decided_by: Option<&'a str>,
    pub interaction_mode: crate::policy::interaction::InteractionMode,
    /// The provider set that judged the call.
    pub generation: u64,
    pub stages: Vec<LoggedStage<'a>>,
    pub duration_us: u64,
    /// Fuel used by all providers together.
    pub fuel_used: u64,
    /// The first provider failure's detail code, if any.
    pub error_detail: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caller: Option<Requester<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// The signed decision record, when the configuration names a signing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<&'a crate::signing::DecisionRecord>,
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
    pub error_detail: Option<&'static str>,
}

impl<'a> DecisionLine<'a> {
    /// The record of one evaluated call; `arguments` as the policy allows.
    pub fn new(
        decision_id: &'a str,
        call: &'a ToolCall,
        evaluation: &'a Evaluation,
        caller: Option<Requester<'a>>,
        arguments: Option<Map<String, Value>>,
    ) -> Self {
        let ctx = &call.context;
        DecisionLine {
            decision_id,
            time: now_rfc3339(),
            thread_id: ctx.thread_id.as_deref(),
            run_id: ctx.run_id.as_deref(),
            tool_call_id: call.tool_call_id.as_deref(),
            agent_id: ctx.agent_id.as_deref(),
            tool_name: &call.tool_name,
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
                    error_detail: s.error_detail,
                })
                .collect(),
            duration_us: evaluation.duration_us,
            fuel_used: evaluation.stages.iter().filter_map(|s| s.fuel_used).sum(),
            error_detail: evaluation.stages.iter().find_map(|s| s.error_detail),
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
    pub thread_id: &'a str,
    pub run_id: &'a str,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: &'a str,
    /// `allow` (the tool runs), `ask` (it waits for a human) or `deny`.
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_decision: Option<DecisionKind>,
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
            Some(JsonLines::open(&data_dir.join(&config.path))?)
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
            let arguments = self.policy.load().arguments(call);
            sink.append(&DecisionLine::new(&id, call, evaluation, caller, arguments));
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
                sink.append(&gate_record(
                    "resume",
                    &resolution.thread_id,
                    run_id,
                    Some(&resolution.approval_id),
                    call,
                    None,
                    caller.clone(),
                    &policy,
                ));
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

    /// Writes out every queued line.
    pub fn flush(&self) {
        if let Some(sink) = &self.sink {
            sink.flush();
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
    GateCallRecord {
        decision_id: new_decision_id(),
        time: now_rfc3339(),
        source,
        thread_id,
        run_id,
        tool_call_id: call.id.as_deref(),
        tool_name: &call.name,
        verdict: status_verdict(call.status).as_str(),
        approval_id: approval_id.filter(|_| call.request_id.is_some()),
        request_id: call.request_id.as_deref(),
        human_decision: call.decision,
        reasons: call
            .reasons
            .iter()
            .map(|r| LoggedReason {
                code: cap(&r.code),
                message: cap(&r.message),
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
/// thread writes the buffer out every [`FLUSH_EVERY`], and [`JsonLines::flush`]
/// and dropping write it out at once.
pub struct JsonLines {
    path: PathBuf,
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    out: Mutex<Writer>,
    errors: AtomicU64,
    stop: Mutex<bool>,
    stopping: Condvar,
    path: String,
}

struct Writer {
    file: BufWriter<File>,
    /// Set while writes fail, so that an outage is reported once.
    failing: bool,
}

/// How long a line may wait in memory before it is written out.
pub const FLUSH_EVERY: Duration = Duration::from_millis(20);

impl JsonLines {
    /// Opens `path` for appending, creating it and its directory.
    pub fn open(path: &Path) -> Result<JsonLines, DecisionLogError> {
        let open_error = |source| DecisionLogError::Open {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(open_error)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(open_error)?;
        let shared = Arc::new(Shared {
            out: Mutex::new(Writer {
                file: BufWriter::with_capacity(64 * 1024, file),
                failing: false,
            }),
            errors: AtomicU64::new(0),
            stop: Mutex::new(false),
            stopping: Condvar::new(),
            path: path.display().to_string(),
        });
        let flusher = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("warden-log".into())
                .spawn(move || shared.flush_periodically())
                .map_err(open_error)?
        };
        Ok(JsonLines {
            path: path.to_path_buf(),
            shared,
            flusher: Mutex::new(Some(flusher)),
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
        let mut out = self.shared.lock();
        let written = out.file.write_all(&line);
        self.shared.report(&mut out, written);
    }

    /// Writes out every line appended so far.
    pub fn flush(&self) {
        let mut out = self.shared.lock();
        let flushed = out.file.flush();
        self.shared.report(&mut out, flushed);
    }

    pub fn write_errors(&self) -> u64 {
        self.shared.errors.load(Ordering::Relaxed)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn report(&self, out: &mut Writer, result: std::io::Result<()>) {
        match result {
            Ok(()) => out.failing = false,
            Err(err) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                if !out.failing {
                    tracing::error!(path = %self.path, %err, "cannot write the log; records are being lost");
                }
                out.failing = true;
            }
        }
    }

    fn flush_periodically(&self) {
        let mut stop = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        while !*stop {
            stop = self
                .stopping
                .wait_timeout(stop, FLUSH_EVERY)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            let mut out = self.lock();
            let flushed = out.file.flush();
            self.report(&mut out, flushed);
        }
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.stopping.notify_all();
        if let Some(flusher) = self
            .flusher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = flusher.join();
        }
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
