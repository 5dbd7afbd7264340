//! `GET /admin/api/v1/transports/xpersonenstand/received`: what the simulated civil registry
//! office received, so that testers can assert on exact payloads and on exactly-once delivery.

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse};
use meldewerk_transports::xpersonenstand::Simulator;

use super::error;
use crate::auth::Operator;

/// Optional filter by module and report id.
#[derive(serde::Deserialize)]
pub struct ReceivedQuery {
    module: Option<String>,
    report: Option<String>,
}

/// Every received message (body base64-encoded), oldest first.
#[get("/transports/xpersonenstand/received")]
pub async fn received(
    _operator: Operator,
    query: web::Query<ReceivedQuery>,
    standesamt: web::Data<Simulator>,
) -> HttpResponse {
    let received = match (&query.module, &query.report) {
        (Some(module), Some(report)) => standesamt.received_by_report(module, report),
        _ => standesamt.received(),
    };
    match received {
        // The record type serialises its byte fields (body, receipt) as base64 itself.
        Ok(mut messages) => {
            if let Some(module) = &query.module {
                messages.retain(|m| &m.module == module);
            }
            HttpResponse::Ok().json(messages)
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
