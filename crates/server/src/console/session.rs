//! The console's sessions: who signed in with which token, kept in memory
//! (a restart signs everyone out). Each node keeps its own: with several
//! nodes, the load balancer keeps a browser on the node it signed in on
//! (sticky sessions; docs/deploy.md). The checks every console request
//! passes are in `signin`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};

use crate::auth::{Principal, Role};
use crate::body::ApiError;

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
    pub(super) token: [u8; 32],
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
    /// No session open.
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

    /// Ends the session of this id (a sign-out); an unknown id is ignored.
    pub fn close(&self, id: &str) {
        self.lock().remove(id);
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// No session is open.
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

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
