//! The form mechanics of every module: a form pre-filled from the memento, completed by the end
//! user, validated on the server (re-rendered with every value kept and every problem next to its
//! field), built once on trial, and dispatched as a report with its outbox job in one
//! transaction. Works without JavaScript.

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use maud::{html, Markup};
use meldewerk_actors::Engine;
use meldewerk_storage::{EndUserSignature, Report, ReportKey, Store, StoreError};
use serde_json::Value;

use super::fields::{form_value, from_form, Field, FieldKind};
use super::routes::FormContext;
use super::{Form, SignatureRule};
use crate::auth::SessionUser;
use crate::crypto::{MasterKey, UserKey};
use crate::forms::page;
use crate::tokens::open_memento;

/// Query of the form page: the memento.
#[derive(serde::Deserialize)]
pub struct FormQuery {
    m: Option<String>,
}

/// Everything the form shows besides the field values.
struct FormView<'a> {
    form: &'static Form,
    fields: Vec<&'static Field>,
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
    let form = view.form;
    let mut sections: Vec<&str> = Vec::new();
    for field in &view.fields {
        if !sections.contains(&field.section) {
            sections.push(field.section);
        }
    }
    html! {
        h1 { (form.title) }
        p { "Meldung " strong { (view.id) } ". Bitte prüfen und ergänzen Sie die Angaben und senden Sie die Meldung ab." }
        @if !view.errors.is_empty() || !view.field_errors.is_empty() {
            div.errors role="alert" {
                p { strong { "Die Meldung wurde noch nicht abgesendet:" } }
                ul {
                    @for error in &view.errors { li { (error) } }
                    @for field in &view.fields {
                        @if let Some(error) = view.field_errors.get(field.path) { li { (error) } }
                    }
                }
            }
        }
        form method="post" action=(form.path) novalidate {
            input type="hidden" name="m" value=(view.memento);
            input type="hidden" name="csrf" value=(view.csrf);
            @for section in &sections {
                fieldset {
                    legend { (section) }
                    @for field in view.fields.iter().filter(|f| f.section == *section) { (input(field, view)) }
                }
            }
            @if form.signature == SignatureRule::SealOrEndUser {
                fieldset {
                    legend { "Signatur" }
                    @if view.sealed {
                        p.note { "Für Ihre Einrichtung ist ein Siegel hinterlegt. Die Meldung wird beim Absenden automatisch gesiegelt." }
                    } @else {
                        p.note { "Für Ihre Einrichtung ist kein Siegel hinterlegt. Bitte unterschreiben Sie die Meldung vor dem Absenden." }
                        label for="signatur.name" { "Name der unterzeichnenden Person" }
                        input type="text" id="signatur.name" name="signatur.name" value=(view.signatory);
                        div.check {
                            input type="checkbox" id="signatur.bestaetigt" name="signatur.bestaetigt" value="true" checked[view.signed];
                            label for="signatur.bestaetigt" { "Ich unterschreibe diese Meldung (" (form.title) ") und bestätige die Richtigkeit der Angaben." }
                        }
                    }
                }
            }
            button type="submit" { (form.submit) }
        }
    }
}

/// The memento's content, opened with the session user's key; `None` unless it is a memento of
/// this form (a memento of another module or report type opens only its own form).
fn open(
    master: &MasterKey,
    session: &SessionUser,
    context: &FormContext,
    memento: &str,
) -> Option<Value> {
    let key = UserKey::unwrap(master, &session.user.memento_key).ok()?;
    let data = open_memento(&key, memento).filter(|data| data["id"].is_string())?;
    let form = context.module.form_for(&data)?;
    std::ptr::eq(form, context.form).then_some(data)
}

/// `GET {form}?m=…`: the form, pre-filled.
#[tracing::instrument(name = "form", skip_all, fields(form = context.form.path))]
pub(crate) async fn show(
    session: SessionUser,
    query: web::Query<FormQuery>,
    master: web::Data<MasterKey>,
    context: web::Data<FormContext>,
) -> HttpResponse {
    let memento = query.m.clone().unwrap_or_default();
    let Some(data) = open(&master, &session, &context, &memento) else {
        return invalid_link();
    };
    let fields: Vec<&'static Field> = context.form.fields(context.module.info().fields).collect();
    let view = FormView {
        form: context.form,
        values: fields
            .iter()
            .map(|f| (f.path, form_value(f, &data)))
            .collect(),
        fields,
        memento: &memento,
        csrf: &session.session.csrf,
        id: data["id"].as_str().unwrap_or_default(),
        sealed: session.user.seal.is_some(),
        field_errors: HashMap::new(),
        errors: Vec::new(),
        signatory: String::new(),
        signed: false,
    };
    html_response(StatusCode::OK, context.form.title, render(&view))
}

fn posted<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `POST {form}`: validate everything, then store the report (`PENDING`) and its delivery job in
/// one transaction and hand over to the engine. Invalid input re-renders the form with every
/// problem listed and every value kept.
#[tracing::instrument(name = "form_submit", skip_all, fields(form = context.form.path))]
pub(crate) async fn submit(
    session: SessionUser,
    form: web::Form<Vec<(String, String)>>,
    master: web::Data<MasterKey>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
    context: web::Data<FormContext>,
) -> HttpResponse {
    let posted_form = form.into_inner();
    if posted(&posted_form, "csrf") != Some(session.session.csrf.as_str()) {
        return message_page(
            StatusCode::FORBIDDEN,
            "Sitzung abgelaufen",
            "Das Formular gehört nicht zu Ihrer aktuellen Sitzung. Bitte öffnen Sie den Link erneut.",
        );
    }
    let memento = posted(&posted_form, "m").unwrap_or_default().to_string();
    let Some(data) = open(&master, &session, &context, &memento) else {
        return invalid_link();
    };
    let form = context.form;
    let info = context.module.info();
    let id = data["id"].as_str().unwrap_or_default().to_string();
    let client_reference = info
        .echoes_client_reference
        .then(|| data["clientReference"].as_str().map(str::to_string))
        .flatten();
    let fields: Vec<&'static Field> = form.fields(info.fields).collect();

    let (object, problems) = from_form(&fields, &posted_form);
    let mut field_errors: HashMap<&'static str, String> = problems.into_iter().collect();
    let mut errors = Vec::new();
    let content = Value::Object(object);
    if field_errors.is_empty() {
        for problem in context.module.check_dispatch(form, &content) {
            match problem
                .path
                .and_then(|path| fields.iter().find(|f| f.path == path))
            {
                Some(field) => {
                    field_errors.entry(field.path).or_insert(problem.message);
                }
                None => errors.push(problem.message),
            }
        }
    }
    let sealed = session.user.seal.is_some();
    let signatory = posted(&posted_form, "signatur.name")
        .unwrap_or_default()
        .trim()
        .to_string();
    let signed = posted(&posted_form, "signatur.bestaetigt") == Some("true");
    let needs_signature = form.signature == SignatureRule::SealOrEndUser && !sealed;
    if needs_signature && (signatory.is_empty() || !signed) {
        errors.push(
            "Signatur: Bitte geben Sie Ihren Namen an und bestätigen Sie die Unterschrift. \
             Ohne Siegel oder Signatur kann die Meldung nicht versendet werden."
                .into(),
        );
    }
    if !errors.is_empty() || !field_errors.is_empty() {
        let view = FormView {
            form,
            values: fields
                .iter()
                .map(|f| {
                    (
                        f.path,
                        posted(&posted_form, f.path).unwrap_or_default().to_string(),
                    )
                })
                .collect(),
            fields,
            memento: &memento,
            csrf: &session.session.csrf,
            id: &id,
            sealed,
            field_errors,
            errors,
            signatory,
            signed,
        };
        return html_response(StatusCode::UNPROCESSABLE_ENTITY, form.title, render(&view));
    }

    let now = Utc::now();
    let mut report = Report::new_pending(
        ReportKey {
            owner: session.user.name.clone(),
            module: info.segment.into(),
            id: id.clone(),
        },
        content,
        client_reference,
        uuid::Uuid::new_v4().to_string(),
        now,
    );
    report.end_user_signature = needs_signature.then_some(EndUserSignature {
        name: signatory,
        signed_at: now,
    });
    match store.submit_report(report).await {
        Ok(_) => {
            engine.wake();
            tracing::info!("report dispatched");
            let sent = format!("{}/sent", form.path);
            let location = crate::routes::magic_link::append_query(&sent, "id", &id);
            HttpResponse::SeeOther().insert_header(("Location", location)).finish()
        }
        Err(StoreError::Conflict(_)) => message_page(
            StatusCode::CONFLICT,
            "Bereits abgesendet",
            "Diese Meldung wurde bereits abgesendet. Eine Meldung kann nur einmal versendet werden.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "storing the report failed");
            message_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Nicht abgesendet",
                "Die Meldung konnte wegen einer Störung nicht gespeichert werden und wurde nicht abgesendet. \
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

/// `GET {form}/sent?id=…`: confirmation after dispatch.
pub(crate) async fn sent(
    _session: SessionUser,
    query: web::Query<SentQuery>,
    context: web::Data<FormContext>,
) -> HttpResponse {
    let id = query.id.clone().unwrap_or_default();
    let form = context.form;
    let (before, after) = form
        .sent_text
        .split_once("{id}")
        .unwrap_or((form.sent_text, ""));
    html_response(
        StatusCode::OK,
        "Abgesendet",
        html! {
            h1 { (form.sent_title) }
            p { (before) strong { (id) } (after) }
        },
    )
}
