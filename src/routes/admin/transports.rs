//! `GET /admin/api/v1/transports/{name}/received`: what a simulated authority received, so that
//! testers can assert on exact payloads and on exactly-once delivery.
//!
//! Paged and filtered without reading every record: `module`, `report`, `since` (RFC 3339),
//! `after` (a sequence number, the `next` of the previous page) and `limit` (default 100, at most
//! 1000). The answer is `{"messages": [...], "next": <seq or null>}`; each message carries its
//! `seq`, and its body and receipt as base64. A simulator running as its own process answers the
//! same at its own `/received` ([`page`]); this endpoint then answers 409 saying where.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use meldewerk_transports::received::{ReceivedQuery, MAX_PAGE};
use meldewerk_transports::{Simulated, SimulatorError};
use serde_json::{json, Value};

use super::error;
use super::openapi::{Errors, NoSimulatorHere, ReceivedPage, Refusals};
use crate::auth::Operator;
use crate::transports::Transports;

/// The query string read strictly (unknown and repeated parameters refused), every problem at
/// once.
fn read_query(pairs: &[(String, String)]) -> Result<ReceivedQuery, Vec<String>> {
    let mut query = ReceivedQuery::default();
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (name, value) in pairs {
        if seen.contains(&name.as_str()) {
            errors.push(format!("{name} is given more than once"));
            continue;
        }
        seen.push(name);
        match name.as_str() {
            "module" => query.module = Some(value.clone()),
            "report" => query.report_id = Some(value.clone()),
            // An unencoded `+` of an offset arrives as a space.
            "since" => match DateTime::parse_from_rfc3339(&value.replace(' ', "+")) {
                Ok(since) => query.since = Some(since.with_timezone(&Utc)),
                Err(_) => errors.push(format!(
                    "since must be an RFC 3339 time such as 2026-11-20T10:15:00Z, not {value:?}"
                )),
            },
            // Sequence numbers stay within what the document says (`int64`).
            "after" => match value.parse::<i64>() {
                Ok(after) if after >= 0 => query.after = Some(after as u64),
                _ => errors.push("after must be a sequence number (the next of a page)".into()),
            },
            "limit" => match value.parse() {
                Ok(limit) if (1..=MAX_PAGE).contains(&limit) => query.limit = limit,
                _ => errors.push(format!("limit must be an integer from 1 to {MAX_PAGE}")),
            },
            other => errors.push(format!("unknown query parameter {other:?}")),
        }
    }
    if errors.is_empty() {
        Ok(query)
    } else {
        Err(errors)
    }
}

/// One page of received messages (body base64-encoded), oldest first, at most `limit`
/// (100 when absent).
#[utoipa::path(
    params(
        ("name" = String, Path, description = "The transport's name (`xpersonenstand`)."),
        ("module" = Option<String>, Query, description = "Only messages of this module."),
        ("report" = Option<String>, Query, description = "Only messages of this report id."),
        ("since" = Option<String>, Query, format = DateTime, description = "Only messages received since."),
        ("after" = Option<i64>, Query, minimum = 0, description = "The `next` of the previous page."),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 1000, description = "At most this many; 100 when absent."),
    ),
    responses(
        (status = 200, description = "A page of received messages.", body = ReceivedPage),
        (status = 400, description = "Every problem with the query (unknown or repeated \
            parameters, an unusable value).", body = Errors),
        (status = 500, description = "The journal could not be read.", body = Errors),
        (status = 503, description = "The simulator's journal is unavailable (its disk takes no \
            writes).", body = Errors, headers(("Retry-After" = u64))),
        NoSimulatorHere,
        Refusals,
    ),
)]
#[get("/transports/{name}/received")]
pub async fn received(
    _operator: Operator,
    request: HttpRequest,
    name: web::Path<String>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    match transports.simulator(&name, "/received", "read what it received there") {
        Ok(simulator) => page(simulator, request.query_string()).await,
        Err(none) => none.answer(),
    }
}

/// The answer to a received-log query (`query` is the raw query string): 200
/// `{"messages": [...], "next": …}`, or 400 listing every problem with the query. The operator
/// API and a simulator running as its own process answer with this.
pub(crate) async fn page(simulator: Arc<dyn Simulated>, query: &str) -> HttpResponse {
    let pairs = match web::Query::<Vec<(String, String)>>::from_query(query) {
        Ok(pairs) => pairs.into_inner(),
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("unreadable query: {e}")),
    };
    let query = match read_query(&pairs) {
        Ok(query) => query,
        Err(errors) => return HttpResponse::BadRequest().json(json!({ "errors": errors })),
    };
    // The journal reads from disk: off the async executor.
    let page = web::block(move || simulator.received_page(&query)).await;
    match page {
        // The record type serialises its byte fields (body, receipt) as base64 itself.
        Ok(Ok(page)) => {
            // Each message: its place in the log beside the record as the simulator keeps it.
            let messages: Vec<Value> = page
                .messages
                .into_iter()
                .map(|(seq, mut message)| {
                    if let Value::Object(members) = &mut message {
                        members.insert("seq".into(), seq.into());
                    }
                    message
                })
                .collect();
            HttpResponse::Ok().json(json!({ "messages": messages, "next": page.next }))
        }
        Ok(Err(SimulatorError::Unavailable(reason))) => {
            tracing::warn!(error = %reason, "received log refused: the simulator's journal is unavailable");
            crate::module_layer::unavailable_response(
                "the simulated authority cannot use its journal at the moment (its disk takes no \
                 writes); try again later",
            )
        }
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
