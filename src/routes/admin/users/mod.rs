//! `/admin/api/v1/users`: online administration of API users, the same [`Accounts`] operations as
//! the command line (`meldewerk user …`, `meldewerk seal deposit`), while the server runs.
//!
//! A password change or a removal takes effect at once: sessions are checked against the user's
//! current memento key on every request, magic links and mementos name the key that sealed them,
//! and the credential cache is keyed by the stored password hash.
//!
//! Passwords are never echoed in an answer and never logged. Every change is recorded in the
//! audit log (who, what, which user; never a password or an address).

use std::sync::Arc;

use actix_web::{delete, get, post, put, web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use meldewerk_storage::Store;
use serde_json::{Map, Value};

mod requests;

use requests::*;

use super::openapi::{
    BodyRefusals, CrossSite, Errors, MagicLinks, NewCustomer, NewEmail, NewPassword, NewUser,
    Refusals, SealKey,
};
use crate::accounts::{Accounts, Password, UserName};
use crate::auth::Operator;
use crate::routes::json;
use crate::telemetry::log_str;
use crate::web::WebSettings;
pub(super) use requests::{required_string, unknown_members};

/// All API users with customer, seal and dates (never a password hash or key): 200 with an array.
#[utoipa::path(responses(
    (status = 200, description = "Every API user.", body = Vec<crate::accounts::UserSummary>),
    Refusals,
))]
#[get("/users")]
#[tracing::instrument(name = "admin_list_users", skip_all)]
pub async fn list_users(
    _operator: Operator,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    Ok(HttpResponse::Ok().json(accounts.list().await?))
}

/// Adds an API user from `{"name", "password", "customer"?, "email"?}`: 201 with the user's summary;
/// 400 for an invalid body, name or password (all problems at once); 409 when the name is taken.
#[utoipa::path(
    request_body = NewUser,
    responses(
        (status = 201, description = "Added.", body = crate::accounts::UserSummary),
        (status = 409, description = "The name is taken, or was a removed user's.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[post("/users")]
#[tracing::instrument(name = "admin_add_user", skip_all, fields(user = tracing::field::Empty))]
pub async fn add_user(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let object = read_object(
        &req,
        payload,
        settings.max_body_bytes,
        &["name", "password", "customer", "email"],
    )
    .await?;
    let mut errors = Vec::new();
    let name = required_string(&object, "name", &mut errors).and_then(|n| {
        tracing::Span::current().record("user", tracing::field::display(log_str(n)));
        UserName::parse(n)
            .map_err(|e| errors.push(e.to_string()))
            .ok()
    });
    let password = required_string(&object, "password", &mut errors).and_then(|p| {
        Password::parse(p)
            .map_err(|e| errors.push(e.to_string()))
            .ok()
    });
    let customer = optional_string(&object, "customer", &mut errors).map(str::to_string);
    let email = optional_email(&object, &mut errors);
    let (Some(name), Some(password), Ok(email), true) = (name, password, &email, errors.is_empty())
    else {
        return Err(Failure::invalid(errors, &email));
    };
    let summary = accounts
        .add(&name, password, customer, email.clone())
        .await?;
    audit(&store, &operator, "add-user", &name).await?;
    tracing::info!("user added by operator");
    Ok(HttpResponse::Created().json(summary))
}

/// Sets a user's password from `{"password"}`: 204. Every memento, magic link and session made
/// under the old password stops working at once. 404 for an unknown user, 400 for a weak password.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    request_body = NewPassword,
    responses(
        (status = 204, description = "Changed; what was made under the old password stops working."),
        (status = 404, description = "No such user.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/users/{name}/password")]
#[tracing::instrument(name = "admin_change_password", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn change_password(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    let object = read_object(&req, payload, settings.max_body_bytes, &["password"]).await?;
    let mut errors = Vec::new();
    let password = required_string(&object, "password", &mut errors).and_then(|p| {
        Password::parse(p)
            .map_err(|e| errors.push(e.to_string()))
            .ok()
    });
    let Some(password) = password else {
        return Err(Failure::Invalid(errors));
    };
    accounts.change_password(&name, password).await?;
    audit(&store, &operator, "change-password", &name).await?;
    tracing::info!("password changed by operator; older mementos, links and sessions revoked");
    Ok(HttpResponse::NoContent().finish())
}

/// Sets the address of a user's notices from `{"email": "name@example.org"}`, or removes it
/// with `{"email": null}`: 204. 404 for an unknown user, 400 for an address SMTP cannot take.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    request_body = NewEmail,
    responses(
        (status = 204, description = "Set or removed."),
        (status = 404, description = "No such user.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/users/{name}/email")]
#[tracing::instrument(name = "admin_set_email", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn set_email(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    let object = read_setting(&req, payload, &settings, "email", "an address").await?;
    let mut errors = Vec::new();
    let email = match optional_email(&object, &mut errors) {
        Ok(email) if errors.is_empty() => email,
        refused => return Err(Failure::invalid(errors, &refused)),
    };
    let removed = email.is_none();
    accounts.set_email(&name, email).await?;
    tracing::info!(removed, "notice address set by operator");
    let action = if removed { "remove-email" } else { "set-email" };
    audit(&store, &operator, action, &name).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The body of a change that sets `member` or removes it with null (`{"email": null}`): an
/// object with that member and no other; `what` says what a value is, for the message when it is
/// missing.
async fn read_setting(
    req: &HttpRequest,
    payload: web::Payload,
    settings: &WebSettings,
    member: &str,
    what: &str,
) -> Result<Map<String, Value>, Failure> {
    let object = read_object(req, payload, settings.max_body_bytes, &[member]).await?;
    if !object.contains_key(member) {
        return Err(Failure::Invalid(vec![format!(
            "{member} is required: {what}, or null to remove it"
        )]));
    }
    Ok(object)
}

/// Sets the customer a user belongs to from `{"customer": "K-1"}`, or removes it with
/// `{"customer": null}`: 204. The customer's scope decides which facilities the user's reports
/// may name; a user without a customer may name none. 404 for an unknown user.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    request_body = NewCustomer,
    responses(
        (status = 204, description = "Set or removed."),
        (status = 404, description = "No such user.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/users/{name}/customer")]
#[tracing::instrument(name = "admin_set_customer", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn set_customer(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    let object = read_setting(&req, payload, &settings, "customer", "an id").await?;
    let mut errors = Vec::new();
    let customer = optional_string(&object, "customer", &mut errors).map(str::to_owned);
    if !errors.is_empty() {
        return Err(Failure::Invalid(errors));
    }
    let removed = customer.is_none();
    accounts.set_customer(&name, customer).await?;
    let action = if removed {
        "remove-customer"
    } else {
        "set-customer"
    };
    audit(&store, &operator, action, &name).await?;
    tracing::info!(removed, "customer set by operator");
    Ok(HttpResponse::NoContent().finish())
}

/// Sets whether a user's mementos come with a magic link from `{"magicLinks": false}` (an
/// integrator whose configuration issues no tokens: its memento answers carry
/// `"magicLink": null`) or `{"magicLinks": true}`: 204. 404 for an unknown user.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    request_body = MagicLinks,
    responses(
        (status = 204, description = "Set."),
        (status = 404, description = "No such user.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/users/{name}/magic-links")]
#[tracing::instrument(name = "admin_set_magic_links", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn set_magic_links(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    let object = read_object(&req, payload, settings.max_body_bytes, &["magicLinks"]).await?;
    let Some(Value::Bool(issue)) = object.get("magicLinks") else {
        return Err(Failure::Invalid(vec![
            "magicLinks is required: true or false".into(),
        ]));
    };
    accounts.set_magic_links(&name, *issue).await?;
    let action = if *issue {
        "issue-magic-links"
    } else {
        "stop-magic-links"
    };
    audit(&store, &operator, action, &name).await?;
    tracing::info!(issue, "magic links set by operator");
    Ok(HttpResponse::NoContent().finish())
}

/// Removes a user: 204; their sessions and links stop working at once, their reports stay.
/// 404 for an unknown user.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    responses(
        (status = 204, description = "Removed; their reports stay."),
        (status = 400, description = "The path names no valid user name.", body = Errors),
        (status = 404, description = "No such user.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[delete("/users/{name}")]
#[tracing::instrument(name = "admin_remove_user", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn remove_user(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    name: web::Path<String>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    accounts.remove(&name).await?;
    audit(&store, &operator, "remove-user", &name).await?;
    tracing::info!("user removed by operator");
    Ok(HttpResponse::NoContent().finish())
}

/// Deposits a seal: the Ed25519 PKCS#8 (DER) key in `{"pkcs8": "<base64>"}`, or a new key when
/// the body is empty (or `pkcs8` is null). 201 `{"algorithm": "Ed25519", "publicKey": "<base64>"}`;
/// the user's notices dispatched from now on are sealed. 404 unknown user, 400 invalid key.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    request_body(content = Option<SealKey>, description = "The key, or nothing for a new one."),
    responses(
        (status = 201, description = "Deposited.", body = SealDeposited),
        (status = 404, description = "No such user.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[post("/users/{name}/seal")]
#[tracing::instrument(name = "admin_deposit_seal", skip_all, fields(user = %log_str(name.as_str())))]
pub async fn deposit_seal(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    accounts: web::Data<Accounts>,
) -> Result<HttpResponse, Failure> {
    let name = path_name(&name)?;
    let body = json::read_bytes(payload, settings.max_body_bytes).await?;
    let pkcs8 = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let Value::Object(object) = json::json_of(&req, &body)? else {
            return Err(Failure::Invalid(vec![
                "the body must be a JSON object".into()
            ]));
        };
        let object = only_members(object, &["pkcs8"])?;
        match object.get("pkcs8") {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) => Some(STANDARD.decode(text.trim()).map_err(|e| {
                Failure::Invalid(vec![format!("pkcs8 must be standard base64: {e}")])
            })?),
            Some(_) => {
                return Err(Failure::Invalid(vec!["pkcs8 must be a string".into()]));
            }
        }
    };
    let public_key = accounts.deposit_seal(&name, pkcs8).await?;
    audit(&store, &operator, "deposit-seal", &name).await?;
    tracing::info!("seal deposited by operator");
    Ok(HttpResponse::Created().json(SealDeposited {
        algorithm: "Ed25519",
        public_key: STANDARD.encode(public_key),
    }))
}

/// A deposited seal: what its notices are verified with.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SealDeposited {
    /// Always `Ed25519`.
    #[schema(pattern = "^Ed25519$")]
    algorithm: &'static str,
    /// The public key (32 bytes), standard base64.
    #[schema(content_encoding = "base64")]
    public_key: String,
}
