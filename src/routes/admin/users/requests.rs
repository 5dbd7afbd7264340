//! How the user routes read their bodies and answer their failures: one [`Failure`] for every
//! refusal (400 with every problem, 404, 409, 413, 415, 408, 503), strict JSON objects with only
//! the allowed members, and the audit record of a change.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use meldewerk_storage::{Store, StoreError};
use serde_json::{json, Map, Value};

use super::super::error;
use crate::accounts::{AccountError, Email, UserName};
use crate::auth::Operator;
use crate::routes::json::{self, JsonError};

/// Why a request failed, before or inside an account operation.
pub(super) enum Failure {
    /// The body or a value in it is unusable: 400 with one message per problem.
    Invalid(Vec<String>),
    /// As `Invalid`, but one message quotes the mail address that was sent: the answer shows it
    /// to the operator who sent it, the log does not (addresses are personal data).
    InvalidQuotingAddress(Vec<String>),
    /// The body could not be read: 413 over `max_body_bytes`, 415 not declared as JSON, 408 too
    /// slow (never [`JsonError::Invalid`], which is `Invalid`).
    Body(JsonError),
    /// The account operation failed.
    Account(AccountError),
}

impl From<AccountError> for Failure {
    fn from(e: AccountError) -> Self {
        Failure::Account(e)
    }
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Invalid(errors) => write!(f, "invalid: {errors:?}"),
            Failure::InvalidQuotingAddress(errors) => {
                write!(
                    f,
                    "invalid: {} problems, one with the address",
                    errors.len()
                )
            }
            Failure::Body(e) => write!(f, "{e:?}"),
            Failure::Account(e) => write!(f, "{e:?}"),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Invalid(errors) => f.write_str(&errors.join("; ")),
            // What the log shows of the answer (the root span writes this form).
            Failure::InvalidQuotingAddress(errors) => write!(
                f,
                "invalid email (the address is not logged); problems in all: {}",
                errors.len()
            ),
            Failure::Body(e) => e.fmt(f),
            Failure::Account(e) => e.fmt(f),
        }
    }
}

impl actix_web::ResponseError for Failure {
    fn error_response(&self) -> HttpResponse {
        respond(self)
    }
}

/// The one place that maps failures to status codes and `{"errors": [...]}` bodies.
pub(super) fn respond(failure: &Failure) -> HttpResponse {
    let (status, errors) = match failure {
        Failure::Invalid(errors) | Failure::InvalidQuotingAddress(errors) => {
            (StatusCode::BAD_REQUEST, errors.clone())
        }
        Failure::Body(e) => (e.status(), vec![e.to_string()]),
        Failure::Account(e) => {
            let status = match e {
                AccountError::InvalidName(_)
                | AccountError::InvalidEmail(_)
                | AccountError::InvalidCustomer(_)
                | AccountError::WeakPassword
                | AccountError::InvalidSeal(_) => StatusCode::BAD_REQUEST,
                AccountError::Duplicate(_) | AccountError::NameRetired(_) => StatusCode::CONFLICT,
                // A user removed between reading and writing their record is just as gone.
                AccountError::UnknownUser(_) | AccountError::Store(StoreError::NotFound(_)) => {
                    StatusCode::NOT_FOUND
                }
                AccountError::Store(e) if e.is_unavailable() => {
                    return super::super::store_failed(e);
                }
                AccountError::Store(_) | AccountError::Crypto(_) => {
                    StatusCode::INTERNAL_SERVER_ERROR
                }
            };
            if status == StatusCode::INTERNAL_SERVER_ERROR {
                tracing::error!(cause = %e, "user administration failed");
                (status, vec!["internal error".to_string()])
            } else {
                (status, vec![e.to_string()])
            }
        }
    };
    if errors.len() == 1 {
        return error(status, errors.into_iter().next().unwrap_or_default());
    }
    HttpResponse::build(status).json(json!({ "errors": errors }))
}

impl From<JsonError> for Failure {
    fn from(e: JsonError) -> Self {
        match e {
            JsonError::Invalid(message) => Failure::Invalid(vec![message]),
            other => Failure::Body(other),
        }
    }
}

/// The body as a JSON object whose members are all in `allowed` (read strictly, see
/// [`crate::routes::json`]).
pub(super) async fn read_object(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
    allowed: &[&str],
) -> Result<Map<String, Value>, Failure> {
    let object = json::read_object(req, payload, limit).await?;
    only_members(object, allowed)
}

pub(super) fn only_members(
    object: Map<String, Value>,
    allowed: &[&str],
) -> Result<Map<String, Value>, Failure> {
    let unknown = unknown_members(&object, allowed);
    if unknown.is_empty() {
        Ok(object)
    } else {
        Err(Failure::Invalid(unknown))
    }
}

/// One message for each member of `object` that is not in `allowed`.
pub(in crate::routes::admin) fn unknown_members(
    object: &Map<String, Value>,
    allowed: &[&str],
) -> Vec<String> {
    object
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .map(|k| format!("{k} is not a known field"))
        .collect()
}

/// A required string member; `errors` collects what is wrong with it.
pub(in crate::routes::admin) fn required_string<'a>(
    object: &'a Map<String, Value>,
    member: &str,
    errors: &mut Vec<String>,
) -> Option<&'a str> {
    match object.get(member) {
        Some(Value::String(s)) => Some(s),
        None | Some(Value::Null) => {
            errors.push(format!("{member} must not be null"));
            None
        }
        Some(_) => {
            errors.push(format!("{member} must be a string"));
            None
        }
    }
}

/// An optional string member: absent or null is `None`, an empty or blank string is an error.
pub(super) fn optional_string<'a>(
    object: &'a Map<String, Value>,
    member: &str,
    errors: &mut Vec<String>,
) -> Option<&'a str> {
    match object.get(member) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => {
            errors.push(format!("{member} must not be empty"));
            None
        }
        Some(Value::String(s)) => Some(s),
        Some(_) => {
            errors.push(format!("{member} must be a string"));
            None
        }
    }
}

/// The optional `email` member, parsed; `errors` collects what is wrong with it. `Err` when the
/// address was refused: its message quotes the address, so the failure must say so
/// ([`Failure::invalid`]).
pub(super) fn optional_email(
    object: &Map<String, Value>,
    errors: &mut Vec<String>,
) -> Result<Option<Email>, AddressRefused> {
    match optional_string(object, "email", errors).map(Email::parse) {
        None => Ok(None),
        Some(Ok(email)) => Ok(Some(email)),
        Some(Err(e)) => {
            errors.push(e.to_string());
            Err(AddressRefused)
        }
    }
}

/// A refused mail address is among the problems of a request.
pub(super) struct AddressRefused;

impl Failure {
    /// 400 with `errors`; `email` says whether one of them quotes a refused address.
    pub(super) fn invalid<T>(errors: Vec<String>, email: &Result<T, AddressRefused>) -> Failure {
        match email {
            Ok(_) => Failure::Invalid(errors),
            Err(AddressRefused) => Failure::InvalidQuotingAddress(errors),
        }
    }
}

/// Records `operator`'s `action` on the user `name` in the audit log.
pub(super) async fn audit(
    store: &Arc<dyn Store>,
    operator: &Operator,
    action: &str,
    name: &UserName,
) -> Result<(), Failure> {
    super::super::audit(
        store,
        &operator.0,
        action,
        format!("user {}", name.as_str()),
    )
    .await
    .map_err(|e| Failure::Account(AccountError::Store(e)))
}

/// The name from a path, checked against the naming rule.
pub(super) fn path_name(name: &str) -> Result<UserName, Failure> {
    Ok(UserName::parse(name)?)
}
