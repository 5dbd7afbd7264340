//! The birth-notice form: pre-filled from the memento, completed by the end user, validated on
//! the server, and dispatched as a report with its outbox job in one transaction.

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use meldewerk_actors::Engine;
use meldewerk_storage::{Report, ReportKey, Store, StoreError};
use meldewerk_xml::xpersonenstand::Geburtsanzeige;
use serde_json::{json, Value};

use super::fields::{label, FIELDS};
use super::message::{trial_build, Submission};
use super::{FORM_PATH, MODULE};
use crate::auth::SessionUser;
use crate::crypto::{MasterKey, UserKey};
use crate::forms::page;
use crate::modules::fields::{form_value, from_form, Field, FieldKind};
use crate::tokens::open_memento;

/// Query of the form page: the memento.
#[derive(serde::Deserialize)]
pub struct FormQuery {
    m: Option<String>,
}

/// Everything the form shows besides the field values.
struct FormView<'a> {
    memento: &'a str,
    csrf: &'a str,
    id: &'a str,
    sealed: bool,
    values: HashMap<&'static str, String>,
    field_errors: HashMap<&'static str, String>,
    errors: Vec<String>,
    signatory: String,
    signed: bool,
}

fn html_response(status: StatusCode, title: &str, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .body(page(title, body).into_string())
}

fn message_page(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    html_response(status, title, html! { h1 { (title) } p { (text) } })
}

fn invalid_link() -> HttpResponse {
    message_page(
        StatusCode::BAD_REQUEST,
        "Link ungültig",
        "Die Formulardaten dieses Links sind ungültig oder gehören zu einem anderen Zugang. \
         Bitte öffnen Sie den Link erneut oder fordern Sie einen neuen an.",
    )
}

fn input(field: &Field, view: &FormView) -> Markup {
    let value = view
        .values
        .get(field.path)
        .map(String::as_str)
        .unwrap_or("");
    let error = view.field_errors.get(field.path);
    let invalid = if error.is_some() { "true" } else { "false" };
    html! {
        @match field.kind {
            FieldKind::Bool => {
                div.check {
                    input type="checkbox" id=(field.path) name=(field.path) value="true"
                        checked[value == "true"] aria-invalid=(invalid);
                    label for=(field.path) { (field.label) }
                }
            }
            FieldKind::Choice(options) => {
                label for=(field.path) { (field.label) }
                select id=(field.path) name=(field.path) aria-invalid=(invalid) {
                    option value="" { "– bitte wählen –" }
                    @for (option, text) in options {
                        option value=(option) selected[*option == value] { (text) }
                    }
                }
            }
            _ => {
                label for=(field.path) { (field.label) }
                @let kind = match field.kind {
                    FieldKind::Date => "date",
                    FieldKind::Time => "time",
                    FieldKind::Integer { .. } => "number",
                    _ => "text",
                };
                input type=(kind) id=(field.path) name=(field.path) value=(value) aria-invalid=(invalid);
            }
        }
        @if let Some(error) = error { div.error { (error) } }
    }
}

fn render(view: &FormView) -> Markup {
    let mut sections: Vec<&str> = Vec::new();
    for field in FIELDS {
        if !sections.contains(&field.section) {
            sections.push(field.section);
        }
    }
    html! {
        h1 { "Geburtsanzeige" }
        p { "Meldung " strong { (view.id) } ". Bitte prüfen und ergänzen Sie die Angaben und senden Sie die Anzeige ab." }
        @if !view.errors.is_empty() || !view.field_errors.is_empty() {
            div.errors role="alert" {
                p { strong { "Die Anzeige wurde noch nicht abgesendet:" } }
                ul {
                    @for error in &view.errors { li { (error) } }
                    @for field in FIELDS {
                        @if let Some(error) = view.field_errors.get(field.path) { li { (error) } }
                    }
                }
            }
        }
        form method="post" action=(FORM_PATH) novalidate {
            input type="hidden" name="m" value=(view.memento);
            input type="hidden" name="csrf" value=(view.csrf);
            @for section in &sections {
                fieldset {
                    legend { (section) }
                    @for field in FIELDS.iter().filter(|f| f.section == *section) { (input(field, view)) }
                }
            }
            fieldset {
                legend { "Signatur" }
                @if view.sealed {
                    p.note { "Für Ihre Einrichtung ist ein Siegel hinterlegt. Die Anzeige wird beim Absenden automatisch gesiegelt." }
                } @else {
                    p.note { "Für Ihre Einrichtung ist kein Siegel hinterlegt. Bitte unterschreiben Sie die Anzeige vor dem Absenden." }
                    label for="signatur.name" { "Name der unterzeichnenden Person" }
                    input type="text" id="signatur.name" name="signatur.name" value=(view.signatory);
                    div.check {
                        input type="checkbox" id="signatur.bestaetigt" name="signatur.bestaetigt" value="true" checked[view.signed];
                        label for="signatur.bestaetigt" { "Ich unterschreibe diese Geburtsanzeige und bestätige die Richtigkeit der Angaben." }
                    }
                }
            }
            button type="submit" { "Geburtsanzeige absenden" }
        }
    }
}

/// The memento's content, opened with the session user's key.
fn open(master: &MasterKey, session: &SessionUser, memento: &str) -> Option<Value> {
    let key = UserKey::unwrap(master, &session.user.memento_key).ok()?;
    open_memento(&key, memento).filter(|data| data["id"].is_string())
}

/// `GET /forms/birthnotice?m=…`: the form, pre-filled.
#[tracing::instrument(name = "birthnotice_form", skip_all, fields(user = %session.user.name))]
pub async fn show(
    session: SessionUser,
    query: web::Query<FormQuery>,
    master: web::Data<MasterKey>,
) -> HttpResponse {
    let memento = query.m.clone().unwrap_or_default();
    let Some(data) = open(&master, &session, &memento) else {
        return invalid_link();
    };
    let view = FormView {
        memento: &memento,
        csrf: &session.session.csrf,
        id: data["id"].as_str().unwrap_or_default(),
        sealed: session.user.seal.is_some(),
        values: FIELDS
            .iter()
            .map(|f| (f.path, form_value(f, &data)))
            .collect(),
        field_errors: HashMap::new(),
        errors: Vec::new(),
        signatory: String::new(),
        signed: false,
    };
    html_response(StatusCode::OK, "Geburtsanzeige", render(&view))
}

fn posted<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `POST /forms/birthnotice`: validate everything, then store the report (`PENDING`) and its
/// delivery job in one transaction and hand over to the engine. Invalid input re-renders the form
/// with every problem listed and every value kept.
#[tracing::instrument(name = "birthnotice_submit", skip_all, fields(user = %session.user.name))]
pub async fn submit(
    session: SessionUser,
    form: web::Form<Vec<(String, String)>>,
    master: web::Data<MasterKey>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
    settings: web::Data<crate::startup::WebSettings>,
) -> HttpResponse {
    let form = form.into_inner();
    if posted(&form, "csrf") != Some(session.session.csrf.as_str()) {
        return message_page(
            StatusCode::FORBIDDEN,
            "Sitzung abgelaufen",
            "Das Formular gehört nicht zu Ihrer aktuellen Sitzung. Bitte öffnen Sie den Link erneut.",
        );
    }
    let memento = posted(&form, "m").unwrap_or_default().to_string();
    let Some(data) = open(&master, &session, &memento) else {
        return invalid_link();
    };
    let id = data["id"].as_str().unwrap_or_default().to_string();
    let client_reference = data["clientReference"].as_str().map(str::to_string);

    let (object, problems) = from_form(FIELDS, &form);
    let mut field_errors: HashMap<&'static str, String> = problems.into_iter().collect();
    let mut errors = Vec::new();
    let anzeige = match serde_json::from_value::<Geburtsanzeige>(Value::Object(object)) {
        Ok(anzeige) => Some(anzeige),
        Err(e) => {
            errors.push(format!("Die Angaben passen nicht zusammen: {e}"));
            None
        }
    };
    if let Some(anzeige) = &anzeige {
        for path in anzeige.missing_for_dispatch() {
            let field = FIELDS.iter().find(|f| f.path == path).map(|f| f.path);
            let message = format!("{}: Pflichtangabe", label(path));
            match field {
                Some(path) => {
                    field_errors.entry(path).or_insert(message);
                }
                None => errors.push(message),
            }
        }
        if field_errors.is_empty() && errors.is_empty() {
            if let Err(problem) = trial_build(anzeige, &settings.civil_registry) {
                errors.push(problem);
            }
        }
    }
    let sealed = session.user.seal.is_some();
    let signatory = posted(&form, "signatur.name")
        .unwrap_or_default()
        .trim()
        .to_string();
    let signed = posted(&form, "signatur.bestaetigt") == Some("true");
    if !sealed && (signatory.is_empty() || !signed) {
        errors.push(
            "Signatur: Bitte geben Sie Ihren Namen an und bestätigen Sie die Unterschrift. \
             Ohne Siegel oder Signatur kann die Anzeige nicht versendet werden."
                .into(),
        );
    }
    let Some(anzeige) = anzeige.filter(|_| errors.is_empty() && field_errors.is_empty()) else {
        let values = FIELDS
            .iter()
            .map(|f| {
                (
                    f.path,
                    posted(&form, f.path).unwrap_or_default().to_string(),
                )
            })
            .collect();
        let view = FormView {
            memento: &memento,
            csrf: &session.session.csrf,
            id: &id,
            sealed,
            values,
            field_errors,
            errors,
            signatory,
            signed,
        };
        return html_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Geburtsanzeige",
            render(&view),
        );
    };

    let now = Utc::now();
    let submission = Submission {
        anzeige,
        end_user_signature: (!sealed).then(|| json!({ "name": signatory, "signedAt": now })),
    };
    let report = Report::new_pending(
        ReportKey {
            owner: session.user.name.clone(),
            module: MODULE.segment.into(),
            id: id.clone(),
        },
        serde_json::to_value(&submission).expect("serializable"),
        client_reference,
        uuid::Uuid::new_v4().to_string(),
        now,
    );
    match store.submit_report(report).await {
        Ok(_) => {
            engine.wake();
            tracing::info!(%id, "birth notice dispatched");
            let location = crate::routes::magic_link::append_query("/forms/birthnotice/sent", "id", &id);
            HttpResponse::SeeOther().insert_header(("Location", location)).finish()
        }
        Err(StoreError::Conflict(_)) => message_page(
            StatusCode::CONFLICT,
            "Bereits abgesendet",
            "Diese Geburtsanzeige wurde bereits abgesendet. Eine Meldung kann nur einmal versendet werden.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "storing the report failed");
            message_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Nicht abgesendet",
                "Die Anzeige konnte wegen einer Störung nicht gespeichert werden und wurde nicht abgesendet. \
                 Bitte versuchen Sie es in einigen Minuten erneut.",
            )
        }
    }
}

/// Query of the confirmation page.
#[derive(serde::Deserialize)]
pub struct SentQuery {
    id: Option<String>,
}

/// `GET /forms/birthnotice/sent?id=…`: confirmation after dispatch.
pub async fn sent(_session: SessionUser, query: web::Query<SentQuery>) -> HttpResponse {
    let id = query.id.clone().unwrap_or_default();
    html_response(
        StatusCode::OK,
        "Abgesendet",
        html! {
            h1 { "Geburtsanzeige abgesendet" }
            p { "Die Anzeige " strong { (id) } " wurde zur Übermittlung an das Standesamt übergeben. Sie können dieses Fenster schließen." }
        },
    )
}
