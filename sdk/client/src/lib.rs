//! An async client for the Warden daemon (`warden serve`), for agent harnesses
//! written in Rust that run Warden as a separate process. (To embed the
//! pipeline in-process instead, use the `warden-host` crate's `Warden`.)
//!
//! ```no_run
//! use warden_client::{CallContext, Client, ToolCall, Verdict};
//!
//! # async fn run() -> Result<(), warden_client::Error> {
//! let client = Client::builder("http://127.0.0.1:8787")
//!     .token(std::env::var("WARDEN_TOKEN").unwrap_or_default())
//!     .build()?;
//! let call = ToolCall::new("bash", serde_json::json!({"command": "git status"}))
//!     .tool_call_id("call-1")
//!     .context(CallContext { thread_id: Some("t-1".into()), ..Default::default() });
//! let decision = client.evaluate(&call).await?;
//! if decision.evaluation.verdict != Verdict::Allow {
//!     println!("blocked: {:?}", decision.evaluation.reasons);
//! }
//! # Ok(()) }
//! ```
//!
//! Every failure is an [`Error`]; a harness that must fail closed treats any
//! error as a deny.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The header that carries a decision's id in the decision log.
pub const DECISION_ID_HEADER: &str = "x-warden-decision-id";

/// Why no answer could be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("'{0}' is not an http(s) URL")]
    Url(String),
    #[error("cannot reach warden at {url}: {source}")]
    Unavailable {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("warden answered {status} {code}: {message}")]
    Refused {
        status: u16,
        /// `unauthorized`, `forbidden`, `invalid_request`, `reload_failed`, ...
        code: String,
        message: String,
    },
    #[error("warden's answer ({status}) could not be read: {message}")]
    Decode { status: u16, message: String },
}

impl Error {
    /// True when the daemon could not be reached (as opposed to refusing).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable { .. })
    }

    /// The HTTP status of a refusal.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Refused { status, .. } | Error::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// An opinion on a tool call, ordered `Allow < Ask < Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// How the run that made the call interacts with humans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InteractionMode {
    Interactive,
    Scheduled,
    Webhook,
    Autonomous,
}

/// Why a stage reached its verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub code: String,
    #[serde(default)]
    pub message: String,
}

/// One tool call, as `POST /v1/evaluate` takes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool_name: String,
    pub tool_input: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub context: CallContext,
}

impl ToolCall {
    pub fn new(tool_name: impl Into<String>, tool_input: Value) -> Self {
        ToolCall {
            tool_name: tool_name.into(),
            tool_input,
            tool_call_id: None,
            context: CallContext::default(),
        }
    }

    pub fn tool_call_id(mut self, id: impl Into<String>) -> Self {
        self.tool_call_id = Some(id.into());
        self
    }

    pub fn context(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }
}

/// What the harness knows about the run. The interaction-mode keys are
/// honoured only for a token with the `internal` role.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallContext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_id: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_subagent: bool,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_interactive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_clarification: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub can_resume: Option<bool>,
}

/// One stage's contribution to a decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageReport {
    /// `provider:<name>`, ...
    pub stage: String,
    pub verdict: Verdict,
    pub codes: Vec<String>,
    pub duration_us: u64,
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub fuel_used: Option<u64>,
    #[serde(default)]
    pub error_detail: Option<String>,
}

/// Warden's decision on one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub verdict: Verdict,
    pub allow: bool,
    pub reasons: Vec<Reason>,
    pub policy_id: Option<String>,
    pub metadata: Map<String, Value>,
    pub decided_by: Option<String>,
    pub interaction_mode: InteractionMode,
    pub stages: Vec<StageReport>,
    /// The signed decision record, when the daemon signs decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_record: Option<Value>,
    /// The provider set that judged the call.
    pub generation: u64,
    pub duration_us: u64,
}

/// A decision and its id in the daemon's decision log.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub evaluation: Evaluation,
    pub decision_id: Option<String>,
}

/// A provider of a set, by name and component digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderDigest {
    pub name: String,
    pub digest: String,
}

/// The answer to a successful reload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReloadReport {
    pub generation: u64,
    pub previous_generation: u64,
    pub providers: Vec<ProviderDigest>,
    pub previous_providers: Vec<ProviderDigest>,
    pub config_sha256: String,
    pub duration_ms: f64,
    pub warnings: Vec<String>,
}

/// A provider's sandbox limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    pub timeout_ms: u64,
    pub fuel: u64,
    pub memory_mb: u64,
    pub max_input_bytes: u64,
    pub max_output_bytes: u64,
    pub pool_size: u64,
}

/// A provider's warm instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolUsage {
    pub capacity: u64,
    pub live: u64,
    pub idle: u64,
}

/// A provider of the live set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderStatus {
    pub name: String,
    /// The name the component gives itself.
    pub provider: String,
    pub version: String,
    pub digest: String,
    pub source: String,
    pub limits: Limits,
    pub on_error: String,
    pub loaded_since: String,
    pub pool: PoolUsage,
}

/// The live provider set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderList {
    pub generation: u64,
    pub loaded_at: String,
    pub enabled: bool,
    pub providers: Vec<ProviderStatus>,
}

/// `GET /healthz`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub generation: u64,
    pub providers: u64,
}

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// The model's id for the call; `None` when the model gave none.
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub args: Value,
    /// LangChain's `"type": "tool_call"`, kept as sent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// The model's message: its calls, and the surfaces that repeat them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiMessage {
    pub tool_calls: Vec<ModelToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_tool_calls: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// A model response, as `POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls` takes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    pub message: AiMessage,
    #[serde(default)]
    pub context: CallContext,
}

/// What became of one call of a model response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool may run.
    Run,
    /// The tool must not run; the call's `note` is what the model is told.
    Denied,
    /// Waiting for a human's decision.
    Pending,
}

/// Whether the run goes on or waits for a human.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    WaitingForInput,
}

/// A human's decision on one pending call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Approve,
    Reject,
    Edit,
}

/// One call of the message, judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallOutcome {
    pub index: usize,
    pub id: Option<String>,
    pub name: String,
    pub status: CallStatus,
    pub removed: bool,
    #[serde(default)]
    pub request_id: Option<String>,
    #[serde(default)]
    pub decision: Option<DecisionKind>,
    pub args: Value,
    #[serde(default)]
    pub note: Option<String>,
    pub reasons: Vec<Reason>,
    #[serde(default)]
    pub decided_by: Option<String>,
}

/// One call waiting for a human.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    pub request_id: String,
    pub tool_call_id: Option<String>,
    pub tool_name: String,
    pub args: Value,
    pub reasons: Vec<Reason>,
}

/// The approval gate's answer to a model response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateOutcome {
    pub thread_id: String,
    pub run_id: String,
    pub run_state: RunState,
    pub approval_id: Option<String>,
    pub requests: Vec<ApprovalRequest>,
    pub calls: Vec<CallOutcome>,
    pub message: AiMessage,
    pub interaction_mode: InteractionMode,
    pub generation: u64,
    #[serde(default)]
    pub notices: Vec<Reason>,
}

/// One approval, as listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalView {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    /// `pending`, `resumed`, `cleared`, ...
    pub status: String,
    #[serde(default)]
    pub run_state: Option<RunState>,
    pub created_at: String,
    pub requests: Vec<ApprovalRequest>,
    #[serde(default)]
    pub broken: Vec<String>,
    #[serde(default)]
    pub resolution: Option<Value>,
}

#[derive(Deserialize)]
struct ApprovalPage {
    approvals: Vec<ApprovalView>,
}

/// A human's decision on one pending request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestDecision {
    pub request_id: String,
    pub decision: DecisionKind,
    /// An edit's new arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// A rejection's message, shown to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A resume: a decision for every pending request, or one reject-all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<RequestDecision>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_all: Option<RejectAll>,
    /// The run that carries the answered calls on (default: the one that paused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// Reject every pending request at once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RejectAll {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ResumeRequest {
    pub fn decisions(decisions: Vec<RequestDecision>) -> Self {
        ResumeRequest {
            decisions: Some(decisions),
            ..Default::default()
        }
    }

    pub fn reject_all(message: Option<String>) -> Self {
        ResumeRequest {
            reject_all: Some(RejectAll { message }),
            ..Default::default()
        }
    }
}

/// How a resumed approval ended: every call of the paused message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    pub resolved_by: Value,
    pub consumption_id: String,
    pub resolved_at: String,
    pub run_state: RunState,
    pub calls: Vec<CallOutcome>,
    pub message: AiMessage,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    code: String,
    message: String,
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    url: String,
    token: Option<String>,
    timeout: Duration,
}

impl ClientBuilder {
    /// The bearer token (its role decides what the client may do).
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The most one request may take, connecting included (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn build(self) -> Result<Client, Error> {
        let url = self.url.trim_end_matches('/').to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::Url(self.url));
        }
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(|source| Error::Unavailable {
                url: url.clone(),
                source,
            })?;
        Ok(Client {
            url,
            token: self.token,
            http,
        })
    }
}

/// A client for one daemon; cheap to clone, connections are kept alive.
#[derive(Clone)]
pub struct Client {
    url: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Client {
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            url: url.into(),
            token: None,
            timeout: Duration::from_secs(5),
        }
    }

    /// Judges one tool call.
    pub async fn evaluate(&self, call: &ToolCall) -> Result<Decision, Error> {
        let response = self
            .send(reqwest::Method::POST, "/v1/evaluate", Some(call))
            .await?;
        let decision_id = response
            .headers()
            .get(DECISION_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let evaluation = read(response).await?;
        Ok(Decision {
            evaluation,
            decision_id,
        })
    }

    /// A model response through the approval gate: what runs, what is denied,
    /// what waits for a human. A thread already waiting is refused with 409.
    pub async fn submit_tool_calls(
        &self,
        thread_id: &str,
        run_id: &str,
        response: &ModelResponse,
    ) -> Result<GateOutcome, Error> {
        let path = format!(
            "/v1/threads/{}/runs/{}/tool-calls",
            segment(thread_id),
            segment(run_id)
        );
        read(
            self.send(reqwest::Method::POST, &path, Some(response))
                .await?,
        )
        .await
    }

    /// The thread's pending approvals (with `include_resolved`, all of them).
    pub async fn approvals(
        &self,
        thread_id: &str,
        include_resolved: bool,
    ) -> Result<Vec<ApprovalView>, Error> {
        let path = format!(
            "/v1/threads/{}/approvals{}",
            segment(thread_id),
            if include_resolved { "?all=true" } else { "" }
        );
        let page: ApprovalPage =
            read(self.send::<()>(reqwest::Method::GET, &path, None).await?).await?;
        Ok(page.approvals)
    }

    /// A human's answer to a pending approval.
    pub async fn resume(
        &self,
        thread_id: &str,
        approval_id: &str,
        answer: &ResumeRequest,
    ) -> Result<Resolution, Error> {
        let path = format!(
            "/v1/threads/{}/approvals/{}/resume",
            segment(thread_id),
            segment(approval_id)
        );
        read(
            self.send(reqwest::Method::POST, &path, Some(answer))
                .await?,
        )
        .await
    }

    /// Reloads the daemon's config file and swaps the provider set (admin).
    pub async fn reload(&self) -> Result<ReloadReport, Error> {
        read(
            self.send::<()>(reqwest::Method::POST, "/v1/admin/reload", None)
                .await?,
        )
        .await
    }

    /// The live provider set (admin).
    pub async fn providers(&self) -> Result<ProviderList, Error> {
        read(
            self.send::<()>(reqwest::Method::GET, "/v1/admin/providers", None)
                .await?,
        )
        .await
    }

    pub async fn health(&self) -> Result<Health, Error> {
        read(
            self.send::<()>(reqwest::Method::GET, "/healthz", None)
                .await?,
        )
        .await
    }

    async fn send<B: Serialize>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<reqwest::Response, Error> {
        let mut request = self.http.request(method, format!("{}{path}", self.url));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        request.send().await.map_err(|source| Error::Unavailable {
            url: self.url.clone(),
            source,
        })
    }
}

/// One path segment, percent-encoded (everything but unreserved characters).
fn segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The answer's JSON, or the refusal it carries.
async fn read<T: DeserializeOwned>(response: reqwest::Response) -> Result<T, Error> {
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(|err| Error::Decode {
        status,
        message: err.to_string(),
    })?;
    if status != 200 {
        return Err(match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(body) => Error::Refused {
                status,
                code: body.error.code,
                message: body.error.message,
            },
            Err(_) => Error::Refused {
                status,
                code: "unknown".into(),
                message: String::from_utf8_lossy(&bytes).into_owned(),
            },
        });
    }
    serde_json::from_slice(&bytes).map_err(|err| Error::Decode {
        status,
        message: err.to_string(),
    })
}
