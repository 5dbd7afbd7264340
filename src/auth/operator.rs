//! Operators: HTTP Basic with the credentials from configuration, compared in constant time,
//! behind the same failed-login limits as the API users.

use std::net::IpAddr;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use futures::future::LocalBoxFuture;
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
pub(crate) async fn admit(
    limiter: &FailedLoginLimiter,
    user: &str,
    address: Option<IpAddr>,
    matches: impl FnOnce() -> bool,
) -> Result<(), NotOperator> {
    // A blocked login is refused before the secret is looked at, so that even the right one
    // does not tell a guesser anything until the allowance refills.
    if let Some(wait) = limiter.blocked(user, address).await {
        return Err(NotOperator::TooManyAttempts {
            retry_after_secs: wait.as_secs().max(1),
        });
    }
    if matches() {
        limiter.record_success(user, address).await;
        Ok(())
    } else {
        limiter.record_failure(user, address).await;
        Err(NotOperator::Unauthorized)
    }
}

/// The operator making `req`, checked under the failed-login limits (which may be counted in
/// the shared database, hence a future; it holds nothing of `req`).
pub(crate) fn operator_of(
    req: &HttpRequest,
) -> LocalBoxFuture<'static, Result<Operator, NotOperator>> {
    let expected = req.app_data::<web::Data<OperatorCredentials>>().cloned();
    let credentials = basic_credentials(req);
    let address = super::client_address(req);
    Box::pin(async move {
        let (Some(expected), Some((user, password))) = (expected, credentials) else {
            return Err(NotOperator::Unauthorized);
        };
        admit(&expected.limiter, &user, address, || {
            expected.matches(&user, &password)
        })
        .await
        .map(|()| Operator(user))
    })
}

impl FromRequest for Operator {
    type Error = NotOperator;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        operator_of(req)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use actix_web::test::TestRequest;
    use base64::Engine as _;

    use super::*;
    use crate::auth::refusal;

    const SECRET: [u8; 32] = [9; 32];

    fn credentials(password: Option<&str>, allowance: u32) -> OperatorCredentials {
        let limiter = FailedLoginLimiter::new(allowance, 1000, Duration::from_secs(60));
        OperatorCredentials::new("operator", password, &SECRET, limiter)
    }

    fn basic(user: &str, password: &str) -> String {
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        format!("Basic {encoded}")
    }

    /// What `Operator` makes of a request from 192.0.2.1 with `authorization`.
    async fn operator(
        expected: &web::Data<OperatorCredentials>,
        authorization: Option<&str>,
    ) -> Result<String, NotOperator> {
        let mut request = TestRequest::default()
            .app_data(expected.clone())
            .peer_addr("192.0.2.1:4000".parse().unwrap());
        if let Some(value) = authorization {
            request = request.insert_header((header::AUTHORIZATION, value));
        }
        operator_of(&request.to_http_request())
            .await
            .map(|Operator(name)| name)
    }

    #[test]
    fn only_the_configured_name_and_password_match() {
        let expected = credentials(Some("secret"), 100);
        assert!(expected.matches("operator", "secret"));
        assert!(!expected.matches("operator", "Secret"));
        assert!(!expected.matches("Operator", "secret"));
        assert!(!expected.matches("operator", ""));
        // The name's length is part of what is signed: no moving characters across the colon.
        let joined = OperatorCredentials::new(
            "ab",
            Some("c"),
            &SECRET,
            FailedLoginLimiter::new(100, 100, Duration::from_secs(60)),
        );
        assert!(joined.matches("ab", "c"));
        assert!(!joined.matches("a", "bc"));
        // Without a password nobody is an operator, not even with an empty one.
        let nobody = credentials(None, 100);
        assert!(!nobody.matches("operator", ""));
        assert_eq!(nobody.csrf_token(), None);
        assert!(!nobody.csrf_matches(""));
    }

    #[test]
    fn the_csrf_token_is_bound_to_the_credentials_and_the_secret() {
        let expected = credentials(Some("secret"), 100);
        let token = expected.csrf_token().unwrap();
        assert_eq!(Some(token.clone()), expected.csrf_token());
        assert!(expected.csrf_matches(&token));
        assert!(!expected.csrf_matches(&token[1..]));
        assert!(!expected.csrf_matches("not base64!"));
        assert!(!expected.csrf_matches(""));
        // Another password, or another secret, makes other tokens.
        let other = credentials(Some("other"), 100);
        assert_ne!(other.csrf_token().unwrap(), token);
        assert!(!other.csrf_matches(&token));
        let elsewhere = OperatorCredentials::new(
            "operator",
            Some("secret"),
            &[8; 32],
            FailedLoginLimiter::new(100, 100, Duration::from_secs(60)),
        );
        assert!(!elsewhere.csrf_matches(&token));
        // It is not the credentials' own tag.
        let tag = hmac::sign(
            &expected.key,
            &OperatorCredentials::message("operator", "secret"),
        );
        let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag.as_ref());
        assert!(!expected.csrf_matches(&tag));
    }

    #[actix_web::test]
    async fn requests_are_admitted_with_the_credentials_and_refused_after_the_allowance() {
        let expected = web::Data::new(credentials(Some("secret"), 2));
        let right = basic("operator", "secret");
        assert_eq!(operator(&expected, Some(&right)).await.unwrap(), "operator");
        assert!(matches!(
            operator(&expected, None).await,
            Err(NotOperator::Unauthorized)
        ));
        assert!(matches!(
            operator(&expected, Some("Bearer secret")).await,
            Err(NotOperator::Unauthorized)
        ));
        let wrong = basic("operator", "guess");
        for _ in 0..2 {
            assert!(matches!(
                operator(&expected, Some(&wrong)).await,
                Err(NotOperator::Unauthorized)
            ));
        }
        // The allowance is used up: refused, the right password included, before it is looked at.
        let Err(NotOperator::TooManyAttempts { retry_after_secs }) =
            operator(&expected, Some(&basic("operator", "secret"))).await
        else {
            panic!("the third attempt is refused");
        };
        assert!((1..=60).contains(&retry_after_secs), "{retry_after_secs}");
        // No credentials in the application: nobody is an operator.
        let bare = TestRequest::default()
            .insert_header((header::AUTHORIZATION, right.as_str()))
            .to_http_request();
        assert!(matches!(
            operator_of(&bare).await,
            Err(NotOperator::Unauthorized)
        ));
    }

    #[actix_web::test]
    async fn a_success_makes_the_address_known_for_the_name() {
        let limiter = FailedLoginLimiter::new(1, 1000, Duration::from_secs(60));
        let address: Option<IpAddr> = Some("192.0.2.7".parse().unwrap());
        admit(&limiter, "operator", address, || true).await.unwrap();
        // The name is blocked by a guess from elsewhere; the known address keeps its access.
        let elsewhere: Option<IpAddr> = Some("198.51.100.1".parse().unwrap());
        assert!(matches!(
            admit(&limiter, "operator", elsewhere, || false).await,
            Err(NotOperator::Unauthorized)
        ));
        assert!(limiter.blocked("operator", elsewhere).await.is_some());
        admit(&limiter, "operator", address, || true).await.unwrap();
    }

    #[test]
    fn refusals_answer_with_a_challenge_or_a_wait() {
        assert_eq!(
            refusal(&NotOperator::Unauthorized),
            (
                401,
                Some("Basic realm=\"meldewerk operators\"".into()),
                None,
                r#"{"errors":["operator credentials required"]}"#.into()
            )
        );
        assert_eq!(
            refusal(&NotOperator::TooManyAttempts {
                retry_after_secs: 7
            }),
            (
                429,
                None,
                Some("7".into()),
                r#"{"errors":["too many failed logins; try again in 7 seconds"]}"#.into()
            )
        );
        assert_eq!(
            NotOperator::Unauthorized.to_string(),
            "operator credentials required"
        );
        assert_eq!(
            NotOperator::TooManyAttempts {
                retry_after_secs: 7
            }
            .to_string(),
            "too many failed operator logins"
        );
    }
}
