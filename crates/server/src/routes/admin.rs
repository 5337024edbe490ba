//! The operator's routes: reload the config, list the live provider set.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::extract::Authorized;
use crate::body::ApiError;
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

/// `GET /v1/admin/providers`: the live provider set.
pub(super) async fn providers(State(daemon): State<Arc<DaemonState>>) -> Response {
    axum::Json(daemon.warden.providers()).into_response()
}
