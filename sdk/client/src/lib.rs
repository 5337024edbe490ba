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
//!
//! Only idempotent requests are retried when the daemon cannot be reached (or
//! answers 503): reads, and resumes, which the daemon makes idempotent by their
//! key (the `Idempotency-Key` header, else the resume's `run_id`). A retried
//! resume that was consumed the first time comes back with `replayed: true`:
//! its calls were handed over already, and must not run twice.

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

/// `POST /v1/interaction`: a run's context, and the tools the harness would offer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InteractionQuery {
    #[serde(default)]
    pub context: CallContext,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// The token that asked, as the daemon knows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenInfo {
    /// The token's name (the principal).
    pub token: String,
    /// `agent`, `internal`, ...: only an internal token may set the mode.
    pub role: String,
}

/// A run's resolved interaction policy (`GET`/`POST /v1/interaction`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InteractionReport {
    pub mode: InteractionMode,
    /// An ask pauses for a human rather than being denied.
    pub can_ask_human: bool,
    #[serde(default)]
    pub why_no_human: Option<String>,
    /// What a tool under `hitl_approval` does: `pause`, `run` or `deny`.
    pub approval_listed_tools: String,
    /// The harness's tools the agent may be offered (when it sent them).
    #[serde(default)]
    pub offered_tools: Option<Vec<String>>,
    /// Tools the agent must not be offered in this run.
    pub withheld_tools: Vec<String>,
    /// `ask_human` or `deny`: a sandbox network request that needs a human.
    pub network_requests: String,
    /// For the agent's system prompt.
    pub guidance: String,
    #[serde(default)]
    pub dropped_keys: Vec<String>,
    pub caller: TokenInfo,
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
    /// The token (principal) whose thread paused.
    #[serde(default)]
    pub principal: String,
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
    /// With an approval: allow the same call (or the calls a rule matches) in
    /// this thread (or for this agent) for some minutes, without asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<GrantRequest>,
}

impl RequestDecision {
    /// Approves the request.
    pub fn approve(request_id: impl Into<String>) -> Self {
        RequestDecision {
            request_id: request_id.into(),
            decision: DecisionKind::Approve,
            args: None,
            message: None,
            grant: None,
        }
    }

    /// Approves the request and grants the same for `minutes`.
    pub fn with_grant(mut self, grant: GrantRequest) -> Self {
        self.grant = Some(grant);
        self
    }
}

/// What an approver grants with an approval (see the README, "Standing grants").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRequest {
    /// `thread` (the approved call's thread) or `agent` (every thread of its principal).
    pub scope: String,
    /// From 1 to 1440.
    pub minutes: u64,
    /// A permission rule the approved call matches; absent: exactly that call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A standing grant, as the daemon lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub grant_id: String,
    pub principal: String,
    /// `None`: every thread of the principal.
    pub thread_id: Option<String>,
    /// What it allows: `{"kind": "call", "tool", "args_sha256"}` or `{"kind": "rule", "rule"}`.
    pub target: Value,
    pub approval_id: String,
    pub granted_by: String,
    pub created_at: String,
    pub expires_at: String,
    #[serde(default)]
    pub revoked_at: Option<String>,
    #[serde(default)]
    pub revoked_by: Option<String>,
}

#[derive(Deserialize)]
struct GrantPage {
    grants: Vec<Grant>,
}

/// A resume: a decision for every pending request, or one reject-all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Vec<RequestDecision>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_all: Option<RejectAll>,
    /// The run that carries the answered calls on (default: the one that
    /// paused); the idempotency key when none is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The human who answered: required from a relay token, absent (or its
    /// own name) from an approver token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// Sent as the `Idempotency-Key` header.
    #[serde(skip)]
    pub idempotency_key: Option<String>,
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

    /// Names the human who answered (for a relay token).
    pub fn reviewer(mut self, name: impl Into<String>) -> Self {
        self.reviewer = Some(name.into());
        self
    }

    /// The run that carries the answered calls on.
    pub fn run(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// The idempotency key (default: the run id).
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }
}

/// How a resumed approval ended: every call of the paused message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub approval_id: String,
    pub thread_id: String,
    pub run_id: String,
    pub resolved_by: Value,
    /// The human who answered or cleared.
    #[serde(default)]
    pub reviewer: Option<String>,
    /// The token that relayed the human's answer.
    #[serde(default)]
    pub relayed_by: Option<String>,
    /// The stored answer to the same resume made before: run nothing from it
    /// that already ran.
    #[serde(default)]
    pub replayed: bool,
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
    retries: u32,
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

    /// How many times an idempotent request is tried again when the daemon
    /// cannot be reached or answers 503 (default 2; 50 ms, then doubling).
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
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
            retries: self.retries,
        })
    }
}

/// A client for one daemon; cheap to clone, connections are kept alive.
#[derive(Clone)]
pub struct Client {
    url: String,
    token: Option<String>,
    http: reqwest::Client,
    retries: u32,
}

/// Whether a request may be sent again after a failure.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// It changes nothing, or the daemon recognises it when repeated.
    Idempotent,
    /// Sending it twice could act twice.
    Once,
}

/// The delay before the first retry; doubled for each next one.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);

impl Client {
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            url: url.into(),
            token: None,
            timeout: Duration::from_secs(5),
            retries: 2,
        }
    }

    /// Judges one tool call.
    pub async fn evaluate(&self, call: &ToolCall) -> Result<Decision, Error> {
        let response = self
            .send(
                reqwest::Method::POST,
                "/v1/evaluate",
                Some(call),
                Retry::Once,
            )
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
            self.send(reqwest::Method::POST, &path, Some(response), Retry::Once)
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
        let page: ApprovalPage = read(
            self.send::<()>(reqwest::Method::GET, &path, None, Retry::Idempotent)
                .await?,
        )
        .await?;
        Ok(page.approvals)
    }

    /// A human's answer to a pending approval: with an approver token, in its
    /// own name; with a relay token, naming the human in `answer.reviewer`.
    /// Retried when the daemon cannot be reached: the same resume again gets
    /// the stored answer (`replayed: true`), never a second consumption.
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
        let key = answer.idempotency_key.as_deref();
        read(
            self.send_with(
                reqwest::Method::POST,
                &path,
                Some(answer),
                key,
                Retry::Idempotent,
            )
            .await?,
        )
        .await
    }

    /// Rejects a pending approval as a whole (approver, or a relay token
    /// naming the human in `reviewer`). Not retried: a second clear is 409.
    pub async fn clear(
        &self,
        thread_id: &str,
        approval_id: &str,
        reason: Option<&str>,
        reviewer: Option<&str>,
    ) -> Result<Resolution, Error> {
        let path = format!(
            "/v1/threads/{}/approvals/{}/clear",
            segment(thread_id),
            segment(approval_id)
        );
        let body = serde_json::json!({"reason": reason, "reviewer": reviewer});
        let body: Map<String, Value> = body
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        read(
            self.send(reqwest::Method::POST, &path, Some(&body), Retry::Once)
                .await?,
        )
        .await
    }

    /// Standing grants, newest first: live ones (with `include_inactive`,
    /// expired and revoked ones too). An agent's token sees its own.
    pub async fn grants(&self, include_inactive: bool) -> Result<Vec<Grant>, Error> {
        let path = if include_inactive {
            "/v1/grants?all=true"
        } else {
            "/v1/grants"
        };
        let page: GrantPage = read(
            self.send::<()>(reqwest::Method::GET, path, None, Retry::Idempotent)
                .await?,
        )
        .await?;
        Ok(page.grants)
    }

    /// Ends a standing grant now (approver, or a relay token naming the human
    /// in `reviewer`). Retried: revoking a revoked grant changes nothing.
    pub async fn revoke_grant(
        &self,
        grant_id: &str,
        reviewer: Option<&str>,
    ) -> Result<Grant, Error> {
        let path = format!("/v1/grants/{}/revoke", segment(grant_id));
        let body = match reviewer {
            Some(name) => serde_json::json!({ "reviewer": name }),
            None => serde_json::json!({}),
        };
        read(
            self.send(reqwest::Method::POST, &path, Some(&body), Retry::Idempotent)
                .await?,
        )
        .await
    }

    /// Reloads the daemon's config file and swaps the provider set (admin).
    pub async fn reload(&self) -> Result<ReloadReport, Error> {
        read(
            self.send::<()>(reqwest::Method::POST, "/v1/admin/reload", None, Retry::Once)
                .await?,
        )
        .await
    }

    /// The live provider set (admin).
    pub async fn providers(&self) -> Result<ProviderList, Error> {
        read(
            self.send::<()>(
                reqwest::Method::GET,
                "/v1/admin/providers",
                None,
                Retry::Idempotent,
            )
            .await?,
        )
        .await
    }

    /// The interaction policy of a run: with no query, a run without context
    /// (`GET /v1/interaction`); with one, that run's (`POST`).
    pub async fn interaction(
        &self,
        query: Option<&InteractionQuery>,
    ) -> Result<InteractionReport, Error> {
        let response = match query {
            None => {
                self.send::<()>(
                    reqwest::Method::GET,
                    "/v1/interaction",
                    None,
                    Retry::Idempotent,
                )
                .await?
            }
            Some(query) => {
                self.send(
                    reqwest::Method::POST,
                    "/v1/interaction",
                    Some(query),
                    Retry::Idempotent,
                )
                .await?
            }
        };
        read(response).await
    }

    pub async fn health(&self) -> Result<Health, Error> {
        read(
            self.send::<()>(reqwest::Method::GET, "/healthz", None, Retry::Idempotent)
                .await?,
        )
        .await
    }

    async fn send<B: Serialize>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
        retry: Retry,
    ) -> Result<reqwest::Response, Error> {
        self.send_with(method, path, body, None, retry).await
    }

    /// Sends a request; an idempotent one again, after a backoff, when the
    /// daemon could not be reached or answered 503.
    async fn send_with<B: Serialize>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&B>,
        idempotency_key: Option<&str>,
        retry: Retry,
    ) -> Result<reqwest::Response, Error> {
        let retries = if retry == Retry::Idempotent {
            self.retries
        } else {
            0
        };
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 0;
        loop {
            let mut request = self
                .http
                .request(method.clone(), format!("{}{path}", self.url));
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            if let Some(key) = idempotency_key {
                request = request.header("Idempotency-Key", key);
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            let again = attempt < retries;
            match request.send().await {
                Ok(response) if response.status().as_u16() == 503 && again => {}
                Ok(response) => return Ok(response),
                Err(_) if again => {}
                Err(source) => {
                    return Err(Error::Unavailable {
                        url: self.url.clone(),
                        source,
                    });
                }
            }
            tokio::time::sleep(backoff).await;
            backoff *= 2;
            attempt += 1;
        }
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
