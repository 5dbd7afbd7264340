//! The form index `/guardianship/?m=…`, where a magic link lands: the clerk picks the court
//! form, and it opens with the same memento.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::html;

use super::{FORMS, INDEX};
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

/// `GET /guardianship/?m=…`: one link per court form, each carrying the memento on.
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
        h1 { "Nachricht an das Gericht" }
        p { "Bitte wählen Sie, was Sie dem Gericht übermitteln:" }
        ul.forms {
            @for form in &FORMS {
                li {
                    a href=(append_query(form.path, "m", &memento)) { (form.title) }
                    @if let Some(kind) = form.report_type {
                        br;
                        small { (kind) }
                    }
                }
            }
        }
        (logout_button(&session.session.csrf))
    };
    html_response(StatusCode::OK, "Nachricht an das Gericht", body)
}
