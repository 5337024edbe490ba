//! The HTTP routes: one table ([`ROUTES`]) names every route with the role it
//! requires and its handler, so that the router, the OpenAPI document and the
//! test that holds them together read from the same place. The router puts
//! the table's authorization in front of every handler of a route that needs a
//! token (401/403 before anything else of the route runs), so no handler can
//! forget it; a handler asks only for what it uses ([`extract`]).
//!
//! One module per resource: [`calls`] (what an agent's model wants to run),
//! [`approvals`] (pauses and interactions), [`grants`], [`admin`] (reload,
//! providers), [`tools`] (which tools to offer) and [`service`] (health,
//! metrics, the OpenAPI document).

mod admin;
mod approvals;
mod calls;
mod extract;
pub(crate) use extract::caller_of;
mod grants;
mod service;
mod tools;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};

use crate::auth::Access;
use crate::body::ApiError;
use crate::state::DaemonState;

pub use service::OPENAPI;

/// One route of the API.
#[derive(Clone, Copy)]
pub struct RouteInfo {
    /// The HTTP method, upper case (`"GET"`, `"POST"`).
    pub method: &'static str,
    /// The path as the router matches it, `{name}` for a segment.
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
        handler: || post(calls::evaluate),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/runs/{run_id}/tool-calls",
        access: Some(Access::Agent),
        handler: || post(calls::tool_calls),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/mcp/asks",
        access: Some(Access::Agent),
        handler: || post(calls::mcp_ask),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/mcp/asks/attest",
        access: Some(Access::Agent),
        handler: || post(calls::mcp_attest),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/threads/{thread_id}/approvals",
        access: Some(Access::Token),
        handler: || get(approvals::approvals),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/approvals/{approval_id}/resume",
        access: Some(Access::Token),
        handler: || post(approvals::resume),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/tools/offered",
        access: Some(Access::Agent),
        handler: || post(tools::offered),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/interaction",
        access: Some(Access::Agent),
        handler: || get(approvals::interaction),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/interaction",
        access: Some(Access::Agent),
        handler: || post(approvals::interaction_for),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/threads/{thread_id}/approvals/{approval_id}/clear",
        access: Some(Access::Token),
        handler: || post(approvals::clear),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/grants",
        access: Some(Access::Token),
        handler: || get(grants::grants),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/grants/{grant_id}/revoke",
        access: Some(Access::Token),
        handler: || post(grants::revoke),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/admin/reload",
        access: Some(Access::Admin),
        handler: || post(admin::reload),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/admin/promote",
        access: Some(Access::Admin),
        handler: || post(admin::promote),
    },
    RouteInfo {
        method: "POST",
        path: "/v1/admin/rollback",
        access: Some(Access::Admin),
        handler: || post(admin::rollback),
    },
    RouteInfo {
        method: "GET",
        path: "/v1/admin/providers",
        access: Some(Access::Admin),
        handler: || get(admin::providers),
    },
    RouteInfo {
        method: "GET",
        path: "/healthz",
        access: None,
        handler: || get(service::healthz),
    },
    RouteInfo {
        method: "GET",
        path: "/metrics",
        access: None,
        handler: || get(service::metrics),
    },
    RouteInfo {
        method: "GET",
        path: "/openapi.json",
        access: None,
        handler: || get(service::openapi),
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
        let mut handler = (route.handler)();
        if let Some(access) = route.access {
            // Inside admission (it runs first), around the handler only: a
            // method the route does not serve is 405, not 401.
            handler = handler.route_layer(axum::middleware::from_fn_with_state(
                (daemon.clone(), access),
                extract::authorize,
            ));
        }
        router = router.route(route.path, handler);
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

/// What a path no route matches answers.
async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// What a route answers to a method it does not serve.
async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this route does not accept that method",
    )
}
