//! Error answers of the civil-registry API (`birthnotice`, later `deathnotice`): a JSON object
//! with `errors`, an array of strings.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};

/// An error answer of a module endpoint.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: invalid JSON or validation errors, one message per problem.
    #[error("validation failed")]
    Validation(Vec<String>),
    /// 404: no such report for this user and module.
    #[error("report not found")]
    NotFound(String),
    /// 410: consumed earlier by a read without `peek=true`.
    #[error("report already retrieved")]
    AlreadyRetrieved(String),
    /// 410: payload removed by retention.
    #[error("report expired")]
    Expired(String),
    /// 413: body larger than the limit.
    #[error("request body too large")]
    TooLarge(usize),
    /// 500: logged with its cause; the caller sees no detail.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::AlreadyRetrieved(_) | ApiError::Expired(_) => StatusCode::GONE,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let errors = match self {
            ApiError::Validation(errors) => errors.clone(),
            ApiError::NotFound(id) => vec![format!("report {id} not found")],
            ApiError::AlreadyRetrieved(id) => {
                vec![format!(
                    "report {id} was already retrieved (without peek=true)"
                )]
            }
            ApiError::Expired(id) => {
                vec![format!(
                    "report {id} has expired: its result was removed by retention"
                )]
            }
            ApiError::TooLarge(limit) => vec![format!("request body exceeds {limit} bytes")],
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                vec!["internal error".to_string()]
            }
        };
        HttpResponse::build(self.status_code()).json(serde_json::json!({ "errors": errors }))
    }
}

impl From<meldewerk_storage::StoreError> for ApiError {
    fn from(e: meldewerk_storage::StoreError) -> Self {
        ApiError::Internal(e.to_string())
    }
}
