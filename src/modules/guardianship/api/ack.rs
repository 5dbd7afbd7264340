//! `POST /api/guardianship/v1/messages/ack`: acknowledges 1 to 100 court messages, each with a
//! status of its own (spec/03 §2.2). An acknowledged message loses its archive at once and
//! keeps a soft-deleted index entry saying who acknowledged it when, and the audit log has a
//! record of it.

use actix_web::{web, HttpResponse};
use chrono::Utc;
use meldewerk_actors::Hydrator;
use meldewerk_storage::{AuditEntry, CourtMessageDeleted, DeletionCause, Store};
use serde::Serialize;
use serde_json::Value;

use super::{message_of, Access};
use crate::module_layer::api_call::ApiCall;
use crate::module_layer::errors::{unknown_members, ApiError, ModuleError, Violation};
use crate::module_layer::memento::read_request;
use crate::modules::guardianship::archives::Archives;
use crate::web::WebSettings;

/// Most ids one acknowledgement takes (spec/03 §8).
pub(crate) const MAX_IDS: usize = 100;

/// The status of one acknowledged id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum AckStatus {
    Deleted,
    AlreadyDeleted,
    NotFound,
    Forbidden,
    Error,
}

/// One entry of `results`.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct AckResult {
    /// The requested id.
    id: u64,
    /// What became of it.
    status: AckStatus,
    /// The status in words.
    message: String,
}

/// The answer of an acknowledgement: one result per requested id, in their order.
#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct AckAnswer {
    /// One entry per requested id.
    results: Vec<AckResult>,
}

/// The ids of `{"messageIds": [...]}`, or every problem with the request.
fn read_ids(object: &serde_json::Map<String, Value>) -> Result<Vec<u64>, Vec<Violation>> {
    let mut problems = unknown_members(object, &["messageIds"]);
    let ids = match object.get("messageIds") {
        None | Some(Value::Null) => {
            problems.push(Violation::at("/messageIds", "messageIds is required"));
            Vec::new()
        }
        Some(Value::Array(values)) => {
            if values.is_empty() || values.len() > MAX_IDS {
                problems.push(Violation::at(
                    "/messageIds",
                    format!(
                        "messageIds must hold 1 to {MAX_IDS} ids; it holds {}",
                        values.len()
                    ),
                ));
            }
            let mut ids = Vec::new();
            for (i, value) in values.iter().enumerate() {
                match value.as_u64().filter(|id| *id >= 1) {
                    Some(id) => ids.push(id),
                    None => problems.push(Violation::at(
                        format!("/messageIds/{i}"),
                        format!("messageIds[{i}] must be a message id, a whole number from 1"),
                    )),
                }
            }
            ids
        }
        Some(_) => {
            problems.push(Violation::at(
                "/messageIds",
                "messageIds must be an array of message ids",
            ));
            Vec::new()
        }
    };
    match problems.is_empty() {
        true => Ok(ids),
        false => Err(problems),
    }
}

/// `POST /messages/ack`.
pub(super) async fn acknowledge(
    call: ApiCall,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    archives: web::Data<Archives>,
) -> Result<HttpResponse, ModuleError> {
    let fail = |e: ApiError| call.error(e);
    let object = read_request(&call.req, payload, settings.max_body_bytes)
        .await
        .map_err(fail)?;
    let ids = read_ids(&object).map_err(|v| fail(ApiError::Validation(v)))?;
    let mut results = Vec::with_capacity(ids.len());
    for id in ids {
        results.push(acknowledge_one(call.store(), &archives, &call.user.0.name, id).await);
    }
    Ok(HttpResponse::Ok().json(AckAnswer { results }))
}

async fn acknowledge_one(store: &dyn Store, archives: &Archives, user: &str, id: u64) -> AckResult {
    let result = |status, message: String| AckResult {
        id,
        status,
        message,
    };
    let text = id.to_string();
    match message_of(store, user, &text).await {
        Access::Unknown => return result(AckStatus::NotFound, format!("no court message {id}")),
        Access::Forbidden => {
            return result(
                AckStatus::Forbidden,
                format!("court message {id} is in a mailbox account you are not granted"),
            )
        }
        Access::Failed(e) => return result(AckStatus::Error, failed(id, &e.to_string())),
        Access::Granted(_) => {}
    }
    let cause = DeletionCause::Acknowledged {
        user: user.to_owned(),
    };
    let (status, message) = match store.delete_court_message(id, cause, Utc::now()).await {
        Ok(CourtMessageDeleted::Deleted(message)) => {
            let audit = AuditEntry {
                at: Utc::now(),
                who: format!("api-user {user}"),
                action: "court-message-acknowledged".into(),
                target: format!(
                    "court message {id} (account {}, {})",
                    message.account, message.safe_id
                ),
            };
            if let Err(e) = store.append_audit(audit).await {
                tracing::error!(id, error = %e, "acknowledged court message not audited");
            }
            (
                AckStatus::Deleted,
                format!("court message {id} acknowledged and deleted"),
            )
        }
        Ok(CourtMessageDeleted::AlreadyDeleted(_)) => (
            AckStatus::AlreadyDeleted,
            format!("court message {id} was deleted already"),
        ),
        Ok(CourtMessageDeleted::NotFound) => {
            return result(AckStatus::NotFound, format!("no court message {id}"))
        }
        Err(e) => return result(AckStatus::Error, failed(id, &e.to_string())),
    };
    // Also for one deleted already: an earlier removal may have failed.
    match archives.remove_archive(id) {
        Ok(()) => result(status, message),
        Err(e) => {
            tracing::error!(id, error = %e, "archive of an acknowledged court message not removed");
            result(
                AckStatus::Error,
                format!(
                    "court message {id} is deleted, but its archive could not be removed from \
                     disk; acknowledge it again to retry"
                ),
            )
        }
    }
}

fn failed(id: u64, error: &str) -> String {
    tracing::error!(id, %error, "court message acknowledgement failed");
    format!("court message {id} could not be acknowledged now; nothing changed, try again")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ids(value: Value) -> Result<Vec<u64>, Vec<String>> {
        read_ids(value.as_object().unwrap()).map_err(|v| v.into_iter().map(|v| v.detail).collect())
    }

    #[test]
    fn one_to_a_hundred_ids_are_taken() {
        assert_eq!(ids(json!({"messageIds": [3, 1, 3]})), Ok(vec![3, 1, 3]));
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(ids(json!({ "messageIds": hundred })).unwrap().len(), 100);
        let many: Vec<u64> = (1..=101).collect();
        assert_eq!(
            ids(json!({ "messageIds": many })),
            Err(vec![
                "messageIds must hold 1 to 100 ids; it holds 101".into()
            ])
        );
        assert_eq!(
            ids(json!({"messageIds": []})),
            Err(vec!["messageIds must hold 1 to 100 ids; it holds 0".into()])
        );
        assert_eq!(ids(json!({})), Err(vec!["messageIds is required".into()]));
        assert_eq!(
            ids(json!({"messageIds": [1, "2", 0, 1.5], "x": 1}))
                .unwrap_err()
                .len(),
            4
        );
    }
}
