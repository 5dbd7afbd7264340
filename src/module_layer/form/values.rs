//! The inputs of a form and their values: which inputs a form shows (array fields once per row),
//! their values from the memento or from a post, and the JSON read back from a post.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, NaiveTime, SecondsFormat, Timelike, Utc};
use meldewerk_xml::local_time::LocalZone;
use serde_json::{Map, Value};

use crate::module_layer::fields::{
    array_of, in_row, insert, lookup, Field, FieldKind, MAX_ROWS, MAX_TEXT,
};

/// One input of the form: a field, in a row for fields of an array.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// The field.
    pub(crate) field: &'static Field,
    /// The row, for a field of an array.
    pub(crate) row: Option<usize>,
    /// The input's name and concrete path (`kontaktdaten[0].kanal`).
    pub(crate) name: String,
}

/// Rows shown per array: the entries there are, plus one empty row to add another.
pub(crate) type Rows = HashMap<&'static str, usize>;

/// The inputs of `fields` in table order; the fields of an array appear row by row where the
/// array's first field stands.
pub(crate) fn inputs(fields: &[&'static Field], rows: &Rows) -> Vec<Input> {
    let mut inputs = Vec::new();
    let mut arrays_done: Vec<&str> = Vec::new();
    for field in fields {
        match array_of(field.path) {
            None => inputs.push(Input {
                field,
                row: None,
                name: field.path.to_owned(),
            }),
            Some(array) if arrays_done.contains(&array) => {}
            Some(array) => {
                arrays_done.push(array);
                let members: Vec<&&'static Field> = fields
                    .iter()
                    .filter(|f| array_of(f.path) == Some(array))
                    .collect();
                for row in 0..rows.get(array).copied().unwrap_or(1) {
                    for member in &members {
                        inputs.push(Input {
                            field: member,
                            row: Some(row),
                            name: in_row(member.path, row),
                        });
                    }
                }
            }
        }
    }
    inputs
}

/// Rows per array for pre-filled `data`: its entries plus one empty row.
pub(crate) fn rows_in_data(fields: &[&'static Field], data: &Value) -> Rows {
    let mut rows = Rows::new();
    for field in fields {
        if let Some(array) = array_of(field.path) {
            let entries = lookup(data, array)
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            rows.insert(array_name(field.path), (entries + 1).min(MAX_ROWS));
        }
    }
    rows
}

/// Rows per array in a post: as many as were posted (at least one), plus one where the end user
/// asked for another row (`_zeile=<array>`).
pub(crate) fn rows_in_post(fields: &[&'static Field], form: &[(String, String)]) -> Rows {
    let mut rows = Rows::new();
    for field in fields {
        let Some(array) = array_of(field.path) else {
            continue;
        };
        let prefix = format!("{array}[");
        let posted = form
            .iter()
            .filter_map(|(name, _)| name.strip_prefix(&prefix))
            .filter_map(|rest| rest.split_once(']')?.0.parse::<usize>().ok())
            .map(|row| row + 1)
            .max()
            .unwrap_or(1);
        let more = form.iter().any(|(k, v)| k == "_zeile" && v == array);
        let wanted = posted + usize::from(more);
        rows.insert(array_name(field.path), wanted.min(MAX_ROWS));
    }
    rows
}

/// Whether a post names a row beyond [`MAX_ROWS`] (a forged post: the form never shows one).
/// Refused with a message rather than cut, so that nothing entered is dropped unseen.
pub(crate) fn too_many_rows(fields: &[&'static Field], form: &[(String, String)]) -> bool {
    fields.iter().filter_map(|f| array_of(f.path)).any(|array| {
        let prefix = format!("{array}[");
        form.iter()
            .filter_map(|(name, _)| name.strip_prefix(&prefix))
            .filter_map(|rest| rest.split_once(']')?.0.parse::<usize>().ok())
            .any(|row| row >= MAX_ROWS)
    })
}

/// The `'static` array name of a field path (the table outlives every request).
fn array_name(path: &'static str) -> &'static str {
    array_of(path).expect("called for array fields")
}

/// The names of the date input and the time input of a date-time field's input `name`.
pub(crate) fn date_time_inputs(name: &str) -> (String, String) {
    (format!("{name}.datum"), format!("{name}.uhrzeit"))
}

/// The names of the inputs an input renders as: one, or a date and a time for a date-time.
fn input_names(input: &Input) -> Vec<String> {
    match input.field.kind {
        FieldKind::DateTime => {
            let (date, time) = date_time_inputs(&input.name);
            vec![date, time]
        }
        _ => vec![input.name.clone()],
    }
}

/// The input values of a pre-filled form. A date-time shows the date and the time of its
/// instant in `zone`.
pub(crate) fn prefilled(
    inputs: &[Input],
    data: &Value,
    zone: &LocalZone,
) -> HashMap<String, String> {
    let mut values = HashMap::new();
    for input in inputs {
        let value = lookup(data, &input.name);
        if matches!(input.field.kind, FieldKind::DateTime) {
            let at = value
                .and_then(Value::as_str)
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok());
            let (date, time) = date_time_inputs(&input.name);
            if let Some(at) = at {
                let local = zone.local(at.with_timezone(&Utc));
                // Seconds only where there are any: the time input then shows them, and a
                // re-submission keeps the instant.
                let format = if local.second() == 0 {
                    "%H:%M"
                } else {
                    "%H:%M:%S"
                };
                values.insert(date, local.format("%Y-%m-%d").to_string());
                values.insert(time, local.format(format).to_string());
            }
            continue;
        }
        let value = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        };
        values.insert(input.name.clone(), value);
    }
    values
}

/// The input values as posted, for a re-render that keeps everything the end user entered.
pub(crate) fn as_posted(inputs: &[Input], form: &[(String, String)]) -> HashMap<String, String> {
    inputs
        .iter()
        .flat_map(input_names)
        .map(|name| {
            let value = posted(form, &name).unwrap_or_default().to_owned();
            (name, value)
        })
        .collect()
}

/// The posted date and time of a date-time input as an instant with the offset of `zone` on
/// that day; `None` when both are empty. A time the clocks skipped is refused.
fn date_time(
    input: &Input,
    form: &[(String, String)],
    zone: &LocalZone,
) -> Result<Option<Value>, String> {
    let label = input.field.label;
    let (date, time) = date_time_inputs(&input.name);
    let date = posted(form, &date).unwrap_or_default().trim();
    let time = posted(form, &time).unwrap_or_default().trim();
    if date.is_empty() && time.is_empty() {
        return Ok(None);
    }
    if date.is_empty() || time.is_empty() {
        return Err(format!("{label}: bitte Datum und Uhrzeit angeben"));
    }
    let day = NaiveDate::parse_from_str(date, "%Y-%m-%d")
        .ok()
        .filter(|_| meldewerk_xml::formate::ist_tagesdatum(date));
    let clock = NaiveTime::parse_from_str(time, "%H:%M")
        .or_else(|_| NaiveTime::parse_from_str(time, "%H:%M:%S"))
        .ok();
    let (Some(day), Some(clock)) = (day, clock) else {
        return Err(format!(
            "{label}: Datum im Format JJJJ-MM-TT und Uhrzeit im Format HH:MM"
        ));
    };
    let at = zone
        .date_time(day, clock)
        .map_err(|e| format!("{label}: {e}"))?;
    Ok(Some(Value::String(
        at.to_rfc3339_opts(SecondsFormat::Secs, false),
    )))
}

/// The value posted under `name`.
pub(crate) fn posted<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Reads posted values into JSON: empty inputs are left out (and so are rows left empty),
/// checkboxes become `true`, numbers are parsed. Returns the object and the problems found on
/// the way, by input name.
pub(crate) fn read(
    inputs: &[Input],
    form: &[(String, String)],
    zone: &LocalZone,
) -> (Map<String, Value>, Vec<(String, String)>) {
    let mut object = Map::new();
    let mut errors = Vec::new();
    // Rows are numbered as posted; rows left empty leave gaps that are closed afterwards.
    let mut rows: BTreeMap<(&'static str, usize), Map<String, Value>> = BTreeMap::new();
    for input in inputs {
        let field = input.field;
        if matches!(field.kind, FieldKind::DateTime) {
            match date_time(input, form, zone) {
                Ok(Some(value)) => insert_read(&mut object, &mut rows, input, value),
                Ok(None) => {}
                Err(message) => errors.push((input.name.clone(), message)),
            }
            continue;
        }
        let raw = posted(form, &input.name).unwrap_or_default().trim();
        if raw.is_empty() {
            continue;
        }
        let value = match field.kind {
            FieldKind::Bool | FieldKind::OnlyTrue => Value::Bool(matches!(raw, "on" | "true")),
            FieldKind::Integer { .. } => match raw.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => {
                    let message = format!("{}: bitte eine ganze Zahl angeben", field.label);
                    errors.push((input.name.clone(), message));
                    continue;
                }
            },
            _ => Value::String(raw.to_string()),
        };
        if field.check(&input.name, &value).is_some() {
            errors.push((input.name.clone(), message(field)));
            continue;
        }
        insert_read(&mut object, &mut rows, input, value);
    }
    let mut arrays: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for ((array, _), row) in rows {
        arrays.entry(array).or_default().push(Value::Object(row));
    }
    for (array, items) in arrays {
        insert(&mut object, array, Value::Array(items));
    }
    (object, errors)
}

/// Puts a value read from `input` where it belongs: into the object, or into its row.
fn insert_read(
    object: &mut Map<String, Value>,
    rows: &mut BTreeMap<(&'static str, usize), Map<String, Value>>,
    input: &Input,
    value: Value,
) {
    let field = input.field;
    match (array_of(field.path), input.row) {
        (Some(array), Some(row)) => {
            let member = &field.path[array.len() + 3..];
            insert(rows.entry((array, row)).or_default(), member, value);
        }
        _ => insert(object, field.path, value),
    }
}

/// A form error message in the end user's language.
fn message(field: &Field) -> String {
    let hint = match field.kind {
        FieldKind::Text => format!("höchstens {MAX_TEXT} Zeichen, keine Steuerzeichen"),
        FieldKind::Postleitzahl => "fünfstellige Postleitzahl".into(),
        FieldKind::Hausnummer => "Hausnummer wie 12, 12a oder 3 1/2 (bis zu vier Ziffern, danach \
                                  höchstens vier Buchstaben, Ziffern, '.' oder '/')"
            .into(),
        FieldKind::Date => "Datum im Format JJJJ-MM-TT".into(),
        FieldKind::Time => "Uhrzeit im Format HH:MM".into(),
        FieldKind::Pattern(pattern) => pattern.hint.into(),
        FieldKind::DateTime => "Zeitpunkt im Format JJJJ-MM-TTThh:mm:ss+hh:mm".into(),
        FieldKind::Bool | FieldKind::OnlyTrue => "ja oder nein".into(),
        FieldKind::Integer { min, max } => format!("ganze Zahl von {min} bis {max}"),
        FieldKind::Choice(_) | FieldKind::Code(_) => {
            "bitte einen der angebotenen Werte wählen".into()
        }
    };
    format!("{}: {hint}", field.label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::module_layer::fields::TEST_TABLE as TABLE;

    fn table() -> Vec<&'static Field> {
        TABLE.iter().collect()
    }

    fn post(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn arrays_show_their_entries_and_one_empty_row() {
        let data = json!({"k": [{"kanal": "01", "kennung": "a@b"}]});
        let rows = rows_in_data(&table(), &data);
        let inputs = inputs(&table(), &rows);
        let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "a.tag",
                "k[0].kanal",
                "k[0].kennung",
                "k[1].kanal",
                "k[1].kennung",
                "n",
                "z"
            ]
        );
        let values = prefilled(&inputs, &data, &LocalZone::default());
        assert_eq!(values["k[0].kennung"], "a@b");
        assert_eq!(values["k[1].kanal"], "");
    }

    #[test]
    fn posted_rows_are_read_back_without_empty_ones() {
        let form = post(&[
            ("a.tag", "2026-11-20"),
            ("k[0].kanal", ""),
            ("k[1].kanal", "01"),
            ("k[1].kennung", "x@y"),
            ("k[2].kennung", "z"),
            ("n", "3"),
        ]);
        let rows = rows_in_post(&table(), &form);
        assert_eq!(rows["k"], 3);
        let (object, errors) = read(&inputs(&table(), &rows), &form, &LocalZone::default());
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            Value::Object(object),
            json!({"a": {"tag": "2026-11-20"}, "k": [{"kanal": "01", "kennung": "x@y"}, {"kennung": "z"}], "n": 3})
        );
    }

    #[test]
    fn another_row_on_request_and_errors_by_input() {
        let form = post(&[("k[0].kanal", "01"), ("_zeile", "k"), ("n", "x")]);
        let rows = rows_in_post(&table(), &form);
        assert_eq!(rows["k"], 2);
        let (_, errors) = read(&inputs(&table(), &rows), &form, &LocalZone::default());
        assert_eq!(
            errors,
            vec![(
                "n".to_string(),
                "N: bitte eine ganze Zahl angeben".to_string()
            )]
        );
    }

    #[test]
    fn a_date_time_is_a_local_date_and_time() {
        let berlin = LocalZone::default();
        let read_z = |date: &str, time: &str| {
            let form = post(&[("z.datum", date), ("z.uhrzeit", time)]);
            read(&inputs(&table(), &Rows::new()), &form, &berlin)
        };
        let (object, _) = read_z("2026-07-15", "10:15");
        assert_eq!(object["z"], json!("2026-07-15T10:15:00+02:00"));
        let (object, _) = read_z("2026-01-15", "10:15:30");
        assert_eq!(object["z"], json!("2026-01-15T10:15:30+01:00"));
        let (object, errors) = read_z("", "");
        assert!(object.is_empty() && errors.is_empty());
        let (_, errors) = read_z("2026-03-29", "02:30");
        assert_eq!(
            errors,
            [(
                "z".to_string(),
                "Zeitpunkt: 29.03.2026 02:30 gibt es wegen der Zeitumstellung an diesem Tag nicht"
                    .to_string()
            )]
        );
        let (_, errors) = read_z("2026-07-15", "");
        assert_eq!(errors[0].1, "Zeitpunkt: bitte Datum und Uhrzeit angeben");
        let (_, errors) = read_z("15.07.2026", "10:15");
        assert_eq!(
            errors[0].1,
            "Zeitpunkt: Datum im Format JJJJ-MM-TT und Uhrzeit im Format HH:MM"
        );

        let rows = Rows::new();
        let data = json!({"z": "2026-11-20T13:30:00Z"});
        let values = prefilled(&inputs(&table(), &rows), &data, &berlin);
        assert_eq!(values["z.datum"], "2026-11-20");
        assert_eq!(values["z.uhrzeit"], "14:30");
    }
}
