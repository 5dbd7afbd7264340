//! Error answers of the module endpoints, in each module's error style.
//!
//! A handler fails with an [`ApiError`]; the module's [`ErrorStyle`] decides how it is written:
//! - [`ErrorStyle::Plain`]: `{"errors": ["…", …]}` (`birthnotice`, `deathnotice`);
//! - [`ErrorStyle::Problem`]: RFC 9457 problem details, `application/problem+json`, with the
//!   `type` URIs of spec/01 §7 under the configured `problems_base` (`birthdata`);
//! - [`ErrorStyle::Summarised`]: `{"error": "…", "errors": ["…", …]}`, one sentence and the
//!   list (`guardianship`, spec/03 §7).
//!
//! The 401 of every module is written by the Basic authentication extractor (empty body with
//! `WWW-Authenticate`), never here.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use serde_json::json;

/// One violated rule of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) to the offending member, e.g. `/geburtsangaben/tag`; `None` for
    /// violations of the whole request (unparseable body, rules across several members).
    pub pointer: Option<String>,
    /// What is wrong, naming the member where there is one (`geburtsangaben.tag must be a date
    /// YYYY-MM-DD`): plain errors show only this text.
    pub detail: String,
}

impl Violation {
    /// A violation of the member at `pointer`.
    pub fn at(pointer: impl Into<String>, detail: impl Into<String>) -> Self {
        Violation {
            pointer: Some(pointer.into()),
            detail: detail.into(),
        }
    }

    /// A violation of the whole request.
    pub fn whole(detail: impl Into<String>) -> Self {
        Violation {
            pointer: None,
            detail: detail.into(),
        }
    }
}

/// A violation for every member of `object` not in `allowed`, for a module's own endpoints
/// whose bodies are not a field table (`{"messageIds"}`, `{"email"}`): each names the member
/// and what the request takes.
pub fn unknown_members(
    object: &serde_json::Map<String, serde_json::Value>,
    allowed: &[&str],
) -> Vec<Violation> {
    object
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| {
            Violation::at(
                format!("/{k}"),
                format!(
                    "unknown member {:?}; the request has {} only",
                    crate::telemetry::log_str(k),
                    allowed.join(", ")
                ),
            )
        })
        .collect()
}

/// Why a module endpoint refused a request.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: invalid JSON or validation errors, every violation at once.
    #[error("validation failed")]
    Validation(Vec<Violation>),
    /// 404: no such report for this user and module.
    #[error("report not found")]
    NotFound(String),
    /// 410: consumed earlier by a read without `peek=true`.
    #[error("report already retrieved")]
    AlreadyRetrieved(String),
    /// 410: payload removed by retention.
    #[error("report expired")]
    Expired(String),
    /// 409: the caller has sent a report under this id already; an id is used once.
    #[error("report id used already")]
    Duplicate(String),
    /// 413: body larger than the limit.
    #[error("request body too large")]
    TooLarge(usize),
    /// 408: the body did not arrive within this many seconds (`body_timeout_secs`).
    #[error("request body too slow")]
    TimedOut(u64),
    /// 404 with its own sentence: something else than a report is missing (a court message).
    #[error("not found")]
    Missing(String),
    /// 403 with its sentence: the caller may not use what they asked for (another account's
    /// court message).
    #[error("forbidden")]
    Forbidden(String),
    /// 404: no endpoint of the module has this path.
    #[error("no such endpoint")]
    NoSuchEndpoint,
    /// 405: the endpoint does not take this method; carries the one it takes.
    #[error("method not allowed")]
    MethodNotAllowed(&'static str),
    /// 415: the body is not declared as `application/json`.
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// 503 with `Retry-After`: the store takes no requests now (a full disk); nothing was
    /// stored or consumed, the same request can be made again. Logged with its cause.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// 500: logged with its cause; the caller sees no detail.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<meldewerk_storage::StoreError> for ApiError {
    fn from(e: meldewerk_storage::StoreError) -> Self {
        if e.is_unavailable() {
            ApiError::Unavailable(e.to_string())
        } else {
            ApiError::Internal(e.to_string())
        }
    }
}

/// Seconds a client is asked to wait (`Retry-After`) while the store is unavailable.
pub(crate) const UNAVAILABLE_RETRY_SECS: u32 = 30;

/// 503 `{"errors": [message]}` with `Retry-After`: what a plain-JSON endpoint answers while
/// the data it needs cannot be used (a full disk).
pub(crate) fn unavailable_response(message: &str) -> actix_web::HttpResponse {
    actix_web::HttpResponse::ServiceUnavailable()
        .insert_header((
            actix_web::http::header::RETRY_AFTER,
            UNAVAILABLE_RETRY_SECS.to_string(),
        ))
        .json(json!({ "errors": [message] }))
}

/// What every JSON API answers while the store is unavailable (503).
pub(crate) const UNAVAILABLE_MESSAGE: &str =
    "the service cannot use its data at the moment (its disk takes no writes); nothing was \
     stored or changed, try again later";

impl ApiError {
    fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) | ApiError::Missing(_) | ApiError::NoSuchEndpoint => {
                StatusCode::NOT_FOUND
            }
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::AlreadyRetrieved(_) | ApiError::Expired(_) => StatusCode::GONE,
            ApiError::Duplicate(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::TimedOut(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The human-readable sentence, also the `detail` of a problem.
    fn detail(&self) -> String {
        match self {
            ApiError::Validation(_) => "the request is invalid; see errors".into(),
            ApiError::NotFound(id) => format!("report {id} not found"),
            ApiError::AlreadyRetrieved(id) => {
                format!("report {id} was already retrieved (without peek=true)")
            }
            ApiError::Expired(id) => {
                format!("report {id} has expired: its result was removed by retention")
            }
            ApiError::Duplicate(id) => {
                format!(
                    "report {id} has been sent already; a report id is used once, send a fresh one"
                )
            }
            ApiError::Missing(sentence) | ApiError::Forbidden(sentence) => sentence.clone(),
            ApiError::NoSuchEndpoint => "no such endpoint".into(),
            ApiError::MethodNotAllowed(allowed) => format!("method not allowed; use {allowed}"),
            ApiError::TooLarge(limit) => format!("request body exceeds {limit} bytes"),
            ApiError::TimedOut(secs) => {
                crate::routes::body_deadline::BodyTimedOut(*secs).to_string()
            }
            ApiError::UnsupportedMediaType => {
                "the request body must be sent as Content-Type: application/json".into()
            }
            ApiError::Unavailable(_) => UNAVAILABLE_MESSAGE.into(),
            ApiError::Internal(_) => "internal error".into(),
        }
    }

    /// The `{"errors": [...]}` strings of the plain style.
    fn plain_errors(&self) -> Vec<String> {
        match self {
            ApiError::Validation(violations) => {
                violations.iter().map(|v| v.detail.clone()).collect()
            }
            other => vec![other.detail()],
        }
    }
}

/// How a module writes its errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorStyle {
    /// `{"errors": ["…"]}`.
    Plain,
    /// RFC 9457 problem details; `base` is the configured `problems_base` without a trailing
    /// slash.
    Problem {
        /// Base of the problem type URIs.
        base: String,
    },
    /// `{"error": "…", "errors": ["…"]}`: the error in one sentence, and every violation (for
    /// a validation error) or the sentence again.
    Summarised,
}

/// An [`ApiError`] with what it takes to write it: the module's style, its name and the request
/// path (a problem's `instance`).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ModuleError {
    /// What went wrong.
    pub error: ApiError,
    /// The module's error style.
    pub style: ErrorStyle,
    /// The module (its name, the path segment of its API).
    pub module: &'static str,
    /// The request path.
    pub instance: String,
}

/// One entry of a problem's `errors`.
#[derive(Serialize)]
struct ProblemEntry<'a> {
    detail: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pointer: Option<&'a str>,
}

impl ModuleError {
    /// The problem type URI and title of the error (spec/01 §7; types the contract does not list
    /// follow the same scheme, see docs/decisions.md).
    fn problem_type(&self, base: &str) -> (String, &'static str) {
        let module = self.module;
        match &self.error {
            ApiError::Validation(_) => (
                format!("{base}/problems/validation-error"),
                "Request validation failed",
            ),
            ApiError::NotFound(_) => (
                format!("{base}/Products/{module}/problems/report-not-found"),
                "Report not found",
            ),
            ApiError::AlreadyRetrieved(_) => (
                format!("{base}/Products/{module}/problems/report-already-retrieved"),
                "Report already retrieved",
            ),
            ApiError::Expired(_) => (
                format!("{base}/Products/{module}/problems/report-expired"),
                "Report expired",
            ),
            ApiError::Duplicate(_) => (
                format!("{base}/Products/{module}/problems/report-id-duplicate"),
                "Report id used already",
            ),
            ApiError::TooLarge(_) => (
                format!("{base}/problems/request-too-large"),
                "Request body too large",
            ),
            ApiError::TimedOut(_) => (
                format!("{base}/problems/request-timeout"),
                "Request body too slow",
            ),
            ApiError::UnsupportedMediaType => (
                format!("{base}/problems/unsupported-media-type"),
                "Unsupported media type",
            ),
            ApiError::Missing(_) | ApiError::NoSuchEndpoint => ("about:blank".into(), "Not Found"),
            ApiError::Forbidden(_) => ("about:blank".into(), "Forbidden"),
            ApiError::MethodNotAllowed(_) => ("about:blank".into(), "Method Not Allowed"),
            ApiError::Unavailable(_) => (
                format!("{base}/problems/service-unavailable"),
                "Service unavailable",
            ),
            ApiError::Internal(_) => ("about:blank".into(), "Internal Server Error"),
        }
    }
}

impl ResponseError for ModuleError {
    fn status_code(&self) -> StatusCode {
        self.error.status()
    }

    fn error_response(&self) -> HttpResponse {
        match &self.error {
            ApiError::Internal(cause) => {
                tracing::error!(%cause, module = self.module, "internal error");
            }
            ApiError::Unavailable(cause) => {
                tracing::warn!(%cause, module = self.module, "refused: the store is unavailable");
            }
            _ => {}
        }
        let status = self.error.status();
        let mut response = match &self.style {
            ErrorStyle::Plain => {
                HttpResponse::build(status).json(json!({ "errors": self.error.plain_errors() }))
            }
            ErrorStyle::Summarised => HttpResponse::build(status).json(json!({
                "error": self.error.detail(),
                "errors": self.error.plain_errors(),
            })),
            ErrorStyle::Problem { base } => {
                let (kind, title) = self.problem_type(base);
                let mut body = json!({
                    "type": kind,
                    "title": title,
                    "status": status.as_u16(),
                    "detail": self.error.detail(),
                    "instance": self.instance,
                });
                if let ApiError::Validation(violations) = &self.error {
                    let entries: Vec<ProblemEntry> = violations
                        .iter()
                        .map(|v| ProblemEntry {
                            detail: &v.detail,
                            pointer: v.pointer.as_deref(),
                        })
                        .collect();
                    body["errors"] = json!(entries);
                }
                HttpResponse::build(status)
                    .content_type("application/problem+json")
                    .body(body.to_string())
            }
        };
        if let ApiError::MethodNotAllowed(allowed) = &self.error {
            response.headers_mut().insert(
                actix_web::http::header::ALLOW,
                actix_web::http::header::HeaderValue::from_static(allowed),
            );
        }
        if let ApiError::Unavailable(_) = &self.error {
            response.headers_mut().insert(
                actix_web::http::header::RETRY_AFTER,
                actix_web::http::header::HeaderValue::from(UNAVAILABLE_RETRY_SECS),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(error: ApiError, style: ErrorStyle) -> ModuleError {
        ModuleError {
            error,
            style,
            module: "birthdata",
            instance: "/api/birthdata/v1/memento".into(),
        }
    }

    #[test]
    fn plain_errors_list_every_violation() {
        let e = error(
            ApiError::Validation(vec![
                Violation::at("/id", "id must not be null"),
                Violation::whole("invalid JSON"),
            ]),
            ErrorStyle::Plain,
        );
        assert_eq!(
            e.error.plain_errors(),
            vec!["id must not be null", "invalid JSON"]
        );
    }

    #[test]
    fn problem_types_follow_the_contract() {
        let style = ErrorStyle::Problem {
            base: "https://p.example".into(),
        };
        let cases = [
            (
                ApiError::Validation(vec![]),
                "https://p.example/problems/validation-error",
            ),
            (
                ApiError::NotFound("x".into()),
                "https://p.example/Products/birthdata/problems/report-not-found",
            ),
            (
                ApiError::AlreadyRetrieved("x".into()),
                "https://p.example/Products/birthdata/problems/report-already-retrieved",
            ),
            (
                ApiError::Expired("x".into()),
                "https://p.example/Products/birthdata/problems/report-expired",
            ),
            (
                ApiError::Duplicate("x".into()),
                "https://p.example/Products/birthdata/problems/report-id-duplicate",
            ),
        ];
        for (api, expected) in cases {
            let e = error(api, style.clone());
            assert_eq!(e.problem_type("https://p.example").0, expected);
        }
    }
}
