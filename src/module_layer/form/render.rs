//! The HTML of a form: sections of inputs (array fields row by row), those holding something
//! mandatory first and the others folded; mandatory inputs marked; every problem at its input
//! or its group, counted at its section and listed with a link above the form; the signature
//! block where the form needs one.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use maud::{html, Markup, PreEscaped};
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
    /// Whether the form made the id (then it rides along in the hidden input `_id`).
    pub(crate) generated: bool,
    pub(crate) sealed: bool,
    /// Input values by input name.
    pub(crate) values: HashMap<String, String>,
    /// Every problem of the submit shown.
    pub(crate) problems: Problems,
    /// Paths of the fields and groups that are mandatory however the form is filled in.
    pub(crate) mandatory: &'a [String],
    pub(crate) signatory: String,
    pub(crate) signed: bool,
    /// A note above the form that is no problem (a report still being sent).
    pub(crate) notice: Option<&'static str>,
}

impl FormView<'_> {
    /// Whether `item` is marked mandatory: a field (not a row of a list) that is mandatory
    /// however the form is filled in. A checkbox is never: unticked is an answer too.
    fn required(&self, item: &Input) -> bool {
        item.row.is_none()
            && !matches!(item.field.kind, FieldKind::Bool | FieldKind::OnlyTrue)
            && self.mandatory.iter().any(|path| path == item.field.path)
    }
}

/// Every problem of a submit, by the place the form shows it at.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    /// At an input, by input name.
    pub(crate) at_input: HashMap<String, String>,
    /// At a group (a list that needs a row, fields that belong together), by the section whose
    /// fieldset holds it.
    pub(crate) at_section: Vec<(&'static str, String)>,
    /// At the signature fields.
    pub(crate) signature: Option<String>,
    /// Of the whole report, listed above the form only.
    pub(crate) general: Vec<String>,
}

impl Problems {
    /// Whether there is none.
    pub(crate) fn is_empty(&self) -> bool {
        self.at_input.is_empty()
            && self.at_section.is_empty()
            && self.signature.is_none()
            && self.general.is_empty()
    }

    /// Places a problem of the checks before dispatch: at the input of its field, else at the
    /// section its group stands in, else above the form. A field's first problem stands (a
    /// value refused while reading the post is also missing for the checks).
    pub(crate) fn place(&mut self, inputs: &[Input], path: Option<&str>, message: String) {
        let Some(path) = path else {
            self.general.push(message);
            return;
        };
        // A value refused while reading the post was left out, so the checks may also miss
        // it: its field shows the first problem only (a list's field in any of its rows).
        let shown = inputs.iter().any(|i| {
            (i.field.path == path || i.field.path.replace("[]", "") == path)
                && self.at_input.contains_key(&i.name)
        });
        if shown {
            return;
        }
        // A problem of a field of a list names the field, not the row: it stands at the group.
        let input = inputs
            .iter()
            .find(|i| i.field.path == path && array_of(path).is_none());
        if let Some(input) = input {
            self.at_input.entry(input.name.clone()).or_insert(message);
        } else if let Some(section) = section_of(inputs, path) {
            self.at_section.push((section, message));
        } else {
            self.general.push(message);
        }
    }
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

/// One input with its label, its marker when it is mandatory, its hint and its problem; the
/// hint and the problem are tied to the input for screen readers (`aria-describedby`).
fn input(item: &Input, view: &FormView, required: bool) -> Markup {
    let field = item.field;
    let name = item.name.as_str();
    let value = view.values.get(name).map(String::as_str).unwrap_or("");
    let error = view.problems.at_input.get(name);
    let invalid = if error.is_some() { "true" } else { "false" };
    let label = match item.row {
        Some(row) => format!("{} ({})", field.label, row + 1),
        None => field.label.to_owned(),
    };
    let hint_id = format!("{name}-hinweis");
    let error_id = format!("{name}-fehler");
    let described: Vec<&str> = [
        field.hint.map(|_| hint_id.as_str()),
        error.map(|_| error_id.as_str()),
    ]
    .into_iter()
    .flatten()
    .collect();
    let described = (!described.is_empty()).then(|| described.join(" "));
    let aria_required = required.then_some("true");
    html! {
        @match field.kind {
            FieldKind::Bool | FieldKind::OnlyTrue => {
                div.check {
                    input type="checkbox" id=(name) name=(name) value="true"
                        checked[value == "true"] aria-invalid=(invalid)
                        aria-describedby=[described.as_deref()];
                    label for=(name) { (label) }
                }
            }
            FieldKind::Choice(options) | FieldKind::Code(&Codeliste { eintraege: options, .. }) => {
                label for=(name) { (label) @if required { (MARKER) } }
                select id=(name) name=(name) aria-invalid=(invalid) required[required]
                    aria-required=[aria_required] aria-describedby=[described.as_deref()] {
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
                label for=(date) { (label) @if required { (MARKER) } }
                div.datetime {
                    input type="date" id=(date) name=(date)
                        value=(view.values.get(&date).map(String::as_str).unwrap_or(""))
                        aria-invalid=(invalid) required[required] aria-required=[aria_required]
                        aria-describedby=[described.as_deref()];
                    input type="time" id=(time) name=(time)
                        value=(view.values.get(&time).map(String::as_str).unwrap_or(""))
                        aria-label=(format!("{label}: Uhrzeit")) aria-invalid=(invalid)
                        required[required] aria-required=[aria_required]
                        aria-describedby=[described.as_deref()];
                }
            }
            _ => {
                label for=(name) { (label) @if required { (MARKER) } }
                @let kind = match field.kind {
                    FieldKind::Date => "date",
                    FieldKind::Time => "time",
                    FieldKind::Integer { .. } => "number",
                    _ => "text",
                };
                input type=(kind) id=(name) name=(name) value=(value) aria-invalid=(invalid)
                    required[required] aria-required=[aria_required]
                    aria-describedby=[described.as_deref()];
            }
        }
        @if let Some(hint) = field.hint { div.hint id=(hint_id) { (hint) } }
        @if let Some(error) = error { div.error id=(error_id) { (error) } }
    }
}

/// The visible mark of a mandatory input (explained above the form); screen readers hear
/// `required` instead.
const MARKER: PreEscaped<&str> =
    PreEscaped(r#" <span class="required" aria-hidden="true">*</span>"#);

/// The arrays among `items` that can take another row, each once, in order, with the name of
/// their rows (`Kontakt` for `Kontakt: Kanal`).
fn arrays_in(items: &[&Input]) -> Vec<(&'static str, &'static str)> {
    let mut arrays: Vec<(&'static str, &'static str)> = items
        .iter()
        .filter_map(|i| {
            let label = i.field.label;
            let row_name = label.rsplit_once(": ").map_or(i.field.section, |(r, _)| r);
            Some((array_of(i.field.path)?, row_name))
        })
        .collect();
    arrays.dedup_by(|a, b| a.0 == b.0);
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

/// One section of the form as shown: its inputs, whether it holds something mandatory, and its
/// problems.
struct Section<'a> {
    name: &'static str,
    /// The fieldset's id, by table order (the order shown puts mandatory sections first).
    anchor: String,
    items: Vec<&'a Input>,
    /// Holds a mandatory field or a group that needs a first row: shown first and open.
    mandatory: bool,
    /// Holds a list that needs a first row.
    needs_row: bool,
    /// Problems of the section's groups, shown at its fieldset.
    errors: Vec<&'a str>,
    /// Every problem in the section: its groups' and its inputs'.
    count: usize,
    /// Something is entered in it.
    has_value: bool,
}

/// The sections of the form in the order shown: those holding something mandatory first, each
/// part in table order.
fn sections<'a>(view: &'a FormView) -> Vec<Section<'a>> {
    let mut sections: Vec<Section> = Vec::new();
    for item in &view.inputs {
        let at = match sections.iter().position(|s| s.name == item.field.section) {
            Some(at) => at,
            None => {
                sections.push(Section {
                    name: item.field.section,
                    anchor: format!("abschnitt-{}", sections.len() + 1),
                    items: Vec::new(),
                    mandatory: false,
                    needs_row: false,
                    errors: Vec::new(),
                    count: 0,
                    has_value: false,
                });
                sections.len() - 1
            }
        };
        let section = &mut sections[at];
        section.items.push(item);
        section.mandatory |= view.required(item);
        section.count += usize::from(view.problems.at_input.contains_key(&item.name));
        section.has_value |= view.values.get(&item.name).is_some_and(|v| !v.is_empty());
    }
    for path in view.mandatory {
        if let Some(name) = section_of(&view.inputs, path) {
            let section = sections.iter_mut().find(|s| s.name == name);
            if let Some(section) = section {
                section.mandatory = true;
                let list = format!("{path}[]");
                section.needs_row |= section
                    .items
                    .iter()
                    .any(|i| i.field.path.starts_with(&list));
            }
        }
    }
    for (name, problem) in &view.problems.at_section {
        if let Some(section) = sections.iter_mut().find(|s| s.name == *name) {
            section.errors.push(problem);
            section.count += 1;
        }
    }
    sections.sort_by_key(|s| !s.mandatory);
    sections
}

/// The section a field, a group or a list (`kontaktdaten`, `anzeigender`) stands in: that of its
/// (first) field. A field of a list's rows may be named with or without `[]`
/// (`kontaktdaten.kanal`).
pub(crate) fn section_of(inputs: &[Input], path: &str) -> Option<&'static str> {
    let below = |table_path: &str| {
        table_path
            .strip_prefix(path)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with("[]"))
    };
    inputs
        .iter()
        .find(|i| below(i.field.path) || below(&i.field.path.replace("[]", "")))
        .map(|i| i.field.section)
}

/// The id a link to `item` leads to: its input, or the date input of a date-time.
fn anchor(item: &Input) -> String {
    match item.field.kind {
        FieldKind::DateTime => date_time_inputs(&item.name).0,
        _ => item.name.clone(),
    }
}

/// "Mutter – 2 Angaben fehlen oder sind ungültig".
fn counted(count: usize) -> Markup {
    html! {
        @if count == 1 {
            span.count { " – 1 Angabe fehlt oder ist ungültig" }
        } @else if count > 1 {
            span.count { " – " (count) " Angaben fehlen oder sind ungültig" }
        }
    }
}

/// What a section holds: its group problems, its inputs, and a "Weitere Zeile" button per list,
/// inside the group it adds a row to.
fn section_body(section: &Section, view: &FormView) -> Markup {
    html! {
        @for error in &section.errors { div.error.group { (error) } }
        @if section.needs_row {
            p.hint { "Mindestens eine Zeile ist auszufüllen." }
        }
        div.fields {
            @for item in &section.items {
                div.field { (input(item, view, view.required(item))) }
            }
        }
        @for (array, rows) in arrays_in(&section.items) {
            button.more type="submit" name="_zeile" value=(array) { "Weitere Zeile: " (rows) }
        }
    }
}

/// The list above the form of every problem, each linked to the place it stands at.
fn summary(view: &FormView, sections: &[Section]) -> Markup {
    let problems = &view.problems;
    html! {
        div.errors role="alert" {
            p { strong { "Die Meldung wurde noch nicht abgesendet:" } }
            ul {
                @for error in &problems.general { li { (error) } }
                @for section in sections {
                    @for error in &section.errors {
                        li { a href={ "#" (section.anchor) } { (error) } }
                    }
                    @for item in &section.items {
                        @if let Some(error) = problems.at_input.get(&item.name) {
                            li { a href={ "#" (anchor(item)) } { (error) } }
                        }
                    }
                }
                @if let Some(error) = &problems.signature {
                    li { a href="#signatur.name" { (error) } }
                }
            }
        }
    }
}

/// The signature block: the end user's name and declaration, or the note that a seal is
/// applied.
fn signature(view: &FormView) -> Markup {
    let error = view.problems.signature.as_deref();
    let invalid = if error.is_some() { "true" } else { "false" };
    let described = error.map(|_| "signatur-fehler");
    html! {
        fieldset id="signatur" {
            legend { "Signatur" @if error.is_some() { (counted(1)) } }
            @if view.sealed {
                p.note { "Für Ihre Einrichtung ist ein Siegel hinterlegt. Die Meldung wird beim Absenden automatisch gesiegelt." }
            } @else {
                p.note { "Für Ihre Einrichtung ist kein Siegel hinterlegt. Bitte unterschreiben Sie die Meldung vor dem Absenden." }
                @if let Some(error) = error { div.error id="signatur-fehler" { (error) } }
                label for="signatur.name" { "Name der unterzeichnenden Person" (MARKER) }
                input type="text" id="signatur.name" name="signatur.name" value=(view.signatory)
                    required aria-required="true" aria-invalid=(invalid) aria-describedby=[described];
                div.check {
                    input type="checkbox" id="signatur.bestaetigt" name="signatur.bestaetigt" value="true"
                        checked[view.signed] required aria-required="true" aria-invalid=(invalid)
                        aria-describedby=[described];
                    label for="signatur.bestaetigt" { "Ich unterschreibe diese Meldung (" (view.form.title) ") und bestätige die Richtigkeit der Angaben." (MARKER) }
                }
            }
        }
    }
}

/// The form page.
pub(crate) fn render(view: &FormView) -> Markup {
    let form = view.form;
    let sections = sections(view);
    html! {
        h1 { (form.title) }
        p { "Meldung " strong { (view.id) } ". Bitte prüfen und ergänzen Sie die Angaben und senden Sie die Meldung ab." }
        @if let Some(notice) = view.notice { div.notice role="status" { p { (notice) } } }
        @if !view.problems.is_empty() { (summary(view, &sections)) }
        p.hint { (MARKER) " Pflichtangabe" }
        // `novalidate`: the server reports every problem at once, each at its place, in the
        // form's words (docs/decisions.md, "Forms finished in one pass").
        form method="post" action=(form.path) novalidate {
            // Enter in a text input submits with the form's first submit button: this one,
            // which sends (the "Weitere Zeile" buttons come later, inside their groups). Hidden
            // from sight, focus and screen readers, and without text: the visible one says it.
            button.default type="submit" tabindex="-1" aria-hidden="true" {}
            input type="hidden" name="m" value=(view.memento);
            input type="hidden" name="csrf" value=(view.csrf);
            @if view.generated { input type="hidden" name="_id" value=(view.id); }
            @for section in &sections {
                @if section.mandatory {
                    fieldset id=(section.anchor) {
                        legend { (section.name) (counted(section.count)) }
                        (section_body(section, view))
                    }
                } @else {
                    details open[section.has_value || section.count > 0] {
                        summary { (section.name) (counted(section.count)) }
                        fieldset id=(section.anchor) {
                            legend.visually-hidden { (section.name) }
                            (section_body(section, view))
                        }
                    }
                }
            }
            @if form.signature == SignatureRule::SealOrEndUser { (signature(view)) }
            button.send type="submit" { (form.title) " absenden" }
        }
        (logout_button(view.csrf))
    }
}
