//! Liveness and readiness.

use actix_web::{get, web, HttpResponse};

use crate::startup::Readiness;

/// `GET /healthz`: the process answers. The cheapest endpoint there is.
#[get("/healthz")]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(r#"{"status":"ok"}"#)
}

/// `GET /readyz`: the store is open and the engine runs; 503 while starting or shutting down.
#[get("/readyz")]
pub async fn readyz(readiness: web::Data<Readiness>) -> HttpResponse {
    if readiness.is_ready() {
        HttpResponse::Ok().json(serde_json::json!({ "status": "ready" }))
    } else {
        HttpResponse::ServiceUnavailable().json(serde_json::json!({ "status": "not ready" }))
    }
}
