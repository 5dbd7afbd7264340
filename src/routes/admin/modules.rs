//! `POST /admin/api/v1/modules/{seg}/pause` and `…/resume`: stop and restart a module's
//! deliveries. A paused module still takes submissions; its jobs wait in the durable outbox.
//! Each accepted request is recorded in the audit log (also one that changed nothing: the
//! operator asked for it).

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpResponse};
use meldewerk_actors::Engine;
use meldewerk_storage::Store;
use serde_json::json;

use super::{audit, error, store_failed};
use crate::auth::Operator;

/// Answers a pause (`paused`) or resume after `changed` said whether the module exists, and
/// records it.
async fn answer(
    operator: &Operator,
    store: &Arc<dyn Store>,
    module: &str,
    paused: bool,
    changed: Option<bool>,
) -> HttpResponse {
    if changed.is_none() {
        return error(StatusCode::NOT_FOUND, format!("no module {module}"));
    }
    let action = if paused { "pause" } else { "resume" };
    if let Err(e) = audit(store, &operator.0, action, format!("module {module}")).await {
        return store_failed(e);
    }
    HttpResponse::Ok().json(json!({ "module": module, "paused": paused }))
}

/// Pauses the module's deliveries (idempotent).
#[post("/modules/{module}/pause")]
pub async fn pause(
    operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    answer(&operator, &store, &module, true, engine.pause(&module)).await
}

/// Resumes the module's deliveries at once (idempotent).
#[post("/modules/{module}/resume")]
pub async fn resume(
    operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    answer(&operator, &store, &module, false, engine.resume(&module)).await
}
