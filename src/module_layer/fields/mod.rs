//! Field tables: one description of a module's fields drives the validation of memento requests,
//! the rendering of the form and the reading of what the end user posted back.
//!
//! A field's path is dotted (`geburtsangaben.tag`). A member that holds an array of objects is
//! written with `[]` (`kontaktdaten[].kanal`): every element is checked against the fields below
//! it, and violations point at the element (`/kontaktdaten/0/kanal`).

use std::collections::HashMap;

use meldewerk_xml::codelisten::Codeliste;
use meldewerk_xml::formate;
use serde_json::{Map, Value};

use super::errors::Violation;

/// What a field holds.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    /// Free text, at most [`MAX_TEXT`] characters, no control characters.
    Text,
    /// German postcode: five digits.
    Postleitzahl,
    /// House number of a registry address: up to four digits, then at most four letters,
    /// digits, `.`, `/` or spaces (`12`, `12a`, `3 1/2`), the rule of `Meldeanschrift`.
    Hausnummer,
    /// Calendar date `YYYY-MM-DD`.
    Date,
    /// Time of day `HH:mm`.
    Time,
    /// Text of a format the other kinds do not cover, defined where it belongs (a pattern of a
    /// message schema, say).
    Pattern(&'static TextPattern),
    /// Date-time with an explicit offset, `YYYY-MM-DDThh:mm:ss±hh:mm` or `…Z`, seconds fractions
    /// allowed (RFC 3339 and `xs:dateTime` with time zone); a date and a time input in the form,
    /// the offset from the service's time zone.
    DateTime,
    /// `true` or `false`; a checkbox in the form.
    Bool,
    /// Only `true` is allowed (absent means "no"); a checkbox in the form.
    OnlyTrue,
    /// Whole number within the bounds.
    Integer {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// One of the listed values (value, label): a value set of the API itself.
    Choice(&'static [(&'static str, &'static str)]),
    /// A code of a code list of the messages ([`meldewerk_xml::codelisten`]).
    Code(&'static Codeliste),
}

/// A format of text that a module's schema defines.
#[derive(Debug)]
pub struct TextPattern {
    /// Whether a value fits.
    pub fits: fn(&str) -> bool,
    /// What a value must be, as the API's error says it after the field's path ("must …").
    pub rule: &'static str,
    /// What the form says to enter.
    pub hint: &'static str,
    /// A value that fits, for the checks that complete a form with samples.
    pub sample: &'static str,
    /// The same rule as a regular expression (the common subset of ECMA-262 and Python's `re`),
    /// for the module's OpenAPI document; texts with control characters are refused besides.
    /// A test holds it to [`TextPattern::fits`].
    pub pattern: &'static str,
    /// The most characters a fitting text has, where the pattern alone does not bound it.
    pub max_length: Option<usize>,
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
    /// What to enter, shown below the input where the label alone does not say it.
    pub hint: Option<&'static str>,
}

/// A field; `const`, so that a module's table is a `static` slice.
pub const fn field(
    path: &'static str,
    label: &'static str,
    kind: FieldKind,
    section: &'static str,
) -> Field {
    Field {
        path,
        label,
        kind,
        section,
        hint: None,
    }
}

impl Field {
    /// The same field with a hint of what to enter.
    pub const fn with_hint(self, hint: &'static str) -> Field {
        Field {
            hint: Some(hint),
            ..self
        }
    }
}

/// The value at the dotted `path` of `content` (`betroffener.name.nachname`); `None` when a step
/// is missing or the value is null.
pub fn value_at<'a>(content: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(content, |value, step| value.get(step))
        .filter(|value| !value.is_null())
}

/// The text at the dotted `path` of `content`, trimmed; `None` when absent, not text, or blank.
pub fn text_at<'a>(content: &'a Value, path: &str) -> Option<&'a str> {
    value_at(content, path)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
}

/// The label of the field at `path`, or the path itself when the table has no such field. A path
/// into an array may name the array without `[]` (`kontaktdaten.kanal`); an array or a group is
/// named by the section its fields stand in.
pub fn label<'a>(fields: &'a [Field], path: &'a str) -> &'a str {
    let field = fields
        .iter()
        .find(|f| f.path == path || (f.path.contains("[]") && f.path.replace("[]", "") == path));
    if let Some(field) = field {
        return field.label;
    }
    // A list or a group (`anschriftAutor`) is named by the form section its fields stand in.
    fields
        .iter()
        .find(|f| {
            array_of(f.path) == Some(path)
                || f.path
                    .strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
        .map_or(path, |f| f.section)
}

/// Builds a field table once at start-up, for schemas whose groups repeat (the same place,
/// name or address type under several members): each group is written once as a function.
#[derive(Debug, Default)]
pub struct TableBuilder {
    fields: Vec<Field>,
    section: &'static str,
}

impl TableBuilder {
    /// Fields added from now on belong to the form section `section`.
    pub fn section(&mut self, section: &'static str) -> &mut Self {
        self.section = section;
        self
    }

    /// Adds the field `path` with `label`.
    pub fn field(
        &mut self,
        path: impl Into<String>,
        label: impl Into<String>,
        kind: FieldKind,
    ) -> &mut Self {
        // The table lives as long as the process; leaking its strings once gives the `'static`
        // paths every request borrows.
        let path: &'static str = Box::leak(path.into().into_boxed_str());
        let label: &'static str = Box::leak(label.into().into_boxed_str());
        self.fields.push(field(path, label, kind, self.section));
        self
    }

    /// Gives the field added last a hint of what to enter.
    pub fn hint(&mut self, hint: &'static str) -> &mut Self {
        if let Some(last) = self.fields.last_mut() {
            last.hint = Some(hint);
        }
        self
    }

    /// The finished table.
    pub fn build(self) -> Vec<Field> {
        self.fields
    }
}

/// The rule of a choice: at most one of `members` may be given in the object at `path` (a rule
/// across members, so the violation carries no pointer). Absent objects pass.
pub fn at_most_one(object: &Map<String, Value>, path: &str, members: &[&str]) -> Option<Violation> {
    let parent = lookup_object(object, path)?;
    let given: Vec<&str> = members
        .iter()
        .copied()
        .filter(|m| parent.get(*m).is_some_and(|v| !v.is_null()))
        .collect();
    (given.len() > 1).then(|| {
        Violation::whole(format!(
            "{path} must have only one of {}, got {}",
            members.join(", "),
            given.join(" and ")
        ))
    })
}

fn lookup_object<'a>(object: &'a Map<String, Value>, path: &str) -> Option<&'a Map<String, Value>> {
    path.split('.')
        .try_fold(object, |o, step| o.get(step)?.as_object())
}

/// Asserts that every field of `fields` below `prefix` is a member of the typed model `T`: a value
/// of the field's kind at its path deserializes (the models refuse unknown members) and survives
/// the round trip. Ties a module's field table to its model, so that the two cannot drift.
#[cfg(test)]
pub fn assert_table_fits<T: serde::de::DeserializeOwned + serde::Serialize>(
    fields: &[Field],
    prefix: &str,
) {
    for field in fields {
        let Some(path) = field.path.strip_prefix(prefix) else {
            continue;
        };
        let value = field.kind.sample();
        let path = in_row(path, 0);
        let mut object = Map::new();
        insert(&mut object, &path, value.clone());
        let model: T = serde_json::from_value(Value::Object(object))
            .unwrap_or_else(|e| panic!("field {} is not a member of the model: {e}", field.path));
        let back = serde_json::to_value(&model).expect("serializable");
        assert_eq!(
            lookup(&back, &path),
            Some(&value),
            "field {} does not survive the model",
            field.path
        );
    }
}

/// A small table with a date, a list of two fields, a number and a date-time, for the tests of
/// the form mechanics.
#[cfg(test)]
pub(crate) static TEST_TABLE: &[Field] = &[
    field("a.tag", "Tag", FieldKind::Date, "A"),
    field("k[].kanal", "Kanal", FieldKind::Text, "A"),
    field("k[].kennung", "Kennung", FieldKind::Text, "A"),
    field("n", "N", FieldKind::Integer { min: 0, max: 9 }, "A"),
    field("z", "Zeitpunkt", FieldKind::DateTime, "A"),
];

/// Most entries an array member may have (contacts, children): a form shows that many rows at
/// most, and a request with more is refused rather than cut.
pub const MAX_ROWS: usize = 50;

/// Longest accepted text value.
pub const MAX_TEXT: usize = 500;

impl Field {
    /// Why `value` does not fit the field, if it does not. `null` always fits (not given).
    /// `path` is the member's dotted path as the message names it (written only into a message).
    pub fn check(&self, path: impl std::fmt::Display, value: &Value) -> Option<String> {
        let text = value.as_str();
        let fits = |rule: fn(&str) -> bool| text.is_some_and(rule);
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
            (FieldKind::Postleitzahl, Value::String(_)) => (!fits(formate::ist_postleitzahl))
                .then(|| format!("{path} must be a postcode of five digits")),
            (FieldKind::Hausnummer, Value::String(s)) => {
                formate::hausnummer(s.trim()).is_none().then(|| {
                    format!(
                        "{path} must be a house number: up to four digits, then at most four \
                         letters, digits, '.' or '/'"
                    )
                })
            }
            (FieldKind::Date, _) => (!fits(formate::ist_tagesdatum))
                .then(|| format!("{path} must be a date YYYY-MM-DD")),
            (FieldKind::Time, _) => {
                (!fits(formate::ist_uhrzeit)).then(|| format!("{path} must be a time HH:mm"))
            }
            (FieldKind::Pattern(pattern), _) => {
                (!fits(pattern.fits)).then(|| format!("{path} {}", pattern.rule))
            }
            (FieldKind::DateTime, _) => (!fits(formate::ist_zeitpunkt_mit_offset)).then(|| {
                format!("{path} must be a date-time with offset YYYY-MM-DDThh:mm:ss+hh:mm")
            }),
            (FieldKind::Bool, Value::Bool(_)) => None,
            (FieldKind::Bool, _) => Some(format!("{path} must be true or false")),
            (FieldKind::OnlyTrue, Value::Bool(true)) => None,
            (FieldKind::OnlyTrue, _) => Some(format!("{path} must be true or absent")),
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
            (FieldKind::Code(list), Value::String(s)) if list.enthaelt(s) => None,
            (FieldKind::Code(list), _) => Some(format!(
                "{path} must be a code of the list {} ({})",
                list.uri, list.version
            )),
            (FieldKind::Text | FieldKind::Postleitzahl | FieldKind::Hausnummer, _) => {
                Some(format!("{path} must be a string"))
            }
        }
    }
}

/// A field table as a tree of members, built once per module: the memento walk looks each member
/// of a request up by its name among its siblings, and renders a path only for a message.
#[derive(Debug)]
pub struct FieldIndex {
    root: Members,
}

/// Looked up once for every member of every request: hashed rather than searched by comparing
/// names (foldhash, seeded at random like the standard library's hasher, several times quicker
/// on short names).
type Members = HashMap<&'static str, Node, foldhash::fast::RandomState>;

/// What the table says a member is.
#[derive(Debug)]
enum Node {
    /// A field: its value is checked.
    Field(&'static Field),
    /// An object with fields below it (`a` for `a.b`).
    Group(Members),
    /// An array of objects with fields below them (`k` for `k[].kanal`).
    List(Members),
}

impl FieldIndex {
    /// The index of `fields`. A member that is a field in the table is one, whatever else the
    /// table says below it; a member that is a group is not also a list.
    pub fn new(fields: &'static [Field]) -> FieldIndex {
        let mut root = Members::default();
        for field in fields {
            let mut members = &mut root;
            let mut steps = field.path.split('.').peekable();
            while let Some(step) = steps.next() {
                if steps.peek().is_none() {
                    members.insert(step, Node::Field(field));
                    break;
                }
                let (name, list) = match step.strip_suffix("[]") {
                    Some(name) => (name, true),
                    None => (step, false),
                };
                let node = members.entry(name).or_insert_with(|| {
                    if list {
                        Node::List(Members::default())
                    } else {
                        Node::Group(Members::default())
                    }
                });
                members = match node {
                    Node::Group(inner) | Node::List(inner) => inner,
                    Node::Field(_) => break,
                };
            }
        }
        FieldIndex { root }
    }
}

/// Checks a JSON object against a field table, collecting every problem: values of the wrong
/// type, and members no field describes. `skip` names top-level members checked elsewhere.
pub fn validate(fields: &FieldIndex, object: &Map<String, Value>, skip: &[&str]) -> Vec<Violation> {
    let mut walk = Walk {
        steps: Vec::with_capacity(8),
        violations: Vec::new(),
    };
    for (name, value) in object {
        if !skip.contains(&name.as_str()) {
            walk.member(&fields.root, name, value);
        }
    }
    walk.violations
}

/// One step of the walk's position: a member name, or an array index.
#[derive(Clone, Copy)]
enum Step<'a> {
    Member(&'a str),
    Index(usize),
}

/// The path shown in messages: `kontaktdaten[0].kanal`.
struct Shown<'s, 'a>(&'s [Step<'a>]);

impl std::fmt::Display for Shown<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Member(name) if i == 0 => f.write_str(name)?,
                Step::Member(name) => write!(f, ".{name}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// One validation run over a request: where it stands, and what it found.
struct Walk<'a> {
    steps: Vec<Step<'a>>,
    violations: Vec<Violation>,
}

impl<'a> Walk<'a> {
    fn shown(&self) -> Shown<'_, 'a> {
        Shown(&self.steps)
    }

    /// The JSON Pointer of the current position: `/kontaktdaten/0/kanal`.
    fn pointer(&self) -> String {
        let mut pointer = String::new();
        for step in &self.steps {
            pointer.push('/');
            match step {
                // RFC 6901: `~` and `/` in a member name are escaped.
                Step::Member(name) => pointer.push_str(&name.replace('~', "~0").replace('/', "~1")),
                Step::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
    }

    fn violation(&mut self, detail: String) {
        let pointer = self.pointer();
        self.violations.push(Violation::at(pointer, detail));
    }

    fn object(&mut self, members: &Members, object: &'a Map<String, Value>) {
        for (name, value) in object {
            self.member(members, name, value);
        }
    }

    fn member(&mut self, members: &Members, name: &'a str, value: &'a Value) {
        self.steps.push(Step::Member(name));
        // A name that looks like a path (`geburtsangaben.tag`) would match a nested field of
        // the table and then be neither shown nor delivered.
        let path_like = name.bytes().any(|b| matches!(b, b'.' | b'[' | b']'));
        match members.get(name).filter(|_| !path_like) {
            Some(Node::Field(field)) => {
                if let Some(problem) = field.check(self.shown(), value) {
                    self.violation(problem);
                }
            }
            Some(Node::Group(inner)) => match value {
                Value::Null => {}
                Value::Object(object) => self.object(inner, object),
                _ => self.violation(format!("{} must be an object", self.shown())),
            },
            Some(Node::List(inner)) => match value {
                Value::Null => {}
                Value::Array(items) if items.len() > MAX_ROWS => self.violation(format!(
                    "{} must have at most {MAX_ROWS} entries",
                    self.shown()
                )),
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        self.steps.push(Step::Index(i));
                        match item {
                            Value::Object(object) => self.object(inner, object),
                            _ => self.violation(format!("{} must be an object", self.shown())),
                        }
                        self.steps.pop();
                    }
                }
                _ => self.violation(format!("{} must be an array", self.shown())),
            },
            None => self.violation(format!("{} is not a known field", self.shown())),
        }
        self.steps.pop();
    }
}

/// The steps of a concrete path: member names, each with the index of `name[i]` where an array
/// element is meant (`kontaktdaten[0].kanal` → `kontaktdaten`/0, `kanal`).
fn steps(path: &str) -> impl Iterator<Item = (&str, Option<usize>)> {
    path.split('.').map(|step| {
        match step
            .strip_suffix(']')
            .and_then(|s| s.split_once('['))
            .and_then(|(name, i)| Some((name, i.parse().ok()?)))
        {
            Some((name, i)) => (name, Some(i)),
            None => (step, None),
        }
    })
}

/// The value at a concrete path (`geburtsangaben.tag`, `kontaktdaten[0].kanal`), if present.
pub fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    steps(path).try_fold(value, |v, (name, index)| {
        let member = v.get(name)?;
        match index {
            Some(i) => member.get(i),
            None => Some(member),
        }
    })
}

/// Sets the value at a concrete path, creating objects (and array elements, as empty objects)
/// on the way.
pub fn insert(root: &mut Map<String, Value>, path: &str, value: Value) {
    let mut steps: Vec<(&str, Option<usize>)> = steps(path).collect();
    let (last, _) = steps.pop().expect("a path has a step");
    let mut node = root;
    for (name, index) in steps {
        let member = node.entry(name).or_insert_with(|| match index {
            Some(_) => Value::Array(Vec::new()),
            None => Value::Object(Map::new()),
        });
        let member = match index {
            Some(i) => {
                let items = member.as_array_mut().expect("an indexed step is an array");
                while items.len() <= i {
                    items.push(Value::Object(Map::new()));
                }
                &mut items[i]
            }
            None => member,
        };
        node = member
            .as_object_mut()
            .expect("paths of a table never cross a leaf");
    }
    node.insert(last.to_string(), value);
}

/// The table path of an array field with its row filled in: `kontaktdaten[].kanal`, 2 →
/// `kontaktdaten[2].kanal`.
pub fn in_row(path: &str, row: usize) -> String {
    path.replacen("[]", &format!("[{row}]"), 1)
}

/// The array a field lies in (`kontaktdaten` for `kontaktdaten[].kanal`), if any.
pub fn array_of(path: &str) -> Option<&str> {
    path.split_once("[]").map(|(array, _)| array)
}

#[cfg(test)]
mod tests;
