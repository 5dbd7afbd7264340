//! `GET /admin/api/v1/transports/xpersonenstand/received`: what the simulated civil registry
//! office received, so that testers can assert on exact payloads and on exactly-once delivery.

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use meldewerk_transports::standesamt::SimulatedStandesamt;

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
    standesamt: web::Data<SimulatedStandesamt>,
) -> HttpResponse {
    let received = match (&query.module, &query.report) {
        (Some(module), Some(report)) => standesamt.received_by_report(module, report),
        _ => standesamt.received(),
    };
    match received {
        Ok(messages) => {
            let items: Vec<serde_json::Value> = messages
                .into_iter()
                .filter(|m| {
                    query
                        .module
                        .as_ref()
                        .is_none_or(|module| &m.module == module)
                })
                .map(|m| {
                    let mut value = serde_json::to_value(&m).unwrap_or_default();
                    if let Some(obj) = value.as_object_mut() {
                        obj.insert("body".into(), STANDARD.encode(&m.body).into());
                    }
                    value
                })
                .collect();
            HttpResponse::Ok().json(items)
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
