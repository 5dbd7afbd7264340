//! HTTP Basic authentication of API users.
//!
//! argon2 runs at most once per credential per cache lifetime, on a blocking thread, with a bound
//! on how many run at once: a verified credential is remembered under an HMAC of (user, password,
//! stored hash), so a password change or a removed user invalidates it on its own. Failures are
//! never cached, and they are counted per user, per client address ([`super::client_address`])
//! and per user from one address; successes make the address known for the user
//! ([`super::limiter`]).

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use base64::Engine as _;
use meldewerk_storage::{Store, UserRecord};
use ring::hmac;
use tokio::sync::Semaphore;

use super::cache::CredentialCache;
use super::limiter::FailedLoginLimiter;
use super::AuthFailure;
use crate::configuration::SecuritySettings;
use crate::crypto::{MasterKey, PasswordHasher};
use crate::telemetry::log_str;

/// Checks user name and password, with the credential cache and the failed-login limits.
pub struct CredentialVerifier {
    store: Arc<dyn Store>,
    hasher: PasswordHasher,
    cache: Mutex<CredentialCache>,
    cache_key: hmac::Key,
    argon2_slots: Semaphore,
    limiter: FailedLoginLimiter,
    /// Hash of a random password, verified for unknown users so that their answer takes as long
    /// as a wrong password for a real user (no user enumeration by timing).
    decoy_hash: String,
}

impl CredentialVerifier {
    /// A verifier over `store` with the configured cache, and the failed-login limits of
    /// `limiter` (this node's own, or those every node on a shared database counts together).
    pub fn new(
        store: Arc<dyn Store>,
        hasher: PasswordHasher,
        master: &MasterKey,
        settings: &SecuritySettings,
        limiter: FailedLoginLimiter,
    ) -> Result<Self, crate::crypto::CryptoError> {
        let decoy_hash = hasher.hash(&crate::crypto::random_token(16))?;
        Ok(CredentialVerifier {
            store,
            hasher,
            cache: Mutex::new(CredentialCache::new(
                Duration::from_secs(settings.credential_cache_ttl_secs),
                settings.credential_cache_size,
            )),
            cache_key: hmac::Key::new(hmac::HMAC_SHA256, &master.derive("credential-cache")),
            argon2_slots: Semaphore::new(settings.argon2_concurrency),
            limiter,
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
        cache.contains(tag, Instant::now())
    }

    fn remember(&self, tag: [u8; 32]) {
        let mut cache = self.cache.lock().expect("cache lock");
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
        if let Some(wait) = self.limiter.blocked(user, address).await {
            tracing::warn!("login refused: too many failed attempts");
            return Err(AuthFailure::TooManyAttempts {
                retry_after_secs: wait.as_secs().max(1),
            });
        }
        let record = self.store.user(user).await?;
        let Some(record) = record else {
            let _ = self.argon2_verify(password, &self.decoy_hash).await?;
            self.limiter.record_failure(user, address).await;
            tracing::info!("login failed");
            return Err(AuthFailure::Unauthorized);
        };
        let tag = self.cache_tag(user, password, &record.password_hash);
        if self.cached(&tag) {
            self.limiter.record_success(user, address).await;
            return Ok(record);
        }
        if self.argon2_verify(password, &record.password_hash).await? {
            self.remember(tag);
            self.limiter.record_success(user, address).await;
            Ok(record)
        } else {
            self.limiter.record_failure(user, address).await;
            tracing::info!("login failed");
            Err(AuthFailure::Unauthorized)
        }
    }
}

/// User name and password of a request's `Authorization: Basic` header, if it has a valid one.
pub fn basic_credentials(req: &HttpRequest) -> Option<(String, String)> {
    parse_basic(req.headers().get(header::AUTHORIZATION)?.to_str().ok()?)
}

/// User name and password of an `Authorization` header value with the Basic scheme. The scheme
/// name is matched without regard to case (RFC 7235, section 2.1: `basic` and `BASIC` are
/// `Basic`); the credentials are base64 of `user:password` in UTF-8 (RFC 7617).
fn parse_basic(value: &str) -> Option<(String, String)> {
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim_start_matches(' '))
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':').unwrap_or((&decoded, ""));
    Some((user.to_string(), password.to_string()))
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
            AuthFailure::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
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
            AuthFailure::Unavailable(reason) => {
                tracing::warn!(%reason, "login not checked: the store is unavailable");
                crate::module_layer::unavailable_response(crate::module_layer::UNAVAILABLE_MESSAGE)
            }
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
        let address = super::client_address(req);
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

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;
    use meldewerk_storage::SledStore;

    use super::*;
    use crate::accounts::{Accounts, Password, UserName};

    fn encoded(credentials: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(credentials)
    }

    const PASSWORD: &str = "correct horse";

    fn address(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    /// A verifier over a store holding user `alice`, allowing `allowance` failures a minute
    /// per user name.
    async fn verifier(allowance: u32) -> (tempfile::TempDir, Arc<dyn Store>, CredentialVerifier) {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(SledStore::open(&dir.path().join("db")).unwrap());
        let master = Arc::new(MasterKey::load_or_create(dir.path(), None).unwrap());
        let hasher = PasswordHasher::new(64, 1).unwrap();
        Accounts::new(store.clone(), master.clone(), hasher.clone())
            .add(
                &UserName::parse("alice").unwrap(),
                Password::parse(PASSWORD).unwrap(),
                None,
                None,
            )
            .await
            .unwrap();
        let settings = SecuritySettings {
            failed_logins_per_user_per_minute: allowance,
            ..SecuritySettings::default()
        };
        let verifier = CredentialVerifier::new(
            store.clone(),
            hasher,
            &master,
            &settings,
            FailedLoginLimiter::configured(&settings),
        )
        .unwrap();
        (dir, store, verifier)
    }

    #[actix_web::test]
    async fn the_right_password_admits_and_a_remembered_one_admits_only_itself() {
        let (_dir, store, verifier) = verifier(100).await;
        let here = address("192.0.2.1");
        assert!(matches!(
            verifier.verify("alice", "wrong horse", here).await,
            Err(AuthFailure::Unauthorized)
        ));
        assert!(matches!(
            verifier.verify("bob", PASSWORD, here).await,
            Err(AuthFailure::Unauthorized)
        ));
        let record = verifier.verify("alice", PASSWORD, here).await.unwrap();
        assert_eq!(record.name, "alice");
        // Now remembered, under a tag of name, password and stored hash together.
        let tag = verifier.cache_tag("alice", PASSWORD, &record.password_hash);
        assert!(verifier.cached(&tag));
        assert_eq!(
            verifier.verify("alice", PASSWORD, here).await.unwrap().name,
            "alice"
        );
        for (user, password) in [("alice", "wrong horse"), ("alice", ""), ("bob", PASSWORD)] {
            assert!(
                matches!(
                    verifier.verify(user, password, here).await,
                    Err(AuthFailure::Unauthorized)
                ),
                "{user}:{password}"
            );
        }
        assert_ne!(
            tag,
            verifier.cache_tag("alic", &format!("e{PASSWORD}"), &record.password_hash)
        );
        assert_ne!(tag, verifier.cache_tag("alice", PASSWORD, "another hash"));
        assert!(!verifier.cached(&verifier.cache_tag(
            "alice",
            "wrong horse",
            &record.password_hash
        )));
        drop(store);
    }

    #[actix_web::test]
    async fn failures_block_the_name_even_for_the_right_password_until_the_allowance_refills() {
        let (_dir, _store, verifier) = verifier(2).await;
        let here = address("192.0.2.1");
        for _ in 0..2 {
            assert!(matches!(
                verifier.verify("alice", "wrong horse", here).await,
                Err(AuthFailure::Unauthorized)
            ));
        }
        let Err(AuthFailure::TooManyAttempts { retry_after_secs }) =
            verifier.verify("alice", PASSWORD, here).await
        else {
            panic!("blocked after the allowance");
        };
        assert!((1..=60).contains(&retry_after_secs), "{retry_after_secs}");
        // Unknown names are counted too.
        for _ in 0..2 {
            assert!(matches!(
                verifier.verify("bob", "guess", here).await,
                Err(AuthFailure::Unauthorized)
            ));
        }
        assert!(matches!(
            verifier.verify("bob", "guess", here).await,
            Err(AuthFailure::TooManyAttempts { .. })
        ));
    }

    #[actix_web::test]
    async fn addresses_that_logged_in_keep_their_access_while_the_name_is_guessed_elsewhere() {
        let (_dir, _store, verifier) = verifier(1).await;
        // The first login checks the password; the second is answered from the cache. Both
        // make their address known for the name.
        verifier
            .verify("alice", PASSWORD, address("192.0.2.1"))
            .await
            .unwrap();
        verifier
            .verify("alice", PASSWORD, address("192.0.2.2"))
            .await
            .unwrap();
        assert!(verifier
            .verify("alice", "guess", address("198.51.100.9"))
            .await
            .is_err());
        assert!(matches!(
            verifier
                .verify("alice", PASSWORD, address("198.51.100.9"))
                .await,
            Err(AuthFailure::TooManyAttempts { .. })
        ));
        for known in ["192.0.2.1", "192.0.2.2"] {
            assert!(
                verifier
                    .verify("alice", PASSWORD, address(known))
                    .await
                    .is_ok(),
                "{known}"
            );
        }
    }

    #[actix_web::test]
    async fn the_extractor_answers_the_user_or_a_challenge() {
        let (_dir, _store, verifier) = verifier(100).await;
        let verifier = web::Data::new(verifier);
        let request = |authorization: Option<String>| {
            let mut request = TestRequest::default()
                .app_data(verifier.clone())
                .peer_addr("192.0.2.1:4000".parse().unwrap());
            if let Some(value) = authorization {
                request = request.insert_header((header::AUTHORIZATION, value));
            }
            request.to_http_request()
        };
        let req = request(Some(format!(
            "Basic {}",
            encoded(&format!("alice:{PASSWORD}"))
        )));
        let ApiUser(record) = ApiUser::extract(&req).await.unwrap();
        assert_eq!(record.name, "alice");
        for authorization in [
            None,
            Some(format!("Basic {}", encoded("alice:wrong horse"))),
        ] {
            let req = request(authorization.clone());
            let Err(BasicRejection(failure)) = ApiUser::extract(&req).await else {
                panic!("{authorization:?} is refused");
            };
            assert!(
                matches!(failure, AuthFailure::Unauthorized),
                "{authorization:?}"
            );
        }
    }

    fn answer(failure: AuthFailure) -> (u16, Option<String>, Option<String>, String) {
        crate::auth::refusal(&BasicRejection(failure))
    }

    #[test]
    fn refusals_answer_as_the_contract_says() {
        assert_eq!(
            answer(AuthFailure::Unauthorized),
            (
                401,
                Some("Basic realm=\"meldewerk\", charset=\"UTF-8\"".into()),
                None,
                String::new()
            )
        );
        assert_eq!(
            answer(AuthFailure::TooManyAttempts {
                retry_after_secs: 9
            }),
            (
                429,
                None,
                Some("9".into()),
                r#"{"errors":["too many failed logins; try again in 9 seconds"]}"#.into()
            )
        );
        let (status, _, _, _) = answer(AuthFailure::Unavailable("disk full".into()));
        assert_eq!(status, 503);
        assert_eq!(
            answer(AuthFailure::Internal("broken".into())),
            (500, None, None, r#"{"errors":["internal error"]}"#.into())
        );
        assert_eq!(
            BasicRejection(AuthFailure::Unauthorized).to_string(),
            "missing or invalid credentials"
        );
    }

    #[test]
    fn the_basic_scheme_is_case_insensitive() {
        for scheme in ["Basic", "basic", "BASIC", "bAsIc"] {
            let value = format!("{scheme} {}", encoded("alice:pass:word"));
            assert_eq!(
                parse_basic(&value),
                Some(("alice".to_string(), "pass:word".to_string())),
                "{scheme}"
            );
        }
    }

    #[test]
    fn other_schemes_and_broken_credentials_are_none() {
        assert_eq!(parse_basic(&format!("Bearer {}", encoded("a:b"))), None);
        assert_eq!(parse_basic(&format!("Basicx {}", encoded("a:b"))), None);
        assert_eq!(parse_basic("Basic"), None);
        assert_eq!(parse_basic("Basic !!!"), None);
        let not_utf8 = base64::engine::general_purpose::STANDARD.encode([0xff, b':', b'x']);
        assert_eq!(parse_basic(&format!("Basic {not_utf8}")), None);
        assert_eq!(
            parse_basic(&format!("Basic {}", encoded("alice"))),
            Some(("alice".to_string(), String::new()))
        );
    }
}
