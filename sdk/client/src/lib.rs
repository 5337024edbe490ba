//! An async client for the Warden daemon (`warden serve`), for agent harnesses
//! written in Rust that run Warden as a separate process. (To embed the
//! pipeline in-process instead, use the `warden` crate's `Warden`.)
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

#![deny(missing_docs)]

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The header that carries a decision's id in the decision log.
pub const DECISION_ID_HEADER: &str = "x-warden-decision-id";

/// Why no answer could be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The URL given is not an http(s) URL.
    #[error("'{0}' is not an http(s) URL")]
    Url(String),
    /// The daemon could not be reached (connection, timeout, TLS).
    #[error("cannot reach warden at {url}: {source}")]
    Unavailable {
        /// The daemon's URL.
        url: String,
        /// What failed.
        #[source]
        source: reqwest::Error,
    },
    /// The daemon refused the request with an HTTP error.
    #[error("warden answered {status} {code}: {message}")]
    Refused {
        /// The HTTP status.
        status: u16,
        /// `unauthorized`, `forbidden`, `invalid_request`, `reload_failed`, ...
        code: String,
        /// The daemon's message.
        message: String,
    },
    /// The daemon's answer could not be read as the expected JSON.
    #[error("warden's answer ({status}) could not be read: {message}")]
    Decode {
        /// The HTTP status.
        status: u16,
        /// Why it could not be read.
        message: String,
    },
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

// The wire types are the daemon's own (`warden-types`): the client cannot
// drift from what the daemon sends and takes.
pub use warden_types::admin::{
    Health, Limits, PoolUsage, ProviderDigest, ProviderList, ProviderStatus, ReloadReport,
    TokenInfo,
};
pub use warden_types::approval::{
    AiMessage, AnsweredBy, ApprovalPage, ApprovalRequest, ApprovalStatus, ApprovalView,
    CallOutcome, CallStatus, DecisionKind, GateOutcome, Grant, GrantList, GrantRequest, GrantScope,
    GrantTarget, InteractionAnswer, InteractionQuery, InteractionReport, ListedTools, McpAskAnswer,
    McpAttestation, ModelResponse, ModelToolCall, NetworkRequests, RejectAll, RequestDecision,
    Resolution, ResolvedBy, ResumeRequest, RunState,
};
pub use warden_types::error::{ErrorBody, ErrorDetail};
pub use warden_types::tools::{OfferAnswer, OfferQuery};
pub use warden_types::{
    CallContext, ClassifierReport, DecisionRecord, Evaluation, InteractionMode, OnError, Reason,
    Risk, StageReport, ToolCall, Verdict,
};

/// A decision and its id in the daemon's decision log.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The daemon's decision.
    pub evaluation: Evaluation,
    /// Its id in the decision log (`x-warden-decision-id`), when the log is on.
    pub decision_id: Option<String>,
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

    /// The client, or [`Error::Url`] when the URL is not http(s).
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
    /// A client of the daemon at `url` (`http://127.0.0.1:8787`), to configure.
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

    /// `POST /v1/mcp/asks`: an ask on one MCP call of this token's principal:
    /// the human's answer to its earlier ask, consumed now (no other request
    /// gets it), else the pending ask, else a new one. Never retried: a lost
    /// answer is consumed, and the call is asked again (fail closed).
    pub async fn mcp_ask(&self, call: &ToolCall) -> Result<McpAskAnswer, Error> {
        read(
            self.send(
                reqwest::Method::POST,
                "/v1/mcp/asks",
                Some(call),
                Retry::Once,
            )
            .await?,
        )
        .await
    }

    /// `POST /v1/mcp/asks/attest`: an MCP client's own answer to the pending
    /// ask of one MCP call (the elicitation `warden mcp` sent it), recorded as
    /// client-attested and read by that call at once. Not retried: a lost
    /// answer leaves the ask answered, and the call is asked again.
    pub async fn mcp_attest(&self, attestation: &McpAttestation) -> Result<McpAskAnswer, Error> {
        read(
            self.send(
                reqwest::Method::POST,
                "/v1/mcp/asks/attest",
                Some(attestation),
                Retry::Once,
            )
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
        let page: GrantList = read(
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

    /// Makes the daemon's shadow configuration live, keeping the replaced
    /// set for [`Client::rollback`] (admin); with `write`, the daemon
    /// rewrites its config file so that the candidate is the config.
    pub async fn promote(&self, write: bool) -> Result<ReloadReport, Error> {
        let path = if write {
            "/v1/admin/promote?write=true"
        } else {
            "/v1/admin/promote"
        };
        read(
            self.send::<()>(reqwest::Method::POST, path, None, Retry::Once)
                .await?,
        )
        .await
    }

    /// Makes the set the daemon's last promotion replaced live again (admin).
    pub async fn rollback(&self) -> Result<ReloadReport, Error> {
        read(
            self.send::<()>(
                reqwest::Method::POST,
                "/v1/admin/rollback",
                None,
                Retry::Once,
            )
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
    ) -> Result<InteractionAnswer, Error> {
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

    /// Which of these tools (`mcp__<server>__<tool>`) may be offered: those
    /// the native rules deny by name alone are not (`POST /v1/tools/offered`).
    pub async fn offered(&self, tools: &[String]) -> Result<OfferAnswer, Error> {
        let query = OfferQuery {
            tools: tools.to_vec(),
        };
        read(
            self.send(
                reqwest::Method::POST,
                "/v1/tools/offered",
                Some(&query),
                Retry::Idempotent,
            )
            .await?,
        )
        .await
    }

    /// `GET /healthz`: the daemon is up and has a provider set.
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
