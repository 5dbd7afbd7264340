//! `GET /admin/api/v1/actors`: health of every engine actor.

use actix_web::{get, web, HttpResponse};
use meldewerk_actors::Engine;

use super::openapi::Refusals;
use crate::auth::Operator;

/// State, restarts, last error, backlog, processed and failed counts, last heartbeat per actor.
#[utoipa::path(responses(
    (status = 200, description = "Every actor, in registration order.", body = Vec<meldewerk_actors::ActorHealth>),
    Refusals,
))]
#[get("/actors")]
pub async fn actors(_operator: Operator, engine: web::Data<Engine>) -> HttpResponse {
    HttpResponse::Ok().json(engine.health())
}
