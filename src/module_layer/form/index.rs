//! A page before a module's forms, where its magic links land (`ModuleInfo::landing`): one link
//! per form, each carrying the memento on, and the end user picks one (the disease index of
//! `labreport`, the court forms of `guardianship`).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use maud::html;

use super::{html_response, invalid_link, open_memento_of, FormQuery};
use crate::auth::SessionUser;
use crate::crypto::MasterKey;
use crate::module_layer::context::ModuleContext;
use crate::routes::login::logout_button;
use crate::routes::magic_link::append_query;

/// One form of an index.
#[derive(Debug, Clone, Copy)]
pub struct IndexEntry {
    /// The form's path.
    pub path: &'static str,
    /// What the link says.
    pub label: &'static str,
    /// A line under the link, if any.
    pub note: Option<&'static str>,
    /// A stable key of the entry (`data-key` of the link), for scripts and tests.
    pub key: &'static str,
}

/// An index page: its heading, the sentence above the list, and the forms.
#[derive(Debug)]
pub struct FormIndex {
    /// Heading and page title.
    pub title: &'static str,
    /// The sentence above the list.
    pub intro: &'static str,
    /// The forms, in the order shown.
    pub entries: Vec<IndexEntry>,
}

/// Registers `index` at `path` (the module's landing), with `context` as app data.
pub fn configure(
    cfg: &mut web::ServiceConfig,
    context: &web::Data<ModuleContext>,
    path: &'static str,
    index: FormIndex,
) {
    cfg.service(
        web::resource(path)
            .app_data(context.clone())
            .app_data(web::Data::new(index))
            .route(web::get().to(show)),
    );
}

/// `GET <landing>?m=…`: the links, for a memento of the session's user and this module.
async fn show(
    session: SessionUser,
    query: web::Query<FormQuery>,
    master: web::Data<MasterKey>,
    context: web::Data<ModuleContext>,
    index: web::Data<FormIndex>,
) -> HttpResponse {
    let memento = query.m.clone().unwrap_or_default();
    if open_memento_of(&master, &session, context.info, &memento).is_none() {
        return invalid_link();
    }
    let body = html! {
        h1 { (index.title) }
        p { (index.intro) }
        ul.forms {
            @for entry in &index.entries {
                li {
                    a href=(append_query(entry.path, "m", &memento)) data-key=(entry.key) {
                        (entry.label)
                    }
                    @if let Some(note) = entry.note {
                        br;
                        small { (note) }
                    }
                }
            }
        }
        (logout_button(&session.session.csrf))
    };
    html_response(StatusCode::OK, index.title, body)
}
