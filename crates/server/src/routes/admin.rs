//! The operator's routes: reload the config, list the live provider set,
//! promote the shadow configuration and roll a promotion back.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::extract::Authorized;
use crate::body::ApiError;
use crate::promotion::PromoteError;
use crate::reload::Trigger;
use crate::state::DaemonState;

/// `POST /v1/admin/reload`: reload the config file and swap the provider set.
pub(super) async fn reload(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
) -> Result<Response, ApiError> {
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

/// `POST /v1/admin/promote[?write=true]`: make the shadow configuration live
/// (with `write`, rewrite the config file so that the candidate is the config).
pub(super) async fn promote(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let write = match query.as_deref().unwrap_or("") {
        "" | "write=false" => false,
        "write" | "write=true" => true,
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown query parameter '{other}' (known: write=true|false)"
            )));
        }
    };
    let trigger = Trigger::Admin(who.name.to_string());
    let worker = daemon.clone();
    let outcome = tokio::task::spawn_blocking(move || worker.promote(&trigger, write))
        .await
        .map_err(|err| ApiError::internal(format!("the promotion failed: {err}")))?;
    outcome
        .map(|report| axum::Json(report).into_response())
        .map_err(refused)
}

/// `POST /v1/admin/rollback`: make the set a promotion replaced live again.
pub(super) async fn rollback(
    State(daemon): State<Arc<DaemonState>>,
    Authorized(who): Authorized,
) -> Result<Response, ApiError> {
    let trigger = Trigger::Admin(who.name.to_string());
    let worker = daemon.clone();
    let outcome = tokio::task::spawn_blocking(move || worker.rollback(&trigger))
        .await
        .map_err(|err| ApiError::internal(format!("the rollback failed: {err}")))?;
    outcome
        .map(|report| axum::Json(report).into_response())
        .map_err(refused)
}

/// 409 when there is nothing to promote or roll back, 422 when it failed;
/// either way nothing changed.
fn refused(err: PromoteError) -> ApiError {
    let status = match err {
        PromoteError::NoShadow(_) | PromoteError::NothingToRollBack => StatusCode::CONFLICT,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiError::new(status, err.code(), err.to_string())
}

/// `GET /v1/admin/providers`: the live provider set.
pub(super) async fn providers(State(daemon): State<Arc<DaemonState>>) -> Response {
    let mut list = daemon.warden.providers();
    list.node_name = Some(daemon.node_name.clone());
    axum::Json(list).into_response()
}
