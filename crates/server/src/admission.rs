//! Admission: what a routed request passes before its handler runs, and how
//! much of the daemon one principal may hold. [`admit`], in order:
//!
//! 1. finds the request's source address ([`crate::proxies`]);
//! 2. refuses with 429 a request that presents a credential (a bearer token on
//!    a route that needs one, a console sign-in) from an address past its
//!    allowance of wrong ones, before the credential is looked at
//!    ([`crate::throttle`]); a wrong bearer token is counted against the
//!    address and logged, and its handler refuses it as before;
//! 3. names the principal the request counts against: its token (a valid
//!    bearer token on a route that needs one, or the token a console session
//!    signed in with), else its source address;
//! 4. gives a request with a body a turn of its principal's share
//!    (`server.limits.max_bodies_per_principal`), then one of the daemon's
//!    (`max_concurrent_bodies`), both held until it is answered, so that one
//!    token's slow bodies wait among themselves, not in front of everyone;
//! 5. keeps the principal with the request (a task-local), where the judging
//!    pool reads it to cap the calls each principal has queued or being
//!    judged (`max_queued_per_principal`, in `DaemonState::offload`).
//!
//! Agents that share a token share its shares.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio::sync::OwnedSemaphorePermit;

use crate::auth::{self, Authenticated};
use crate::body::ApiError;
use crate::limits::HttpLimits;
use crate::shares::{PRINCIPAL, Share, Who};
use crate::state::DaemonState;
use crate::throttle::CredentialRefused;

/// A credential a request presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Credential {
    /// `Authorization: Bearer` on a route that needs a token.
    Bearer,
    /// The token of a console sign-in.
    Console,
}

impl Credential {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Credential::Bearer => "bearer",
            Credential::Console => "console",
        }
    }
}

/// What [`admit`] is given: the daemon, and whether a route (its matched
/// path and method) needs a bearer token, which the router that owns the
/// routes answers.
#[derive(Clone)]
pub(crate) struct Routes {
    pub(crate) daemon: Arc<DaemonState>,
    pub(crate) needs_token: fn(&str, &str) -> bool,
}

/// See the module's documentation.
pub(crate) async fn admit(
    State(Routes {
        daemon,
        needs_token,
    }): State<Routes>,
    matched: Option<MatchedPath>,
    mut request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
    let source = daemon.proxies.load().client(peer, request.headers());
    let route = matched.as_ref().map_or("", MatchedPath::as_str);
    let credential = credential_of(route, &request, needs_token);
    let limits = daemon.limits();
    if let Some(credential) = credential
        && let Err(wait) = daemon
            .throttle
            .check(source, limits.auth_quota(), Instant::now())
    {
        daemon.metrics.auth_throttled(credential.as_str());
        return throttled(wait, &limits);
    }
    let who = match credential {
        Some(Credential::Bearer) => match bearer_principal(&daemon, &request) {
            Some(admitted) => {
                let name = admitted.principal.name.clone();
                request.extensions_mut().insert(admitted);
                Who::Token(name)
            }
            None => {
                refused(&daemon, source, Credential::Bearer, route, &limits);
                Who::Client(source)
            }
        },
        _ => crate::console::session_token_name(&daemon, request.headers())
            .map_or(Who::Client(source), Who::Token),
    };
    let has_body = request.method() == Method::POST;
    let response = PRINCIPAL
        .scope(who.clone(), async {
            if !has_body {
                return next.run(request).await;
            }
            match take_turns(&daemon, &who, &limits).await {
                Ok(turns) => {
                    let response = next.run(request).await;
                    drop(turns);
                    response
                }
                Err(overloaded) => overloaded.into_response(),
            }
        })
        .await;
    if response.extensions().get::<CredentialRefused>().is_some() {
        refused(&daemon, source, Credential::Console, route, &limits);
    }
    response
}

/// The credential a request presents, if any: a bearer token on a route that
/// needs one (open routes ignore the header), or a console sign-in.
fn credential_of(
    route: &str,
    request: &Request,
    needs_token: fn(&str, &str) -> bool,
) -> Option<Credential> {
    let method = request.method();
    if method == Method::POST && route == crate::console::SIGN_IN_PATH {
        return Some(Credential::Console);
    }
    (needs_token(route, method.as_str()) && request.headers().contains_key(header::AUTHORIZATION))
        .then_some(Credential::Bearer)
}

/// Who holds the configured token of a request's `Authorization: Bearer`
/// header; `None` for a token that is not configured, or a header that is not
/// `Bearer <token>`.
fn bearer_principal(daemon: &DaemonState, request: &Request) -> Option<Authenticated> {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let token = auth::bearer(header)?;
    let tokens = daemon.tokens.load_full();
    let principal = tokens.authenticate(token)?;
    Some(Authenticated { principal, tokens })
}

/// Counts a wrong credential against its source address and logs it (never
/// the credential itself).
fn refused(
    daemon: &DaemonState,
    source: IpAddr,
    credential: Credential,
    route: &str,
    limits: &HttpLimits,
) {
    daemon.metrics.auth_failed(credential.as_str());
    tracing::warn!(
        client = %source,
        credential = credential.as_str(),
        route,
        "a credential that is not a configured token was refused"
    );
    if let Some(wait) = daemon
        .throttle
        .failed(source, limits.auth_quota(), Instant::now())
    {
        tracing::warn!(
            client = %source,
            retry_after_s = seconds(wait),
            "too many wrong credentials from this address: its credentials are refused (429) until it may try again"
        );
    }
}

/// A wait in whole seconds, at least one, as `Retry-After` gives it.
fn seconds(wait: Duration) -> u64 {
    (wait.as_secs_f64().ceil() as u64).max(1)
}

/// 429 `throttled`, with when to try again.
fn throttled(wait: Duration, limits: &HttpLimits) -> Response {
    let seconds = seconds(wait);
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "throttled",
        format!(
            "too many wrong credentials from this address: {} in a row, then {} a minute (server.limits.auth_failures_burst, auth_failures_per_minute); try again in {seconds} s",
            limits.auth_failures_burst, limits.auth_failures_per_minute
        ),
    )
    .into_response();
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    // The body, if any, was not read.
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A turn of the principal's share and one of the daemon's, within
/// `body_read_timeout_ms` for both; 503 `overloaded` naming the limit if not.
async fn take_turns(
    daemon: &DaemonState,
    who: &Who,
    limits: &HttpLimits,
) -> Result<(Share, OwnedSemaphorePermit), ApiError> {
    let deadline = tokio::time::Instant::now() + limits.body_read_timeout();
    let Ok(share) = tokio::time::timeout_at(deadline, daemon.body_shares.wait(who)).await else {
        daemon.metrics.admission_refused("max_bodies_per_principal");
        return Err(ApiError::overloaded(format!(
            "{} requests of {who} are being read or judged (server.limits.max_bodies_per_principal); try again",
            daemon.body_shares.cap()
        )));
    };
    match tokio::time::timeout_at(deadline, daemon.bodies.clone().acquire_owned()).await {
        Ok(Ok(turn)) => Ok((share, turn)),
        _ => {
            daemon.metrics.admission_refused("max_concurrent_bodies");
            Err(ApiError::overloaded(format!(
                "{} requests are being read or judged (server.limits.max_concurrent_bodies); try again",
                limits.max_concurrent_bodies
            )))
        }
    }
}
