//! The checks every console request passes: a live session, a token still
//! configured and still allowed to answer, and for a change, the CSRF token
//! and a same-origin `Origin`; and the cookies that start and end a session.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use subtle::ConstantTimeEq;

use super::session::{CSRF_COOKIE, CSRF_HEADER, LIFETIME, SESSION_COOKIE, Session, cookie};
use crate::auth::Principal;
use crate::body::ApiError;
use crate::state::DaemonState;
use warden_approval::Authority;

/// Whether the console is reached over https (`server.public_url`): its
/// cookies are then `Secure`.
fn secure(daemon: &DaemonState) -> bool {
    daemon.public_url().starts_with("https://")
}

/// The two cookies of a new session.
pub fn set_cookies(daemon: &DaemonState, id: &str, session: &Session) -> [HeaderValue; 2] {
    let secure = if secure(daemon) { "; Secure" } else { "" };
    let age = LIFETIME.as_secs();
    let session_cookie = format!(
        "{SESSION_COOKIE}={id}; Path=/console; Max-Age={age}; HttpOnly; SameSite=Strict{secure}"
    );
    let csrf_cookie = format!(
        "{CSRF_COOKIE}={}; Path=/console; Max-Age={age}; SameSite=Strict{secure}",
        session.csrf
    );
    [
        HeaderValue::from_str(&session_cookie).expect("hex and ASCII"),
        HeaderValue::from_str(&csrf_cookie).expect("hex and ASCII"),
    ]
}

/// The cookies that end a session in the browser.
pub fn clear_cookies(daemon: &DaemonState) -> [HeaderValue; 2] {
    let secure = if secure(daemon) { "; Secure" } else { "" };
    [SESSION_COOKIE, CSRF_COOKIE].map(|name| {
        HeaderValue::from_str(&format!(
            "{name}=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict{secure}"
        ))
        .expect("ASCII")
    })
}

/// Who may use the console: a token that may answer approvals in its own
/// name (an approver; an admin where `hitl_approval.admins_may_approve`).
pub fn may_sign_in(daemon: &DaemonState, who: &Principal) -> Result<(), ApiError> {
    match daemon.authority(who) {
        Authority::Approver => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "approver_required",
            format!(
                "the token '{}' has the {} role; only approver tokens (and admin tokens where \
                 hitl_approval.admins_may_approve is true) may sign in to the console",
                who.name, who.role
            ),
        )),
    }
}

/// The signed-in caller: 401 without a live session (or when its token is no
/// longer configured), 403 when its token may no longer answer approvals.
pub fn signed_in(
    daemon: &DaemonState,
    headers: &HeaderMap,
) -> Result<(Session, Principal), ApiError> {
    let id = cookie(headers, SESSION_COOKIE)
        .ok_or_else(|| ApiError::unauthorized("not signed in to the console"))?;
    let session = daemon.sessions.get(id).ok_or_else(|| {
        // Sessions live in the node that signed in (docs/deploy.md): one
        // unknown here may be another node's.
        ApiError::unauthorized(format!(
            "the console session has ended, or was opened on another node than {}; sign in \
             again (with several nodes, make the load balancer send each browser to one node)",
            daemon.node_name
        ))
    })?;
    let Some(who) = daemon.tokens.load().authenticate_digest(&session.token) else {
        daemon.sessions.close(id);
        return Err(ApiError::unauthorized(
            "the token this session signed in with is no longer configured; sign in again",
        ));
    };
    may_sign_in(daemon, &who)?;
    Ok((session, who))
}

/// As [`signed_in`], for a request that changes something: it must also
/// carry the session's CSRF token in `X-CSRF-Token`, and an `Origin`, when
/// sent, of this daemon; 403 otherwise.
pub fn changing(
    daemon: &DaemonState,
    headers: &HeaderMap,
) -> Result<(Session, Principal), ApiError> {
    same_origin(daemon, headers)?;
    let (session, who) = signed_in(daemon, headers)?;
    let sent = headers
        .get(CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| csrf_refused("the X-CSRF-Token header is missing"))?;
    if !bool::from(sent.as_bytes().ct_eq(session.csrf.as_bytes())) {
        return Err(csrf_refused(
            "the X-CSRF-Token header does not match the session",
        ));
    }
    Ok((session, who))
}

fn csrf_refused(message: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "csrf_refused", message)
}

/// Refuses a request whose `Origin` is another site's: it must name the
/// `Host` the request was sent to, or `server.public_url`.
pub fn same_origin(daemon: &DaemonState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("");
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    let public = daemon.public_url();
    let matches = (!host.is_empty() && origin_host == Some(host))
        || url::Url::parse(&public)
            .ok()
            .is_some_and(|u| u.origin().ascii_serialization() == origin);
    if matches {
        Ok(())
    } else {
        Err(csrf_refused(&format!(
            "cross-origin request refused: Origin '{}' is not this console's",
            warden_policy::redact::excerpt(origin, 100)
        )))
    }
}
