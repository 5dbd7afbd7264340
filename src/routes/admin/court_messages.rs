//! The court messages of a mailbox account as operators see them:
//! `GET /admin/api/v1/mailbox-accounts/{id}/messages[?after=&limit=]` answers
//! `{"messages": [...], "next"}` in index-id order, deleted ones included, each with where its
//! hydration stands and its error (a message that could not be read, or fetched), and when and
//! why it was deleted. Nothing of a message's content is shown: operators see its handling.

use std::sync::Arc;

use actix_web::{get, web, HttpResponse};
use chrono::{DateTime, Utc};
use meldewerk_storage::{CourtMessage, CourtMessageDirection, DeletionCause, Hydration, Store};
use serde::Serialize;
use utoipa::ToSchema;

use super::failure::Failure;
use super::jobs::{next_after, Page};
use super::mailbox_accounts::BODY_FIELDS;
use super::openapi::{Errors, Refusals};
use super::store_failed;
use crate::auth::Operator;
use crate::mailbox_accounts::{no_account, parse_id};

/// An index entry as operators see it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CourtMessageView<'a> {
    /// Its index id.
    id: u64,
    /// The mailbox server's id of it.
    message_id: &'a str,
    /// Whether it came in or was sent.
    direction: CourtMessageDirection,
    /// The account's SAFE-ID.
    safe_id: &'a str,
    /// Its size in bytes, as the server said.
    size: u64,
    /// When it was created (sent).
    created_at: DateTime<Utc>,
    /// When the server received it.
    #[schema(required = true)]
    received_at: Option<DateTime<Utc>>,
    /// When it entered the index.
    indexed_at: DateTime<Utc>,
    /// When its content was fetched and read.
    #[schema(required = true)]
    hydrated_at: Option<DateTime<Utc>>,
    /// Where fetching and reading its content stands.
    #[schema(pattern = "^(waiting|hydrated|unreadable|failed)$")]
    hydration: &'static str,
    /// Fetch attempts that failed so far (while `waiting`).
    attempts: u32,
    /// When the next fetch is due (while `waiting`).
    #[schema(required = true)]
    next_attempt: Option<DateTime<Utc>>,
    /// Why it could not be read or fetched.
    #[schema(required = true)]
    error: Option<&'a str>,
    /// The court's file number, once read.
    #[schema(required = true)]
    aktenzeichen: Option<&'a str>,
    /// The job of a sent message.
    #[schema(required = true)]
    job_id: Option<&'a str>,
    /// When and why it was deleted; null while it is not.
    #[schema(required = true)]
    deleted: Option<DeletionView<'a>>,
}

/// Why and when a court message was deleted.
#[derive(Serialize, ToSchema)]
pub(crate) struct DeletionView<'a> {
    /// When.
    at: DateTime<Utc>,
    /// Why.
    #[schema(pattern = "^(acknowledged|gone-from-server|retention)$")]
    cause: &'static str,
    /// Who acknowledged it (`acknowledged` only).
    #[schema(required = true)]
    user: Option<&'a str>,
}

/// A page of an account's court messages.
#[derive(Serialize, ToSchema)]
pub(crate) struct CourtMessagesPage<'a> {
    /// The messages in index-id order, deleted ones included.
    messages: Vec<CourtMessageView<'a>>,
    /// The id to ask for `after`, when the page is full; null on the last page.
    #[schema(required = true)]
    next: Option<u64>,
}

/// An index entry as operators see it.
fn view(message: &CourtMessage) -> CourtMessageView<'_> {
    let (hydration, attempts, next_attempt) = match &message.hydration {
        Hydration::Waiting {
            attempts, due_at, ..
        } => ("waiting", *attempts, Some(*due_at)),
        Hydration::Hydrated => ("hydrated", 0, None),
        Hydration::Unreadable { .. } => ("unreadable", 0, None),
        Hydration::Failed { .. } => ("failed", 0, None),
    };
    let deleted = message.deleted.as_ref().map(|d| {
        let (cause, user) = match &d.cause {
            DeletionCause::Acknowledged { user } => ("acknowledged", Some(user.as_str())),
            DeletionCause::GoneFromServer => ("gone-from-server", None),
            DeletionCause::Retention => ("retention", None),
        };
        DeletionView {
            at: d.at,
            cause,
            user,
        }
    });
    CourtMessageView {
        id: message.id,
        message_id: &message.message_id,
        direction: message.direction,
        safe_id: &message.safe_id,
        size: message.size,
        created_at: message.created_at,
        received_at: message.received_at,
        indexed_at: message.indexed_at,
        hydrated_at: message.hydrated_at,
        hydration,
        attempts,
        next_attempt,
        error: message.error(),
        aktenzeichen: message.aktenzeichen.as_deref(),
        job_id: message.job_id.as_deref(),
        deleted,
    }
}

/// `GET /admin/api/v1/mailbox-accounts/{id}/messages`: 404 for an unknown account.
#[utoipa::path(
    operation_id = "list_court_messages",
    params(("id" = i64, Path, minimum = 1, description = "The account's `egvpAccountId`."), Page),
    responses(
        (status = 200, description = "A page of the account's messages.", body = CourtMessagesPage),
        (status = 400, description = "The path names no account id; an unusable `after` or \
            `limit`, or an unknown parameter.", body = Errors),
        (status = 404, description = "No such account.", body = Errors),
        Refusals,
    ),
)]
#[get("/mailbox-accounts/{id}/messages")]
#[tracing::instrument(name = "admin_court_messages", skip_all)]
pub async fn list(
    _operator: Operator,
    id: web::Path<String>,
    page: web::Query<Page>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, Failure> {
    let id = parse_id(&id, &BODY_FIELDS).map_err(|problem| Failure::Invalid(vec![problem]))?;
    if store.mailbox_account(id).await?.is_none() {
        return Err(Failure::NotFound(no_account(id)));
    }
    let (limit, after) = match page.limit_after_seq() {
        Ok(paging) => paging,
        Err(answer) => return Ok(*answer),
    };
    Ok(
        match store.court_messages_of(id, after, limit, true).await {
            Ok(messages) => HttpResponse::Ok().json(CourtMessagesPage {
                next: next_after(&messages, limit, |m| m.id),
                messages: messages.iter().map(view).collect(),
            }),
            Err(e) => store_failed(e),
        },
    )
}
