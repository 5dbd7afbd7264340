//! Liveness and readiness.

use std::sync::Arc;

use actix_web::{get, web, HttpResponse};
use meldewerk_storage::{Store, StoreCondition};

use crate::web::Readiness;

/// `GET /healthz`: the process answers. The cheapest endpoint there is.
#[utoipa::path(
    tag = "service",
    responses((status = 200, description = "The process answers: `{\"status\": \"ok\"}`.",
        content_type = "application/json", body = serde_json::Value)),
)]
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"status":"ok"}"#)
}

/// `GET /readyz`: the store is open and takes writes, and the engine runs; 503 while starting or
/// shutting down, and while the store is unavailable (a full disk: it recovers by itself once
/// the disk takes writes again, and `/readyz` says ready again).
#[utoipa::path(
    tag = "service",
    responses(
        (status = 200, description = "Ready: `{\"status\": \"ready\"}`.",
            content_type = "application/json", body = serde_json::Value),
        (status = 503, description = "Starting, stopping, or the store unavailable (`store`, `since`).",
            content_type = "application/json", body = serde_json::Value),
    ),
)]
#[get("/readyz")]
pub async fn readyz(
    readiness: web::Data<Readiness>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    if !readiness.is_ready() {
        return HttpResponse::ServiceUnavailable()
            .json(serde_json::json!({ "status": "not ready" }));
    }
    match store.condition() {
        StoreCondition::Available => {
            HttpResponse::Ok().json(serde_json::json!({ "status": "ready" }))
        }
        StoreCondition::Unavailable { since, .. } => {
            HttpResponse::ServiceUnavailable().json(serde_json::json!({
                "status": "not ready",
                "store": "unavailable",
                "since": crate::module_layer::rfc3339(since),
            }))
        }
    }
}
