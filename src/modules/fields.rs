//! Field tables: one description of a module's fields drives the validation of memento requests,
//! the rendering of the form and the reading of what the end user posted back.

use serde_json::{Map, Value};

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    /// Free text, at most [`MAX_TEXT`] characters, no control characters.
    Text,
    /// German postcode: five digits.
    Postleitzahl,
    /// Calendar date `YYYY-MM-DD`.
    Date,
    /// Time of day `HH:mm`.
    Time,
    /// `true` or `false`; a checkbox in the form.
    Bool,
    /// Whole number within the bounds.
    Integer {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// One of the listed values (value, label).
    Choice(&'static [(&'static str, &'static str)]),
}

/// One field of a module.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Dotted JSON path, e.g. `geburtsangaben.tag`; also the form input's name.
    pub path: &'static str,
    /// Label shown in the form and in form error messages.
    pub label: &'static str,
    /// Value type.
    pub kind: FieldKind,
    /// Heading of the form section the field belongs to.
    pub section: &'static str,
}

/// Longest accepted text value.
pub const MAX_TEXT: usize = 500;

/// `YYYY-MM-DD` naming a real calendar day. Read by hand: chrono's format-string parser was a
/// visible share of every memento request.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    match (number(0..4), number(5..7), number(8..10)) {
        (Some(y), Some(m), Some(d)) => chrono::NaiveDate::from_ymd_opt(y as i32, m, d).is_some(),
        _ => false,
    }
}

fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 5
        && b[2] == b':'
        && b[..2].iter().chain(&b[3..]).all(u8::is_ascii_digit)
        && s[..2].parse::<u8>().is_ok_and(|h| h < 24)
        && s[3..].parse::<u8>().is_ok_and(|m| m < 60)
}

impl Field {
    /// Why `value` does not fit the field, if it does not. `null` always fits (not given).
    pub fn check(&self, value: &Value) -> Option<String> {
        let path = self.path;
        match (self.kind, value) {
            (_, Value::Null) => None,
            (FieldKind::Text, Value::String(s)) => {
                if s.chars().count() > MAX_TEXT {
                    Some(format!("{path} must have at most {MAX_TEXT} characters"))
                } else if s.chars().any(char::is_control) {
                    Some(format!("{path} must not contain control characters"))
                } else {
                    None
                }
            }
            (FieldKind::Postleitzahl, Value::String(s)) => (s.len() != 5
                || !s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| format!("{path} must be a postcode of five digits")),
            (FieldKind::Date, v) if v.as_str().is_some_and(is_date) => None,
            (FieldKind::Date, _) => Some(format!("{path} must be a date YYYY-MM-DD")),
            (FieldKind::Time, v) if v.as_str().is_some_and(is_time) => None,
            (FieldKind::Time, _) => Some(format!("{path} must be a time HH:mm")),
            (FieldKind::Bool, Value::Bool(_)) => None,
            (FieldKind::Bool, _) => Some(format!("{path} must be true or false")),
            (FieldKind::Integer { min, max }, v) => match v.as_i64() {
                Some(n) if (min..=max).contains(&n) => None,
                _ => Some(format!("{path} must be a whole number from {min} to {max}")),
            },
            (FieldKind::Choice(options), Value::String(s))
                if options.iter().any(|(value, _)| value == s) =>
            {
                None
            }
            (FieldKind::Choice(options), _) => {
                let values: Vec<&str> = options.iter().map(|(v, _)| *v).collect();
                Some(format!("{path} must be one of {}", values.join(", ")))
            }
            (FieldKind::Text | FieldKind::Postleitzahl, _) => {
                Some(format!("{path} must be a string"))
            }
        }
    }
}

/// Checks a JSON object against a field table, collecting every problem: values of the wrong
/// type, and members no field describes. `skip` names top-level members checked elsewhere.
pub fn validate(fields: &[Field], object: &Map<String, Value>, skip: &[&str]) -> Vec<String> {
    let mut errors = Vec::new();
    let mut path = String::with_capacity(64);
    walk(fields, object, &mut path, skip, &mut errors);
    errors
}

/// Whether some field lies below `group` (i.e. its path starts with `group.`).
fn is_group(fields: &[Field], group: &str) -> bool {
    fields.iter().any(|f| {
        f.path.len() > group.len()
            && f.path.as_bytes()[group.len()] == b'.'
            && f.path.starts_with(group)
    })
}

/// `path` holds the dotted prefix of `object` (empty or ending in `.`); it is one buffer for the
/// whole walk, since this runs for every key of every memento request.
fn walk(
    fields: &[Field],
    object: &Map<String, Value>,
    path: &mut String,
    skip: &[&str],
    errors: &mut Vec<String>,
) {
    let prefix_len = path.len();
    for (name, value) in object {
        if prefix_len == 0 && skip.contains(&name.as_str()) {
            continue;
        }
        path.truncate(prefix_len);
        path.push_str(name);
        if let Some(field) = fields.iter().find(|f| f.path == path.as_str()) {
            errors.extend(field.check(value));
            continue;
        }
        if !is_group(fields, path) {
            errors.push(format!("{path} is not a known field"));
            continue;
        }
        match value {
            Value::Null => {}
            Value::Object(inner) => {
                path.push('.');
                walk(fields, inner, path, skip, errors);
            }
            _ => errors.push(format!("{path} must be an object")),
        }
    }
    path.truncate(prefix_len);
}

/// The value at a dotted path, if present.
pub fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, segment| v.get(segment))
}

/// Sets the value at a dotted path, creating objects on the way.
pub fn insert(root: &mut Map<String, Value>, path: &str, value: Value) {
    let mut segments: Vec<&str> = path.split('.').collect();
    let last = segments.pop().expect("a path has a segment");
    let mut node = root;
    for segment in segments {
        node = node
            .entry(segment)
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("paths of a table never cross a leaf");
    }
    node.insert(last.to_string(), value);
}

/// The form input value of a field, from pre-fill JSON.
pub fn form_value(field: &Field, data: &Value) -> String {
    match lookup(data, field.path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// Reads posted form values into JSON, per the table: empty inputs are left out, checkboxes become
/// `true`, numbers are parsed. Returns the object and the problems found on the way.
pub fn from_form(
    fields: &[Field],
    form: &[(String, String)],
) -> (Map<String, Value>, Vec<(&'static str, String)>) {
    let mut object = Map::new();
    let mut errors = Vec::new();
    for field in fields {
        let Some(raw) = form
            .iter()
            .find(|(k, _)| k == field.path)
            .map(|(_, v)| v.trim())
        else {
            continue;
        };
        if raw.is_empty() {
            continue;
        }
        let value = match field.kind {
            FieldKind::Bool => Value::Bool(matches!(raw, "on" | "true")),
            FieldKind::Integer { .. } => match raw.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => {
                    errors.push((
                        field.path,
                        format!("{}: bitte eine ganze Zahl angeben", field.label),
                    ));
                    continue;
                }
            },
            _ => Value::String(raw.to_string()),
        };
        if let Some(problem) = field.check(&value) {
            errors.push((field.path, form_message(field, &problem)));
            continue;
        }
        insert(&mut object, field.path, value);
    }
    (object, errors)
}

/// A form error message in the end user's language.
fn form_message(field: &Field, _technical: &str) -> String {
    let hint = match field.kind {
        FieldKind::Text => format!("höchstens {MAX_TEXT} Zeichen, keine Steuerzeichen"),
        FieldKind::Postleitzahl => "fünfstellige Postleitzahl".into(),
        FieldKind::Date => "Datum im Format JJJJ-MM-TT".into(),
        FieldKind::Time => "Uhrzeit im Format HH:MM".into(),
        FieldKind::Bool => "ja oder nein".into(),
        FieldKind::Integer { min, max } => format!("ganze Zahl von {min} bis {max}"),
        FieldKind::Choice(_) => "bitte einen der angebotenen Werte wählen".into(),
    };
    format!("{}: {hint}", field.label)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TABLE: &[Field] = &[
        Field {
            path: "a.tag",
            label: "Tag",
            kind: FieldKind::Date,
            section: "A",
        },
        Field {
            path: "a.zeit",
            label: "Zeit",
            kind: FieldKind::Time,
            section: "A",
        },
        Field {
            path: "n",
            label: "N",
            kind: FieldKind::Integer { min: 0, max: 9 },
            section: "A",
        },
    ];

    #[test]
    fn validation_names_every_problem() {
        let body = json!({"a": {"tag": "2024-02-30", "zeit": "24:00"}, "n": 10, "x": 1});
        let errors = validate(TABLE, body.as_object().unwrap(), &[]);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors.iter().any(|e| e == "x is not a known field"));
        assert!(errors
            .iter()
            .any(|e| e == "a.tag must be a date YYYY-MM-DD"));
    }

    #[test]
    fn times_and_dates() {
        assert!(is_time("00:00") && is_time("23:59"));
        assert!(!is_time("24:00") && !is_time("9:00") && !is_time("09:60") && !is_time("0a:00"));
        assert!(is_date("2024-02-29") && !is_date("2023-02-29") && !is_date("2024-2-01"));
    }

    #[test]
    fn form_values_round_trip() {
        let form = vec![
            ("a.tag".to_string(), "2024-01-02".to_string()),
            ("n".to_string(), "3".to_string()),
        ];
        let (object, errors) = from_form(TABLE, &form);
        assert!(errors.is_empty());
        let value = Value::Object(object);
        assert_eq!(form_value(&TABLE[0], &value), "2024-01-02");
        assert_eq!(form_value(&TABLE[2], &value), "3");
    }
}
