//! The web console at `/console`: a person with an approver token signs in,
//! sees the pauses waiting across threads (live), answers them call by call,
//! and reads the journal. Plain HTML, CSS and JavaScript embedded in the
//! binary; no build step. Not part of the `/v1` API: its routes are not in
//! [`super::ROUTES`] nor in the OpenAPI document (see `docs/daemon.md`).
//!
//! Security: the token is sent once, to `POST /console/login`, and never kept
//! (the session holds its digest); the session id is an HttpOnly,
//! SameSite=Strict cookie; every change needs the session's CSRF token in
//! `X-CSRF-Token` and a same-origin `Origin` when one is sent.

mod api;
mod session;
mod signin;
mod view;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

pub use session::{CSRF_COOKIE, CSRF_HEADER, LIFETIME, SESSION_COOKIE, Sessions};
pub use view::SUMMARY_CHARS;

use crate::body::{ApiError, read_json};
use crate::state::DaemonState;

const PAGE: &str = include_str!("assets/console.html");
const LOGIN: &str = include_str!("assets/login.html");
const SCRIPT: &str = include_str!("assets/console.js");
const LOGIN_SCRIPT: &str = include_str!("assets/login.js");
const STYLE: &str = include_str!("assets/console.css");

/// Where a person signs in with a token (`POST`): the console's one route
/// that takes a credential, throttled like a bearer token.
pub const SIGN_IN_PATH: &str = "/console/login";

/// The name of the token the request's console session signed in with, if
/// it has a live one.
pub(crate) fn session_token_name(daemon: &DaemonState, headers: &HeaderMap) -> Option<Arc<str>> {
    let id = session::cookie(headers, SESSION_COOKIE)?;
    Some(daemon.sessions.get(id)?.name)
}

/// The console's routes, merged into the daemon's router.
pub fn routes() -> Router<Arc<DaemonState>> {
    Router::new()
        .route("/console", get(page))
        .route("/console/", get(page))
        .route("/console/approvals/{approval_id}", get(page))
        .route("/console/history", get(page))
        .route(SIGN_IN_PATH, get(login_page).post(login))
        .route("/console/logout", post(logout))
        .route("/console/assets/console.js", get(script))
        .route("/console/assets/login.js", get(login_script))
        .route("/console/assets/console.css", get(style))
        .route("/console/api/session", get(api::session))
        .route("/console/api/approvals", get(api::approvals))
        .route("/console/api/approvals/{approval_id}", get(api::approval))
        .route(
            "/console/api/approvals/{approval_id}/check",
            post(api::check_edit),
        )
        .route(
            "/console/api/approvals/{approval_id}/resume",
            post(api::resume),
        )
        .route(
            "/console/api/approvals/{approval_id}/reject-all",
            post(api::reject_all),
        )
        .route("/console/api/history", get(api::history))
        .route("/console/api/events", get(api::events))
}

/// Headers every console answer carries: nothing framed, sniffed, cached or
/// leaked through a referrer; scripts and styles only from the console itself.
fn hardened(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn asset(kind: &'static str, text: &'static str) -> Response {
    hardened(([(header::CONTENT_TYPE, kind)], text).into_response())
}

/// A console page: the list, a pause, the history (one page; the script
/// shows what the path names). Without a session, the sign-in page.
async fn page(
    axum::extract::State(daemon): axum::extract::State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Response {
    match signin::signed_in(&daemon, &headers) {
        Ok(_) => asset("text/html; charset=utf-8", PAGE),
        Err(_) => hardened(
            (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/console/login")],
            )
                .into_response(),
        ),
    }
}

async fn login_page() -> Response {
    asset("text/html; charset=utf-8", LOGIN)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn login_script() -> Response {
    asset("text/javascript; charset=utf-8", LOGIN_SCRIPT)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginRequest {
    token: String,
}

/// Who is signed in, and the CSRF token the page repeats.
#[derive(Serialize)]
struct SessionAnswer<'a> {
    name: &'a str,
    role: &'a str,
    csrf: &'a str,
    expires_in_s: u64,
}

/// `POST /console/login` with `{"token": "..."}` (JSON only, so that no
/// other site's form can sign a browser in): an approver's token opens a
/// session; any other token is refused, and no token is ever echoed.
async fn login(
    axum::extract::State(daemon): axum::extract::State<Arc<DaemonState>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    signin::same_origin(&daemon, &headers)?;
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim() == "application/json");
    if !json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "sign in with a JSON body: {\"token\": \"...\"}",
        ));
    }
    let bytes = read_json(&headers, body, &daemon.limits()).await?;
    let request: LoginRequest = serde_json::from_slice(&bytes)
        .map_err(|_| ApiError::bad_request("the body must be {\"token\": \"<approver token>\"}"))?;
    let presented = request.token.trim();
    let Some(who) = daemon.tokens.load().authenticate(presented) else {
        // Counted against the source address by admission.
        let mut refused = ApiError::unauthorized("the token is not valid").into_response();
        refused
            .extensions_mut()
            .insert(crate::throttle::CredentialRefused);
        return Ok(refused);
    };
    signin::may_sign_in(&daemon, &who)?;
    let (id, session) = daemon
        .sessions
        .open(&who, super::auth::token_digest(presented))?;
    tracing::info!(token = %who.name, "signed in to the console");
    let mut response = axum::Json(SessionAnswer {
        name: &session.name,
        role: session.role.as_str(),
        csrf: &session.csrf,
        expires_in_s: LIFETIME.as_secs(),
    })
    .into_response();
    for cookie in signin::set_cookies(&daemon, &id, &session) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(hardened(response))
}

/// `POST /console/logout`: ends the session (a change: CSRF-checked).
async fn logout(
    axum::extract::State(daemon): axum::extract::State<Arc<DaemonState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (session, _) = signin::changing(&daemon, &headers)?;
    if let Some(id) = session::cookie(&headers, SESSION_COOKIE) {
        daemon.sessions.close(id);
    }
    tracing::info!(token = %session.name, "signed out of the console");
    let mut response = StatusCode::NO_CONTENT.into_response();
    for cookie in signin::clear_cookies(&daemon) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(hardened(response))
}
