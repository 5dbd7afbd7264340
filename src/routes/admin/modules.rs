//! `POST /admin/api/v1/modules/{seg}/pause` and `…/resume`: stop and restart a module's
//! deliveries. A paused module still takes submissions; its jobs wait in the durable outbox.

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpResponse};
use meldewerk_actors::Engine;
use serde_json::json;

use super::error;
use crate::auth::Operator;
use crate::telemetry::log_str;

fn answer(module: &str, paused: bool, changed: Option<bool>) -> HttpResponse {
    match changed {
        None => error(StatusCode::NOT_FOUND, format!("no module {module}")),
        Some(changed) => {
            if changed {
                // Who may act is the one operator account; when is the log line's time.
                tracing::warn!(module = %log_str(module), paused, "operator changed module deliveries");
            }
            HttpResponse::Ok().json(json!({ "module": module, "paused": paused }))
        }
    }
}

/// Pauses the module's deliveries (idempotent).
#[post("/modules/{module}/pause")]
pub async fn pause(
    _operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    answer(&module, true, engine.pause(&module))
}

/// Resumes the module's deliveries at once (idempotent).
#[post("/modules/{module}/resume")]
pub async fn resume(
    _operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    answer(&module, false, engine.resume(&module))
}
