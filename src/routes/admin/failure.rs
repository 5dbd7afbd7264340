//! Why an operator API request was not done, answered in the API's `{"errors": [...]}` shape;
//! shared by the handlers whose failures are nothing but these.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use meldewerk_storage::StoreError;
use serde_json::json;

use super::{error, store_failed};
use crate::routes::json::JsonError;

/// Why a request was not done.
pub(super) enum Failure {
    /// 400, one message per problem.
    Invalid(Vec<String>),
    /// The body could not be read (413, 415, 408; unreadable JSON is `Invalid`).
    Body(JsonError),
    /// 404 with this message.
    NotFound(String),
    /// 409 with this message: the change contradicts what is stored.
    Conflict(String),
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

impl From<JsonError> for Failure {
    fn from(e: JsonError) -> Self {
        match e {
            JsonError::Invalid(message) => Failure::Invalid(vec![message]),
            other => Failure::Body(other),
        }
    }
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Invalid(errors) => f.write_str(&errors.join("; ")),
            Failure::Body(e) => e.fmt(f),
            Failure::NotFound(message) | Failure::Conflict(message) => f.write_str(message),
            Failure::Store(e) => e.fmt(f),
        }
    }
}

/// The failure in the operator API's `{"errors": [...]}`.
impl actix_web::ResponseError for Failure {
    fn error_response(&self) -> HttpResponse {
        match self {
            Failure::Invalid(errors) => {
                HttpResponse::BadRequest().json(json!({ "errors": errors }))
            }
            Failure::Body(e) => error(e.status(), e.to_string()),
            Failure::NotFound(message) => error(StatusCode::NOT_FOUND, message.clone()),
            Failure::Conflict(message) => error(StatusCode::CONFLICT, message.clone()),
            Failure::Store(e) => store_failed(e),
        }
    }
}
