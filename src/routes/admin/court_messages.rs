//! The court messages of a mailbox account as operators see them:
//! `GET /admin/api/v1/mailbox-accounts/{id}/messages[?after=&limit=]` answers
//! `{"messages": [...], "next"}` in index-id order, deleted ones included, each with where its
//! hydration stands and its error (a message that could not be read, or fetched), and when and
//! why it was deleted. Nothing of a message's content is shown: operators see its handling.

use std::sync::Arc;

use actix_web::{get, web, HttpResponse};
use meldewerk_storage::{CourtMessage, DeletionCause, Hydration, Store};
use serde_json::{json, Value};

use super::failure::Failure;
use super::jobs::{page_answer, Page};
use super::mailbox_accounts::BODY_FIELDS;
use super::store_failed;
use crate::auth::Operator;
use crate::mailbox_accounts::{no_account, parse_id};

/// An index entry as operators see it.
fn view(message: &CourtMessage) -> Value {
    let (state, attempts, due) = match &message.hydration {
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
        json!({"at": d.at, "cause": cause, "user": user})
    });
    json!({
        "id": message.id,
        "messageId": message.message_id,
        "direction": message.direction,
        "safeId": message.safe_id,
        "size": message.size,
        "createdAt": message.created_at,
        "receivedAt": message.received_at,
        "indexedAt": message.indexed_at,
        "hydratedAt": message.hydrated_at,
        "hydration": state,
        "attempts": attempts,
        "nextAttempt": due,
        "error": message.error(),
        "aktenzeichen": message.aktenzeichen,
        "jobId": message.job_id,
        "deleted": deleted,
    })
}

/// `GET /admin/api/v1/mailbox-accounts/{id}/messages`: 404 for an unknown account.
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
    let limit = match page.limit() {
        Ok(limit) => limit,
        Err(answer) => return Ok(*answer),
    };
    Ok(
        match store.court_messages_of(id, page.after, limit, true).await {
            Ok(messages) => {
                let last = messages.last().map(|m| m.id);
                page_answer("messages", messages.iter().map(view).collect(), last, limit)
            }
            Err(e) => store_failed(e),
        },
    )
}
