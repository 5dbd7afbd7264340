//! Operators: HTTP Basic with the credentials from configuration, compared in constant time,
//! behind the same failed-login limits as the API users.

use std::future::{ready, Ready};
use std::net::IpAddr;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use ring::hmac;

use super::basic::basic_credentials;
use super::limiter::FailedLoginLimiter;

/// The configured operator credentials, kept as HMAC tags so that comparing them takes the same
/// time whatever the input, and the failed-login limits that stop guessing them.
pub struct OperatorCredentials {
    key: hmac::Key,
    expected: Option<hmac::Tag>,
    limiter: FailedLoginLimiter,
}

impl OperatorCredentials {
    /// Credentials `username`/`password`; without a password nobody is an operator. Failed
    /// logins are limited per user name and per client address like the API users'.
    pub fn new(
        username: &str,
        password: Option<&str>,
        secret: &[u8; 32],
        limiter: FailedLoginLimiter,
    ) -> Self {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let expected = password.map(|p| hmac::sign(&key, &Self::message(username, p)));
        OperatorCredentials {
            key,
            expected,
            limiter,
        }
    }

    fn message(user: &str, password: &str) -> Vec<u8> {
        let mut m = (user.len() as u64).to_be_bytes().to_vec();
        m.extend_from_slice(user.as_bytes());
        m.extend_from_slice(password.as_bytes());
        m
    }

    /// The dashboard forms' CSRF token: an HMAC of the configured credentials' own tag, so it
    /// is bound to them (a new password makes new tokens), unknown to anyone without the
    /// service's secret, and needs no state. `None` without a password (nobody is an operator).
    pub(crate) fn csrf_token(&self) -> Option<String> {
        use base64::Engine as _;
        let tag = self.expected.as_ref()?;
        let token = hmac::sign(&self.key, &Self::csrf_message(tag));
        Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.as_ref()))
    }

    /// Whether `posted` is [`OperatorCredentials::csrf_token`], compared in constant time.
    pub(crate) fn csrf_matches(&self, posted: &str) -> bool {
        use base64::Engine as _;
        let (Some(tag), Ok(posted)) = (
            self.expected.as_ref(),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(posted.as_bytes()),
        ) else {
            return false;
        };
        hmac::verify(&self.key, &Self::csrf_message(tag), &posted).is_ok()
    }

    fn csrf_message(tag: &hmac::Tag) -> Vec<u8> {
        let mut m = b"dashboard-csrf\0".to_vec();
        m.extend_from_slice(tag.as_ref());
        m
    }

    /// Whether `user`/`password` are the operator's (in constant time).
    fn matches(&self, user: &str, password: &str) -> bool {
        match &self.expected {
            Some(tag) => {
                hmac::verify(&self.key, &Self::message(user, password), tag.as_ref()).is_ok()
            }
            None => false,
        }
    }
}

/// A request made with operator credentials; carries the operator's user name (for the audit
/// log).
pub struct Operator(pub String);

/// Not an operator: 401 with a challenge, or 429 with `Retry-After` once the failed-login limit
/// is reached.
#[derive(Debug)]
pub enum NotOperator {
    /// Missing or wrong credentials.
    Unauthorized,
    /// Too many failed logins for this user name or client address.
    TooManyAttempts {
        /// Seconds until the next attempt is considered.
        retry_after_secs: u64,
    },
}

impl std::fmt::Display for NotOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotOperator::Unauthorized => f.write_str("operator credentials required"),
            NotOperator::TooManyAttempts { .. } => f.write_str("too many failed operator logins"),
        }
    }
}

impl ResponseError for NotOperator {
    fn status_code(&self) -> actix_web::http::StatusCode {
        match self {
            NotOperator::Unauthorized => actix_web::http::StatusCode::UNAUTHORIZED,
            NotOperator::TooManyAttempts { .. } => actix_web::http::StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            NotOperator::Unauthorized => HttpResponse::Unauthorized()
                .insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"meldewerk operators\""),
                ))
                .json(serde_json::json!({ "errors": ["operator credentials required"] })),
            NotOperator::TooManyAttempts { retry_after_secs } => HttpResponse::TooManyRequests()
                .insert_header((header::RETRY_AFTER, retry_after_secs.to_string()))
                .json(serde_json::json!({ "errors": [format!(
                    "too many failed logins; try again in {retry_after_secs} seconds"
                )] })),
        }
    }
}

/// One login attempt under the failed-login limits: refused while `user` is blocked for
/// `address`, else checked with `matches` and counted as a success or a failure.
pub(crate) fn admit(
    limiter: &FailedLoginLimiter,
    user: &str,
    address: Option<IpAddr>,
    matches: impl FnOnce() -> bool,
) -> Result<(), NotOperator> {
    // A blocked login is refused before the secret is looked at, so that even the right one
    // does not tell a guesser anything until the allowance refills.
    if let Some(wait) = limiter.blocked(user, address) {
        return Err(NotOperator::TooManyAttempts {
            retry_after_secs: wait.as_secs().max(1),
        });
    }
    if matches() {
        limiter.record_success(user, address);
        Ok(())
    } else {
        limiter.record_failure(user, address);
        Err(NotOperator::Unauthorized)
    }
}

/// The operator making `req`, checked under the failed-login limits.
pub(crate) fn operator_of(req: &HttpRequest) -> Result<Operator, NotOperator> {
    let (Some(expected), Some((user, password))) = (
        req.app_data::<web::Data<OperatorCredentials>>(),
        basic_credentials(req),
    ) else {
        return Err(NotOperator::Unauthorized);
    };
    let address = super::client_address(req);
    admit(&expected.limiter, &user, address, || {
        expected.matches(&user, &password)
    })
    .map(|()| Operator(user))
}

impl FromRequest for Operator {
    type Error = NotOperator;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        ready(operator_of(req))
    }
}
