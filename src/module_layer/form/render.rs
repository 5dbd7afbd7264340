//! The HTML of a form: sections of inputs (array fields row by row), every problem next to its
//! input and listed above the form, the signature block where the form needs one.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use maud::{html, Markup};
use meldewerk_xml::codelisten::Codeliste;

use super::values::{date_time_inputs, Input};
use crate::forms::page;
use crate::module_layer::fields::{array_of, FieldKind, MAX_ROWS};
use crate::module_layer::{Form, SignatureRule};
use crate::routes::login::logout_button;

/// Everything a form page shows.
pub(crate) struct FormView<'a> {
    pub(crate) form: &'static Form,
    pub(crate) inputs: Vec<Input>,
    pub(crate) memento: &'a str,
    pub(crate) csrf: &'a str,
    pub(crate) id: &'a str,
    pub(crate) sealed: bool,
    /// Input values by input name.
    pub(crate) values: HashMap<String, String>,
    /// Problems by input name.
    pub(crate) field_errors: HashMap<String, String>,
    /// Problems that belong to no single input.
    pub(crate) errors: Vec<String>,
    pub(crate) signatory: String,
    pub(crate) signed: bool,
}

/// An HTML page that is never cached (it shows personal data).
pub(crate) fn html_response(status: StatusCode, title: &str, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("Cache-Control", "no-store"))
        .body(page(title, body).into_string())
}

/// A page with a heading and one paragraph.
pub(crate) fn message_page(status: StatusCode, title: &str, text: &str) -> HttpResponse {
    html_response(status, title, html! { h1 { (title) } p { (text) } })
}

fn input(item: &Input, view: &FormView) -> Markup {
    let field = item.field;
    let name = item.name.as_str();
    let value = view.values.get(name).map(String::as_str).unwrap_or("");
    let error = view.field_errors.get(name);
    let invalid = if error.is_some() { "true" } else { "false" };
    let label = match item.row {
        Some(row) => format!("{} ({})", field.label, row + 1),
        None => field.label.to_owned(),
    };
    html! {
        @match field.kind {
            FieldKind::Bool | FieldKind::OnlyTrue => {
                div.check {
                    input type="checkbox" id=(name) name=(name) value="true"
                        checked[value == "true"] aria-invalid=(invalid);
                    label for=(name) { (label) }
                }
            }
            FieldKind::Choice(options) | FieldKind::Code(&Codeliste { eintraege: options, .. }) => {
                label for=(name) { (label) }
                select id=(name) name=(name) aria-invalid=(invalid) {
                    option value="" { "– bitte wählen –" }
                    @for (option, text) in options {
                        option value=(option) selected[*option == value] { (text) }
                    }
                }
            }
            FieldKind::DateTime => {
                // One label for both: the date input is the labelled one, the time input names
                // itself for screen readers. The offset comes from the service's time zone.
                @let (date, time) = date_time_inputs(name);
                label for=(date) { (label) }
                div.datetime {
                    input type="date" id=(date) name=(date)
                        value=(view.values.get(&date).map(String::as_str).unwrap_or(""))
                        aria-invalid=(invalid);
                    input type="time" id=(time) name=(time)
                        value=(view.values.get(&time).map(String::as_str).unwrap_or(""))
                        aria-label=(format!("{label}: Uhrzeit")) aria-invalid=(invalid);
                }
            }
            _ => {
                label for=(name) { (label) }
                @let kind = match field.kind {
                    FieldKind::Date => "date",
                    FieldKind::Time => "time",
                    FieldKind::Integer { .. } => "number",
                    _ => "text",
                };
                input type=(kind) id=(name) name=(name) value=(value) aria-invalid=(invalid);
            }
        }
        @if let Some(error) = error { div.error { (error) } }
    }
}

/// The arrays among `items` that can take another row, each once, in order, with the section
/// they stand in.
fn arrays_in(items: &[&Input]) -> Vec<(&'static str, &'static str)> {
    let mut arrays: Vec<(&'static str, &'static str)> = items
        .iter()
        .filter_map(|i| Some((array_of(i.field.path)?, i.field.section)))
        .collect();
    arrays.dedup();
    arrays.retain(|(array, _)| {
        let rows = items
            .iter()
            .filter(|i| array_of(i.field.path) == Some(array))
            .filter_map(|i| i.row)
            .max()
            .map_or(0, |last| last + 1);
        rows < MAX_ROWS
    });
    arrays
}

/// The form page.
pub(crate) fn render(view: &FormView) -> Markup {
    let form = view.form;
    let mut sections: Vec<&str> = Vec::new();
    for item in &view.inputs {
        if !sections.contains(&item.field.section) {
            sections.push(item.field.section);
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
                    @for item in &view.inputs {
                        @if let Some(error) = view.field_errors.get(&item.name) { li { (error) } }
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
                    @let items: Vec<&Input> = view.inputs.iter().filter(|i| i.field.section == *section).collect();
                    @for item in &items { (input(item, view)) }
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
            button type="submit" { (form.title) " absenden" }
            // After the main button: pressing Enter submits with the first submit button of
            // the form, which must be the one that sends.
            @let arrays = arrays_in(&view.inputs.iter().collect::<Vec<_>>());
            @if !arrays.is_empty() {
                p.note {
                    "Mehr Einträge nötig? "
                    @for (array, label) in arrays {
                        button.more type="submit" name="_zeile" value=(array) { "Weitere Zeile: " (label) }
                        " "
                    }
                }
            }
        }
        (logout_button(view.csrf))
    }
}
