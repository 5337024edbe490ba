//! A thread's approvals (list, resume, clear) and the interaction policy of
//! a run: what a human answers and what an agent asks before it runs.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use warden_approval::{ApprovalError, InteractionQuery, ListFilter, ResumeRequest};
use warden_types::admin::TokenInfo;
use warden_types::approval::{ApprovalPage, ClearRequest, InteractionAnswer};

use super::extract::{Answerer, Authorized, JsonBody, Visible, caller_of, on_pool};
use crate::auth::Principal;
use crate::body::ApiError;
use crate::state::DaemonState;

/// The header that carries a resume's idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "idempotency-key";

/// `GET /v1/threads/{thread_id}/approvals[?all=true]`: the thread's pending
/// approvals (with `all`, resolved ones too), with what a human needs to
/// answer. An agent's token lists its own principal's thread; an approver's
/// every principal's thread of that id.
pub(super) async fn approvals(
    State(daemon): State<Arc<DaemonState>>,
    Visible(principal): Visible,
    Path(thread_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
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
            other => return Err(unknown_query(other)),
        }
    }
    let filter = ListFilter {
        principal,
        thread_id: Some(thread_id.clone()),
        include_resolved,
    };
    let approvals = on_pool(&daemon, move |daemon| daemon.gate.approvals(&filter)).await?;
    Ok(axum::Json(ApprovalPage {
        thread_id,
        approvals,
    })
    .into_response())
}

/// 400 for a query parameter the listing routes do not know.
pub(super) fn unknown_query(pair: &str) -> ApiError {
    ApiError::bad_request(format!(
        "unknown query parameter '{pair}' (known: all=true|false)"
    ))
}

/// A resume's `Idempotency-Key` header, if any: visible ASCII, checked
/// before the body is read.
pub(super) struct IdempotencyKey(Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for IdempotencyKey {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get(IDEMPOTENCY_KEY_HEADER) else {
            return Ok(IdempotencyKey(None));
        };
        let key = value.to_str().map_err(|_| ApprovalError::InvalidDecision {
            field: "Idempotency-Key".into(),
            message: "must be visible ASCII".into(),
        })?;
        Ok(IdempotencyKey(Some(key.to_string())))
    }
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/resume`: a human's
/// answer, from an approver in its own name, or relayed by a `relay: true`
/// token naming the human in `reviewer`; any other token gets 403
/// `approver_required`. Idempotent: the same resume (the `Idempotency-Key`
/// header, else its `run_id`, and the same body) gets the stored answer with
/// `replayed: true`. The answer is serialised before the resume counts as
/// handed over; if that fails, the approval is put back to pending.
pub(super) async fn resume(
    State(daemon): State<Arc<DaemonState>>,
    answerer: Answerer,
    Path((thread_id, approval_id)): Path<(String, String)>,
    IdempotencyKey(key): IdempotencyKey,
    JsonBody(bytes): JsonBody,
) -> Result<Response, ApiError> {
    let who = answerer.token.clone();
    let (resolution, answer) = on_pool(&daemon, move |daemon| -> Result<_, ApiError> {
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
    .await?;
    // A replay was logged when it was first answered.
    if !resolution.replayed {
        daemon.record_resolution(&resolution, &who).await;
    }
    Ok(([(header::CONTENT_TYPE, "application/json")], answer).into_response())
}

/// The body of a human's answer other than a resume (a clear, a revoke),
/// parsed strictly.
pub(super) fn answer_body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    warden_approval::validate::parse_body(bytes, warden_approval::resume::MAX_RESUME_BYTES)
        .map_err(|err| ApprovalError::in_answer(err).into())
}

/// `POST /v1/threads/{thread_id}/approvals/{approval_id}/clear`: rejects a
/// pending approval as a whole (any pause, even one that cannot take per-call
/// decisions), journalled with the reviewer. Who may: as for a resume.
pub(super) async fn clear(
    State(daemon): State<Arc<DaemonState>>,
    answerer: Answerer,
    Path((thread_id, approval_id)): Path<(String, String)>,
    JsonBody(bytes): JsonBody,
) -> Result<Response, ApiError> {
    let who = answerer.token.clone();
    let resolution = on_pool(&daemon, move |worker| -> Result<_, ApiError> {
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
    .await?;
    daemon.record_resolution(&resolution, &who).await;
    Ok(axum::Json(resolution).into_response())
}

/// `GET /v1/interaction`: the interaction policy of a run with no context.
pub(super) async fn interaction(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
) -> Result<Response, ApiError> {
    answer_interaction(&daemon, &who, &InteractionQuery::default())
}

/// `POST /v1/interaction`: the interaction policy of a run with this context
/// (`{"context": {...}, "tools": [...]}`).
pub(super) async fn interaction_for(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
    JsonBody(bytes): JsonBody,
) -> Result<Response, ApiError> {
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
