//! The field tables' checks and paths.

use super::*;
use serde_json::json;

const TABLE: &[Field] = &[
    field("a.tag", "Tag", FieldKind::Date, "A"),
    field("a.zeit", "Zeit", FieldKind::Time, "A"),
    field("n", "N", FieldKind::Integer { min: 0, max: 9 }, "A"),
    field("k[].kanal", "Kanal", FieldKind::Text, "A"),
];

#[test]
fn validation_names_every_problem() {
    let body = json!({"a": {"tag": "2024-02-30", "zeit": "24:00"}, "n": 10, "x": 1});
    let errors = validate(&FieldIndex::new(TABLE), body.as_object().unwrap(), &[]);
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors.contains(&Violation::at("/x", "x is not a known field")));
    assert!(errors.contains(&Violation::at("/a/tag", "a.tag must be a date YYYY-MM-DD")));
}

#[test]
fn arrays_are_checked_element_by_element() {
    let body = json!({"k": [{"kanal": "01"}, {"kanal": 5, "y": 1}, 3], "n": 1});
    let errors = validate(&FieldIndex::new(TABLE), body.as_object().unwrap(), &[]);
    assert_eq!(
        errors,
        vec![
            Violation::at("/k/1/kanal", "k[1].kanal must be a string"),
            Violation::at("/k/1/y", "k[1].y is not a known field"),
            Violation::at("/k/2", "k[2] must be an object"),
        ]
    );
    let errors = validate(
        &FieldIndex::new(TABLE),
        json!({"k": {}}).as_object().unwrap(),
        &[],
    );
    assert_eq!(errors, vec![Violation::at("/k", "k must be an array")]);
}

#[test]
fn concrete_paths_reach_into_arrays() {
    let mut root = Map::new();
    insert(&mut root, "k[1].kanal", json!("01"));
    insert(&mut root, "a.tag", json!("x"));
    assert_eq!(
        Value::Object(root.clone()),
        json!({"k": [{}, {"kanal": "01"}], "a": {"tag": "x"}})
    );
    let root = Value::Object(root);
    assert_eq!(lookup(&root, "k[1].kanal"), Some(&json!("01")));
    assert_eq!(lookup(&root, "k[2].kanal"), None);
    assert_eq!(in_row("k[].kanal", 3), "k[3].kanal");
    assert_eq!(array_of("k[].kanal"), Some("k"));
    assert_eq!(array_of("a.tag"), None);
}

#[test]
fn path_like_member_names_are_unknown_and_arrays_are_bounded() {
    let body = json!({"a.tag": "2026-01-01", "a": {"tag": "2026-01-01"}, "k[]": {}});
    let errors = validate(&FieldIndex::new(TABLE), body.as_object().unwrap(), &[]);
    assert_eq!(
        errors,
        vec![
            Violation::at("/a.tag", "a.tag is not a known field"),
            Violation::at("/k[]", "k[] is not a known field"),
        ]
    );
    let rows: Vec<Value> = (0..=MAX_ROWS).map(|_| json!({"kanal": "01"})).collect();
    let errors = validate(
        &FieldIndex::new(TABLE),
        json!({"k": rows}).as_object().unwrap(),
        &[],
    );
    assert_eq!(
        errors,
        vec![Violation::at(
            "/k",
            format!("k must have at most {MAX_ROWS} entries")
        )]
    );
}

#[test]
fn pointers_escape_member_names() {
    let errors = validate(
        &FieldIndex::new(TABLE),
        json!({"a/b~": 1}).as_object().unwrap(),
        &[],
    );
    assert_eq!(errors[0].pointer.as_deref(), Some("/a~1b~0"));
}
