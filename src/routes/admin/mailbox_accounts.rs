//! Court-mailbox accounts and who may use them, in the operator API; the same records and rules
//! as `meldewerk mailbox …` ([`crate::mailbox_accounts`]):
//! - `GET /admin/api/v1/mailbox-accounts[?after=&limit=]`: `{"mailboxAccounts": [...], "next"}`
//!   in id order;
//! - `GET`, `PUT`, `DELETE /admin/api/v1/mailbox-accounts/{id}`;
//! - `PUT`, `DELETE /admin/api/v1/mailbox-accounts/{id}/users/{name}`: grant, revoke;
//! - `GET /admin/api/v1/users/{name}/mailbox-accounts`: the accounts a user may use.
//!
//! An account is answered with the users granted it (`users`). Bodies are read strictly and every
//! problem is answered at once in `{"errors": [...]}`; 404 for an unknown account, user or grant,
//! 409 for a SAFE-ID another account has and for removing an account still granted. Every change
//! is audited (`add-`, `change-`, `remove-`, `grant-`, `revoke-mailbox-account`).

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{delete, get, put, web, HttpRequest, HttpResponse};
use chrono::Utc;
use meldewerk_storage::{MailboxAccount, MailboxAccountId, MailboxAccountPut, Store};
use serde_json::Value;
use utoipa::ToSchema;

use super::facilities::{string_member, unknown_members};
use super::failure::Failure;
use super::jobs::{next_after, Page};
use super::openapi::{BodyRefusals, CrossSite, Errors, MailboxAccountBody, Refusals};
use super::store_failed;
use crate::accounts::{AccountError, UserName};
use crate::auth::Operator;
use crate::mailbox_accounts::{
    account_view, no_account, parse_id, AccountFieldNames, AccountInput, MailboxAccountView,
    MailboxAccounts, Refused,
};
use crate::routes::json;
use crate::web::WebSettings;

/// How the API names an account's values.
pub(super) const BODY_FIELDS: AccountFieldNames = AccountFieldNames {
    id: "egvpAccountId",
    safe_id: "safeId",
    name: "name",
    missing: "must not be null",
};

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::NotFound(message) => Failure::NotFound(message),
            Refused::Conflict(message) => Failure::Conflict(message),
            Refused::Store(e) => Failure::Store(e),
        }
    }
}

/// The id of a path, or 400 naming `egvpAccountId`.
fn path_id(text: &str) -> Result<MailboxAccountId, Failure> {
    parse_id(text, &BODY_FIELDS).map_err(|problem| Failure::Invalid(vec![problem]))
}

/// The user name of a path, or 400.
fn path_user(text: &str) -> Result<UserName, Failure> {
    UserName::parse(text).map_err(|e: AccountError| Failure::Invalid(vec![e.to_string()]))
}

/// An account as the API answers it: the record and the users granted it, by name.
async fn view(store: &Arc<dyn Store>, account: &MailboxAccount) -> Result<Value, Failure> {
    let users = store.mailbox_account_users(account.egvp_account_id).await?;
    Ok(serde_json::to_value(account_view(account, &users)).expect("an account serializes"))
}

/// A page of mailbox accounts.
#[derive(serde::Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MailboxAccountsPage {
    /// The accounts in id order, each with its `users`.
    #[schema(value_type = Vec<MailboxAccountView>)]
    mailbox_accounts: Vec<Value>,
    /// The id to ask for `after`, when the page is full; null on the last page.
    #[schema(required = true)]
    next: Option<MailboxAccountId>,
}

/// The accounts a user may use.
#[derive(serde::Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UserMailboxAccounts<'a> {
    /// The user's name.
    user: &'a str,
    /// The accounts in id order (without their `users`).
    mailbox_accounts: Vec<MailboxAccount>,
}

/// The account, or 404.
async fn existing(store: &Arc<dyn Store>, id: MailboxAccountId) -> Result<MailboxAccount, Failure> {
    store
        .mailbox_account(id)
        .await?
        .ok_or_else(|| Failure::NotFound(no_account(id)))
}

/// `GET /admin/api/v1/mailbox-accounts[?after=&limit=]`: a page of accounts in id order, each with
/// its `users`; `after` is the id to continue after.
#[utoipa::path(
    operation_id = "list_mailbox_accounts",
    params(
        ("after" = Option<i64>, Query, minimum = 1,
            description = "The account id the page starts after: the `next` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Items on the page: from 1 to 1000, 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of accounts.", body = MailboxAccountsPage),
        (status = 400, description = "An `after` that is no account id, an unusable `limit`, or \
            an unknown parameter.", body = Errors),
        Refusals,
    ),
)]
#[get("/mailbox-accounts")]
#[tracing::instrument(name = "admin_list_mailbox_accounts", skip_all)]
pub async fn list(
    _operator: Operator,
    page: web::Query<Page<String>>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (limit, after) = match page.limit_after(MailboxAccountId::parse) {
        Ok(paging) => paging,
        Err(answer) => return *answer,
    };
    let accounts = match store.mailbox_accounts(after, limit).await {
        Ok(accounts) => accounts,
        Err(e) => return store_failed(e),
    };
    let mut items = Vec::with_capacity(accounts.len());
    for account in &accounts {
        match view(&store, account).await {
            Ok(item) => items.push(item),
            Err(Failure::Store(e)) => return store_failed(e),
            Err(other) => return actix_web::ResponseError::error_response(&other),
        }
    }
    HttpResponse::Ok().json(MailboxAccountsPage {
        next: next_after(&accounts, limit, |a| a.egvp_account_id),
        mailbox_accounts: items,
    })
}

/// `GET /admin/api/v1/mailbox-accounts/{id}`: the account with its `users`; 404 unknown, 400 not
/// an id.
#[utoipa::path(
    operation_id = "show_mailbox_account",
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`.")),
    responses(
        (status = 200, description = "The account.", body = MailboxAccountView),
        (status = 400, description = "The path names no account id.", body = Errors),
        (status = 404, description = "No such account.", body = Errors),
        Refusals,
    ),
)]
#[get("/mailbox-accounts/{id}")]
#[tracing::instrument(name = "admin_get_mailbox_account", skip_all)]
pub async fn show(
    _operator: Operator,
    id: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let id = path_id(&id)?;
    let account = existing(&store, id).await?;
    Ok(HttpResponse::Ok().json(view(&store, &account).await?))
}

/// `PUT /admin/api/v1/mailbox-accounts/{id}` from `{"safeId", "name", "active"?}`: 201 with the
/// account when it is new, 200 when it replaced one (which keeps its `createdAt`, and its state
/// when `active` is left out). 409 when another account has the SAFE-ID.
#[utoipa::path(
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`.")),
    request_body = MailboxAccountBody,
    responses(
        (status = 200, description = "It replaced the account.", body = MailboxAccountView),
        (status = 201, description = "A new account.", body = MailboxAccountView),
        (status = 409, description = "Another account has the SAFE-ID.", body = Errors),
        BodyRefusals,
        CrossSite,
        Refusals,
    ),
)]
#[put("/mailbox-accounts/{id}")]
#[tracing::instrument(name = "admin_put_mailbox_account", skip_all)]
pub async fn put_account(
    operator: Operator,
    id: web::Path<String>,
    req: HttpRequest,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let object = json::read_object(&req, payload, settings.max_body_bytes).await?;
    let mut errors = Vec::new();
    let id = parse_id(&id, &BODY_FIELDS)
        .map_err(|problem| errors.push(problem))
        .ok();
    unknown_members(&object, "", &["safeId", "name", "active"], &mut errors);
    let active = match object.get("active") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(active)) => Some(*active),
        Some(_) => {
            errors.push("active must be true or false".into());
            None
        }
    };
    let mut input = AccountInput {
        safe_id: string_member(&object, "safeId", "safeId", &mut errors),
        name: string_member(&object, "name", "name", &mut errors),
        active: active.unwrap_or(true),
    };
    // Absent `active` keeps a replaced account's state: renaming must not reactivate it.
    if let (None, Some(id), true) = (active, id, errors.is_empty()) {
        if let Some(old) = store.mailbox_account(id).await? {
            input.active = old.active;
        }
    }
    let Some(account) = input.check(id, &BODY_FIELDS, Utc::now(), &mut errors) else {
        return Err(Failure::Invalid(errors));
    };
    let put = operations(&store, &operator).put(account).await?;
    let status = match &put {
        MailboxAccountPut::Created(_) => StatusCode::CREATED,
        MailboxAccountPut::Replaced(_) => StatusCode::OK,
    };
    Ok(HttpResponse::build(status).json(view(&store, put.account()).await?))
}

/// `DELETE /admin/api/v1/mailbox-accounts/{id}`: 204; 404 unknown; 409 while users are granted it.
#[utoipa::path(
    operation_id = "remove_mailbox_account",
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`.")),
    responses(
        (status = 204, description = "Removed."),
        (status = 400, description = "The path names no account id.", body = Errors),
        (status = 404, description = "No such account.", body = Errors),
        (status = 409, description = "Users are granted the account.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[delete("/mailbox-accounts/{id}")]
#[tracing::instrument(name = "admin_remove_mailbox_account", skip_all)]
pub async fn remove(
    operator: Operator,
    id: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let id = path_id(&id)?;
    operations(&store, &operator).remove(id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The account and user of a grant's path; both problems at once.
fn grant_path(path: &(String, String)) -> Result<(MailboxAccountId, UserName), Failure> {
    let id = parse_id(&path.0, &BODY_FIELDS);
    let user = UserName::parse(&path.1);
    match (id, user) {
        (Ok(id), Ok(user)) => Ok((id, user)),
        (id, user) => Err(Failure::Invalid(
            [id.err(), user.err().map(|e| e.to_string())]
                .into_iter()
                .flatten()
                .collect(),
        )),
    }
}

/// `PUT /admin/api/v1/mailbox-accounts/{id}/users/{name}` (no body): lets the user see the
/// account's messages and send through it. 201 with the account when the grant is new, 200 when
/// the user held it; 404 for an unknown account or user.
#[utoipa::path(
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`."), ("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    responses(
        (status = 200, description = "The user held the grant already.", body = MailboxAccountView),
        (status = 201, description = "Granted.", body = MailboxAccountView),
        (status = 400, description = "The path names no account id or user name.", body = Errors),
        (status = 404, description = "No such account or user.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[put("/mailbox-accounts/{id}/users/{name}")]
#[tracing::instrument(name = "admin_grant_mailbox_account", skip_all)]
pub async fn grant(
    operator: Operator,
    path: web::Path<(String, String)>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let (id, user) = grant_path(&path)?;
    let new = operations(&store, &operator)
        .grant(id, user.as_str())
        .await?;
    let account = existing(&store, id).await?;
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(HttpResponse::build(status).json(view(&store, &account).await?))
}

/// `DELETE /admin/api/v1/mailbox-accounts/{id}/users/{name}`: 204; 404 when the user holds no
/// grant for the account (or either does not exist).
#[utoipa::path(
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`."), ("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    responses(
        (status = 204, description = "Revoked."),
        (status = 400, description = "The path names no account id or user name.", body = Errors),
        (status = 404, description = "The user holds no grant for the account.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[delete("/mailbox-accounts/{id}/users/{name}")]
#[tracing::instrument(name = "admin_revoke_mailbox_account", skip_all)]
pub async fn revoke(
    operator: Operator,
    path: web::Path<(String, String)>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let (id, user) = grant_path(&path)?;
    operations(&store, &operator)
        .revoke(id, user.as_str())
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /admin/api/v1/users/{name}/mailbox-accounts`: `{"user", "mailboxAccounts": [...]}`, the
/// accounts the user may see and send through, in id order (without their `users`: another
/// user's grants are not this listing's business); 404 for an unknown user.
#[utoipa::path(
    params(("name" = String, Path, pattern = "^[A-Za-z0-9._-]+$", min_length = 1, max_length = 64, description = "The user's login name.")),
    responses(
        (status = 200, description = "The user's accounts.", body = UserMailboxAccounts),
        (status = 400, description = "The path names no valid user name.", body = Errors),
        (status = 404, description = "No such user.", body = Errors),
        Refusals,
    ),
)]
#[get("/users/{name}/mailbox-accounts")]
#[tracing::instrument(name = "admin_user_mailbox_accounts", skip_all)]
pub async fn of_user(
    _operator: Operator,
    name: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let user = path_user(&name)?;
    if store.user(user.as_str()).await?.is_none() {
        return Err(Failure::NotFound(format!(
            "there is no user {}",
            user.as_str()
        )));
    }
    let accounts = store.mailbox_accounts_of(user.as_str()).await?;
    Ok(HttpResponse::Ok().json(UserMailboxAccounts {
        user: user.as_str(),
        mailbox_accounts: accounts,
    }))
}

fn operations<'a>(store: &'a Arc<dyn Store>, operator: &'a Operator) -> MailboxAccounts<'a> {
    MailboxAccounts {
        store,
        who: &operator.0,
    }
}
