//! The readers of untrusted bytes, each run as the route that meets the bytes runs it, for the
//! fuzz targets (`fuzz/`, a crate of its own; docs/testing.md, "Fuzzing"). Public only so that
//! the fuzz crate reaches them; each asserts what must hold of what it read.

use std::collections::BTreeMap;
use std::path::Path;

use meldewerk_xml::local_time::LocalZone;
use serde_json::Value;

use crate::module_layer::fields::value_at;
use crate::module_layer::form::values;
use crate::module_layer::{Field, ModuleSetup};
use crate::modules::MODULES;

/// The strict JSON reader of every JSON endpoint (`routes::json`): the value, or the message
/// of the 400. A value read is re-read the same from its own serialisation.
pub fn strict_json(body: &[u8]) -> Result<Value, String> {
    let value = crate::routes::json::parse(body).map_err(|e| e.to_string())?;
    let again = crate::routes::json::parse(&serde_json::to_vec(&value).expect("serializable"))
        .expect("a value read is read again from its serialisation");
    assert!(
        same_json(&again, &value),
        "the serialisation of {value} reads as {again}"
    );
    Ok(value)
}

/// Whether two JSON values are the same, floating-point numbers within a few units of their
/// last place: serde_json reads floats to its best effort only (without its `float_roundtrip`
/// feature), so a float written and read again may differ in the last bit.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The fields of every form of every module, for reading posted forms.
pub struct Forms {
    forms: Vec<(&'static str, Vec<&'static Field>)>,
    zone: LocalZone,
}

impl Forms {
    /// Every form of every module, the modules built as a configuration without module
    /// sections builds them.
    pub fn of_every_module() -> Forms {
        let sections = BTreeMap::new();
        let setup = ModuleSetup {
            sections: &sections,
            read: Default::default(),
            base_url: "http://localhost",
            data_dir: Path::new("data"),
        };
        let forms = MODULES
            .iter()
            .map(|build| build(&setup).expect("every module builds with its defaults"))
            .flat_map(|module| {
                let info = module.info();
                info.forms
                    .iter()
                    .map(|form| (form.path, form.fields(info.fields).collect()))
            })
            .collect();
        Forms {
            forms,
            zone: LocalZone::default(),
        }
    }

    /// How many forms there are.
    pub fn len(&self) -> usize {
        self.forms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }

    /// Decodes `body` as a form's submit does (`application/x-www-form-urlencoded` into
    /// name-value pairs) and reads it against the fields of the form `form` (counted modulo
    /// [`Forms::len`]). Panics when a problem names no input of the form, or a value read does
    /// not fit its field. The number of pairs, or `None` when the body does not decode.
    pub fn read(&self, form: usize, body: &[u8]) -> Option<usize> {
        let posted: Vec<(String, String)> = serde_urlencoded::from_bytes(body).ok()?;
        if let Some((path, fields)) = self.forms.get(form % self.forms.len().max(1)) {
            let rows = values::rows_in_post(fields, &posted);
            let inputs = values::inputs(fields, &rows);
            let (object, problems) = values::read(&inputs, &posted, &self.zone);
            let _ = values::too_many_rows(fields, &posted);
            for (name, _) in &problems {
                assert!(
                    inputs.iter().any(|input| &input.name == name),
                    "{path}: the problem at {name:?} names no input of the form"
                );
            }
            let content = Value::Object(object);
            for field in fields.iter().filter(|f| !f.path.contains("[]")) {
                if let Some(value) = value_at(&content, field.path) {
                    assert_eq!(
                        field.check(field.path, value),
                        None,
                        "{path}: the value read at {} does not fit its field",
                        field.path
                    );
                }
            }
        }
        Some(posted.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_modules_forms_read_a_post() {
        let forms = Forms::of_every_module();
        assert!(forms.len() >= MODULES.len(), "{}", forms.len());
        let body =
            b"Patient.Vorname=%C2%A0Maxime&MeldungsDatum=2026-11-24&numbers.kinder_betten_belegt=x";
        for form in 0..forms.len() {
            assert_eq!(forms.read(form, body), Some(3));
        }
        assert_eq!(forms.read(0, b"%"), Some(1));
    }

    #[test]
    fn strict_json_refuses_duplicate_names_and_reads_values_again() {
        assert!(strict_json(br#"{"a": 1, "a": 2}"#).is_err());
        assert_eq!(strict_json(br#"[1.5, {"a": null}]"#).unwrap()[0], 1.5);
        assert!(same_json(
            &serde_json::json!([0.1, {"a": 1}]),
            &serde_json::json!([0.1, {"a": 1}])
        ));
        assert!(!same_json(
            &serde_json::json!([0.1]),
            &serde_json::json!([0.2])
        ));
        assert!(!same_json(
            &serde_json::json!({"a": 1}),
            &serde_json::json!({"b": 1})
        ));
    }
}
