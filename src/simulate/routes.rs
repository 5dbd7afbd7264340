//! The simulator process's endpoints: the wire protocol (answers `{"error": …}` as the protocol
//! says), or the FHIR operation of [`super::fhir`], and the testers' script and received log (answers like the operator API,
//! `{"errors": [...]}`, with the operator API's own functions).

use actix_web::http::StatusCode;
use actix_web::{delete, get, post, put, web, HttpRequest, HttpResponse};
use meldewerk_transports::mailbox::MailboxEntry;
use meldewerk_transports::wire::mailbox::{WireDeleted, WireMailboxMessage, WireMailboxPage};
use meldewerk_transports::wire::{
    WireAckBatch, WireAnswer, WireError, MAX_BODY_BYTES, MAX_WIRE_BATCH,
};
use meldewerk_transports::{Delivery, Protocol, TransportError};
use serde::Serialize;
use utoipa::{IntoResponses, OpenApi, ToSchema};

use super::Shared;
use crate::routes::admin::openapi::{BodyRefusals, Errors, ReceivedPage, Script, ScriptRule};
use crate::routes::admin::transport_mailbox::{self, DropRequest};
use crate::routes::admin::transport_script::{change_script, current, reset, APPEND, REPLACE};
use crate::routes::admin::transports::page;
use crate::routes::json::read_json;
use crate::telemetry::log_str;

/// The routes every simulator process serves, described at their handlers; [`super::api_docs`]
/// adds the protocol's own.
#[derive(OpenApi)]
#[openapi(paths(
    get_script,
    put_script,
    add_rule,
    reset_script,
    received,
    post_mailbox_message,
    list_mailbox,
    get_mailbox_message,
    delete_mailbox_message,
    healthz,
))]
pub(super) struct CommonRoutes;

/// The wire protocol's own routes.
#[derive(OpenApi)]
#[openapi(paths(deliveries, acknowledgements))]
pub(super) struct WireRoutes;

/// What a route that reads a body answers when it cannot be read, in the wire protocol's shape.
#[derive(IntoResponses)]
#[allow(dead_code)] // describes answers; never built
enum WireBodyRefusals {
    /// The body is no JSON (or not what the route takes).
    #[response(status = 400)]
    Invalid(WireError),
    /// The body did not arrive within `body_timeout_secs`.
    #[response(status = 408)]
    TooSlow(WireError),
    /// The body is too large.
    #[response(status = 413)]
    TooLarge(WireError),
    /// The body is not declared as JSON.
    #[response(status = 415)]
    NotJson(WireError),
}

/// Acknowledgements in one answer when the query gives no `limit`.
const DEFAULT_LIMIT: usize = 100;

/// Registers the endpoints of `protocol` and the testers'; anything else is 404.
pub(super) fn configure(cfg: &mut web::ServiceConfig, protocol: Protocol) {
    match protocol {
        Protocol::Wire => {
            cfg.service(deliveries).service(acknowledgements);
        }
        Protocol::FhirOperation { operation } => super::fhir::configure(cfg, operation),
    }
    cfg.service(get_script)
        .service(put_script)
        .service(add_rule)
        .service(reset_script)
        .service(received)
        .service(post_mailbox_message)
        .service(list_mailbox)
        .service(get_mailbox_message)
        .service(delete_mailbox_message)
        .service(healthz)
        .service(super::api_docs::serve)
        .default_service(web::to(|| async {
            wire_error(StatusCode::NOT_FOUND, "not found".to_owned())
        }));
}

/// A protocol error answer: `{"error": message}`.
fn wire_error(status: StatusCode, error: String) -> HttpResponse {
    HttpResponse::build(status).json(WireError { error })
}

/// The simulator's failed transport call, in the protocol's terms: a refused inbox fetch is 403,
/// an unknown inbox cursor 410, a transient fault 503.
fn failed(error: TransportError) -> HttpResponse {
    match error {
        TransportError::Refused(reason) => wire_error(StatusCode::FORBIDDEN, reason),
        TransportError::UnknownCursor(reason) => wire_error(StatusCode::GONE, reason),
        TransportError::Transient(message) => wire_error(StatusCode::SERVICE_UNAVAILABLE, message),
    }
}

/// `POST /deliveries`: 200 the answer (`{"transport_ref", "accepted_at", "duplicate"}` while it
/// awaits its acknowledgement, with `outcome` when the authority decided at once); 503 a
/// (scripted) transient fault; 400/413/415 a body that is no delivery, 408 one that did not
/// arrive within `body_timeout_secs`.
#[utoipa::path(
    tag = "wire",
    request_body = Delivery,
    responses(
        (status = 200, description = "Accepted (awaiting its acknowledgement), or decided at \
            once (`outcome`); `duplicate` for a repeated idempotency key.", body = WireAnswer),
        WireBodyRefusals,
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[post("/deliveries")]
async fn deliveries(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let value = match read_json(&req, payload, MAX_BODY_BYTES).await {
        Ok(value) => value,
        Err(e) => return wire_error(e.status(), e.to_string()),
    };
    let delivery: Delivery = match serde_json::from_value(value) {
        Ok(delivery) => delivery,
        Err(e) => return wire_error(StatusCode::BAD_REQUEST, format!("not a delivery: {e}")),
    };
    // Logged before the script's latency: a tester sees which deliveries are in flight.
    tracing::info!(
        simulator = shared.kind.name,
        module = %log_str(&delivery.module),
        report_id = %log_str(&delivery.report_id),
        "delivery arrived"
    );
    match shared.simulator.submit(delivery).await {
        Ok(answer) => HttpResponse::Ok().json(WireAnswer::from(answer)),
        Err(e) => failed(e),
    }
}

/// `GET /acknowledgements?cursor=…&limit=…`: 200 the batch; 410 an unknown cursor; 400 a query
/// that does not fit; 404 for an authority that decides every delivery at once (it has no
/// inbox).
#[utoipa::path(
    tag = "wire",
    params(
        ("cursor" = Option<String>, Query, description = "The `cursor` of the previous batch."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 100,
            description = "Acknowledgements in the batch; 100 when absent."),
    ),
    responses(
        (status = 200, description = "A batch of acknowledgements.", body = WireAckBatch),
        (status = 400, description = "An unusable, unknown or repeated parameter.", body = WireError),
        (status = 403, description = "A (scripted) refusal of the fetch.", body = WireError),
        (status = 404, description = "The authority decides every delivery at once: no inbox.",
            body = WireError),
        (status = 410, description = "An unknown cursor.", body = WireError),
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[get("/acknowledgements")]
async fn acknowledgements(req: HttpRequest, shared: web::Data<Shared>) -> HttpResponse {
    let Some(inbox) = shared.simulator.inbox() else {
        return wire_error(
            StatusCode::NOT_FOUND,
            format!(
                "{} decides every delivery at once: it has no inbox",
                shared.kind.name
            ),
        );
    };
    let (cursor, limit) = match inbox_query(req.query_string()) {
        Ok(query) => query,
        Err(problem) => return wire_error(StatusCode::BAD_REQUEST, problem),
    };
    match inbox.acknowledgements(cursor.as_deref(), limit).await {
        Ok(batch) => HttpResponse::Ok().json(WireAckBatch::from(batch)),
        Err(e) => failed(e),
    }
}

/// `cursor` (optional) and `limit` (1 to [`MAX_WIRE_BATCH`], default [`DEFAULT_LIMIT`]); anything
/// else, or either twice, is refused.
fn inbox_query(query: &str) -> Result<(Option<String>, usize), String> {
    transport_mailbox::cursor_and_limit(query, MAX_WIRE_BATCH, DEFAULT_LIMIT)
}

/// `GET /script`, as the operator API's.
#[utoipa::path(
    tag = "testers",
    responses((status = 200, description = "The script.", body = Script)),
)]
#[get("/script")]
async fn get_script(shared: web::Data<Shared>) -> HttpResponse {
    current(shared.simulator.scriptable())
}

/// `PUT /script`, as the operator API's.
#[utoipa::path(
    tag = "testers",
    request_body = Script,
    responses(
        (status = 200, description = "The script as it now is.", body = Script),
        BodyRefusals,
    ),
)]
#[put("/script")]
async fn put_script(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let (name, limit) = (shared.kind.name, shared.max_body_bytes);
    change_script(
        &req,
        payload,
        limit,
        name,
        shared.simulator.scriptable(),
        &REPLACE,
    )
    .await
}

/// `POST /script/rules`, as the operator API's.
#[utoipa::path(
    tag = "testers",
    request_body = ScriptRule,
    responses(
        (status = 200, description = "The script as it now is.", body = Script),
        BodyRefusals,
    ),
)]
#[post("/script/rules")]
async fn add_rule(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let (name, limit) = (shared.kind.name, shared.max_body_bytes);
    change_script(
        &req,
        payload,
        limit,
        name,
        shared.simulator.scriptable(),
        &APPEND,
    )
    .await
}

/// `DELETE /script`, as the operator API's.
#[utoipa::path(
    tag = "testers",
    responses((status = 200, description = "The script of configuration (empty).", body = Script)),
)]
#[delete("/script")]
async fn reset_script(shared: web::Data<Shared>) -> HttpResponse {
    reset(shared.kind.name, shared.simulator.scriptable())
}

/// `GET /received?…`, as the operator API's.
#[utoipa::path(
    tag = "testers",
    params(
        ("module" = Option<String>, Query, description = "Only messages of this module."),
        ("report" = Option<String>, Query, description = "Only messages of this report id."),
        ("since" = Option<String>, Query, format = DateTime, description = "Only messages received since."),
        ("after" = Option<u64>, Query, description = "The `next` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "At most this many; 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of received messages.", body = ReceivedPage),
        (status = 400, description = "Every problem with the query.", body = Errors),
        (status = 500, description = "The journal could not be read.", body = Errors),
        (status = 503, description = "The journal is unavailable (its disk takes no writes).",
            body = Errors, headers(("Retry-After" = u64))),
    ),
)]
#[get("/received")]
async fn received(req: HttpRequest, shared: web::Data<Shared>) -> HttpResponse {
    page(std::sync::Arc::clone(&shared.simulator), req.query_string()).await
}

/// `POST /mailboxes/{safeId}/messages`: testers drop a court's message, as the operator API's
/// (answers in the wire protocol's error shape).
#[utoipa::path(
    tag = "testers",
    params(("safe_id" = String, Path, description = "The account's SAFE-ID.")),
    request_body(content(
        (DropRequest = "application/json"),
        (DropRequest = "multipart/form-data"),
    )),
    responses(
        (status = 201, description = "Stored as an incoming message.", body = MailboxEntry,
            headers(("Location" = String, description = "Where to fetch it."))),
        WireBodyRefusals,
        (status = 403, description = "The server keeps no such account.", body = WireError),
        (status = 404, description = "This authority keeps no mailboxes.", body = WireError),
        (status = 500, description = "The drop could not be stored.", body = WireError),
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[post("/mailboxes/{safe_id}/messages")]
async fn post_mailbox_message(
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let simulator = std::sync::Arc::clone(&shared.simulator);
    transport_mailbox::drop_message(&req, payload, simulator, path.into_inner(), wire_error).await
}

/// `GET /mailboxes/{safeId}/messages?cursor=…&limit=…`: the wire protocol's listing.
#[utoipa::path(
    tag = "wire",
    params(
        ("safe_id" = String, Path, description = "The account's SAFE-ID."),
        ("cursor" = Option<String>, Query, description = "The `cursor` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "Entries; 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of the account's messages.", body = WireMailboxPage),
        (status = 400, description = "An unusable, unknown or repeated parameter.", body = WireError),
        (status = 403, description = "The server keeps no such account.", body = WireError),
        (status = 404, description = "This authority keeps no mailboxes.", body = WireError),
        (status = 410, description = "An unknown cursor.", body = WireError),
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[get("/mailboxes/{safe_id}/messages")]
async fn list_mailbox(
    req: HttpRequest,
    path: web::Path<String>,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let simulator = std::sync::Arc::clone(&shared.simulator);
    let query = req.query_string();
    transport_mailbox::list(simulator, shared.kind.name, &path, query, wire_error).await
}

/// `GET /mailboxes/{safeId}/messages/{messageId}`: the wire protocol's fetch.
#[utoipa::path(
    tag = "wire",
    params(("safe_id" = String, Path, description = "The account's SAFE-ID."), ("message_id" = String, Path, description = "The message's id.")),
    responses(
        (status = 200, description = "The message with its files.", body = WireMailboxMessage),
        (status = 403, description = "The server keeps no such account.", body = WireError),
        (status = 404, description = "No such message, or no mailboxes.", body = WireError),
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[get("/mailboxes/{safe_id}/messages/{message_id}")]
async fn get_mailbox_message(
    path: web::Path<(String, String)>,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let simulator = std::sync::Arc::clone(&shared.simulator);
    let (safe_id, message_id) = path.into_inner();
    let ids = (safe_id.as_str(), message_id.as_str());
    transport_mailbox::fetch(simulator, shared.kind.name, ids, wire_error).await
}

/// `DELETE /mailboxes/{safeId}/messages/{messageId}`: the wire protocol's delete.
#[utoipa::path(
    tag = "wire",
    params(("safe_id" = String, Path, description = "The account's SAFE-ID."), ("message_id" = String, Path, description = "The message's id.")),
    responses(
        (status = 200, description = "Whether there was such a message to delete.",
            body = WireDeleted),
        (status = 403, description = "The server keeps no such account.", body = WireError),
        (status = 404, description = "This authority keeps no mailboxes.", body = WireError),
        (status = 503, description = "A (scripted) transient fault.", body = WireError),
    ),
)]
#[delete("/mailboxes/{safe_id}/messages/{message_id}")]
async fn delete_mailbox_message(
    path: web::Path<(String, String)>,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let simulator = std::sync::Arc::clone(&shared.simulator);
    let (safe_id, message_id) = path.into_inner();
    let ids = (safe_id.as_str(), message_id.as_str());
    transport_mailbox::delete(simulator, shared.kind.name, ids, wire_error).await
}

/// The simulator process's health.
#[derive(Serialize, ToSchema)]
struct Health {
    /// Always `ok`.
    #[schema(pattern = "^ok$")]
    status: &'static str,
    /// The simulated authority's transport name.
    simulator: &'static str,
}

/// `GET /healthz`: 200 `{"status": "ok", "simulator": name}` while the process serves.
#[utoipa::path(
    tag = "testers",
    responses((status = 200, description = "The process serves.", body = Health)),
)]
#[get("/healthz")]
async fn healthz(shared: web::Data<Shared>) -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: "ok",
        simulator: shared.kind.name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inbox_query_is_read_strictly() {
        assert_eq!(inbox_query(""), Ok((None, DEFAULT_LIMIT)));
        assert_eq!(
            inbox_query("cursor=17&limit=5"),
            Ok((Some("17".to_owned()), 5))
        );
        assert!(inbox_query("limit=0").unwrap_err().contains("from 1 to"));
        assert!(inbox_query("limit=x").is_err());
        assert!(inbox_query("cursor=1&cursor=2")
            .unwrap_err()
            .contains("more than once"));
        assert!(inbox_query("since=1").unwrap_err().contains("unknown"));
    }
}
