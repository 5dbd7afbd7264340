//! The guardianship module's own API routes inside `/api/guardianship/v1/`: the court messages
//! (`GET /messages`, `GET /download/{id}`, `POST /messages/ack`) and the contact address
//! (`/contact`). Decisions on what the contract leaves open are in docs/decisions.md
//! ("guardianship").

mod ack;
mod contact;
mod download;
mod messages;

use actix_web::web;
use meldewerk_storage::{CourtMessage, Store};
use serde_json::{json, Map, Value};

use super::archives::Archives;
use crate::module_layer::errors::ApiError;
use crate::module_layer::memento::MAX_ID;
use crate::module_layer::openapi::{
    json_content, json_response, ModuleDocument, API_ERRORS, API_USER, BODY_ERRORS,
};
use crate::module_layer::routes;

/// Registers the routes; `archives` is where the downloads are read from.
pub(super) fn configure(cfg: &mut web::ServiceConfig, archives: Archives) {
    cfg.app_data(web::Data::new(archives))
        .service(
            web::resource("/messages")
                .route(web::get().to(messages::list))
                .default_service(web::to(routes::only_get)),
        )
        .service(
            web::resource("/messages/ack")
                .route(web::post().to(ack::acknowledge))
                .default_service(web::to(routes::only_post)),
        )
        .service(
            web::resource("/download/{id}")
                .route(web::get().to(download::download))
                .default_service(web::to(routes::only_get)),
        )
        .service(
            web::resource("/contact")
                .route(web::get().to(contact::show))
                .route(web::put().to(contact::set))
                .route(web::delete().to(contact::remove))
                .default_service(web::to(contact::not_allowed)),
        );
}

/// What the caller may know of the message a path or request names.
pub(crate) enum Access {
    /// No message has this id (or the id is no number).
    Unknown,
    /// The message is in an account the caller is not granted.
    Forbidden,
    /// The caller may see it (deleted or not).
    Granted(Box<CourtMessage>),
    /// The store failed.
    Failed(ApiError),
}

/// The message `id` names, as far as `user` may see it.
pub(crate) async fn message_of(store: &dyn Store, user: &str, id: &str) -> Access {
    // Digits only: `+5` or ` 5` name no message either.
    let Some(id) = id
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| id.parse::<u64>().ok())
        .flatten()
    else {
        return Access::Unknown;
    };
    let message = match store.court_message(id).await {
        Ok(Some(message)) => message,
        Ok(None) => return Access::Unknown,
        Err(e) => return Access::Failed(e.into()),
    };
    match store
        .may_access_mailbox_account(user, message.account)
        .await
    {
        Ok(true) => Access::Granted(Box::new(message)),
        Ok(false) => Access::Forbidden,
        Err(e) => Access::Failed(e.into()),
    }
}

/// The module's part of its OpenAPI document: the court messages and the contact address.
pub(super) fn document(doc: &mut ModuleDocument) {
    let message = doc.schema_of::<messages::MessageResource>("CourtMessage");
    doc.schema_of::<ack::AckStatus>("AckStatus");
    doc.schema_of::<ack::AckResult>("AckResult");
    let answer = doc.schema_of::<ack::AckAnswer>("AckAnswer");
    let ok = json_response;
    let with = |mut responses: Map<String, Value>, ok: Value| {
        responses.insert("200".into(), ok);
        responses
    };
    let list = |name: &str, item: Value, what: &str| {
        json!({
            "name": name, "in": "query", "required": false,
            "style": "form", "explode": true,
            "schema": {"type": "array", "items": item, "maxItems": messages::MAX_FILTER_VALUES},
            "description": what,
        })
    };
    let safe_id = &super::fields::SAFE_ID;
    let safe_id = json!({
        "type": "string",
        "pattern": safe_id.pattern,
        "maxLength": safe_id.max_length,
        "not": {"type": "string", "pattern": "[\\u0000-\\u001f]"},
    });
    let path = doc.api_path("/messages");
    let responses = doc.errors(
        &[&API_ERRORS[..], &[400, 405]].concat(),
        &[(
            400,
            "A malformed `since`, or an unknown parameter; each is named.",
        )],
    );
    doc.operation(
        "get",
        &path,
        json!({
            "operationId": "guardianship_messages",
            "summary": "List the court messages of the mailbox accounts the user may see",
            "security": [{API_USER: []}],
            "parameters": [
                list(
                    "jobId",
                    json!({"type": "string", "minLength": 1, "maxLength": MAX_ID}),
                    "Only messages mapped to these jobs (read messages only).",
                ),
                list("safeId", safe_id, "Only messages of these mailbox accounts."),
                {"name": "since", "in": "query", "required": false,
                 "schema": {"type": "string", "format": "date-time"},
                 "description": "Only messages created after this time."},
            ],
            "responses": with(responses, ok("The messages, oldest first.", json!({"type": "array", "items": message}))),
        }),
    );
    let path = doc.api_path("/messages/ack");
    let request = json!({
        "type": "object",
        "required": ["messageIds"],
        "additionalProperties": false,
        "properties": {"messageIds": {
            "type": "array",
            "minItems": 1,
            "maxItems": ack::MAX_IDS,
            "items": {"type": "integer", "minimum": 1},
        }},
    });
    let responses = doc.errors(&[&BODY_ERRORS[..], &API_ERRORS, &[405]].concat(), &[]);
    doc.operation(
        "post",
        &path,
        json!({
            "operationId": "guardianship_ack",
            "summary": "Acknowledge messages: each is deleted, and gets its own status",
            "security": [{API_USER: []}],
            "requestBody": {"required": true, "content": json_content(request)},
            "responses": with(responses, ok("One result per id.", answer)),
        }),
    );
    let path = doc.api_path("/download/{id}");
    let responses = doc.errors(
        &[&API_ERRORS[..], &[403, 404, 405]].concat(),
        &[
            (
                403,
                "The message is in a mailbox account the user may not see.",
            ),
            (
                404,
                "No such message, or it is not (or no longer) downloadable.",
            ),
        ],
    );
    doc.operation(
        "get",
        &path,
        json!({
            "operationId": "guardianship_download",
            "summary": "Download a message's archive (ZIP: the XJustiz message, its attachments, metadata)",
            "security": [{API_USER: []}],
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "responses": with(responses, json!({
                "description": "The archive.",
                "headers": {"Content-Disposition": {"schema": {"type": "string"}}},
                "content": {"application/zip": {"schema": {"type": "string", "contentMediaType": "application/zip"}}},
            })),
        }),
    );
    let contact = json!({
        "type": "object",
        "required": ["email"],
        "properties": {"email": {"type": ["string", "null"], "format": "email"}},
    });
    let path = doc.api_path("/contact");
    let responses = doc.errors(&[&API_ERRORS[..], &[405]].concat(), &[]);
    let mut put = doc.errors(&[&BODY_ERRORS[..], &API_ERRORS, &[405]].concat(), &[]);
    put.insert("200".into(), ok("The registered address.", contact.clone()));
    for (method, summary, request) in [
        (
            "get",
            "The address court messages are announced to (null: none)",
            None,
        ),
        (
            "put",
            "Register the address court messages are announced to",
            Some(json!({
                "type": "object",
                "required": ["email"],
                "additionalProperties": false,
                "properties": {"email": {"type": "string", "format": "email"}},
            })),
        ),
        ("delete", "Remove the address", None),
    ] {
        let mut operation = json!({
            "operationId": format!("guardianship_contact_{method}"),
            "summary": summary,
            "security": [{API_USER: []}],
            "responses": if method == "put" { put.clone() } else {
                with(responses.clone(), ok("The registered address.", contact.clone()))
            },
        });
        if let Some(request) = request {
            operation["requestBody"] = json!({"required": true, "content": json_content(request)});
        }
        doc.operation(method, &path, operation);
    }
}
