//! The console's sessions: who signed in with which token, kept in memory
//! (a restart signs everyone out), and the checks every console request
//! passes: a live session, a token still configured and still allowed to
//! answer, and for a change, the CSRF token and a same-origin `Origin`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use subtle::ConstantTimeEq;

use crate::auth::{Principal, Role};
use crate::{ApiError, Daemon};
use warden_approval::Authority;

/// The cookie holding the session's id (HttpOnly).
pub const SESSION_COOKIE: &str = "warden_session";
/// The cookie holding the session's CSRF token, readable by the page.
pub const CSRF_COOKIE: &str = "warden_csrf";
/// The header every state-changing console request repeats the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a session lasts from sign-in.
pub const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Sessions held at most; past it, the oldest goes.
const MAX_SESSIONS: usize = 10_000;

/// One signed-in person.
#[derive(Clone)]
pub struct Session {
    /// The name of the token signed in with.
    pub name: Arc<str>,
    pub role: Role,
    /// The token's digest: the session ends when the token is no longer
    /// configured (a rotation, a removal), and the token itself is not kept.
    token: [u8; 32],
    pub csrf: String,
    pub started: Instant,
}

impl Session {
    pub fn expires(&self) -> Instant {
        self.started + LIFETIME
    }
}

/// Every live session, by id.
#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub fn new() -> Sessions {
        Sessions::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a session for `who`, signed in with the token of `digest`: its
    /// id (256 random bits) and the session.
    pub fn open(&self, who: &Principal, digest: [u8; 32]) -> Result<(String, Session), ApiError> {
        let id = random_hex()?;
        let session = Session {
            name: who.name.clone(),
            role: who.role,
            token: digest,
            csrf: random_hex()?,
            started: Instant::now(),
        };
        let mut open = self.lock();
        open.retain(|_, s| s.expires() > Instant::now());
        if open.len() >= MAX_SESSIONS
            && let Some(oldest) = open
                .iter()
                .min_by_key(|(_, s)| s.started)
                .map(|(id, _)| id.clone())
        {
            open.remove(&oldest);
        }
        open.insert(id.clone(), session.clone());
        Ok((id, session))
    }

    /// The live session of this id.
    pub fn get(&self, id: &str) -> Option<Session> {
        let mut open = self.lock();
        match open.get(id) {
            Some(s) if s.expires() > Instant::now() => Some(s.clone()),
            Some(_) => {
                open.remove(id);
                None
            }
            None => None,
        }
    }

    pub fn close(&self, id: &str) {
        self.lock().remove(id);
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn random_hex() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|err| ApiError::internal(format!("no randomness for a session id: {err}")))?;
    Ok(hex::encode(bytes))
}

/// The value of cookie `name` in the request, if any.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// Whether the console is reached over https (`server.public_url`): its
/// cookies are then `Secure`.
fn secure(daemon: &Daemon) -> bool {
    daemon.public_url().starts_with("https://")
}

/// The two cookies of a new session.
pub fn set_cookies(daemon: &Daemon, id: &str, session: &Session) -> [HeaderValue; 2] {
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
pub fn clear_cookies(daemon: &Daemon) -> [HeaderValue; 2] {
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
pub fn may_sign_in(daemon: &Daemon, who: &Principal) -> Result<(), ApiError> {
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
pub fn signed_in(daemon: &Daemon, headers: &HeaderMap) -> Result<(Session, Principal), ApiError> {
    let id = cookie(headers, SESSION_COOKIE)
        .ok_or_else(|| ApiError::unauthorized("not signed in to the console"))?;
    let session = daemon
        .sessions
        .get(id)
        .ok_or_else(|| ApiError::unauthorized("the console session has ended; sign in again"))?;
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
pub fn changing(daemon: &Daemon, headers: &HeaderMap) -> Result<(Session, Principal), ApiError> {
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
pub fn same_origin(daemon: &Daemon, headers: &HeaderMap) -> Result<(), ApiError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; warden_session=abc ; b=2"),
        );
        assert_eq!(cookie(&headers, SESSION_COOKIE), Some("abc"));
        assert_eq!(cookie(&headers, CSRF_COOKIE), None);
    }

    #[test]
    fn session_ids_are_256_random_bits() {
        let a = random_hex().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, random_hex().unwrap());
    }
}
