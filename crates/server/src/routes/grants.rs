//! Standing grants: the list, and a revoke.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use warden_approval::GrantFilter;
use warden_types::approval::{GrantList, RevokeRequest};

use super::approvals::{answer_body, unknown_query};
use super::extract::{Answerer, JsonBody, Visible, on_pool};
use crate::body::ApiError;
use crate::state::DaemonState;

/// `GET /v1/grants[?all=true]`: standing grants, newest first: live ones
/// (with `all`, expired and revoked ones too). An agent's token sees its own
/// principal's; an approver's everyone's.
pub(super) async fn grants(
    State(daemon): State<Arc<DaemonState>>,
    Visible(principal): Visible,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let include_inactive = match query.as_deref().unwrap_or("") {
        "" | "all=false" => false,
        "all" | "all=true" => true,
        other => return Err(unknown_query(other)),
    };
    let filter = GrantFilter {
        principal,
        include_inactive,
    };
    let grants = on_pool(&daemon, move |daemon| daemon.gate.grants(&filter)).await?;
    Ok(axum::Json(GrantList { grants }).into_response())
}

/// `POST /v1/grants/{grant_id}/revoke`: ends a standing grant at once,
/// journalled with the reviewer. Who may: as for a resume (a relay only its
/// own principal's grants).
pub(super) async fn revoke(
    State(daemon): State<Arc<DaemonState>>,
    answerer: Answerer,
    Path(grant_id): Path<String>,
    JsonBody(bytes): JsonBody,
) -> Result<Response, ApiError> {
    let grant = on_pool(&daemon, move |daemon| -> Result<_, ApiError> {
        let request: RevokeRequest = answer_body(&bytes)?;
        let reviewer = answerer.reviewer(request.reviewer.as_deref())?;
        Ok(daemon.gate.revoke_grant(&reviewer, &grant_id)?)
    })
    .await?;
    Ok(axum::Json(grant).into_response())
}
