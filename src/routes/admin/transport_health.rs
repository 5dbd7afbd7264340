//! `GET /admin/api/v1/transports`: every transport's circuit breaker and call statistics.

use actix_web::{get, web, HttpResponse};
use meldewerk_actors::Engine;

use super::openapi::Refusals;
use crate::auth::Operator;

/// Per transport: breaker state (`closed`, `open`, `half_open`), transient faults in a row, when
/// it last opened, calls, failures, mean latency, last error.
#[utoipa::path(responses(
    (status = 200, description = "Every transport.", body = Vec<meldewerk_actors::TransportHealth>),
    Refusals,
))]
#[get("/transports")]
pub async fn transports(_operator: Operator, engine: web::Data<Engine>) -> HttpResponse {
    HttpResponse::Ok().json(engine.transports())
}
