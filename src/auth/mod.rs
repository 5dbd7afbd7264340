//! Who is calling: API users over HTTP Basic ([`basic`]), end users in a browser session created
//! by a magic link or `/bal/` ([`session`]), operators ([`operator`]), and scrapers of the
//! metrics ([`metrics_token`]). Failed logins of each are limited ([`limiter`]).

pub mod basic;
pub mod cache;
pub mod client_address;
pub mod limiter;
pub mod metrics_token;
pub mod operator;
pub mod session;

pub use basic::{ApiUser, CredentialVerifier};
pub use client_address::{client_address, TrustedProxies};
pub use operator::Operator;
pub use session::{SessionUser, Sessions};

/// Why authentication failed. The reason is for logs only: every caller sees the same answer.
#[derive(Debug, thiserror::Error)]
pub enum AuthFailure {
    /// Missing or wrong credentials.
    #[error("missing or invalid credentials")]
    Unauthorized,
    /// Too many failed attempts for this user or client address.
    #[error("too many failed logins")]
    TooManyAttempts {
        /// Seconds until another attempt is considered.
        retry_after_secs: u64,
    },
    /// The store takes no requests now (a full disk): 503, try again later.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// The store failed while checking.
    #[error("authentication backend failed: {0}")]
    Internal(String),
}

impl From<meldewerk_storage::StoreError> for AuthFailure {
    fn from(e: meldewerk_storage::StoreError) -> Self {
        if e.is_unavailable() {
            AuthFailure::Unavailable(e.to_string())
        } else {
            AuthFailure::Internal(e.to_string())
        }
    }
}

/// What a test sees of a refusal: its status (checked against `status_code`), its challenge
/// (`WWW-Authenticate`), its `Retry-After` and its body.
#[cfg(test)]
pub(crate) fn refusal(
    error: &impl actix_web::ResponseError,
) -> (u16, Option<String>, Option<String>, String) {
    use actix_web::body::MessageBody;
    use actix_web::http::header;
    let response = error.error_response();
    assert_eq!(response.status(), error.status_code());
    let header = |name| {
        response
            .headers()
            .get(name)
            .map(|v: &header::HeaderValue| v.to_str().unwrap().to_owned())
    };
    let (challenge, retry) = (
        header(header::WWW_AUTHENTICATE),
        header(header::RETRY_AFTER),
    );
    let status = response.status().as_u16();
    let body = response.into_body().try_into_bytes().unwrap();
    (
        status,
        challenge,
        retry,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}
