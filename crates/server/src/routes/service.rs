//! The open routes, for whoever can connect: health, metrics, and this API's
//! description.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use warden_types::admin::Health;

use crate::state::DaemonState;

/// The OpenAPI document of this API, kept in the repository.
pub const OPENAPI: &str = include_str!("../../../../docs/openapi.json");

/// `GET /healthz`: the daemon is up and has a provider set.
pub(super) async fn healthz(State(daemon): State<Arc<DaemonState>>) -> axum::Json<Health> {
    let mut health = daemon.warden.health();
    health.node_name = Some(daemon.node_name.clone());
    axum::Json(health)
}

/// `GET /metrics`: Prometheus text format.
pub(super) async fn metrics(State(daemon): State<Arc<DaemonState>>) -> Response {
    daemon.metrics.load(daemon.current_load());
    daemon.metrics.shadow(&daemon.warden.shadow_counts());
    let (content_type, text) = daemon
        .metrics
        .render(&daemon.warden.snapshot(), daemon.decisions.write_errors());
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

/// `GET /openapi.json`: this API's description.
pub(super) async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
