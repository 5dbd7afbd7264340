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
/// Most sessions kept; expired ones are dropped first, then the oldest tenth.
const MAX_SESSIONS: usize = 100_000;
/// Expired sessions are swept after this many new ones, so that memory follows the live
/// sessions instead of sitting at the cap.
const SWEEP_EVERY: u32 = 4_096;

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
    map: Mutex<Map>,
    idle: Duration,
    secure: bool,
    capacity: usize,
}

/// The sessions, and how many were created since the last sweep.
#[derive(Default)]
struct Map {
    sessions: HashMap<[u8; 32], Session>,
    created: u32,
}

impl Map {
    /// Makes room for one more session. Every pass over the map happens once per
    /// [`SWEEP_EVERY`] sessions or once per tenth of the capacity, never per session: the lock
    /// is the one every form request takes, and a pass over 100,000 sessions takes milliseconds.
    fn make_room(&mut self, idle: Duration, capacity: usize) {
        self.created += 1;
        if self.created < SWEEP_EVERY && self.sessions.len() < capacity {
            return;
        }
        self.created = 0;
        self.sessions.retain(|_, s| s.last_seen.elapsed() < idle);
        if self.sessions.len() < capacity {
            return;
        }
        // All alive: the oldest tenth goes, so that the next sessions find room at once.
        let drop = (capacity / 10).max(1);
        let mut ages: Vec<([u8; 32], Instant)> = self
            .sessions
            .iter()
            .map(|(k, s)| (*k, s.last_seen))
            .collect();
        ages.select_nth_unstable_by_key(drop - 1, |(_, seen)| *seen);
        for (key, _) in &ages[..drop] {
            self.sessions.remove(key);
        }
        tracing::warn!(
            dropped = drop,
            capacity,
            "end-user sessions at their cap; the least recently used were ended"
        );
    }
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
        Sessions::with_capacity(idle, secure, MAX_SESSIONS)
    }

    fn with_capacity(idle: Duration, secure: bool, capacity: usize) -> Self {
        Sessions {
            map: Mutex::default(),
            idle,
            secure,
            capacity,
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
        map.make_room(self.idle, self.capacity);
        map.sessions.insert(digest(&id), session);
        self.cookie(id)
    }

    /// The session behind a cookie value, if it is alive; using it keeps it alive.
    pub fn touch(&self, cookie_value: &str) -> Option<Session> {
        let key = digest(cookie_value);
        let mut map = self.map.lock().expect("session lock");
        let map = &mut map.sessions;
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
            .sessions
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

/// Where every failed magic link, `/bal/` login and request without a live session goes,
/// without saying why: the login page, which says that the link did not work.
pub(crate) fn redirect_to_login_error() -> HttpResponse {
    HttpResponse::Found()
        .insert_header((actix_web::http::header::LOCATION, "/login?error"))
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .finish()
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
        redirect_to_login_error()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn count(sessions: &Sessions) -> usize {
        sessions.map.lock().unwrap().sessions.len()
    }

    #[test]
    fn at_the_cap_the_least_recently_used_tenth_ends_and_the_rest_live_on() {
        let sessions = Sessions::with_capacity(Duration::from_secs(3600), false, 100);
        let cookies: Vec<String> = (0..100)
            .map(|_| sessions.create("klinik", "k").value().to_string())
            .collect();
        // The first one is used again: not among the least recently used any more.
        assert!(sessions.touch(&cookies[0]).is_some());
        assert_eq!(count(&sessions), 100);
        let newest = sessions.create("klinik", "k").value().to_string();
        assert_eq!(count(&sessions), 91, "ten ended, one added");
        assert!(sessions.touch(&newest).is_some());
        assert!(sessions.touch(&cookies[0]).is_some(), "used lately");
        assert!(sessions.touch(&cookies[1]).is_none(), "the oldest unused");
        assert!(sessions.touch(&cookies[99]).is_some());
        // Room for nine more before the next pass.
        for _ in 0..9 {
            sessions.create("klinik", "k");
        }
        assert_eq!(count(&sessions), 100);
    }

    #[test]
    fn expired_sessions_are_swept_before_the_cap() {
        let idle = Duration::from_millis(50);
        let sessions = Sessions::with_capacity(idle, false, 1_000_000);
        for _ in 0..10 {
            sessions.create("klinik", "k");
        }
        std::thread::sleep(idle * 2);
        for _ in 10..SWEEP_EVERY {
            sessions.create("klinik", "k");
        }
        // Without the sweep all 4,096 would still be held; the ten expired ones at least are gone
        // (any other that expired meanwhile on a slow machine may be too).
        let held = count(&sessions);
        assert!(held <= SWEEP_EVERY as usize - 10, "{held}");
        assert!(held > 0);
    }
}
