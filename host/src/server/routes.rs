//! The HTTP routes: one table ([`routes`]) names every route with the role it
//! requires and its handler, so that the router, the OpenAPI document and the
//! test that holds them together read from the same place. Each handler starts
//! by authorizing its caller (401/403 before anything happens).

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::body::Body;
use axum::extract::{MatchedPath, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde::Serialize;

use super::auth::{Access, Principal, Role};
use super::body::{ApiError, read_json};
use super::{Daemon, Trigger};
use crate::approval::{ApprovalView, ListFilter, ModelResponse, ResumeRequest, RunRef};
use crate::config::{Limits, OnError};
use crate::decision_log::{Requester, status_verdict};
use crate::request::{Caller, RequestError, ToolCall};

/// The OpenAPI document of this API, kept in the repository.
pub const OPENAPI: &str = include_str!("../../../docs/openapi.json");

/// The response header that carries the decision log's id for a decision.
pub const DECISION_ID_HEADER: &str = "x-warden-decision-id";

/// One route of the API.
#[derive(Clone, Copy)]
pub struct RouteInfo {
    pub method: &'static str,
    pub path: &'static str,
    /// The role it requires; `None`: open to anyone who can connect.
    pub access: Option<Access>,
    handler: fn() -> Handler,
}

impl std::fmt::Debug for RouteInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

type Handler = MethodRouter<Arc<Daemon>>;

/// Every route the daemon serves, with its handler.
pub const ROUTES: &[RouteInfo] = &[
    RouteInfo {
        method: "POST",
        path: "/v1/evaluate",
        access: Some(Access::Agent),
        handler: || post(evaluate),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/runs/{run_id}/tool-calls",
        access: Some(Access::Agent),
        handler: || post(tool_calls),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/threads/{thread_id}/approvals",
        access: Some(Access::Agent),
        handler: || get(approvals),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/approvals/{approval_id}/resume",
        access: Some(Access::Agent),
        handler: || post(resume),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/admin/reload",
        access: Some(Access::Admin),
        handler: || post(reload),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/admin/providers",
        access: Some(Access::Admin),
        handler: || get(providers),
    },
    RouteInfo {
        method: "GET",
        path: "/healthz",
        access: None,
        handler: || get(healthz),
    },
    RouteInfo {
        method: "GET",
        path: "/metrics",
        access: None,
        handler: || get(metrics),
    },
    RouteInfo {
        method: "GET",
        path: "/openapi.json",
        access: None,
        handler: || get(openapi),
    },
];

/// The router over [`ROUTES`], counting and timing every request.
pub(super) fn router(daemon: Arc<Daemon>) -> Router {
    let mut router: Router<Arc<Daemon>> = Router::new();
    for route in ROUTES {
        router = router.route(route.path, (route.handler)());
    }
    router
        .route_layer(axum::middleware::from_fn_with_state(
            daemon.clone(),
            observe,
        ))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(daemon)
}

async fn observe(
    State(daemon): State<Arc<Daemon>>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route = matched.map(|m| m.as_str().to_owned());
    let response = next.run(request).await;
    daemon.metrics.http(
        route.as_deref().unwrap_or("unmatched"),
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not accept that method",
    )
}

fn request_error(err: RequestError) -> ApiError {
    match err {
        RequestError::TooLarge { .. } => ApiError::too_large(err.to_string()),
        _ => ApiError::bad_request(err.to_string()),
    }
}

/// `POST /v1/evaluate`: one tool call, the decision (as `warden eval` prints it).
async fn evaluate(
    State(daemon): State<Arc<Daemon>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let call = ToolCall::from_json(&bytes).map_err(request_error)?;
    // A thread waiting for a human starts nothing new until it is answered.
    if let Some(thread_id) = &call.context.thread_id {
        daemon.gate.check_thread(thread_id)?;
    }
    let caller = caller_of(&who);
    let (call, evaluation) = daemon.judge(call, caller).await?;
    let evaluation = evaluation.map_err(request_error)?;
    daemon.metrics.observe(&evaluation);
    let id = daemon
        .decisions
        .record(&call, &evaluation, Some(requester(&who)));
    let mut response = axum::Json(&evaluation).into_response();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(DECISION_ID_HEADER, value);
    }
    Ok(response)
}

/// Only a token's role makes a caller internal, never the request body.
fn caller_of(who: &Principal) -> Caller {
    match who.role {
        Role::Internal => Caller::Internal,
        _ => Caller::Agent,
    }
}

fn requester(who: &Principal) -> Requester<'_> {
    Requester {
        token: &who.name,
        role: who.role.as_str(),
    }
}

/// Runs blocking work (the approval store) off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ApiError::internal(format!("the request failed: {err}")))?
}

/// `POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`: a model response
/// through the approval gate: what runs, what is denied, what waits for a human.
async fn tool_calls(
    State(daemon): State<Arc<Daemon>>,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let caller = caller_of(&who);
    let worker = daemon.clone();
    let outcome = blocking(move || {
        let response = ModelResponse::from_json(&bytes)?;
        Ok(worker
            .gate
            .submit(&RunRef::new(thread_id, run_id), &response, caller)?)
    })
    .await?;
    for call in &outcome.calls {
        daemon.metrics.decision(
            status_verdict(call.status),
            call.decided_by.as_deref(),
            &call.reasons,
        );
    }
    daemon
        .decisions
        .record_gate(&outcome, Some(requester(&who)));
    Ok(axum::Json(outcome).into_response())
}

#[derive(Serialize)]
struct ApprovalPage {
    thread_id: String,
    approvals: Vec<ApprovalView>,
}

/// `GET /v1/threads/{thread_id}/approvals[?all=true]`: the thread's pending
/// approvals (with `all`, resolved ones too), with what a human needs to answer.
async fn approvals(
    State(daemon): State<Arc<Daemon>>,
    Path(thread_id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    daemon.authorize(&headers, Access::Agent)?;
    let mut include_resolved = false;
    for pair in query
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
    {
        match pair {
            "all" | "all=true" => include_resolved = true,
            "all=false" => include_resolved = false,
            other => {
                return Err(ApiError::bad_request(format!(
                    "unknown query parameter '{other}' (known: all=true|false)"
                )));
            }
        }
    }
    let filter = ListFilter {
        thread_id: Some(thread_id.clone()),
        include_resolved,
    };
    let worker = daemon.clone();
    let approvals = blocking(move || Ok(worker.gate.approvals(&filter)?)).await?;
    Ok(axum::Json(ApprovalPage {
        thread_id,
        approvals,
    })
    .into_response())
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/resume`: a human's
/// answer. The answer is serialised before the resume counts as handed over;
/// if that fails, the approval is put back to pending for a retry.
async fn resume(
    State(daemon): State<Arc<Daemon>>,
    Path((thread_id, approval_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let worker = daemon.clone();
    let (resolution, answer) = blocking(move || {
        let request = ResumeRequest::from_json(&bytes)?;
        let mut answer = Vec::new();
        let resolution = worker.gate.resume_and_hand_off(
            &thread_id,
            Some(&approval_id),
            &request,
            |resolution| serde_json::to_vec(resolution).map(|json| answer = json),
        )?;
        Ok((resolution, answer))
    })
    .await?;
    for call in &resolution.calls {
        daemon.metrics.decision(
            status_verdict(call.status),
            call.decided_by.as_deref(),
            &call.reasons,
        );
    }
    daemon
        .decisions
        .record_resolution(&resolution, Some(requester(&who)));
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// `POST /v1/admin/reload`: reload the config file and swap the provider set.
async fn reload(
    State(daemon): State<Arc<Daemon>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Admin)?;
    let trigger = Trigger::Admin(who.name.to_string());
    let worker = daemon.clone();
    let outcome = tokio::task::spawn_blocking(move || worker.reload(&trigger))
        .await
        .map_err(|err| ApiError::internal(format!("the reload failed: {err}")))?;
    match outcome {
        Ok(report) => Ok(axum::Json(report).into_response()),
        Err(err) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "reload_failed",
            err.to_string(),
        )),
    }
}

/// A provider of the live set, as `GET /v1/admin/providers` lists it.
#[derive(Serialize)]
struct ProviderStatus<'a> {
    name: &'a str,
    /// What the component says it is.
    provider: &'a str,
    version: &'a str,
    digest: &'a str,
    source: &'a str,
    limits: &'a Limits,
    on_error: OnError,
    loaded_since: String,
    pool: crate::provider::PoolUsage,
}

#[derive(Serialize)]
struct ProviderList<'a> {
    generation: u64,
    loaded_at: String,
    enabled: bool,
    providers: Vec<ProviderStatus<'a>>,
}

/// `GET /v1/admin/providers`: the live provider set.
async fn providers(
    State(daemon): State<Arc<Daemon>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    daemon.authorize(&headers, Access::Admin)?;
    let snapshot = daemon.warden.snapshot();
    let set = &snapshot.providers;
    let list = ProviderList {
        generation: set.generation(),
        loaded_at: rfc3339(set.loaded_at()),
        enabled: snapshot.guardrails.enabled,
        providers: set
            .providers()
            .iter()
            .map(|p| ProviderStatus {
                name: p.name(),
                provider: &p.info().name,
                version: &p.info().version,
                digest: p.digest(),
                source: p.source(),
                limits: p.limits(),
                on_error: p.on_error(),
                loaded_since: rfc3339(p.loaded_at()),
                pool: p.pool_usage(),
            })
            .collect(),
    };
    Ok(axum::Json(list).into_response())
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
    generation: u64,
    providers: usize,
}

/// `GET /healthz`: the daemon is up and has a provider set.
async fn healthz(State(daemon): State<Arc<Daemon>>) -> axum::Json<Health> {
    let snapshot = daemon.warden.snapshot();
    axum::Json(Health {
        status: "ok",
        generation: snapshot.providers.generation(),
        providers: snapshot.providers.providers().len(),
    })
}

/// `GET /metrics`: Prometheus text format.
async fn metrics(State(daemon): State<Arc<Daemon>>) -> Response {
    let (content_type, text) = daemon
        .metrics
        .render(&daemon.warden.snapshot(), daemon.decisions.write_errors());
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

/// `GET /openapi.json`: this API's description.
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

fn rfc3339(t: SystemTime) -> String {
    time::OffsetDateTime::from(t)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
