//! `POST /admin/api/v1/modules/{module}/pause` and `…/resume`: stop and restart a module's
//! deliveries. A paused module still takes submissions; its jobs wait in the durable outbox.
//! Each accepted request is recorded in the audit log (also one that changed nothing: the
//! operator asked for it).

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{post, web, HttpResponse};
use meldewerk_actors::Engine;
use meldewerk_storage::Store;

use super::openapi::{CrossSite, Errors, Refusals};
use super::{audit, ActionFailure};
use crate::auth::Operator;
use crate::telemetry::log_str;

/// Pauses (`paused`) or resumes the module's deliveries and records it in the audit log (also
/// when nothing changed: the operator asked for it). 404 for a module that does not exist.
pub(crate) async fn set_paused(
    who: &str,
    module: &str,
    paused: bool,
    engine: &Engine,
    store: &Arc<dyn Store>,
) -> Result<(), ActionFailure> {
    let changed = if paused {
        engine.pause(module).await
    } else {
        engine.resume(module).await
    };
    if changed?.is_none() {
        return Err(ActionFailure::Refused(
            StatusCode::NOT_FOUND,
            format!("no module {}", log_str(module)),
        ));
    }
    let action = if paused { "pause" } else { "resume" };
    audit(store, who, action, format!("module {module}")).await?;
    Ok(())
}

/// A module's deliveries after a pause or resume.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct ModulePaused<'a> {
    /// The module's path segment.
    module: &'a str,
    /// Whether its deliveries are paused now.
    paused: bool,
}

/// The API's answer: `{"module", "paused"}`.
async fn answer(
    operator: &Operator,
    store: &Arc<dyn Store>,
    engine: &Engine,
    module: &str,
    paused: bool,
) -> HttpResponse {
    match set_paused(&operator.0, module, paused, engine, store).await {
        Ok(()) => HttpResponse::Ok().json(ModulePaused { module, paused }),
        Err(failure) => failure.json(),
    }
}

/// Pauses the module's deliveries (idempotent).
#[utoipa::path(
    params(("module" = String, Path, description = "The module's path segment (`birthnotice`).")),
    responses(
        (status = 200, description = "Paused (or paused already).", body = ModulePaused),
        (status = 404, description = "No such module.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[post("/modules/{module}/pause")]
pub async fn pause(
    operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    answer(&operator, &store, &engine, &module, true).await
}

/// Resumes the module's deliveries at once (idempotent).
#[utoipa::path(
    params(("module" = String, Path, description = "The module's path segment (`birthnotice`).")),
    responses(
        (status = 200, description = "Resumed (or running already).", body = ModulePaused),
        (status = 404, description = "No such module.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[post("/modules/{module}/resume")]
pub async fn resume(
    operator: Operator,
    module: web::Path<String>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    answer(&operator, &store, &engine, &module, false).await
}
