//! `/admin/api/v1/transports/{name}/mailboxes/{safeId}/messages[/{messageId}]`: operators and
//! testers play the courts of a simulated mailbox server (a transport whose authority the
//! service reads from, such as `egvp`).
//!
//! - `POST …/messages` drops an incoming court message into the account (created if the server
//!   did not keep it yet): JSON `{"sender": "<SAFE-ID>", "files": [{"name": …, "content":
//!   base64}, …]}`, or `multipart/form-data` with a text field `sender` and one file part per
//!   file (its `filename` is the file's name); 201 with the message's listing entry. File names
//!   are taken as given, hostile ones included (the service must cope with what courts send);
//!   count and size are bounded. 400 `{"errors": [...]}` for a body that is no such message.
//! - `GET …/messages?cursor=…&limit=…` lists the account's messages (the wire protocol's
//!   listing); `GET …/messages/{messageId}` fetches one (a retrieval like any other: the first
//!   fetch of an incoming message sets its `received_at`), 404 when it is gone; `DELETE …` deletes
//!   it, `{"deleted": false}` when it was gone already.
//!
//! A transport without mailboxes is 404; an account the server does not keep is 403; a simulator
//! running as its own process is 409 saying where (it serves the same calls at
//! `/mailboxes/{safeId}/messages`, [`crate::simulate`], with these functions). Drops and deletes
//! are recorded in the audit log.

use std::sync::Arc;

use actix_web::http::{header, StatusCode};
use actix_web::{delete, get, post, web, HttpRequest, HttpResponse};
use meldewerk_storage::Store;
use meldewerk_transports::mailbox::{MailboxEntry, MailboxFile, MAX_LIST_PAGE, MAX_REQUEST_BYTES};
use meldewerk_transports::wire::mailbox::{WireDeleted, WireMailboxMessage, WireMailboxPage};
use meldewerk_transports::{Simulated, TransportError};
use serde::Deserialize;

use super::openapi::{CrossSite, Errors, NoSimulatorHere, Refusals};
use super::{audited, error};
use crate::auth::Operator;
use crate::routes::{json, multipart};
use crate::transports::{NoSimulator, Transports};

/// Entries of a listing when the query gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

/// How an error answer looks where the call is served: the operator API's `{"errors": [...]}`,
/// or the wire protocol's `{"error": …}`.
pub(crate) type ErrorAnswer = fn(StatusCode, String) -> HttpResponse;

/// The body of a JSON drop (a multipart drop has a field `sender` and the files as parts).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DropRequest {
    /// The sender's SAFE-ID.
    sender: String,
    /// The files.
    files: Vec<MailboxFile>,
}

/// The failed mailbox call in HTTP terms: an account the server does not keep is 403, an
/// unknown cursor 410, a (scripted) fault 503.
fn failed(error: ErrorAnswer, failure: TransportError) -> HttpResponse {
    match failure {
        TransportError::Refused(reason) => error(StatusCode::FORBIDDEN, reason),
        TransportError::UnknownCursor(reason) => error(StatusCode::GONE, reason),
        TransportError::Transient(message) => error(StatusCode::SERVICE_UNAVAILABLE, message),
    }
}

/// 404 for a simulator that keeps no mailboxes.
fn no_mailbox(error: ErrorAnswer, name: &str) -> HttpResponse {
    error(
        StatusCode::NOT_FOUND,
        format!("the transport {name} keeps no mailboxes"),
    )
}

/// Reads a drop (JSON or multipart, at most [`MAX_REQUEST_BYTES`]) and stores it in the account
/// `safe_id` of `simulator`: 201 with the entry, or what was wrong.
pub(crate) async fn drop_message(
    req: &HttpRequest,
    payload: web::Payload,
    simulator: Arc<dyn Simulated>,
    safe_id: String,
    error: ErrorAnswer,
) -> HttpResponse {
    let drop = match read_drop(req, payload).await {
        Ok(drop) => drop,
        Err(answer) => return error(answer.0, answer.1),
    };
    let stored = web::block(move || match simulator.mailbox_server() {
        Some(server) => server.drop_incoming(&safe_id, &drop.sender, drop.files),
        None => Err(TransportError::Refused("no mailboxes".to_owned())),
    })
    .await;
    match stored {
        Ok(Ok(entry)) => {
            let location = format!(
                "{}/{}",
                req.path().trim_end_matches('/'),
                urlencoding_segment(&entry.message_id)
            );
            HttpResponse::Created()
                .insert_header((header::LOCATION, location))
                .json(entry)
        }
        Ok(Err(TransportError::Refused(problems))) => error(StatusCode::BAD_REQUEST, problems),
        Ok(Err(failure)) => failed(error, failure),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// A message id as a path segment: ids the simulator hands out are UUIDs, so only what a UUID
/// never holds is escaped.
fn urlencoding_segment(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') => c.to_string(),
            c => c.to_string().bytes().map(|b| format!("%{b:02X}")).collect(),
        })
        .collect()
}

/// The drop request of a JSON or multipart body; `Err` the status and what was wrong.
async fn read_drop(
    req: &HttpRequest,
    payload: web::Payload,
) -> Result<DropRequest, (StatusCode, String)> {
    let refused = |e: json::JsonError| (e.status(), e.to_string());
    if !multipart::is_multipart(req) {
        let value = json::read_json(req, payload, MAX_REQUEST_BYTES)
            .await
            .map_err(refused)?;
        return serde_json::from_value(value).map_err(|e| {
            (
                StatusCode::BAD_REQUEST,
                format!(
                    "the body must be {{\"sender\": \"<SAFE-ID>\", \"files\": [{{\"name\": …, \
                     \"content\": \"<base64>\"}}, …]}}: {e}"
                ),
            )
        });
    }
    let body = json::read_bytes(payload, MAX_REQUEST_BYTES)
        .await
        .map_err(refused)?;
    let bad = |e: String| (StatusCode::BAD_REQUEST, e);
    let mut sender = None;
    let mut files = Vec::new();
    let parts = multipart::parts(req.headers(), body.into())
        .await
        .map_err(bad)?;
    for part in parts {
        match (part.name.as_str(), part.filename) {
            ("sender", None) if sender.is_none() => {
                sender =
                    Some(String::from_utf8(part.content).map_err(|_| {
                        bad("the field sender must be a SAFE-ID in UTF-8".to_owned())
                    })?);
            }
            ("sender", None) => return Err(bad("the field sender is given twice".to_owned())),
            (_, Some(name)) => files.push(MailboxFile {
                name,
                content: part.content,
            }),
            (other, None) => {
                return Err(bad(format!(
                    "unknown field {other:?}: a drop has a field sender and file parts (each \
                     with a filename)"
                )))
            }
        }
    }
    Ok(DropRequest {
        sender: sender.ok_or_else(|| bad("the field sender (a SAFE-ID) is required".to_owned()))?,
        files,
    })
}

/// `cursor` (optional) and `limit` (1 to `most`, default `default`) of a paged read (the
/// mailbox listing, the inbox); anything else, or either twice, is refused.
pub(crate) fn cursor_and_limit(
    query: &str,
    most: usize,
    default: usize,
) -> Result<(Option<String>, usize), String> {
    let pairs = web::Query::<Vec<(String, String)>>::from_query(query)
        .map_err(|e| format!("unreadable query: {e}"))?
        .into_inner();
    let (mut cursor, mut limit) = (None, None);
    for (name, value) in pairs {
        let taken = match name.as_str() {
            "cursor" => cursor.replace(value).is_some(),
            "limit" => {
                let parsed = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=most).contains(n))
                    .ok_or_else(|| format!("limit must be an integer from 1 to {most}"))?;
                limit.replace(parsed).is_some()
            }
            other => return Err(format!("unknown query parameter {other:?}")),
        };
        if taken {
            return Err(format!("{name} is given more than once"));
        }
    }
    Ok((cursor, limit.unwrap_or(default)))
}

/// 200 [`WireMailboxPage`] of the account `safe_id`, as `query` asks.
pub(crate) async fn list(
    simulator: Arc<dyn Simulated>,
    name: &str,
    safe_id: &str,
    query: &str,
    error: ErrorAnswer,
) -> HttpResponse {
    let (cursor, limit) = match cursor_and_limit(query, MAX_LIST_PAGE, DEFAULT_LIMIT) {
        Ok(query) => query,
        Err(problem) => return error(StatusCode::BAD_REQUEST, problem),
    };
    let Some(mailbox) = simulator.mailbox_server() else {
        return no_mailbox(error, name);
    };
    match mailbox.list(safe_id, cursor.as_deref(), limit).await {
        Ok(page) => HttpResponse::Ok().json(WireMailboxPage::from(page)),
        Err(e) => failed(error, e),
    }
}

/// 200 [`WireMailboxMessage`], or 404 when it is gone.
pub(crate) async fn fetch(
    simulator: Arc<dyn Simulated>,
    name: &str,
    (safe_id, message_id): (&str, &str),
    error: ErrorAnswer,
) -> HttpResponse {
    let Some(mailbox) = simulator.mailbox_server() else {
        return no_mailbox(error, name);
    };
    match mailbox.fetch(safe_id, message_id).await {
        Ok(Some(message)) => HttpResponse::Ok().json(WireMailboxMessage::from(message)),
        Ok(None) => error(
            StatusCode::NOT_FOUND,
            "the account holds no such message (any more)".to_owned(),
        ),
        Err(e) => failed(error, e),
    }
}

/// 200 [`WireDeleted`].
pub(crate) async fn delete(
    simulator: Arc<dyn Simulated>,
    name: &str,
    (safe_id, message_id): (&str, &str),
    error: ErrorAnswer,
) -> HttpResponse {
    let Some(mailbox) = simulator.mailbox_server() else {
        return no_mailbox(error, name);
    };
    match mailbox.delete(safe_id, message_id).await {
        Ok(deleted) => HttpResponse::Ok().json(WireDeleted { deleted }),
        Err(e) => failed(error, e),
    }
}

/// The in-process mailbox server of the transport `name`, or the answer why there is none
/// here.
fn server(name: &str, transports: &Transports) -> Result<Arc<dyn Simulated>, NoSimulator> {
    if !meldewerk_transports::kind(name).is_some_and(|kind| kind.mailbox) {
        return Err(NoSimulator {
            status: StatusCode::NOT_FOUND,
            message: format!("the transport {name} keeps no mailboxes"),
        });
    }
    transports.simulator(name, "/mailboxes", "play the courts there")
}

/// Drops an incoming court message: 201 with its entry.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`egvp`)."), ("safe_id" = String, Path, description = "The account's SAFE-ID.")),
    request_body(content(
        (DropRequest = "application/json"),
        (DropRequest = "multipart/form-data"),
    )),
    responses(
        (status = 201, description = "Stored as an incoming message.", body = MailboxEntry,
            headers(("Location" = String, description = "Where to fetch it."))),
        (status = 400, description = "No drop: every problem with the body, or a file the \
            mailbox refuses.", body = Errors),
        (status = 408, description = "The body did not arrive in time.", body = Errors),
        (status = 413, description = "The body is too large.", body = Errors),
        (status = 415, description = "Neither JSON nor multipart.", body = Errors),
        NoSimulatorHere,
        CrossSite,
        Refusals,
        (status = 503, description = "A scripted transient fault, or the store is unavailable.",
            body = Errors),
    ),
)]
#[post("/transports/{name}/mailboxes/{safe_id}/messages")]
pub async fn post_message(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    payload: web::Payload,
    transports: web::Data<Transports>,
) -> HttpResponse {
    let (name, safe_id) = path.into_inner();
    let simulator = match server(&name, &transports) {
        Ok(simulator) => simulator,
        Err(none) => return none.answer(),
    };
    let target = format!("transport {name} mailbox {safe_id}");
    let answer = drop_message(&req, payload, simulator, safe_id, error).await;
    audited(answer, &store, &operator, "drop-mailbox-message", target).await
}

/// Lists an account's messages.
#[utoipa::path(
    params(
        ("name" = String, Path, description = "The transport's name (`egvp`)."), ("safe_id" = String, Path, description = "The account's SAFE-ID."),
        ("cursor" = Option<String>, Query, description = "The `cursor` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Entries; 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of the account's messages.", body = WireMailboxPage),
        (status = 400, description = "An unusable, unknown or repeated parameter.", body = Errors),
        (status = 403, description = "The mailbox server keeps no such account.", body = Errors),
        (status = 410, description = "An unknown cursor.", body = Errors),
        NoSimulatorHere,
        Refusals,
        (status = 503, description = "A scripted transient fault, or the store is unavailable.",
            body = Errors),
    ),
)]
#[get("/transports/{name}/mailboxes/{safe_id}/messages")]
pub async fn list_messages(
    _operator: Operator,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    let (name, safe_id) = path.into_inner();
    match server(&name, &transports) {
        Ok(simulator) => list(simulator, &name, &safe_id, req.query_string(), error).await,
        Err(none) => none.answer(),
    }
}

/// Fetches one message.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`egvp`)."), ("safe_id" = String, Path, description = "The account's SAFE-ID."), ("message_id" = String, Path, description = "The message's id.")),
    responses(
        (status = 200, description = "The message with its files.", body = WireMailboxMessage),
        (status = 403, description = "The mailbox server keeps no such account.", body = Errors),
        NoSimulatorHere,
        Refusals,
        (status = 404, description = "No such message (or transport).", body = Errors),
        (status = 503, description = "A scripted transient fault, or the store is unavailable.",
            body = Errors),
    ),
)]
#[get("/transports/{name}/mailboxes/{safe_id}/messages/{message_id}")]
pub async fn get_message(
    _operator: Operator,
    path: web::Path<(String, String, String)>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    let (name, safe_id, message_id) = path.into_inner();
    match server(&name, &transports) {
        Ok(simulator) => fetch(simulator, &name, (&safe_id, &message_id), error).await,
        Err(none) => none.answer(),
    }
}

/// Deletes one message.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`egvp`)."), ("safe_id" = String, Path, description = "The account's SAFE-ID."), ("message_id" = String, Path, description = "The message's id.")),
    responses(
        (status = 200, description = "Whether there was such a message to delete.",
            body = WireDeleted),
        NoSimulatorHere,
        CrossSite,
        Refusals,
        (status = 403, description = "The mailbox server keeps no such account, or another \
            site made the browser send it.", body = Errors),
        (status = 503, description = "A scripted transient fault, or the store is unavailable.",
            body = Errors),
    ),
)]
#[delete("/transports/{name}/mailboxes/{safe_id}/messages/{message_id}")]
pub async fn delete_message(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    path: web::Path<(String, String, String)>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    let (name, safe_id, message_id) = path.into_inner();
    let simulator = match server(&name, &transports) {
        Ok(simulator) => simulator,
        Err(none) => return none.answer(),
    };
    let answer = delete(simulator, &name, (&safe_id, &message_id), error).await;
    let target = format!("transport {name} mailbox {safe_id} message {message_id}");
    audited(answer, &store, &operator, "delete-mailbox-message", target).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_query_is_read_strictly() {
        let list_query = |query| cursor_and_limit(query, MAX_LIST_PAGE, DEFAULT_LIMIT);
        assert_eq!(list_query(""), Ok((None, DEFAULT_LIMIT)));
        assert!(list_query("limit=1001")
            .unwrap_err()
            .contains("from 1 to 1000"));
        assert_eq!(list_query("cursor=7&limit=2"), Ok((Some("7".into()), 2)));
        assert!(list_query("limit=0").is_err());
        assert!(list_query("cursor=1&cursor=2")
            .unwrap_err()
            .contains("more than once"));
        assert!(list_query("since=x").unwrap_err().contains("unknown"));
    }

    #[test]
    fn message_ids_are_escaped_in_locations() {
        assert_eq!(urlencoding_segment("a-b_c.d"), "a-b_c.d");
        assert_eq!(urlencoding_segment("a/ü"), "a%2F%C3%BC");
    }
}
