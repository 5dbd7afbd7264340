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
        // The `drop` least recently used first (every session is, when that is all of them).
        if drop < ages.len() {
            ages.select_nth_unstable_by_key(drop, |(_, seen)| *seen);
        }
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

/// Seconds a browser is asked to wait (`Retry-After`) while the store is unavailable: a
/// database restart or failover takes some seconds.
const RETRY_AFTER_SECS: u32 = 10;

/// Why a request has no usable session.
#[derive(Debug)]
pub enum NoSession {
    /// No live session, or its user's key changed since it began: the browser is sent to
    /// `/login?error`.
    Invalid,
    /// The store could not be read (its database is away): 503, and the session lives on, so
    /// that the same page works again once the store answers.
    Unavailable,
}

impl std::fmt::Display for NoSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoSession::Invalid => f.write_str("no valid session"),
            NoSession::Unavailable => f.write_str("the session's user cannot be read now"),
        }
    }
}

impl ResponseError for NoSession {
    fn error_response(&self) -> HttpResponse {
        match self {
            NoSession::Invalid => redirect_to_login_error(),
            NoSession::Unavailable => {
                let title = "Vorübergehend nicht erreichbar";
                let body = maud::html! {
                    h1 { (title) }
                    p {
                        "Das Portal kann seine Daten gerade nicht lesen; nichts wurde gespeichert                          oder gesendet. Bitte versuchen Sie es in einigen Minuten erneut, Ihre                          Sitzung bleibt bestehen."
                    }
                };
                HttpResponse::ServiceUnavailable()
                    .content_type("text/html; charset=utf-8")
                    .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
                    .insert_header((
                        actix_web::http::header::RETRY_AFTER,
                        RETRY_AFTER_SECS.to_string(),
                    ))
                    .body(crate::forms::page(title, body).into_string())
            }
        }
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
            let session = cookie
                .and_then(|c| sessions.touch(&c))
                .ok_or(NoSession::Invalid)?;
            let user = match store.user(&session.username).await {
                Ok(Some(user)) => user,
                Ok(None) => return Err(NoSession::Invalid),
                Err(e) if e.is_unavailable() => {
                    tracing::warn!(error = %e, "a session's user cannot be read: the store is unavailable");
                    return Err(NoSession::Unavailable);
                }
                Err(e) => {
                    tracing::error!(error = %e, "a session's user cannot be read");
                    return Err(NoSession::Invalid);
                }
            };
            if user.memento_key.key_id != session.key_id {
                return Err(NoSession::Invalid);
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
        // Exactly the ten least recently used ended.
        for (i, cookie) in cookies.iter().enumerate().skip(1) {
            assert_eq!(sessions.touch(cookie).is_none(), i <= 10, "session {i}");
        }
        // Room for nine more before the next pass.
        for _ in 0..9 {
            sessions.create("klinik", "k");
        }
        assert_eq!(count(&sessions), 100);
    }

    #[test]
    fn with_room_for_one_the_new_session_ends_the_old() {
        let sessions = Sessions::with_capacity(Duration::from_secs(3600), false, 1);
        let old = sessions.create("klinik", "k").value().to_string();
        let new = sessions.create("klinik", "k").value().to_string();
        assert!(sessions.touch(&old).is_none());
        assert!(sessions.touch(&new).is_some());
    }

    #[test]
    fn a_session_lives_while_used_and_ends_when_idle_or_ended() {
        let idle = Duration::from_secs(1);
        let sessions = Sessions::with_capacity(idle, false, 100);
        let one = sessions.create("klinik", "key-1").value().to_string();
        let two = sessions.create("praxis", "key-2").value().to_string();
        assert_ne!(one, two);
        let session = sessions.touch(&one).unwrap();
        assert_eq!(
            (session.username.as_str(), session.key_id.as_str()),
            ("klinik", "key-1")
        );
        assert_eq!(sessions.touch(&two).unwrap().username, "praxis");
        assert_ne!(session.csrf, sessions.touch(&two).unwrap().csrf);
        assert_eq!(
            session.csrf,
            sessions.touch(&one).unwrap().csrf,
            "one token per session"
        );
        assert!(sessions.touch("not a session").is_none());
        // Ending one leaves the other.
        sessions.end(&two);
        assert!(sessions.touch(&two).is_none());
        assert!(sessions.touch(&one).is_some());
        // Use keeps a session alive past its idle time; idleness ends it, and it stays ended.
        // (Over twice the idle time in all, each touch well within it.)
        for _ in 0..3 {
            std::thread::sleep(idle * 7 / 10);
            assert!(sessions.touch(&one).is_some());
        }
        std::thread::sleep(idle * 3 / 2);
        assert!(sessions.touch(&one).is_none());
        assert_eq!(count(&sessions), 0, "the idle one is dropped when met");
    }

    #[test]
    fn the_cookie_is_for_scripts_nowhere_and_secure_when_asked() {
        for secure in [false, true] {
            let sessions = Sessions::with_capacity(Duration::from_secs(60), secure, 100);
            let cookie = sessions.create("klinik", "k");
            assert_eq!(cookie.name(), COOKIE_NAME);
            assert_eq!(cookie.value().len(), 43, "32 random bytes, base64url");
            assert_eq!(cookie.path(), Some("/"));
            assert_eq!(cookie.http_only(), Some(true));
            assert_eq!(cookie.same_site(), Some(SameSite::Lax));
            assert_eq!(cookie.secure(), Some(secure));
            let removal = sessions.removal_cookie();
            assert_eq!((removal.name(), removal.value()), (COOKIE_NAME, ""));
            assert_eq!(removal.max_age(), Some(time::Duration::ZERO));
            assert_eq!(removal.path(), Some("/"));
            assert_eq!(removal.secure(), Some(secure));
        }
        let response = NoSession::Invalid.error_response();
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers().get("location").unwrap(), "/login?error");
        assert_eq!(response.headers().get("cache-control").unwrap(), "no-store");
        assert_eq!(NoSession::Invalid.to_string(), "no valid session");
        let response = NoSession::Unavailable.error_response();
        assert_eq!(response.status(), 503);
        assert!(response.headers().get("location").is_none());
        assert_eq!(response.headers().get("retry-after").unwrap(), "10");
        assert_eq!(response.headers().get("cache-control").unwrap(), "no-store");
    }

    #[actix_web::test]
    async fn the_extractor_wants_a_live_session_of_a_user_whose_key_is_unchanged() {
        use crate::accounts::{Accounts, Password, UserName};
        use crate::crypto::{MasterKey, PasswordHasher};
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> =
            Arc::new(meldewerk_storage::SledStore::open(&dir.path().join("db")).unwrap());
        let master = Arc::new(MasterKey::load_or_create(dir.path(), None).unwrap());
        let accounts = Accounts::new(store.clone(), master, PasswordHasher::new(64, 1).unwrap());
        let name = UserName::parse("klinik").unwrap();
        accounts
            .add(&name, Password::parse("correct horse").unwrap(), None, None)
            .await
            .unwrap();
        let key_id = store
            .user("klinik")
            .await
            .unwrap()
            .unwrap()
            .memento_key
            .key_id;
        let sessions = web::Data::new(Sessions::with_capacity(Duration::from_secs(60), false, 100));
        let request = |cookie: &Cookie<'static>| {
            actix_web::test::TestRequest::default()
                .app_data(sessions.clone())
                .app_data(web::Data::new(store.clone()))
                .cookie(cookie.clone())
                .to_http_request()
        };
        let live = sessions.create("klinik", &key_id);
        let user = SessionUser::extract(&request(&live)).await.unwrap();
        assert_eq!(user.user.name, "klinik");
        assert_eq!(user.session.key_id, key_id);
        // Another key id (the password changed since), an unknown user, no live session.
        let stale = sessions.create("klinik", "an older key");
        let stranger = sessions.create("nobody", &key_id);
        let forged = Cookie::new(COOKIE_NAME, "forged");
        for cookie in [&stale, &stranger, &forged] {
            assert!(
                SessionUser::extract(&request(cookie)).await.is_err(),
                "{cookie}"
            );
        }
    }

    #[test]
    fn expired_sessions_are_swept_before_the_cap() {
        let idle = Duration::from_millis(50);
        let sessions = Sessions::with_capacity(idle, false, 1_000_000);
        for _ in 0..10 {
            sessions.create("klinik", "k");
        }
        std::thread::sleep(idle * 2);
        // No pass over the map for one new session: the expired ones are still held.
        sessions.create("klinik", "k");
        assert_eq!(count(&sessions), 11);
        for _ in 11..SWEEP_EVERY {
            sessions.create("klinik", "k");
        }
        // Without the sweep all 4,096 would still be held; the ten expired ones at least are gone
        // (any other that expired meanwhile on a slow machine may be too).
        let held = count(&sessions);
        assert!(held <= SWEEP_EVERY as usize - 10, "{held}");
        assert!(held > 0);
    }
}
