//! `/api/guardianship/v1/contact`: the address an API user registers for court messages. When a
//! court message arrives in a mailbox account they are granted, a mail goes there through the
//! service's mailer (naming the account and the message's id, nothing of its content).
//!
//! `GET` answers `{"email": "…"}` (`null` when none is registered), `PUT {"email": "…"}`
//! registers one, `DELETE` removes it.

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::{json, Value};

use crate::accounts::{AccountError, Accounts, Email, UserName};
use crate::auth::ApiUser;
use crate::module_layer::api_call::ApiCall;
use crate::module_layer::context::ModuleContext;
use crate::module_layer::errors::{unknown_members, ApiError, ModuleError, Violation};
use crate::module_layer::memento::read_request;
use crate::web::WebSettings;

fn answer(email: Option<&str>) -> HttpResponse {
    HttpResponse::Ok().json(json!({ "email": email }))
}

/// `GET /contact`.
pub(super) async fn show(user: ApiUser) -> HttpResponse {
    answer(user.0.court_message_contact.as_deref())
}

/// `PUT /contact` with `{"email": "…"}`.
pub(super) async fn set(
    call: ApiCall,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, ModuleError> {
    let fail = |e: ApiError| call.error(e);
    let object = read_request(&call.req, payload, settings.max_body_bytes)
        .await
        .map_err(fail)?;
    let mut problems = unknown_members(&object, &["email"]);
    let email = match object.get("email") {
        Some(Value::String(text)) => match Email::parse(text) {
            Ok(email) => Some(email),
            Err(_) => {
                problems.push(Violation::at("/email", "email must be a mail address"));
                None
            }
        },
        _ => {
            problems.push(Violation::at(
                "/email",
                "email is required, a mail address (DELETE removes the contact)",
            ));
            None
        }
    };
    let Some(email) = email.filter(|_| problems.is_empty()) else {
        return Err(fail(ApiError::Validation(problems)));
    };
    let text = email.as_str().to_owned();
    store_contact(&accounts, &call.user, Some(email))
        .await
        .map_err(fail)?;
    Ok(answer(Some(&text)))
}

/// `DELETE /contact`.
pub(super) async fn remove(
    call: ApiCall,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, ModuleError> {
    store_contact(&accounts, &call.user, None)
        .await
        .map_err(|e| call.error(e))?;
    Ok(answer(None))
}

/// 405 for any other method.
pub(super) async fn not_allowed(
    req: HttpRequest,
    context: web::Data<ModuleContext>,
) -> HttpResponse {
    use actix_web::ResponseError;
    context
        .error(&req, ApiError::MethodNotAllowed("GET, PUT, DELETE"))
        .error_response()
}

async fn store_contact(
    accounts: &Accounts,
    user: &ApiUser,
    email: Option<Email>,
) -> Result<(), ApiError> {
    let name = UserName::parse(&user.0.name)
        .map_err(|e| ApiError::Internal(format!("a signed-in user's name: {e}")))?;
    accounts
        .set_court_message_contact(&name, email)
        .await
        .map_err(|e| match e {
            AccountError::Store(e) => ApiError::from(e),
            other => ApiError::Internal(other.to_string()),
        })
}
