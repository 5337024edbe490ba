//! The HTTP routes: one table ([`ROUTES`]) names every route with the role it
//! requires and its handler, so that the router, the OpenAPI document and the
//! test that holds them together read from the same place. Each handler starts
//! by authorizing its caller (401/403 before anything happens).

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::{MatchedPath, Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};

use crate::auth::{Access, Principal, Role};
use crate::body::{ApiError, Refusal, read_checked, read_json};
use crate::outcomes::requester;
use crate::refusal::{self, OVERLOADED, STORE_UNAVAILABLE};
use crate::reload::Trigger;
use crate::state::DaemonState;
use serde_json::json;
use warden::Evaluation;
use warden_approval::validate::check_id;
use warden_approval::{self, ApprovalError, Authority, GateOutcome, GrantFilter, Reviewer};
use warden_approval::{InteractionQuery, ListFilter, ModelResponse, ResumeRequest, RunRef};
use warden_types::Caller;
use warden_types::admin::{Health, TokenInfo};
use warden_types::approval::{
    ApprovalPage, ClearRequest, GrantList, InteractionAnswer, RevokeRequest,
};
use warden_types::decision::Reason;
use warden_types::request::{RequestError, ToolCall};

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

type Handler = MethodRouter<Arc<DaemonState>>;

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
        access: Some(Access::Token),
        handler: || get(approvals),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/approvals/{approval_id}/resume",
        access: Some(Access::Token),
        handler: || post(resume),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/interaction",
        access: Some(Access::Agent),
        handler: || get(interaction),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/interaction",
        access: Some(Access::Agent),
        handler: || post(interaction_for),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/approvals/{approval_id}/clear",
        access: Some(Access::Token),
        handler: || post(clear),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/grants",
        access: Some(Access::Token),
        handler: || get(grants),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/grants/{grant_id}/revoke",
        access: Some(Access::Token),
        handler: || post(revoke_grant),
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

/// Whether the route at this matched path and method needs a bearer token.
fn needs_token(path: &str, method: &str) -> bool {
    ROUTES
        .iter()
        .any(|r| r.access.is_some() && r.path == path && r.method == method)
}

/// The router over [`ROUTES`], counting and timing every request.
pub(super) fn router(daemon: Arc<DaemonState>) -> Router {
    let mut router: Router<Arc<DaemonState>> = Router::new();
    for route in ROUTES {
        router = router.route(route.path, (route.handler)());
    }
    router
        // The console is not part of the /v1 API (nor of ROUTES and OpenAPI).
        .merge(super::console::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            crate::admission::Routes {
                daemon: daemon.clone(),
                needs_token,
            },
            crate::admission::admit,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            daemon.clone(),
            observe,
        ))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(daemon)
}

async fn observe(
    State(daemon): State<Arc<DaemonState>>,
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

/// What a route answers when the judging pool refused its work.
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

/// `POST /v1/evaluate`: one tool call, the decision (as `warden eval` prints it).
/// What the agent's model controls never makes an error here: a body too large,
/// not JSON, too deep, with a duplicate key, a bad tool name or id, or a thread
/// waiting for a human, is a deny decision, logged like any other.
async fn evaluate(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let bytes = match read_checked(&headers, body, &daemon.limits()).await? {
        Ok(bytes) => bytes,
        Err(refusal) => {
            let call = what_was_sent(refusal.body.as_deref().unwrap_or_default());
            return Ok(refuse(&daemon, &who, &call, refusal).await);
        }
    };
    let call = match ToolCall::from_checked_json(&bytes) {
        Ok(call) => Arc::new(call),
        Err(err) => {
            return match Refusal::of(&err) {
                Some(refusal) => Ok(refuse(&daemon, &who, &what_was_sent(&bytes), refusal).await),
                None => Err(request_error(err)),
            };
        }
    };
    let caller = caller_of(&who);
    let judged = {
        let (call, principal) = (call.clone(), who.name.clone());
        daemon
            .offload(move |daemon| judge_call(daemon, &principal, &call, caller))
            .await
    };
    let evaluation = match judged {
        Ok(judged) => judged?,
        Err(err) if err.is_overload() => {
            let generation = daemon.warden.snapshot().generation();
            refusal::evaluation(&call, caller, generation, OVERLOADED, &err.to_string())
                .map_err(request_error)?
        }
        Err(err) => return Err(ApiError::from(err)),
    };
    Ok(decided(&daemon, &who, &call, &evaluation).await)
}

/// The error for what only the harness controls in a call (its context).
fn request_error(err: RequestError) -> ApiError {
    ApiError::bad_request(err.to_string())
}

/// Answers a decision: counted, logged (and synced, with `fsync: always`), its
/// log id in the header.
async fn decided(
    daemon: &DaemonState,
    who: &Principal,
    call: &ToolCall,
    evaluation: &Evaluation,
) -> Response {
    daemon.metrics.observe(evaluation);
    let id = daemon
        .decisions
        .record(call, evaluation, Some(requester(who)));
    daemon.decisions.synced().await;
    let mut response = axum::Json(evaluation).into_response();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(DECISION_ID_HEADER, value);
    }
    response
}

/// The deny decision for a request refused before it could be judged.
async fn refuse(
    daemon: &DaemonState,
    who: &Principal,
    call: &ToolCall,
    refusal: Refusal,
) -> Response {
    let evaluation = daemon.warden.refusal(refusal.code, &refusal.message);
    let mut response = decided(daemon, who, call, &evaluation).await;
    if refusal.body.is_none() {
        close_after(&mut response);
    }
    response
}

/// A body refused before it was read to its end (too large) may still be on
/// its way, so the connection cannot carry another request: say so.
fn close_after(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

/// What a refused body said it was, for the decision log: its tool name and
/// ids when it is JSON and they are short strings, else nothing.
fn what_was_sent(bytes: &[u8]) -> ToolCall {
    let body: serde_json::Value = serde_json::from_slice(bytes).unwrap_or_default();
    let text = |v: &serde_json::Value| {
        v.as_str()
            .filter(|s| {
                s.len() <= warden_types::request::MAX_ID_BYTES && !s.chars().any(char::is_control)
            })
            .map(str::to_string)
    };
    let mut call = ToolCall::new(text(&body["tool_name"]).unwrap_or_default(), json!({}));
    call.tool_call_id = text(&body["tool_call_id"]);
    let context = &body["context"];
    call.context.thread_id = text(&context["thread_id"]);
    call.context.run_id = text(&context["run_id"]);
    call.context.agent_id = text(&context["agent_id"]);
    call
}

/// On a judging thread: the thread's pending approval, then the pipeline
/// ([`warden_approval::ApprovalGate::evaluate`]).
fn judge_call(
    daemon: &DaemonState,
    principal: &str,
    call: &ToolCall,
    caller: Caller,
) -> Result<Evaluation, ApiError> {
    daemon
        .gate
        .evaluate(principal, call, caller)
        .map_err(request_error)
}

/// Only a token makes a caller internal, or believed on an attribution field
/// (`asserts:`), never the request body.
fn caller_of(who: &Principal) -> Caller {
    Caller::of_credential(who.role == Role::Internal, who.asserts)
}

/// `POST /v1/threads/{thread_id}/runs/{run_id}/tool-calls`: a model response
/// through the approval gate: what runs, what is denied, what waits for a human.
async fn tool_calls(
    State(daemon): State<Arc<DaemonState>>,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let run = RunRef::new(thread_id, run_id).of(&*who.name);
    check_id("thread_id", &run.thread_id).map_err(ApprovalError::from)?;
    check_id("run_id", &run.run_id).map_err(ApprovalError::from)?;
    let caller = caller_of(&who);
    let mut unread = false;
    let outcome = match read_checked(&headers, body, &daemon.limits()).await? {
        // Every call it lists is denied; when it cannot be read, none is listed
        // and none runs.
        Err(refusal) => {
            unread = refusal.body.is_none();
            let message = refusal
                .body
                .as_deref()
                .and_then(|body| serde_json::from_slice::<ModelResponse>(body).ok())
                .map(|response| response.message);
            let reason = Reason::new(refusal.code, refusal.message);
            let outcome = daemon.gate.refuse(&run, message.as_ref(), reason);
            if outcome.calls.is_empty() {
                // Nothing to log per call: log the refusal itself.
                let mut call = ToolCall::new("", json!({}));
                call.context.thread_id = Some(run.thread_id.clone());
                call.context.run_id = Some(run.run_id.clone());
                let notice = &outcome.notices[0];
                let evaluation = daemon.warden.refusal(&notice.code, &notice.message);
                daemon.metrics.observe(&evaluation);
                daemon
                    .decisions
                    .record(&call, &evaluation, Some(requester(&who)));
            }
            outcome
        }
        Ok(bytes) => {
            let submitted = {
                let (run, bytes) = (run.clone(), bytes.clone());
                daemon
                    .offload(move |daemon| submit(daemon, &run, &bytes, caller))
                    .await
            };
            match submitted {
                Ok(outcome) => outcome?,
                Err(err) if err.is_overload() => {
                    let response = ModelResponse::from_json(&bytes)?;
                    let generation = daemon.warden.snapshot().generation();
                    refusal::gate_outcome(
                        &run,
                        &response,
                        caller,
                        generation,
                        OVERLOADED,
                        &err.to_string(),
                    )?
                }
                Err(err) => return Err(ApiError::from(err)),
            }
        }
    };
    daemon.record_gate(&outcome, &who).await;
    let mut response = axum::Json(outcome).into_response();
    if unread {
        close_after(&mut response);
    }
    Ok(response)
}

/// On a judging thread: a model response through the gate. When the store
/// cannot be read or written, nothing of the response runs.
fn submit(
    daemon: &DaemonState,
    run: &RunRef,
    bytes: &[u8],
    caller: Caller,
) -> Result<GateOutcome, ApiError> {
    let response = ModelResponse::from_json(bytes)?;
    match daemon.gate.submit(run, &response, caller) {
        Err(ApprovalError::Store(err)) => {
            let generation = daemon.warden.snapshot().generation();
            let message = format!("the approval store failed: {err}");
            Ok(refusal::gate_outcome(
                run,
                &response,
                caller,
                generation,
                STORE_UNAVAILABLE,
                &message,
            )?)
        }
        other => Ok(other?),
    }
}

/// The principal whose approvals a caller sees: an agent or internal token
/// its own; an approver (or a permitted admin) everyone's (`None`).
fn visible_to(daemon: &DaemonState, who: &Principal) -> Result<Option<String>, ApiError> {
    match (who.role, daemon.authority(who)) {
        (Role::Agent | Role::Internal, _) => Ok(Some(who.name.to_string())),
        (_, Authority::Approver) => Ok(None),
        _ => Err(ApprovalError::ApproverRequired {
            token: who.name.to_string(),
            role: who.role.to_string(),
        }
        .into()),
    }
}

/// `GET /v1/threads/{thread_id}/approvals[?all=true]`: the thread's pending
/// approvals (with `all`, resolved ones too), with what a human needs to
/// answer. An agent's token lists its own principal's thread; an approver's
/// every principal's thread of that id.
async fn approvals(
    State(daemon): State<Arc<DaemonState>>,
    Path(thread_id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Token)?;
    let principal = visible_to(&daemon, &who)?;
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
        principal,
        thread_id: Some(thread_id.clone()),
        include_resolved,
    };
    let approvals = daemon
        .offload(move |daemon| daemon.gate.approvals(&filter))
        .await
        .map_err(ApiError::from)??;
    Ok(axum::Json(ApprovalPage {
        thread_id,
        approvals,
    })
    .into_response())
}

/// The header that carries a resume's idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// Who answers, for the caller: 403 `approver_required` for a token that may
/// not answer at all, before its body is read.
fn answering(daemon: &DaemonState, who: &Principal) -> Result<Answerer, ApiError> {
    match daemon.authority(who) {
        Authority::Denied => Err(ApprovalError::ApproverRequired {
            token: who.name.to_string(),
            role: who.role.to_string(),
        }
        .into()),
        authority => Ok(Answerer {
            token: who.clone(),
            authority,
        }),
    }
}

/// A token that may answer approvals, with the authority it answers under.
struct Answerer {
    token: Principal,
    authority: Authority,
}

impl Answerer {
    /// The reviewer an answer is recorded under; `claimed` is the body's
    /// `reviewer` (required from a relay, its own name from an approver).
    fn reviewer(&self, claimed: Option<&str>) -> Result<Reviewer, ApprovalError> {
        Reviewer::authorize(
            &self.token.name,
            self.token.role.as_str(),
            &self.authority,
            claimed,
        )
    }
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/resume`: a human's
/// answer, from an approver in its own name, or relayed by a `relay: true`
/// token naming the human in `reviewer`; any other token gets 403
/// `approver_required`. Idempotent: the same resume (the `Idempotency-Key`
/// header, else its `run_id`, and the same body) gets the stored answer with
/// `replayed: true`. The answer is serialised before the resume counts as
/// handed over; if that fails, the approval is put back to pending.
async fn resume(
    State(daemon): State<Arc<DaemonState>>,
    Path((thread_id, approval_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Token)?;
    let answerer = answering(&daemon, &who)?;
    let key = match headers.get(IDEMPOTENCY_KEY_HEADER) {
        None => None,
        Some(value) => Some(value.to_str().map(str::to_string).map_err(|_| {
            ApprovalError::InvalidDecision {
                field: "Idempotency-Key".into(),
                message: "must be visible ASCII".into(),
            }
        })?),
    };
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let (resolution, answer) = daemon
        .offload(move |daemon| -> Result<_, ApiError> {
            let mut request = ResumeRequest::from_json(&bytes)?;
            request.idempotency_key = key;
            warden_approval::resume::check_resume(&request)?;
            let reviewer = answerer.reviewer(request.reviewer.as_deref())?;
            let mut answer = Vec::new();
            let resolution = daemon.gate.resume_and_hand_off(
                &reviewer,
                &thread_id,
                Some(&approval_id),
                &request,
                |resolution| serde_json::to_vec(resolution).map(|json| answer = json),
            )?;
            Ok((resolution, answer))
        })
        .await
        .map_err(ApiError::from)??;
    // A replay was logged when it was first answered.
    if !resolution.replayed {
        daemon.record_resolution(&resolution, &who).await;
    }
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// The body of a human's answer other than a resume (a clear, a revoke),
/// parsed strictly.
fn answer_body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    warden_approval::validate::parse_body(bytes, warden_approval::resume::MAX_RESUME_BYTES)
        .map_err(|err| ApprovalError::in_answer(err).into())
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/clear`: rejects a
/// pending approval as a whole (any pause, even one that cannot take per-call
/// decisions), journalled with the reviewer. Who may: as for a resume.
async fn clear(
    State(daemon): State<Arc<DaemonState>>,
    Path((thread_id, approval_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Token)?;
    let answerer = answering(&daemon, &who)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let resolution = daemon
        .offload(move |worker| -> Result<_, ApiError> {
            let request: ClearRequest = answer_body(&bytes)?;
            if request
                .reason
                .as_ref()
                .is_some_and(|r| r.len() > warden_approval::resume::MAX_MESSAGE_BYTES)
            {
                return Err(ApprovalError::InvalidDecision {
                    field: "reason".into(),
                    message: "is too long".into(),
                }
                .into());
            }
            let reviewer = answerer.reviewer(request.reviewer.as_deref())?;
            let cleared = worker.gate.clear(
                &reviewer,
                &thread_id,
                Some(&approval_id),
                request.reason.as_deref(),
            )?;
            cleared.ok_or_else(|| ApiError::internal("the clear of a named approval found nothing"))
        })
        .await
        .map_err(ApiError::from)??;
    daemon.record_resolution(&resolution, &who).await;
    Ok(axum::Json(resolution).into_response())
}

/// `GET /v1/grants[?all=true]`: standing grants, newest first: live ones
/// (with `all`, expired and revoked ones too). An agent's token sees its own
/// principal's; an approver's everyone's.
async fn grants(
    State(daemon): State<Arc<DaemonState>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Token)?;
    let principal = visible_to(&daemon, &who)?;
    let include_inactive = match query.as_deref().unwrap_or("") {
        "" | "all=false" => false,
        "all" | "all=true" => true,
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown query parameter '{other}' (known: all=true|false)"
            )));
        }
    };
    let filter = GrantFilter {
        principal,
        include_inactive,
    };
    let grants = daemon
        .offload(move |daemon| daemon.gate.grants(&filter))
        .await
        .map_err(ApiError::from)??;
    Ok(axum::Json(GrantList { grants }).into_response())
}

/// `POST /v1/grants/{grant_id}/revoke`: ends a standing grant at once,
/// journalled with the reviewer. Who may: as for a resume (a relay only its
/// own principal's grants).
async fn revoke_grant(
    State(daemon): State<Arc<DaemonState>>,
    Path(grant_id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Token)?;
    let answerer = answering(&daemon, &who)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let grant = daemon
        .offload(move |daemon| -> Result<_, ApiError> {
            let request: RevokeRequest = answer_body(&bytes)?;
            let reviewer = answerer.reviewer(request.reviewer.as_deref())?;
            Ok(daemon.gate.revoke_grant(&reviewer, &grant_id)?)
        })
        .await
        .map_err(ApiError::from)??;
    Ok(axum::Json(grant).into_response())
}

/// `GET /v1/interaction`: the interaction policy of a run with no context.
async fn interaction(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    answer_interaction(&daemon, &who, &InteractionQuery::default())
}

/// `POST /v1/interaction`: the interaction policy of a run with this context
/// (`{"context": {...}, "tools": [...]}`).
async fn interaction_for(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let who = daemon.authorize(&headers, Access::Agent)?;
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let query: InteractionQuery = warden_approval::validate::parse_body(&bytes, bytes.len())
        .map_err(|err| ApiError::bad_request(err.to_string()))?;
    answer_interaction(&daemon, &who, &query)
}

fn answer_interaction(
    daemon: &DaemonState,
    who: &Principal,
    query: &InteractionQuery,
) -> Result<Response, ApiError> {
    let snapshot = daemon.warden.snapshot();
    let report =
        warden_approval::interaction::resolve(query, caller_of(who), snapshot.approval_list())
            .map_err(|err| ApiError::bad_request(err.to_string()))?;
    Ok(axum::Json(InteractionAnswer {
        report,
        caller: TokenInfo {
            token: who.name.to_string(),
            role: who.role.as_str().to_string(),
        },
    })
    .into_response())
}

/// `POST /v1/admin/reload`: reload the config file and swap the provider set.
async fn reload(
    State(daemon): State<Arc<DaemonState>>,
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

/// `GET /v1/admin/providers`: the live provider set.
async fn providers(
    State(daemon): State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    daemon.authorize(&headers, Access::Admin)?;
    Ok(axum::Json(daemon.warden.providers()).into_response())
}

/// `GET /healthz`: the daemon is up and has a provider set.
async fn healthz(State(daemon): State<Arc<DaemonState>>) -> axum::Json<Health> {
    axum::Json(daemon.warden.health())
}

/// `GET /metrics`: Prometheus text format.
async fn metrics(State(daemon): State<Arc<DaemonState>>) -> Response {
    daemon.metrics.load(daemon.current_load());
    let (content_type, text) = daemon
        .metrics
        .render(&daemon.warden.snapshot(), daemon.decisions.write_errors());
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

/// `GET /openapi.json`: this API's description.
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
