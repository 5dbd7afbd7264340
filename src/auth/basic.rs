//! HTTP Basic authentication of API users.
//!
//! argon2 runs at most once per credential per cache lifetime, on a blocking thread, with a bound
//! on how many run at once: a verified credential is remembered under an HMAC of (user, password,
//! stored hash), so a password change or a removed user invalidates it on its own. Failures are
//! never cached, and they are counted per user and per client address.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::http::header::Header as _;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use actix_web_httpauth::headers::authorization::{Authorization, Basic};
use meldewerk_storage::{Store, UserRecord};
use ring::hmac;
use tokio::sync::Semaphore;

use super::limiter::FailedLoginLimiter;
use super::AuthFailure;
use crate::configuration::SecuritySettings;
use crate::crypto::{MasterKey, PasswordHasher};
use crate::telemetry::log_str;

/// Checks user name and password, with the credential cache and the failed-login limits.
pub struct CredentialVerifier {
    store: Arc<dyn Store>,
    hasher: PasswordHasher,
    cache: Mutex<HashMap<[u8; 32], Instant>>,
    cache_key: hmac::Key,
    ttl: Duration,
    max_entries: usize,
    argon2_slots: Semaphore,
    limiter: FailedLoginLimiter,
    /// Hash of a random password, verified for unknown users so that their answer takes as long
    /// as a wrong password for a real user (no user enumeration by timing).
    decoy_hash: String,
}

impl CredentialVerifier {
    /// A verifier over `store` with the configured cache and limits.
    pub fn new(
        store: Arc<dyn Store>,
        hasher: PasswordHasher,
        master: &MasterKey,
        settings: &SecuritySettings,
    ) -> Result<Self, crate::crypto::CryptoError> {
        let decoy_hash = hasher.hash(&crate::crypto::random_token(16))?;
        Ok(CredentialVerifier {
            store,
            hasher,
            cache: Mutex::new(HashMap::new()),
            cache_key: hmac::Key::new(hmac::HMAC_SHA256, &master.derive("credential-cache")),
            ttl: Duration::from_secs(settings.credential_cache_ttl_secs),
            max_entries: settings.credential_cache_size,
            argon2_slots: Semaphore::new(settings.argon2_concurrency),
            limiter: FailedLoginLimiter::new(
                settings.failed_logins_per_user_per_minute,
                settings.failed_logins_per_address_per_minute,
            ),
            decoy_hash,
        })
    }

    fn cache_tag(&self, user: &str, password: &str, stored_hash: &str) -> [u8; 32] {
        let mut ctx = hmac::Context::with_key(&self.cache_key);
        for part in [user, password, stored_hash] {
            ctx.update(&(part.len() as u64).to_be_bytes());
            ctx.update(part.as_bytes());
        }
        ctx.sign()
            .as_ref()
            .try_into()
            .expect("SHA-256 tags have 32 bytes")
    }

    fn cached(&self, tag: &[u8; 32]) -> bool {
        let cache = self.cache.lock().expect("cache lock");
        cache.get(tag).is_some_and(|at| at.elapsed() < self.ttl)
    }

    fn remember(&self, tag: [u8; 32]) {
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.len() >= self.max_entries {
            let ttl = self.ttl;
            cache.retain(|_, at| at.elapsed() < ttl);
            if cache.len() >= self.max_entries {
                cache.clear();
            }
        }
        cache.insert(tag, Instant::now());
    }

    async fn argon2_verify(&self, password: &str, phc: &str) -> Result<bool, AuthFailure> {
        let _slot = self
            .argon2_slots
            .acquire()
            .await
            .map_err(|e| AuthFailure::Internal(e.to_string()))?;
        let hasher = self.hasher.clone();
        let (password, phc) = (password.to_string(), phc.to_string());
        tokio::task::spawn_blocking(move || hasher.verify(&password, &phc))
            .await
            .map_err(|e| AuthFailure::Internal(e.to_string()))
    }

    /// The user, if the password is right and neither the user nor the address is blocked.
    #[tracing::instrument(skip_all, fields(user = %log_str(user)))]
    pub async fn verify(
        &self,
        user: &str,
        password: &str,
        address: Option<IpAddr>,
    ) -> Result<UserRecord, AuthFailure> {
        if let Some(wait) = self.limiter.blocked(user, address) {
            tracing::warn!("login refused: too many failed attempts");
            return Err(AuthFailure::TooManyAttempts {
                retry_after_secs: wait.as_secs().max(1),
            });
        }
        let record = self
            .store
            .user(user)
            .await
            .map_err(|e| AuthFailure::Internal(e.to_string()))?;
        let Some(record) = record else {
            let _ = self.argon2_verify(password, &self.decoy_hash).await?;
            self.limiter.record_failure(user, address);
            tracing::info!("login failed");
            return Err(AuthFailure::Unauthorized);
        };
        let tag = self.cache_tag(user, password, &record.password_hash);
        if self.cached(&tag) {
            return Ok(record);
        }
        if self.argon2_verify(password, &record.password_hash).await? {
            self.remember(tag);
            Ok(record)
        } else {
            self.limiter.record_failure(user, address);
            tracing::info!("login failed");
            Err(AuthFailure::Unauthorized)
        }
    }
}

/// User name and password of a request's `Authorization: Basic` header, if it has a valid one.
pub fn basic_credentials(req: &HttpRequest) -> Option<(String, String)> {
    let auth = Authorization::<Basic>::parse(req).ok()?;
    let basic = auth.as_ref();
    Some((
        basic.user_id().to_string(),
        basic.password().map(|p| p.to_string()).unwrap_or_default(),
    ))
}

/// An API user authenticated by HTTP Basic.
pub struct ApiUser(pub UserRecord);

/// The answer to a request that failed Basic authentication: 401 with an empty body and a
/// `WWW-Authenticate` challenge, or 429 with `Retry-After` once the failed-login limit is reached.
#[derive(Debug)]
pub struct BasicRejection(pub AuthFailure);

impl std::fmt::Display for BasicRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ResponseError for BasicRejection {
    fn status_code(&self) -> StatusCode {
        match self.0 {
            AuthFailure::Unauthorized => StatusCode::UNAUTHORIZED,
            AuthFailure::TooManyAttempts { .. } => StatusCode::TOO_MANY_REQUESTS,
            AuthFailure::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match &self.0 {
            AuthFailure::Unauthorized => HttpResponse::Unauthorized()
                .insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"meldewerk\", charset=\"UTF-8\""),
                ))
                .finish(),
            AuthFailure::TooManyAttempts { retry_after_secs } => HttpResponse::TooManyRequests()
                .insert_header((header::RETRY_AFTER, retry_after_secs.to_string()))
                .json(serde_json::json!({
                    "errors": [format!("too many failed logins; try again in {retry_after_secs} seconds")]
                })),
            AuthFailure::Internal(reason) => {
                tracing::error!(%reason, "authentication failed internally");
                HttpResponse::InternalServerError()
                    .json(serde_json::json!({ "errors": ["internal error"] }))
            }
        }
    }
}

impl FromRequest for ApiUser {
    type Error = BasicRejection;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let verifier = req.app_data::<web::Data<CredentialVerifier>>().cloned();
        let credentials = basic_credentials(req);
        let address = req.peer_addr().map(|a| a.ip());
        Box::pin(async move {
            let verifier = verifier.expect("CredentialVerifier is registered at start-up");
            let (user, password) = credentials.ok_or(BasicRejection(AuthFailure::Unauthorized))?;
            verifier
                .verify(&user, &password, address)
                .await
                .map(ApiUser)
                .map_err(BasicRejection)
        })
    }
}
