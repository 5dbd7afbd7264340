//! The completed court form as a PDF, the first document of its message: the form's title, the
//! job, then every section with each field that has a value, as the clerk entered it.

use chrono::{DateTime, Utc};
use meldewerk_transports::pdf::TextDocument;
use serde_json::Value;

use super::message::SENDING;
use super::{ACCOUNT_FIELD, INFO};
use crate::module_layer::fields::{text_at, value_at};
use crate::module_layer::Form;

/// Renders `form` completed with `content` for the job `job_id`, created at `at`.
pub(super) fn render(form: &Form, job_id: &str, content: &Value, at: DateTime<Utc>) -> Vec<u8> {
    let mut document = TextDocument::new(form.title, "meldewerk", at);
    document.heading(form.title, 20.0, 2);
    if let Some(kind) = form.report_type {
        document.paragraph(kind, 11.0, 2);
    }
    document.gap(8.0);
    document.field("Vorgang", job_id, 2);
    document.field(
        "Erstellt (UTC)",
        &at.format("%d.%m.%Y %H:%M:%S").to_string(),
        1,
    );
    let mut section = "";
    for field in form.fields(INFO.fields) {
        let Some(value) = shown(content, field.path, field.kind) else {
            continue;
        };
        if field.section != section {
            section = field.section;
            document.gap(10.0);
            document.heading(section, 13.0, 1);
        }
        // The court knows the sending mailbox by its SAFE-ID; the account's number is ours.
        if field.path == ACCOUNT_FIELD {
            if let Some(safe_id) = text_at(content, &format!("{SENDING}.safeId")) {
                document.field("Absendendes Postfach (SAFE-ID)", safe_id, 1);
            }
            continue;
        }
        document.field(field.label, &value, 20);
    }
    document.render()
}

/// The value at `path` as the form showed it; `None` when there is none.
fn shown(content: &Value, path: &str, kind: crate::module_layer::FieldKind) -> Option<String> {
    use crate::module_layer::FieldKind;
    let value = value_at(content, path)?;
    match (kind, value) {
        (FieldKind::Choice(choices), Value::String(code)) => Some(
            choices
                .iter()
                .find(|(c, _)| c == code)
                .map_or_else(|| code.clone(), |(_, label)| (*label).to_owned()),
        ),
        // As the clerk reads a time, with the offset it was given in.
        (FieldKind::DateTime, Value::String(_)) => text_at(content, path).map(|t| {
            chrono::DateTime::parse_from_rfc3339(t).map_or_else(
                |_| t.to_owned(),
                |t| t.format("%d.%m.%Y, %H:%M Uhr (UTC%:z)").to_string(),
            )
        }),
        (FieldKind::Date, Value::String(_)) => text_at(content, path).map(|d| {
            chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .map_or_else(|_| d.to_owned(), |d| d.format("%d.%m.%Y").to_string())
        }),
        (_, Value::String(_)) => text_at(content, path).map(str::to_owned),
        (_, Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}
