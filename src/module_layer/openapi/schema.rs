//! JSON Schemas (OpenAPI 3.1, JSON Schema 2020-12) of what the layer reads and writes: a module's
//! memento request out of its field table, and the error bodies of each [`ErrorStyle`]. Written
//! from the same tables and rules the handlers validate with, so that the document cannot say
//! something else than the service does.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::module_layer::fields::{Field, FieldKind, MAX_ROWS, MAX_TEXT};
use crate::module_layer::memento::MAX_ID;
use crate::module_layer::{ErrorStyle, IdMember, ModuleInfo};

/// A value of the field's kind; `null` always fits (not given), so every field is nullable.
pub(crate) fn field_schema(field: &Field) -> Value {
    let mut schema = match field.kind {
        FieldKind::Text => json!({
            "type": ["string", "null"],
            "maxLength": MAX_TEXT,
            "not": control_characters(),
        }),
        FieldKind::Postleitzahl => json!({
            "type": ["string", "null"],
            "pattern": "^[0-9]{5}$",
            "minLength": 5,
            "maxLength": 5,
        }),
        FieldKind::Hausnummer => json!({
            "type": ["string", "null"],
            "pattern": "^ *[0-9]{1,4} *[A-Za-z0-9./ ]{0,4} *$",
            "not": control_characters(),
        }),
        FieldKind::Date => json!({
            "type": ["string", "null"],
            "format": "date",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "minLength": 10,
            "maxLength": 10,
        }),
        FieldKind::Time => json!({
            "type": ["string", "null"],
            "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
            "minLength": 5,
            "maxLength": 5,
        }),
        FieldKind::Pattern(pattern) => {
            let mut schema = json!({
                "type": ["string", "null"],
                "pattern": pattern.pattern,
                "not": control_characters(),
                "description": format!("must {}", pattern.rule.trim_start_matches("must ")),
                "examples": [pattern.sample],
            });
            if let Some(most) = pattern.max_length {
                schema["maxLength"] = json!(most);
            }
            schema
        }
        FieldKind::DateTime => json!({
            "type": ["string", "null"],
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$",
            "not": control_characters(),
        }),
        FieldKind::Bool => json!({"type": ["boolean", "null"]}),
        FieldKind::OnlyTrue => json!({"enum": [true, null]}),
        FieldKind::Integer { min, max } => json!({
            "type": ["integer", "null"],
            "minimum": min,
            "maximum": max,
        }),
        FieldKind::Choice(options) => {
            let mut values: Vec<Value> = options.iter().map(|(v, _)| json!(v)).collect();
            values.push(Value::Null);
            json!({
                "enum": values,
                "description": options
                    .iter()
                    .map(|(v, label)| format!("`{v}`: {label}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            })
        }
        FieldKind::Code(list) => {
            let mut values: Vec<Value> = list.eintraege.iter().map(|(c, _)| json!(c)).collect();
            values.push(Value::Null);
            json!({
                "enum": values,
                "description": format!("a code of {} ({}, version {})", list.name, list.uri, list.version),
            })
        }
    };
    let title = match field.hint {
        Some(hint) => format!("{} ({hint})", field.label),
        None => field.label.to_string(),
    };
    schema["title"] = json!(title);
    schema
}

/// A string with a control character (as [`char::is_control`] has them), for `not`: unanchored,
/// since an anchored `^…$` lets a final line feed through in regex engines where `$` matches
/// before it.
pub(crate) fn control_characters() -> Value {
    // Typed, so that `null` (which `pattern` ignores) is not refused by the `not`.
    json!({"type": "string", "pattern": "[\\u0000-\\u001f\\u007f-\\u009f]"})
}

/// One member of the request tree: a field, an object of members, or an array of objects.
enum Node<'a> {
    Field(&'a Field),
    Group(BTreeMap<&'a str, Node<'a>>),
    List(BTreeMap<&'a str, Node<'a>>),
}

fn insert<'a>(members: &mut BTreeMap<&'a str, Node<'a>>, steps: &[&'a str], field: &'a Field) {
    let (first, rest) = steps.split_first().expect("a path has a step");
    if rest.is_empty() {
        members.insert(first, Node::Field(field));
        return;
    }
    let (name, list) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let node = members.entry(name).or_insert_with(|| {
        if list {
            Node::List(BTreeMap::new())
        } else {
            Node::Group(BTreeMap::new())
        }
    });
    match node {
        Node::Group(inner) | Node::List(inner) => insert(inner, rest, field),
        Node::Field(_) => {}
    }
}

fn object(members: &BTreeMap<&str, Node>) -> Value {
    let mut properties = Map::new();
    for (name, node) in members {
        properties.insert((*name).to_string(), node_schema(node));
    }
    json!({
        "type": "object",
        "properties": properties,
        // Unknown members are refused (400 "… is not a known field").
        "additionalProperties": false,
    })
}

fn node_schema(node: &Node) -> Value {
    match node {
        Node::Field(field) => field_schema(field),
        Node::Group(members) => {
            let mut schema = object(members);
            schema["type"] = json!(["object", "null"]);
            schema
        }
        Node::List(members) => json!({
            "type": ["array", "null"],
            "maxItems": MAX_ROWS,
            "items": object(members),
        }),
    }
}

/// The memento request of the module: its id member, `clientReference` when results echo one,
/// and every field of its table at its dotted path.
pub fn memento_request(info: &ModuleInfo) -> Value {
    let mut members = BTreeMap::new();
    for field in info.fields {
        let steps: Vec<&str> = field.path.split('.').collect();
        insert(&mut members, &steps, field);
    }
    let mut schema = object(&members);
    let name = info.id.name();
    let mut id = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_ID,
        "pattern": VISIBLE,
        "not": control_characters(),
        "description": "The report's id, unique per API user; the reserved mock ids are refused.",
    });
    if let Some(prefix) = info.mock_prefix {
        let reserved: Vec<String> = ["SUCCESS", "PENDING", "FAILURE"]
            .iter()
            .map(|outcome| format!("{prefix}-TEST-{outcome}"))
            .collect();
        id["not"] = json!({"anyOf": [control_characters(), {"enum": reserved}]});
    }
    match info.id {
        IdMember::Required(_) => schema["required"] = json!([name]),
        IdMember::Generated(_) => {
            id["type"] = json!(["string", "null"]);
            id["description"] =
                json!("The report's id; when left out, the form gives the report one.");
        }
    }
    schema["properties"][name] = id;
    if info.echoes_client_reference {
        schema["properties"]["clientReference"] = json!({
            "type": ["string", "null"],
            "maxLength": MAX_TEXT,
            "description": "Echoed in the report's result.",
        });
    }
    schema
}

/// The body of an error answer in `style`.
pub(crate) fn error_body(style: &ErrorStyle) -> Value {
    match style {
        ErrorStyle::Plain => json!({
            "type": "object",
            "required": ["errors"],
            "properties": {
                "errors": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Every problem found, at once.",
                },
            },
        }),
        ErrorStyle::Summarised => json!({
            "type": "object",
            "required": ["error", "errors"],
            "properties": {
                "error": {"type": "string", "description": "What went wrong, in one sentence."},
                "errors": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Every problem found, at once.",
                },
            },
        }),
        ErrorStyle::Problem { .. } => json!({
            "type": "object",
            "description": "Problem details (RFC 9457). Integrators branch on `type`.",
            "required": ["type", "title", "status", "detail", "instance"],
            "properties": {
                "type": {"type": "string", "format": "uri-reference"},
                "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 100, "maximum": 599},
                "detail": {"type": "string"},
                "instance": {"type": "string", "description": "The request's path."},
                "errors": {
                    "type": "array",
                    "description": "Validation errors only: one entry per violated constraint.",
                    "items": {
                        "type": "object",
                        "required": ["detail"],
                        "properties": {
                            "detail": {"type": "string"},
                            "pointer": {
                                "type": "string",
                                "description": "JSON Pointer to the offending member; absent for rules across members.",
                            },
                        },
                    },
                },
            },
        }),
    }
}

/// The media type of error answers in `style`.
pub(crate) fn error_media_type(style: &ErrorStyle) -> &'static str {
    match style {
        ErrorStyle::Problem { .. } => "application/problem+json",
        ErrorStyle::Plain | ErrorStyle::Summarised => "application/json",
    }
}

/// `schema` (an object schema of [`memento_request`]) with the members at the dotted `paths`
/// required: present, not null, and text not blank.
pub fn requiring(mut schema: Value, paths: &[&str]) -> Value {
    for path in paths {
        let steps: Vec<&str> = path.split('.').collect();
        let mut at = &mut schema;
        for (i, step) in steps.iter().enumerate() {
            let required = at["required"].as_array().cloned().unwrap_or_default();
            if !required.iter().any(|r| r == step) {
                let mut required = required;
                required.push(json!(step));
                at["required"] = Value::Array(required);
            }
            let member = &mut at["properties"][*step];
            not_null(member);
            if i + 1 == steps.len() && member["type"] == "string" {
                member["minLength"] = json!(1);
                if member.get("pattern").is_none() {
                    member["pattern"] = json!(VISIBLE);
                }
            }
            at = member;
        }
    }
    schema
}

/// Text with a character that is neither white space nor a control character (unanchored).
const VISIBLE: &str = "[^\\s\\u0000-\\u001f\\u007f-\\u009f]";

fn not_null(member: &mut Value) {
    if let Some(Value::Array(types)) = member.get("type") {
        let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        member["type"] = if types.len() == 1 {
            types[0].clone()
        } else {
            Value::Array(types)
        };
    }
    if let Some(Value::Array(values)) = member.get("enum") {
        let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        member["enum"] = Value::Array(values);
    }
}
