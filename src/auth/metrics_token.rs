//! Read-only access to `/metrics` with a bearer token from configuration (`metrics.token`), so
//! that a scraper needs neither the operator's password nor shares the operator's failed-login
//! limits: guessing the operator's password does not stop the scrapes, and a wrong token does
//! not block the operator.

use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use futures::future::LocalBoxFuture;
use ring::hmac;

use super::limiter::FailedLoginLimiter;
use super::operator::{admit, operator_of, NotOperator};

/// The name wrong tokens are counted under, in the token's own limits.
const SCRAPER: &str = "metrics";

/// The configured metrics token, kept as an HMAC tag so that comparing it takes the same time
/// whatever the input, and the failed-login limits of token attempts.
pub struct MetricsToken {
    key: hmac::Key,
    expected: Option<hmac::Tag>,
    limiter: FailedLoginLimiter,
}

impl MetricsToken {
    /// Accepts `token` (none: no token is accepted), limited like a login by `limiter`.
    pub fn new(token: Option<&str>, secret: &[u8; 32], limiter: FailedLoginLimiter) -> Self {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let expected = token.map(|t| hmac::sign(&key, t.as_bytes()));
        MetricsToken {
            key,
            expected,
            limiter,
        }
    }

    fn matches(&self, token: &str) -> bool {
        self.expected
            .as_ref()
            .is_some_and(|tag| hmac::verify(&self.key, token.as_bytes(), tag.as_ref()).is_ok())
    }
}

/// The token of an `Authorization: Bearer …` header (scheme name in any case, RFC 7235).
fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// A request that may read the metrics: with the metrics token, or with operator credentials.
/// Refused like an operator request: 401, or 429 once the failed-login limit is reached.
pub struct MetricsReader;

impl FromRequest for MetricsReader {
    type Error = NotOperator;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let Some(token) = bearer_token(req).map(str::to_owned) else {
            let operator = operator_of(req);
            return Box::pin(async move { operator.await.map(|_| MetricsReader) });
        };
        let address = super::client_address(req);
        let tokens = req.app_data::<web::Data<MetricsToken>>().cloned();
        Box::pin(async move {
            let Some(tokens) = tokens else {
                return Err(NotOperator::Unauthorized);
            };
            admit(&tokens.limiter, SCRAPER, address, || tokens.matches(&token))
                .await
                .map(|()| MetricsReader)
        })
    }
}
