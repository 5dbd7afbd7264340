//! Browser sessions of end users, created by a magic link or `/bal/`.
//!
//! The cookie carries a random id; the server keeps only its SHA-256, so that neither a memory
//! dump nor the database yields usable cookies. A session ends after the configured idle time,
//! on `/logout`, or when the API user's password changes (the session remembers the user's key
//! id and [`SessionUser`] compares it with the store's on every request).
//!
//! Where sessions live depends on the store: one node (sled) keeps them in its memory
//! (`memory.rs`): an end user needs one only while filling a form, and the magic link opens a new
//! one after a restart. Nodes sharing a PostgreSQL database keep them there
//! ([`meldewerk_storage::LoginState`]), so that a session opened on one node is alive on every
//! node, and ends (by logout or idleness) on all of them at once.

mod memory;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use meldewerk_storage::{LoginState, SessionRecord, Store, StoreError, UserRecord};

use crate::crypto::random_token;
use memory::MemorySessions;

/// Name of the session cookie.
pub const COOKIE_NAME: &str = "meldewerk_session";

/// What a session knows.
#[derive(Debug, Clone)]
pub struct Session {
    /// The API user the end user acts as.
    pub username: String,
    /// The user's memento key id when the session began; a password change ends the session.
    pub key_id: String,
    /// Token that every form post of this session must carry (defence against cross-site posts).
    pub csrf: String,
}

/// Where the sessions live.
enum Kept {
    /// In this node's memory.
    Memory(MemorySessions),
    /// In the database every node shares.
    Shared(Arc<dyn LoginState>),
}

/// All live sessions.
pub struct Sessions {
    kept: Kept,
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
    /// Sessions in this node's memory, ending after `idle` without use; `secure` marks cookies
    /// HTTPS-only.
    pub fn new(idle: Duration, secure: bool) -> Self {
        Sessions {
            kept: Kept::Memory(MemorySessions::new()),
            idle,
            secure,
        }
    }

    /// Sessions in `state`, which every node on the database shares; otherwise as
    /// [`Sessions::new`].
    pub fn shared(idle: Duration, secure: bool, state: Arc<dyn LoginState>) -> Self {
        Sessions {
            kept: Kept::Shared(state),
            idle,
            secure,
        }
    }

    /// Sessions in memory, at most `capacity` of them.
    #[cfg(test)]
    fn in_memory(idle: Duration, secure: bool, capacity: usize) -> Self {
        Sessions {
            kept: Kept::Memory(MemorySessions::with_capacity(capacity)),
            idle,
            secure,
        }
    }

    #[cfg(test)]
    fn memory(&self) -> &MemorySessions {
        match &self.kept {
            Kept::Memory(memory) => memory,
            Kept::Shared(_) => panic!("the sessions are shared"),
        }
    }

    /// Starts a session and returns the cookie that carries it; `None` (logged) when it could
    /// not be stored.
    pub async fn create(
        &self,
        username: &str,
        key_id: &str,
    ) -> Result<Cookie<'static>, StoreError> {
        let id = random_token(32);
        let session = Session {
            username: username.to_string(),
            key_id: key_id.to_string(),
            csrf: random_token(24),
        };
        match &self.kept {
            Kept::Memory(memory) => memory.insert(digest(&id), session, self.idle),
            Kept::Shared(state) => {
                let record = SessionRecord {
                    username: session.username,
                    key_id: session.key_id,
                    csrf: session.csrf,
                };
                state.open_session(&digest(&id), &record, self.idle).await?;
            }
        }
        Ok(self.cookie(id))
    }

    /// The session behind a cookie value, if it is alive; using it keeps it alive. A session
    /// the database cannot be asked about counts as none (logged).
    pub async fn touch(&self, cookie_value: &str) -> Option<Session> {
        self.lookup(cookie_value).await.unwrap_or_else(|e| {
            tracing::error!(error = %e, "the session could not be read");
            None
        })
    }

    /// [`Sessions::touch`], with the store's failure to read a shared session (its database
    /// away) told apart from no session.
    async fn lookup(&self, cookie_value: &str) -> Result<Option<Session>, StoreError> {
        match &self.kept {
            Kept::Memory(memory) => Ok(memory.touch(&digest(cookie_value), self.idle)),
            Kept::Shared(state) => Ok(state
                .touch_session(&digest(cookie_value), self.idle)
                .await?
                .map(|r| Session {
                    username: r.username,
                    key_id: r.key_id,
                    csrf: r.csrf,
                })),
        }
    }

    /// Ends a session.
    pub async fn end(&self, cookie_value: &str) {
        match &self.kept {
            Kept::Memory(memory) => memory.end(&digest(cookie_value)),
            Kept::Shared(state) => {
                if let Err(e) = state.end_session(&digest(cookie_value)).await {
                    tracing::error!(error = %e, "the session could not be ended");
                }
            }
        }
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
            NoSession::Unavailable => f.write_str("the session cannot be read now"),
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
                        "Das Portal kann seine Daten gerade nicht lesen; nichts wurde gespeichert \
                         oder gesendet. Bitte versuchen Sie es in einigen Minuten erneut, Ihre \
                         Sitzung bleibt bestehen."
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

/// A store failure while a session is opened or checked: unavailable (503, the link or the
/// session stays good), or, logged, no session.
pub(crate) fn refused(e: StoreError, what: &str) -> NoSession {
    if e.is_unavailable() {
        tracing::warn!(error = %e, "{what} cannot be read: the store is unavailable");
        return NoSession::Unavailable;
    }
    tracing::error!(error = %e, "{what} cannot be read");
    NoSession::Invalid
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
            let session = match cookie {
                Some(c) => match sessions.lookup(&c).await {
                    Ok(session) => session.ok_or(NoSession::Invalid)?,
                    Err(e) => return Err(refused(e, "a session")),
                },
                None => return Err(NoSession::Invalid),
            };
            // The user is read from the store on every request, never kept with the session: a
            // password change (a new key id) made through any node ends the session on every
            // node with the next request.
            let user = match store.user(&session.username).await {
                Ok(user) => user.ok_or(NoSession::Invalid)?,
                Err(e) => return Err(refused(e, "a session's user")),
            };
            if user.memento_key.key_id != session.key_id {
                return Err(NoSession::Invalid);
            }
            Ok(SessionUser { user, session })
        })
    }
}
