//! Operators: HTTP Basic with the credentials from configuration, compared in constant time.

use std::future::{ready, Ready};

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, FromRequest, HttpRequest, HttpResponse, ResponseError};
use ring::hmac;

use super::basic::basic_credentials;

/// The configured operator credentials, kept as HMAC tags so that comparing them takes the same
/// time whatever the input.
pub struct OperatorCredentials {
    key: hmac::Key,
    expected: Option<hmac::Tag>,
}

impl OperatorCredentials {
    /// Credentials `username`/`password`; without a password nobody is an operator.
    pub fn new(username: &str, password: Option<&str>, secret: &[u8; 32]) -> Self {
        let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let expected = password.map(|p| hmac::sign(&key, &Self::message(username, p)));
        OperatorCredentials { key, expected }
    }

    fn message(user: &str, password: &str) -> Vec<u8> {
        let mut m = (user.len() as u64).to_be_bytes().to_vec();
        m.extend_from_slice(user.as_bytes());
        m.extend_from_slice(password.as_bytes());
        m
    }

    fn matches(&self, user: &str, password: &str) -> bool {
        match &self.expected {
            Some(tag) => {
                hmac::verify(&self.key, &Self::message(user, password), tag.as_ref()).is_ok()
            }
            None => false,
        }
    }
}

/// A request made with operator credentials.
pub struct Operator;

/// Not an operator: 401 with a challenge.
#[derive(Debug)]
pub struct NotOperator;

impl std::fmt::Display for NotOperator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("operator credentials required")
    }
}

impl ResponseError for NotOperator {
    fn error_response(&self) -> HttpResponse {
        HttpResponse::Unauthorized()
            .insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"meldewerk operators\""),
            ))
            .json(serde_json::json!({ "errors": ["operator credentials required"] }))
    }
}

impl FromRequest for Operator {
    type Error = NotOperator;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let credentials = req.app_data::<web::Data<OperatorCredentials>>();
        let ok = match (credentials, basic_credentials(req)) {
            (Some(expected), Some((user, password))) => expected.matches(&user, &password),
            _ => false,
        };
        ready(if ok { Ok(Operator) } else { Err(NotOperator) })
    }
}
