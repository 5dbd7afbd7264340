//! The disease index `/labreport/?m=…`, where a magic link lands: the end user picks the
//! disease, and its form opens with the same memento.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::html;
use meldewerk_fhir::codes::Disease;

use super::{FORM_PATHS, INDEX, TITLES};
use crate::auth::SessionUser;
use crate::crypto::MasterKey;
use crate::module_layer::context::ModuleContext;
use crate::module_layer::form::{html_response, invalid_link, open_memento_of, FormQuery};
use crate::routes::login::logout_button;
use crate::routes::magic_link::append_query;

/// Registers the index page.
pub(super) fn configure(cfg: &mut web::ServiceConfig, context: &web::Data<ModuleContext>) {
    cfg.service(
        web::resource(INDEX)
            .app_data(context.clone())
            .route(web::get().to(index)),
    );
}

/// `GET /labreport/?m=…`: one link per disease form, each carrying the memento on.
async fn index(
    session: SessionUser,
    query: web::Query<FormQuery>,
    master: web::Data<MasterKey>,
    context: web::Data<ModuleContext>,
) -> HttpResponse {
    let memento = query.m.clone().unwrap_or_default();
    if open_memento_of(&master, &session, context.info, &memento).is_none() {
        return invalid_link();
    }
    let body = html! {
        h1 { "Erregernachweis melden" }
        p { "Bitte wählen Sie den Erreger, dessen Nachweis Sie melden:" }
        ul.diseases {
            @for (i, disease) in Disease::ALL.iter().enumerate() {
                li {
                    a href=(append_query(FORM_PATHS[i], "m", &memento))
                        data-disease=(disease.code()) { (TITLES[i]) }
                }
            }
        }
        (logout_button(&session.session.csrf))
    };
    html_response(StatusCode::OK, "Erregernachweis melden", body)
}
