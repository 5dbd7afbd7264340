//! Sample values of the field kinds, and a content completed with them.
//!
//! A message writer stops at its first problem and refuses to start while a mandatory field is
//! missing. To report every problem of a submit at once, the checks before dispatch fill what is
//! missing with samples and remove what the writer refused, and let the writer look again at
//! that copy (`xpersonenstand::checked_message`). The copy is never delivered.

use serde_json::{Map, Value};

use super::fields::{array_of, in_row, insert, lookup, Field, FieldKind};

impl FieldKind {
    /// A value every check of the kind admits.
    pub(crate) fn sample(&self) -> Value {
        match *self {
            FieldKind::Bool | FieldKind::OnlyTrue => Value::Bool(true),
            FieldKind::Integer { min, .. } => Value::from(min.max(1)),
            FieldKind::Choice(options) => Value::String(options[0].0.into()),
            FieldKind::Code(list) => Value::String(list.eintraege[0].0.into()),
            FieldKind::Date => Value::String("2026-11-20".into()),
            FieldKind::Time => Value::String("10:15".into()),
            FieldKind::Pattern(pattern) => Value::String(pattern.sample.into()),
            FieldKind::DateTime => Value::String("2026-11-20T10:15:00+01:00".into()),
            FieldKind::Postleitzahl => Value::String("10117".into()),
            FieldKind::Hausnummer => Value::String("1".into()),
            FieldKind::Text => Value::String("Wert".into()),
        }
    }
}

/// Fills the field at `path` (a table path; a field of a list's rows with or without `[]`,
/// `kontaktdaten[].kanal` or `kontaktdaten.kanal`) with its sample where `content` lacks it, in
/// every row; a group or a list (`kontaktdaten`) gets its first field. Returns whether anything
/// was added.
pub(crate) fn fill(content: &mut Map<String, Value>, path: &str, fields: &[Field]) -> bool {
    let field = fields
        .iter()
        .find(|f| f.path == path || (f.path.contains("[]") && f.path.replace("[]", "") == path));
    if let Some(field) = field {
        let path = field.path;
        let sample = field.kind.sample();
        let Some(array) = array_of(path) else {
            return add(content, path, sample);
        };
        let rows = lookup(&Value::Object(content.clone()), array)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        // Every row is filled, so no short-circuit.
        let added: Vec<bool> = (0..rows.max(1))
            .map(|row| add(content, &in_row(path, row), sample.clone()))
            .collect();
        return added.contains(&true);
    }
    let first = fields.iter().find(|f| {
        f.path
            .strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("[]"))
    });
    first.is_some_and(|f| fill(content, f.path, fields))
}

fn add(content: &mut Map<String, Value>, path: &str, value: Value) -> bool {
    let present = lookup(&Value::Object(content.clone()), path).is_some_and(|v| !v.is_null());
    if !present {
        insert(content, path, value);
    }
    !present
}

/// Removes the member at the dotted `path` (a field or a group) from `content`. Returns whether
/// there was one; a path into the rows of a list (`kontaktdaten[].kanal`) names no one member.
pub(crate) fn remove(content: &mut Map<String, Value>, path: &str) -> bool {
    if path.contains('[') {
        return false;
    }
    let (parent, last) = match path.rsplit_once('.') {
        Some((parent, last)) => (Some(parent), last),
        None => (None, path),
    };
    let object = match parent {
        None => Some(content),
        Some(parent) => parent
            .split('.')
            .try_fold(content, |node, step| node.get_mut(step)?.as_object_mut()),
    };
    object.is_some_and(|o| o.remove(last).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::module_layer::fields::TEST_TABLE as TABLE;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn missing_fields_groups_and_rows_are_filled() {
        let mut content = object(json!({}));
        assert!(fill(&mut content, "a.tag", TABLE));
        assert!(!fill(&mut content, "a.tag", TABLE), "present already");
        assert!(
            fill(&mut content, "k", TABLE),
            "a list gets its first field"
        );
        assert_eq!(
            Value::Object(content.clone()),
            json!({"a": {"tag": "2026-11-20"}, "k": [{"kanal": "Wert"}]})
        );
        let mut two_rows = object(json!({"k": [{"kanal": "01"}, {"kanal": "02"}]}));
        assert!(fill(&mut two_rows, "k[].kennung", TABLE));
        assert_eq!(two_rows["k"][1]["kennung"], "Wert");
        let mut without_brackets = object(json!({"k": [{"kanal": "01"}]}));
        assert!(fill(&mut without_brackets, "k.kennung", TABLE));
        assert_eq!(without_brackets["k"][0]["kennung"], "Wert");
        assert!(!fill(&mut two_rows, "x", TABLE), "no such field");
    }

    #[test]
    fn members_and_groups_are_removed() {
        let mut content = object(json!({"a": {"tag": "x", "b": 1}, "k": [{"kanal": "01"}]}));
        assert!(remove(&mut content, "a.tag"));
        assert!(!remove(&mut content, "a.tag"));
        assert!(!remove(&mut content, "k[].kanal"));
        assert!(remove(&mut content, "a"));
        assert_eq!(Value::Object(content), json!({"k": [{"kanal": "01"}]}));
    }
}
