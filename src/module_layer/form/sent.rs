//! After sending: the page a link of a report already sent opens (instead of a form that could
//! only fail on submit), and the confirmation page, which shows what was sent (a read-only
//! summary rendered from the module's field table, printable), when, and how far it got.
//! Both read the report from the store by its owner, the session user: another user's report
//! is never shown.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, Utc};
use maud::{html, Markup};
use meldewerk_storage::{Report, ReportKey, ReportStatus, Store};
use meldewerk_xml::local_time::LocalZone;
use serde_json::Value;

use super::render::{html_response, message_page};
use super::values::{inputs, rows_in_data, Input};
use crate::auth::SessionUser;
use crate::module_layer::context::FormContext;
use crate::module_layer::fields::{lookup, Field, FieldKind};
use crate::module_layer::Form;
use crate::routes::login::logout_button;
use crate::routes::magic_link::append_query;
use crate::web::WebSettings;

/// The session user's report `id` of the form's module; `Err` with the page to answer when the
/// store cannot be read.
async fn own_report(
    store: &dyn Store,
    session: &SessionUser,
    context: &FormContext,
    id: &str,
) -> Result<Option<Report>, HttpResponse> {
    let key = ReportKey {
        owner: session.user.name.clone(),
        module: context.module.info().module.into(),
        id: id.to_owned(),
    };
    store.report(&key).await.map_err(|e| {
        tracing::error!(error = %e, "reading the report failed");
        message_page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Vorübergehend nicht verfügbar",
            "Die Meldung kann wegen einer Störung gerade nicht gelesen werden. Bitte versuchen \
             Sie es in einigen Minuten erneut.",
        )
    })
}

/// The form the report was sent with: a module with several report types (deathnotice) has
/// one form each, and the submission says which. A report whose payload is gone is shown
/// under the form asked for.
fn form_of(context: &FormContext, report: &Report) -> &'static Form {
    report
        .submission
        .as_ref()
        .and_then(|submission| context.module.form_for(submission))
        .unwrap_or(context.form)
}

/// Where the confirmation page of report `id` sent with `form` is.
fn confirmation_link(form: &Form, id: &str) -> String {
    append_query(&form.sent_path(), "id", id)
}

/// The page a link of a report already sent opens (200: the link works, and the page is what
/// there is to see about it), or `None` when the session user has sent no report `id` in this
/// module yet. Called before the form is rendered.
pub(crate) async fn already_sent(
    store: &dyn Store,
    session: &SessionUser,
    context: &FormContext,
    zone: LocalZone,
    id: &str,
) -> Option<HttpResponse> {
    let report = match own_report(store, session, context, id).await {
        Ok(report) => report?,
        Err(unavailable) => return Some(unavailable),
    };
    let form = form_of(context, &report);
    let body = html! {
        h1 { (form.title) ": bereits abgesendet" }
        p {
            "Die Meldung " strong { (id) } " wurde am " (zone.show(report.submitted_at))
            " abgesendet. Eine Meldung kann nur einmal gesendet werden; "
            "dieser Link öffnet deshalb kein Formular mehr."
        }
        p { "Stand: " (state(&report, zone)) }
        p { a href=(confirmation_link(form, id)) { "Gesendete Angaben ansehen und drucken" } }
        (logout_button(&session.session.csrf))
    };
    Some(html_response(StatusCode::OK, "Bereits abgesendet", body))
}

/// Query of the confirmation page.
#[derive(serde::Deserialize)]
pub(crate) struct SentQuery {
    id: Option<String>,
}

/// `GET {form}/sent?id=…`: what was sent, when, and its delivery state as of now.
#[tracing::instrument(name = "form_sent", skip_all, fields(form = context.form.path))]
pub(crate) async fn sent(
    session: SessionUser,
    query: web::Query<SentQuery>,
    store: web::Data<Arc<dyn Store>>,
    settings: web::Data<WebSettings>,
    context: web::Data<FormContext>,
) -> HttpResponse {
    let id = query.id.as_deref().unwrap_or_default();
    let report =
        match own_report(store.as_ref().as_ref(), &session, &context, id).await {
            Ok(Some(report)) => report,
            Ok(None) => return message_page(
                StatusCode::NOT_FOUND,
                "Meldung nicht gefunden",
                "Unter Ihrem Zugang gibt es keine abgesendete Meldung mit dieser Kennung. Bitte \
                 prüfen Sie den Link.",
            ),
            Err(unavailable) => return unavailable,
        };
    let zone = settings.time_zone;
    let form = form_of(&context, &report);
    let table = context.module.info().fields;
    let body = html! {
        h1 { (form.title) " abgesendet" }
        p.screen-only {
            "Die Meldung wurde zur Übermittlung übergeben. Um die Angaben aufzubewahren, drucken "
            "Sie diese Seite mit der Druckfunktion Ihres Browsers."
        }
        dl.facts {
            div { dt { "Meldung" } dd { (report.key.id) } }
            @if let Some(words) = form.report_type {
                div { dt { "Meldungsart" } dd { (words) } }
            }
            div { dt { "Abgesendet" } dd { (zone.show_with_utc(report.submitted_at)) } }
            @if let Some(signature) = &report.end_user_signature {
                div { dt { "Unterschrieben von" } dd { (signature.name) } }
            }
            div { dt { "Stand" } dd { (state(&report, zone)) } }
        }
        @match (&report.submission, report.expired_at) {
            (Some(submission), None) => {
                h2 { "Gesendete Angaben" }
                (summary(form, table, submission, zone))
            }
            (_, expired) => {
                p.note {
                    "Die gesendeten Angaben wurden nach Ablauf der Aufbewahrungsfrist gelöscht"
                    @if let Some(at) = expired { " (" (zone.show(at)) ")" }
                    " und können nicht mehr angezeigt werden."
                }
            }
        }
        (logout_button(&session.session.csrf))
    };
    html_response(StatusCode::OK, &format!("{} abgesendet", form.title), body)
}

/// A report's delivery state in German words: in delivery, delivered (with when the office
/// confirmed it), or refused (with the reason the integrator reads in the result).
fn state(report: &Report, zone: LocalZone) -> Markup {
    let finished = report.finished_at.map(|at| zone.show(at));
    html! {
        @match report.status {
            ReportStatus::Pending => {
                strong.state { "in Zustellung" }
                " – die Behörde hat den Empfang noch nicht bestätigt."
            }
            ReportStatus::Success => {
                strong.state { "zugestellt" }
                @if let Some(at) = finished { " – Empfang bestätigt am " (at) "." }
            }
            ReportStatus::Failure => {
                strong.state { "abgelehnt" }
                @if let Some(at) = finished { " am " (at) }
                @if let Some(reason) = &report.failure_reason { ": " (reason) }
            }
        }
    }
}

/// The read-only summary of `submission`: the form's sections with their headings, in each
/// only the fields with a value, arrays row by row, labelled as in the form. Rendered from the
/// module's field table, so every module has it.
fn summary(form: &Form, table: &'static [Field], submission: &Value, zone: LocalZone) -> Markup {
    let fields: Vec<&'static Field> = form.fields(table).collect();
    let filled: Vec<(Input, String)> = inputs(&fields, &rows_in_data(&fields, submission))
        .into_iter()
        .filter_map(|input| {
            let value = shown(input.field, lookup(submission, &input.name)?, zone)?;
            Some((input, value))
        })
        .collect();
    let mut sections: Vec<&str> = Vec::new();
    for (input, _) in &filled {
        if !sections.contains(&input.field.section) {
            sections.push(input.field.section);
        }
    }
    html! {
        @if filled.is_empty() {
            p { "Die Meldung enthält keine Angaben." }
        }
        @for section in sections {
            section.summary {
                h3 { (section) }
                dl {
                    @for (input, value) in filled.iter().filter(|(i, _)| i.field.section == section) {
                        div {
                            dt {
                                (input.field.label)
                                @if let Some(row) = input.row { " (" (row + 1) ")" }
                            }
                            dd { (value) }
                        }
                    }
                }
            }
        }
    }
}

/// A stored value as a clerk reads it, `None` for no value: choices by their label, codes by
/// their list's label beside the code, yes/no in words, dates as German dates, date-times in local time; anything else as it was entered.
fn shown(field: &Field, value: &Value, zone: LocalZone) -> Option<String> {
    let text = match value {
        Value::Bool(yes) => return Some(if *yes { "ja" } else { "nein" }.to_owned()),
        Value::Number(n) => return Some(n.to_string()),
        Value::String(s) if !s.trim().is_empty() => s.as_str(),
        _ => return None,
    };
    let shown = match field.kind {
        FieldKind::Choice(options) => options
            .iter()
            .find(|(option, _)| *option == text)
            .map_or(text, |(_, label)| label)
            .to_owned(),
        FieldKind::Code(list) => match list.bezeichnung(text) {
            Some(label) => format!("{label} ({text})"),
            None => text.to_owned(),
        },
        FieldKind::Date => NaiveDate::parse_from_str(text, "%Y-%m-%d").map_or_else(
            |_| text.to_owned(),
            |day| day.format("%d.%m.%Y").to_string(),
        ),
        FieldKind::DateTime => DateTime::parse_from_rfc3339(text)
            .map_or_else(|_| text.to_owned(), |at| zone.show(at.with_timezone(&Utc))),
        // Every other kind is shown as entered.
        _ => text.to_owned(),
    };
    Some(shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module_layer::fields::field;
    use crate::module_layer::SignatureRule;
    use serde_json::json;

    static TABLE: &[Field] = &[
        field("a.tag", "Tag", FieldKind::Date, "Angaben"),
        field(
            "a.art",
            "Art",
            FieldKind::Choice(&[("E", "Erste"), ("Z", "Zweite")]),
            "Angaben",
        ),
        field("a.leer", "Leer", FieldKind::Text, "Angaben"),
        field("k[].kanal", "Kanal", FieldKind::Text, "Kontakt"),
        field("z", "Zeitpunkt", FieldKind::DateTime, "Ohne Werte"),
        field("j", "Bestätigt", FieldKind::OnlyTrue, "Zuletzt"),
    ];

    static FORM: Form = Form::new("/forms/x", "X", SignatureRule::Portal);

    #[test]
    fn the_summary_shows_filled_fields_by_section_and_row() {
        let submission = json!({
            "a": {"tag": "2026-11-20", "art": "Z", "leer": " "},
            "k": [{"kanal": "E-Mail"}, {"kanal": "Telefon"}],
            "j": true
        });
        let html = summary(&FORM, TABLE, &submission, LocalZone::BERLIN).into_string();
        assert!(html.contains("<h3>Angaben</h3>"), "{html}");
        assert!(html.contains("<dt>Tag</dt><dd>20.11.2026</dd>"), "{html}");
        assert!(html.contains("<dt>Art</dt><dd>Zweite</dd>"), "{html}");
        assert!(
            html.contains("<dt>Kanal (2)</dt><dd>Telefon</dd>"),
            "{html}"
        );
        assert!(html.contains("<dt>Bestätigt</dt><dd>ja</dd>"), "{html}");
        assert!(
            !html.contains("Leer") && !html.contains("Ohne Werte"),
            "{html}"
        );
    }

    #[test]
    fn date_times_are_shown_in_local_time() {
        let field = &TABLE[4];
        let value = json!("2026-07-01T08:00:00Z");
        assert_eq!(
            shown(field, &value, LocalZone::BERLIN).unwrap(),
            "01.07.2026, 10:00:00 Uhr (UTC+02:00)"
        );
    }
}
