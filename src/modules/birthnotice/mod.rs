//! `birthnotice`: birth notification by a hospital to the civil registry office
//! (xPersonenstand `portal2StA.Geburt.081020`), signed or sealed.

pub mod fields;
pub mod form;
pub mod memento;
pub mod message;

use actix_web::web;

use super::civil_registry::{self, CivilRegistryModule};

/// The module's identity for the shared civil-registry endpoints.
pub const MODULE: CivilRegistryModule = CivilRegistryModule {
    segment: "birthnotice",
    mock_prefix: "BIRTHNOTICE",
    echoes_client_reference: true,
};

/// Path of the form a magic link lands on.
pub const FORM_PATH: &str = "/forms/birthnotice";

/// Registers the API (`/api/birthnotice/v1/…`) and the form (`/forms/birthnotice`).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/birthnotice/v1")
            .configure(civil_registry::configure(MODULE))
            .route("/memento", web::post().to(memento::create)),
    )
    .service(
        web::resource(FORM_PATH)
            .route(web::get().to(form::show))
            .route(web::post().to(form::submit)),
    )
    .route("/forms/birthnotice/sent", web::get().to(form::sent));
}
