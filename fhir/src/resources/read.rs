//! How a [`Resource`] is read: straight into its type when `resourceType` comes first, as FHIR
//! JSON writes it (ours, DEMIS's examples, the reporting system's answers), and through a map of
//! its members otherwise.
//!
//! serde's own reading of an internally tagged enum first copies every member of the resource,
//! nested ones included, into a buffer, because the tag may come last. For a notification that
//! doubled the time to read it. A second `resourceType` after the first is read over like any
//! member the type does not have; the reporting system's checks refuse a member named twice
//! before reading the resources (`crate::outline`).

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::*;

/// The member naming a resource's type.
const TAG: &str = "resourceType";

impl<'de> Deserialize<'de> for Resource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ResourceVisitor)
    }
}

struct ResourceVisitor;

impl<'de> Visitor<'de> for ResourceVisitor {
    type Value = Resource;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a FHIR resource (an object with resourceType)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Resource, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::missing_field(TAG));
        };
        if first == TAG {
            let kind = map.next_value::<String>()?;
            return typed(&kind, MapAccessDeserializer::new(map));
        }
        // The tag comes later: the members are kept until it is found.
        let mut members = Map::new();
        members.insert(first, map.next_value::<Value>()?);
        while let Some((name, value)) = map.next_entry::<String, Value>()? {
            members.insert(name, value);
        }
        let kind = match members.remove(TAG) {
            Some(Value::String(kind)) => kind,
            Some(other) => {
                return Err(de::Error::invalid_type(unexpected(&other), &"a string"));
            }
            None => return Err(de::Error::missing_field(TAG)),
        };
        typed(&kind, Value::Object(members)).map_err(de::Error::custom)
    }
}

/// The resource of type `kind` read from the rest of its members.
fn typed<'de, D: Deserializer<'de>>(kind: &str, rest: D) -> Result<Resource, D::Error> {
    fn boxed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        rest: D,
        variant: fn(Box<T>) -> Resource,
    ) -> Result<Resource, D::Error> {
        Box::<T>::deserialize(rest).map(variant)
    }
    match kind {
        "Bundle" => boxed(rest, Resource::Bundle),
        "Composition" => boxed(rest, Resource::Composition),
        "Patient" => boxed(rest, Resource::Patient),
        "PractitionerRole" => boxed(rest, Resource::PractitionerRole),
        "Organization" => boxed(rest, Resource::Organization),
        "DiagnosticReport" => boxed(rest, Resource::DiagnosticReport),
        "Observation" => boxed(rest, Resource::Observation),
        "Specimen" => boxed(rest, Resource::Specimen),
        "Encounter" => boxed(rest, Resource::Encounter),
        "Condition" => boxed(rest, Resource::Condition),
        "QuestionnaireResponse" => boxed(rest, Resource::QuestionnaireResponse),
        "Parameters" => boxed(rest, Resource::Parameters),
        "Binary" => boxed(rest, Resource::Binary),
        "OperationOutcome" => boxed(rest, Resource::OperationOutcome),
        // Any other type is read over and skipped, as before.
        _ => IgnoredAny::deserialize(rest).map(|_| Resource::Other),
    }
}

/// What a tag that is not a string is, for the error.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_tag_first_or_last_reads_the_same() {
        let first = r#"{"resourceType":"Patient","id":"p1","gender":"female"}"#;
        let last = r#"{"id":"p1","gender":"female","resourceType":"Patient"}"#;
        let from_first: Resource = serde_json::from_str(first).unwrap();
        let from_last: Resource = serde_json::from_str(last).unwrap();
        assert_eq!(from_first, from_last);
        assert_eq!(from_first.type_name(), Some("Patient"));
        assert_eq!(from_first.id(), Some("p1"));
        // From a tree as well (the keys are then in alphabetical order: the tag is not first).
        let from_tree = Resource::deserialize(&serde_json::from_str::<Value>(first).unwrap());
        assert_eq!(from_tree.unwrap(), from_first);
    }

    #[test]
    fn an_unknown_type_is_skipped_whole_and_a_missing_or_odd_tag_is_an_error() {
        // Skipped members must not end the reading of what follows them.
        let list: Vec<Resource> = serde_json::from_value(json!([
            {"resourceType": "Device", "id": "d", "nested": {"a": [1, {"b": 2}]}},
            {"nested": {"a": 1}, "resourceType": "Device"},
            {"resourceType": "Binary", "id": "b", "contentType": "text/plain"}
        ]))
        .unwrap();
        assert_eq!(list[0], Resource::Other);
        assert_eq!(list[1], Resource::Other);
        assert_eq!(list[2].type_name(), Some("Binary"));
        for (odd, expected) in [
            (r#"{"id":"x"}"#, "missing field `resourceType`"),
            (r#"{}"#, "missing field `resourceType`"),
            (r#"{"id":"x","resourceType":7}"#, "a number"),
            (r#"{"resourceType":7}"#, "invalid type"),
            (r#"[]"#, "invalid type"),
        ] {
            let error = serde_json::from_str::<Resource>(odd)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{odd}: {error}");
        }
    }

    #[test]
    fn a_member_of_the_wrong_type_is_an_error_whichever_comes_first() {
        for body in [
            r#"{"resourceType":"Patient","id":5}"#,
            r#"{"id":5,"resourceType":"Patient"}"#,
        ] {
            assert!(serde_json::from_str::<Resource>(body).is_err(), "{body}");
        }
    }
}
