//! `warden._native`: Warden's Rust core inside a Python process, for the class
//! `warden.Warden` of the `warden-guardrails` package (which wraps this module
//! in the HTTP client's types and errors).
//!
//! One `Core` is what `warden serve` holds for its callers, minus HTTP: the
//! live policy (the pipeline and its providers), the approval gate over the
//! SQLite store in the data directory, and reloads of the same configuration.
//! Every entry point answers what the daemon's route answers, in the same JSON
//! shape (the same `Serialize` types, turned into Python objects), and refuses
//! what the route refuses with the same status and code (raised as `ApiError`,
//! which the Python side turns into `WardenHTTPError`). The pipeline runs with
//! the GIL released.

// Warden's public API, all of it in one place: the library (`warden`), the
// approval gate (`warden-approval`) and the wire types (`warden-types`).
use warden::config::ConfigFile;
use warden::{CallContext, Caller, Config, ConfigError, Evaluation, Reason, RequestError};
use warden::{ReloadReport, ToolCall, Warden};
use warden_approval::validate::{check_id, parse_body};
use warden_approval::{
    ApprovalError, ApprovalGate, Authority, GrantFilter, InteractionQuery, LOCAL_PRINCIPAL,
    ListFilter, ModelResponse, RelayNames, ResumeRequest, Reviewer, RunRef, StoreConfig,
    StoreError,
};
use warden_types::codes::STORE_UNAVAILABLE;
use warden_types::codes::{INPUT_TOO_DEEP, INPUT_TOO_LARGE, UNENCODABLE_INPUT};
use warden_types::request::{MAX_INPUT_DEPTH, MAX_REQUEST_BYTES};

mod answer;
mod convert;
mod gil;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use convert::Problem;

/// The bench figures depend on the allocator (docs/benchmarks.md: a third of
/// the native stage was malloc/free with the system's), as the `warden`
/// binary's do.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    _native,
    ConfigError_,
    PyValueError,
    "The configuration was refused: args are (message, file, key, reason, line, column)."
);
pyo3::create_exception!(
    _native,
    ApiError,
    PyException,
    "What the daemon answers with an HTTP error: args are (status, code, message, details)."
);

/// An error as the daemon's route would answer it.
struct Failure {
    status: u16,
    code: &'static str,
    message: String,
    details: Value,
}

impl Failure {
    fn new(status: u16, code: &'static str, message: impl Into<String>) -> Failure {
        Failure {
            status,
            code,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// What only the harness controls was malformed (its context): 400.
    fn bad_request(err: RequestError) -> Failure {
        Failure::new(400, "invalid_request", err.to_string())
    }

    fn into_py(self, py: Python<'_>) -> PyErr {
        let details = pythonize::pythonize(py, &self.details)
            .map(Bound::unbind)
            .unwrap_or_else(|_| py.None());
        ApiError::new_err((self.status, self.code, self.message, details))
    }
}

impl From<ApprovalError> for Failure {
    fn from(err: ApprovalError) -> Failure {
        // As the daemon: another process holds the store's write lock, nothing
        // changed, and a retry may succeed.
        if let ApprovalError::Store(StoreError::Busy { .. }) = &err {
            return Failure::new(503, "store_busy", err.to_string());
        }
        Failure {
            status: err.status(),
            code: err.code(),
            message: err.to_string(),
            details: err.details(),
        }
    }
}

impl From<RequestError> for Failure {
    fn from(err: RequestError) -> Failure {
        Failure::bad_request(err)
    }
}

/// Where the configuration comes from, so that a reload reads it again.
enum Source {
    File(PathBuf),
    Text {
        text: String,
        name: String,
        base_dir: PathBuf,
    },
}

impl Source {
    /// The library's configuration, the approval store's, and the SHA-256
    /// of the text.
    fn read(&self) -> Result<(Config, StoreConfig, String), ConfigError> {
        let (text, name, base_dir) = match self {
            Source::File(path) => {
                let file = ConfigFile::read(path)?;
                (file.text, file.name, file.base_dir)
            }
            Source::Text {
                text,
                name,
                base_dir,
            } => (text.clone(), name.clone(), base_dir.clone()),
        };
        let config = Config::parse(&text, &name, base_dir)?;
        let store = StoreConfig::parse(&text, &name)?;
        Ok((config, store, hex::encode(Sha256::digest(text.as_bytes()))))
    }
}

/// Why the core could not be made.
enum LoadFailure {
    Config(ConfigError),
    Warden(warden::Error),
    Store(StoreError),
}

impl LoadFailure {
    fn into_py(self) -> PyErr {
        let message = self.to_string();
        match self {
            LoadFailure::Config(err) | LoadFailure::Warden(warden::Error::Config(err)) => {
                config_error(message, err)
            }
            _ => unlocated(message),
        }
    }
}

/// A refused configuration as `warden.ConfigError`: its file, key and line.
fn config_error(message: String, err: ConfigError) -> PyErr {
    match err {
        ConfigError::Invalid {
            file,
            key,
            message: reason,
            location,
        } => {
            let (line, column) = location.0.unzip();
            ConfigError_::new_err((message, Some(file), Some(key), reason, line, column))
        }
        ConfigError::Read { path, source } => ConfigError_::new_err((
            message,
            Some(path),
            None::<String>,
            source.to_string(),
            None::<usize>,
            None::<usize>,
        )),
        _ => unlocated(message),
    }
}

/// A refusal with no file or key to point at (a provider, the store).
fn unlocated(message: String) -> PyErr {
    ConfigError_::new_err((
        message.clone(),
        None::<String>,
        None::<String>,
        message,
        None::<usize>,
        None::<usize>,
    ))
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadFailure::Config(err) => write!(f, "{err}"),
            LoadFailure::Warden(err) => write!(f, "{err}"),
            LoadFailure::Store(err) => write!(f, "{err}"),
        }
    }
}

/// Warden in this process: the live policy, the approval gate, and the
/// identity its callers have (see `sdk/python/README.md`, "In-process").
#[pyclass(frozen, module = "warden._native")]
struct Core {
    source: Source,
    warden: Arc<Warden>,
    gate: ApprovalGate,
    caller: Caller,
    /// The name pauses and grants are scoped by, as a token's name is.
    principal: String,
    data_dir: PathBuf,
    /// Whether `data_dir` came from the caller (then the file's is not used,
    /// as with `warden serve --data-dir`).
    data_dir_given: bool,
    /// `hitl_approval.durability` at start: a reload cannot change it.
    durability: String,
}

impl Core {
    fn open(
        source: Source,
        data_dir: Option<PathBuf>,
        caller: Caller,
        principal: String,
        decision_log: bool,
    ) -> Result<Core, LoadFailure> {
        let (mut config, store, _) = source.read().map_err(LoadFailure::Config)?;
        let data_dir_given = data_dir.is_some();
        // As `warden serve --data-dir`: the argument, else the file's, made
        // absolute so that a later change of directory moves nothing.
        let dir = data_dir.unwrap_or_else(|| config.data_dir());
        config.set_data_dir(&dir);
        let data_dir = config.create_data_dir().map_err(LoadFailure::Warden)?;
        // As the daemon: a provider that cannot be configured stops the start.
        let warden = Arc::new(Warden::new_healthy(&config).map_err(LoadFailure::Warden)?);
        if decision_log {
            warden.log_decisions(&config).map_err(LoadFailure::Warden)?;
        }
        let durability = store.durability;
        let gate = ApprovalGate::open(warden.clone(), &data_dir, durability)
            .map_err(LoadFailure::Store)?;
        Ok(Core {
            source,
            warden,
            gate,
            caller,
            principal,
            data_dir,
            data_dir_given,
            durability: durability.as_str().to_string(),
        })
    }

    /// As the daemon's `POST /v1/evaluate` once the body is read: the
    /// thread's pending approval, then the pipeline and the approval list.
    fn judge(&self, call: &ToolCall) -> Result<Evaluation, Failure> {
        Ok(self.gate.evaluate(&self.principal, call, self.caller)?)
    }

    /// The deny for a call refused before it could be judged (`decided_by:
    /// intake`), as the daemon answers it.
    fn refused(&self, code: &str, message: &str) -> Evaluation {
        self.warden.refusal(code, message)
    }

    fn role(&self) -> &'static str {
        match self.caller {
            Caller::Internal => "internal",
            _ => "agent",
        }
    }

    /// Who answers for the embedding harness: a relay of the human it names,
    /// on its own principal's pauses only (as a `relay: true` token).
    fn reviewer(&self, claimed: Option<&str>) -> Result<Reviewer, Failure> {
        Ok(Reviewer::authorize(
            &self.principal,
            self.role(),
            &Authority::Relay(Arc::new(RelayNames::anyone_but([self.principal.as_str()]))),
            claimed,
        )?)
    }

    fn reload_now(&self) -> Result<ReloadReport, Failure> {
        let serving = self.warden.snapshot().generation();
        let fail = |err: String| {
            Failure::new(
                422,
                "reload_failed",
                format!("reload refused, generation {serving} keeps serving: {err}"),
            )
        };
        let (mut config, store, digest) = self.source.read().map_err(|e| fail(e.to_string()))?;
        let mut warnings = Vec::new();
        let wanted_dir = config.data_dir();
        if !self.data_dir_given && config.data_dir.is_some() && wanted_dir != self.data_dir {
            warnings.push(format!(
                "data_dir changed to {}; restart to use it (still {})",
                wanted_dir.display(),
                self.data_dir.display()
            ));
        }
        if store.durability.as_str() != self.durability {
            warnings.push("hitl_approval.durability changed; restart to apply it".to_string());
        }
        // A new data directory needs a restart: keep the running one.
        config.set_data_dir(&self.data_dir);
        let mut report = self
            .warden
            .reload(&config, &digest)
            .map_err(|e| fail(e.to_string()))?;
        report.warnings = warnings;
        Ok(report)
    }
}

/// A Rust value as the daemon's JSON, as Python objects.
fn answer<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    Ok(pythonize::pythonize(py, value)?)
}

/// A call built from Python's arguments, or the deny it gets at intake.
// Made once per call and taken apart at once: a box would only add an
// allocation on the hot path.
#[allow(clippy::large_enum_variant)]
enum Intake {
    Call(ToolCall),
    Refused(&'static str, String),
}

/// The type's name, for a message.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "value".into())
}

/// A string argument the daemon's body would carry as a JSON string, `None`
/// for one holding a lone surrogate (the client's deny); anything else is the
/// 400 the daemon answers for that field.
fn text_field(value: &Bound<'_, PyAny>, field: &str) -> Result<Option<String>, Failure> {
    let text = value.cast::<PyString>().map_err(|_| {
        Failure::bad_request(RequestError::Field {
            field: field.to_string(),
            message: format!("invalid type: {}, expected a string", type_name(value)),
        })
    })?;
    Ok(text.to_cow().ok().map(|t| t.into_owned()))
}

fn intake(
    tool_name: &Bound<'_, PyAny>,
    tool_input: Option<&Bound<'_, PyAny>>,
    tool_call_id: Option<&Bound<'_, PyAny>>,
    context: Option<&Bound<'_, PyAny>>,
) -> Result<Intake, Failure> {
    let problem = |problem: Problem| match problem {
        Problem::Unencodable { path, why } => Intake::Refused(
            UNENCODABLE_INPUT,
            format!("{path}: {why}; JSON cannot carry it, so the call is denied"),
        ),
        Problem::TooDeep => Intake::Refused(
            INPUT_TOO_DEEP,
            RequestError::TooDeep {
                limit: MAX_INPUT_DEPTH,
            }
            .to_string(),
        ),
    };
    // A lone surrogate in a name or an id is the client's deny naming it, as
    // in the arguments: only a value of the wrong type is a 400.
    let surrogate = |field: &str| {
        Intake::Refused(
            UNENCODABLE_INPUT,
            format!(
                "{field}: the text holds a lone surrogate, which is not Unicode; JSON cannot carry it, so the call is denied"
            ),
        )
    };
    let name = match text_field(tool_name, "tool_name")? {
        Some(name) => name,
        None => return Ok(surrogate("tool_name")),
    };
    let mut size = name.len() + 64;
    // One level more than the limit is read, so that the pipeline's own check
    // refuses it with the daemon's code and message.
    let input = match tool_input {
        None => Value::Object(Default::default()),
        Some(value) if value.is_none() => Value::Object(Default::default()),
        Some(value) => match convert::to_value(value, 0, MAX_INPUT_DEPTH + 1, &mut size) {
            Ok(input) => input,
            Err(p) => return Ok(problem(convert::under(p, "tool_input"))),
        },
    };
    let mut call = ToolCall::new(name, input);
    if let Some(id) = tool_call_id.filter(|v| !v.is_none()) {
        match text_field(id, "tool_call_id")? {
            Some(id) => call.tool_call_id = Some(id),
            None => return Ok(surrogate("tool_call_id")),
        }
    }
    // The context as the client sends it (`None` values left out, an empty
    // one not at all), kept only when the call comes near the size limit.
    let mut sent_context: Option<Value> = None;
    if let Some(context) = context.filter(|v| !v.is_none()) {
        let Ok(dict) = context.cast::<PyDict>() else {
            return Err(Failure::bad_request(RequestError::Field {
                field: "context".into(),
                message: format!("invalid type: {}, expected a dict", type_name(context)),
            }));
        };
        let value = match convert::object(dict, 0, MAX_INPUT_DEPTH, &mut size, true) {
            Ok(value) => value,
            Err(p) => return Ok(problem(convert::under(p, "context"))),
        };
        if size > MAX_REQUEST_BYTES / 2 && value.as_object().is_some_and(|m| !m.is_empty()) {
            sent_context = Some(value.clone());
        }
        // Without the path first (tracking it costs on every value), and
        // again with it only for the refusal that names it.
        call.context = match <CallContext as serde::Deserialize>::deserialize(&value) {
            Ok(context) => context,
            Err(_) => serde_path_to_error::deserialize::<_, CallContext>(value).map_err(|err| {
                let path = err.path().to_string();
                Failure::bad_request(RequestError::Field {
                    field: format!("context.{path}").trim_end_matches(".").to_string(),
                    message: err.into_inner().to_string(),
                })
            })?,
        };
    }
    // The estimate is below the JSON text's length; measure exactly only when
    // it comes near the daemon's limit.
    // The body measured and the message worded as the client's for the
    // daemon, so that both backends deny the same call the same way.
    if size > MAX_REQUEST_BYTES / 2 {
        #[derive(serde::Serialize)]
        struct SentBody<'a> {
            tool_name: &'a str,
            tool_input: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            tool_call_id: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            context: Option<&'a Value>,
        }
        let body = SentBody {
            tool_name: &call.tool_name,
            tool_input: &call.tool_input,
            tool_call_id: call.tool_call_id.as_deref(),
            context: sent_context.as_ref(),
        };
        let exact = serde_json::to_vec(&body)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if exact > MAX_REQUEST_BYTES {
            return Ok(Intake::Refused(
                INPUT_TOO_LARGE,
                format!("the call is {exact} bytes; Warden accepts at most {MAX_REQUEST_BYTES}"),
            ));
        }
    }
    Ok(Intake::Call(call))
}

#[pymethods]
impl Core {
    /// Loads the configuration (a file, or YAML text with the name errors give
    /// it and the directory its relative paths start from) and everything it
    /// names; compiles providers with the GIL released.
    #[staticmethod]
    #[pyo3(signature = (*, path=None, text=None, name=None, base_dir=None, data_dir=None, internal=true, principal=None, decision_log=false))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        py: Python<'_>,
        path: Option<PathBuf>,
        text: Option<String>,
        name: Option<String>,
        base_dir: Option<PathBuf>,
        data_dir: Option<PathBuf>,
        internal: bool,
        principal: Option<String>,
        decision_log: bool,
    ) -> PyResult<Core> {
        let source = match (path, text) {
            // Absolute, so that a reload after a change of directory reads the same file.
            (Some(path), None) => Source::File(std::path::absolute(&path).unwrap_or(path)),
            (None, Some(text)) => Source::Text {
                text,
                name: name.unwrap_or_else(|| "<string>".into()),
                base_dir: base_dir.unwrap_or_else(|| ".".into()),
            },
            _ => {
                return Err(PyValueError::new_err(
                    "Core.load: give exactly one of path and text",
                ));
            }
        };
        let caller = if internal {
            Caller::Internal
        } else {
            Caller::Agent
        };
        let principal = principal.unwrap_or_else(|| LOCAL_PRINCIPAL.to_string());
        if let Err(err) = check_id("principal", &principal) {
            return Err(PyValueError::new_err(err.to_string()));
        }
        gil::detach(py, || {
            Core::open(source, data_dir, caller, principal, decision_log)
        })
        .map_err(LoadFailure::into_py)
    }

    /// One tool call, as `POST /v1/evaluate` judges it; the daemon's answer
    /// as `warden.Evaluation`.
    #[pyo3(signature = (tool_name, tool_input=None, tool_call_id=None, context=None))]
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        tool_name: &Bound<'py, PyAny>,
        tool_input: Option<&Bound<'py, PyAny>>,
        tool_call_id: Option<&Bound<'py, PyAny>>,
        context: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = match intake(tool_name, tool_input, tool_call_id, context) {
            Ok(Intake::Call(call)) => call,
            Ok(Intake::Refused(code, message)) => {
                return answer::evaluation_object(py, self.refused(code, &message));
            }
            Err(failure) => return Err(failure.into_py(py)),
        };
        match gil::detach(py, || self.judge(&call)) {
            Ok(evaluation) => answer::evaluation_object(py, evaluation),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// A request body of `POST /v1/evaluate` (JSON text), read as the daemon
    /// reads it: strictly (size, depth, duplicate keys, unknown fields).
    fn evaluate_json<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let body = body.as_bytes();
        let judged = gil::detach(py, || match ToolCall::from_json(body) {
            Ok(call) => self.judge(&call),
            Err(err) => match err.refusal_code() {
                Some(code) => Ok(self.refused(code, &err.to_string())),
                None => Err(Failure::bad_request(err)),
            },
        });
        match judged {
            Ok(evaluation) => answer::evaluation_object(py, evaluation),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// A model response (JSON text) through the approval gate, as
    /// `POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`. When the store
    /// fails, every call of the response is denied.
    fn submit_tool_calls<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        run_id: String,
        body: &Bound<'py, PyBytes>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let body = body.as_bytes();
        let outcome = gil::detach(py, || -> Result<_, Failure> {
            let run = RunRef::new(thread_id, run_id).of(self.principal.as_str());
            let response = ModelResponse::from_json(body)?;
            match self.gate.submit(&run, &response, self.caller) {
                Err(ApprovalError::Store(err)) => {
                    let reason = Reason::new(
                        STORE_UNAVAILABLE,
                        format!("the approval store failed: {err}; the call was not judged"),
                    );
                    Ok(self.gate.refuse(&run, Some(&response.message), reason))
                }
                other => Ok(other?),
            }
        });
        match outcome {
            Ok(outcome) => answer(py, &outcome),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// The thread's pending approvals (with `include_resolved`, all of them).
    #[pyo3(signature = (thread_id, include_resolved=false))]
    fn approvals<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        include_resolved: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter = ListFilter {
            principal: Some(self.principal.clone()),
            thread_id: Some(thread_id),
            include_resolved,
        };
        match gil::detach(py, || self.gate.approvals(&filter)) {
            Ok(list) => answer(py, &list),
            Err(err) => Err(Failure::from(err).into_py(py)),
        }
    }

    /// A human's answer (the resume body, JSON text, its `reviewer` naming the
    /// human), relayed by this process.
    #[pyo3(signature = (thread_id, approval_id, body, idempotency_key=None))]
    fn resume<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        approval_id: String,
        body: &Bound<'py, PyBytes>,
        idempotency_key: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let body = body.as_bytes();
        let resolved = gil::detach(py, || -> Result<_, Failure> {
            let mut request = ResumeRequest::from_json(body)?;
            request.idempotency_key = idempotency_key;
            request.check()?;
            let reviewer = self.reviewer(request.reviewer.as_deref())?;
            Ok(self
                .gate
                .resume(&reviewer, &thread_id, Some(&approval_id), &request)?)
        });
        match resolved {
            Ok(resolution) => answer(py, &resolution),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// Standing grants of this principal, newest first.
    #[pyo3(signature = (include_inactive=false))]
    fn grants<'py>(&self, py: Python<'py>, include_inactive: bool) -> PyResult<Bound<'py, PyAny>> {
        let filter = GrantFilter {
            principal: Some(self.principal.clone()),
            include_inactive,
        };
        match gil::detach(py, || self.gate.grants(&filter)) {
            Ok(grants) => answer(py, &grants),
            Err(err) => Err(Failure::from(err).into_py(py)),
        }
    }

    /// Ends a standing grant now, in the name of the human `reviewer`.
    #[pyo3(signature = (grant_id, reviewer=None))]
    fn revoke_grant<'py>(
        &self,
        py: Python<'py>,
        grant_id: String,
        reviewer: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let revoked = gil::detach(py, || -> Result<_, Failure> {
            let reviewer = self.reviewer(reviewer.as_deref())?;
            Ok(self.gate.revoke_grant(&reviewer, &grant_id)?)
        });
        match revoked {
            Ok(grant) => answer(py, &grant),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// The run's resolved interaction policy for a query (JSON text,
    /// `{"context": {...}, "tools": [...]}`), or for a run with no context.
    #[pyo3(signature = (body=None))]
    fn interaction<'py>(
        &self,
        py: Python<'py>,
        body: Option<&Bound<'py, PyBytes>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let query: InteractionQuery = match body {
            None => InteractionQuery::default(),
            Some(body) => {
                let bytes = body.as_bytes();
                parse_body(bytes, bytes.len()).map_err(|e| Failure::bad_request(e).into_py(py))?
            }
        };
        let snapshot = self.warden.snapshot();
        let report =
            warden_approval::interaction::resolve(&query, self.caller, snapshot.approval_list())
                .map_err(|e| Failure::bad_request(e).into_py(py))?;
        let mut value = serde_json::to_value(&report)
            .map_err(|e| Failure::new(500, "internal", e.to_string()).into_py(py))?;
        value["caller"] = json!({"token": self.principal, "role": self.role()});
        answer(py, &value)
    }

    /// Reads the configuration again and swaps the provider set atomically;
    /// on failure the running set keeps serving (422 `reload_failed`).
    fn reload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match gil::detach(py, || self.reload_now()) {
            Ok(report) => answer(py, &report),
            Err(failure) => Err(failure.into_py(py)),
        }
    }

    /// The live provider set, as `GET /v1/admin/providers` lists it.
    fn providers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        answer(py, &self.warden.providers())
    }

    /// As `GET /healthz`.
    fn health<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        answer(py, &self.warden.health())
    }

    /// The longest one judgement can take under the live configuration, in
    /// milliseconds (`Snapshot::worst_case`): what `warden.Warden` compares
    /// with its inline budget to judge on an event loop. A reload changes it.
    #[getter]
    fn worst_case_ms(&self) -> f64 {
        self.warden.worst_case().as_secs_f64() * 1e3
    }

    /// The caller's role: `internal` or `agent`.
    #[getter]
    fn role_name(&self) -> &'static str {
        self.role()
    }

    #[getter]
    fn principal(&self) -> &str {
        &self.principal
    }

    #[getter]
    fn data_dir(&self) -> PathBuf {
        self.data_dir.clone()
    }

    /// The decision log file this process writes, when it was asked to
    /// (`decision_log=True`) and the section is enabled.
    #[getter]
    fn decision_log_path(&self) -> Option<PathBuf> {
        self.warden
            .decision_log()
            .and_then(|log| log.path().map(Path::to_path_buf))
    }

    /// Writes out and syncs every decision logged so far (a call's line
    /// waits for its shadow judgment: those are settled first).
    fn flush_decision_log(&self, py: Python<'_>) {
        if let Some(log) = self.warden.decision_log() {
            gil::detach(py, || {
                self.warden.settle_shadows();
                log.flush();
            });
        }
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_class::<answer::Deferred>()?;
    m.add("ConfigError", m.py().get_type::<ConfigError_>())?;
    m.add("ApiError", m.py().get_type::<ApiError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
