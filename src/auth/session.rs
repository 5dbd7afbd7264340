//! Browser sessions of end users, created by a magic link or `/bal/`.
//!
//! Sessions live in memory: an end user needs one only while filling a form, and the magic link
//! opens a new one after a restart. The cookie carries a random id; the server keeps only its
//! SHA-256, so a memory dump does not yield usable cookies. A session ends after the configured
//! idle time, on `/logout`, or when the API user's password changes.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use meldewerk_storage::{Store, UserRecord};

use crate::crypto::random_token;

/// Name of the session cookie.
pub const COOKIE_NAME: &str = "meldewerk_session";
/// Most sessions kept; expired ones are dropped first, then the oldest.
const MAX_SESSIONS: usize = 100_000;

/// What a session knows.
#[derive(Debug, Clone)]
pub struct Session {
    /// The API user the end user acts as.
    pub username: String,
    /// The user's memento key id when the session began; a password change ends the session.
    pub key_id: String,
    /// Token that every form post of this session must carry (defence against cross-site posts).
    pub csrf: String,
    last_seen: Instant,
}

/// All live sessions.
pub struct Sessions {
    map: Mutex<HashMap<[u8; 32], Session>>,
    idle: Duration,
    secure: bool,
}

fn digest(id: &str) -> [u8; 32] {
    ring::digest::digest(&ring::digest::SHA256, id.as_bytes())
        .as_ref()
        .try_into()
        .expect("SHA-256 has 32 bytes")
}

impl Sessions {
    /// Sessions ending after `idle` without use; `secure` marks cookies HTTPS-only.
    pub fn new(idle: Duration, secure: bool) -> Self {
        Sessions {
            map: Mutex::new(HashMap::new()),
            idle,
            secure,
        }
    }

    /// Starts a session and returns the cookie that carries it.
    pub fn create(&self, username: &str, key_id: &str) -> Cookie<'static> {
        let id = random_token(32);
        let session = Session {
            username: username.to_string(),
            key_id: key_id.to_string(),
            csrf: random_token(24),
            last_seen: Instant::now(),
        };
        let mut map = self.map.lock().expect("session lock");
        if map.len() >= MAX_SESSIONS {
            let idle = self.idle;
            map.retain(|_, s| s.last_seen.elapsed() < idle);
            if map.len() >= MAX_SESSIONS {
                if let Some(oldest) = map.iter().min_by_key(|(_, s)| s.last_seen).map(|(k, _)| *k) {
                    map.remove(&oldest);
                }
            }
        }
        map.insert(digest(&id), session);
        self.cookie(id)
    }

    /// The session behind a cookie value, if it is alive; using it keeps it alive.
    pub fn touch(&self, cookie_value: &str) -> Option<Session> {
        let key = digest(cookie_value);
        let mut map = self.map.lock().expect("session lock");
        let alive = map
            .get(&key)
            .is_some_and(|s| s.last_seen.elapsed() < self.idle);
        if !alive {
            map.remove(&key);
            return None;
        }
        let session = map.get_mut(&key).expect("checked above");
        session.last_seen = Instant::now();
        Some(session.clone())
    }

    /// Ends a session.
    pub fn end(&self, cookie_value: &str) {
        self.map
            .lock()
            .expect("session lock")
            .remove(&digest(cookie_value));
    }

    fn cookie(&self, value: String) -> Cookie<'static> {
        Cookie::build(COOKIE_NAME, value)
            .path("/")
            .http_only(true)
            .same_site(SameSite::Lax)
            .secure(self.secure)
            .finish()
    }

    /// A cookie that makes the browser forget the session.
    pub fn removal_cookie(&self) -> Cookie<'static> {
        let mut cookie = self.cookie(String::new());
        cookie.set_max_age(time::Duration::ZERO);
        cookie
    }
}

/// An end user with a live session, acting as an API user whose key has not changed since.
pub struct SessionUser {
    /// The API user.
    pub user: UserRecord,
    /// The session.
    pub session: Session,
}

/// No live session: the browser is sent to `/login?error`.
#[derive(Debug)]
pub struct NoSession;

impl std::fmt::Display for NoSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no valid session")
    }
}

impl ResponseError for NoSession {
    fn error_response(&self) -> HttpResponse {
        crate::routes::login::redirect_to_login_error()
    }
}

impl FromRequest for SessionUser {
    type Error = NoSession;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let sessions = req.app_data::<web::Data<Sessions>>().cloned();
        let store = req.app_data::<web::Data<Arc<dyn Store>>>().cloned();
        let cookie = req.cookie(COOKIE_NAME).map(|c| c.value().to_string());
        Box::pin(async move {
            let (sessions, store) = sessions.zip(store).expect("registered at start-up");
            let session = cookie.and_then(|c| sessions.touch(&c)).ok_or(NoSession)?;
            let user = store
                .user(&session.username)
                .await
                .ok()
                .flatten()
                .ok_or(NoSession)?;
            if user.memento_key.key_id != session.key_id {
                return Err(NoSession);
            }
            Ok(SessionUser { user, session })
        })
    }
}
