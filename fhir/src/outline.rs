//! What the checks read of a notification beyond its typed resources, in one pass over the bytes
//! that keeps nothing else: the bundle's `resourceType`, and per entry the `resourceType` and
//! `id` of its resource (also of types we do not model) and every `reference` anywhere in it.
//!
//! Reading the body into a `serde_json::Value` for this took as long as reading the typed
//! bundle; this pass allocates only the strings it keeps. It accepts any JSON: a member of an
//! unexpected type is simply not kept, and the typed reading reports it.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Implements `DeserializeSeed` for a visitor that takes any JSON value.
macro_rules! read_as_any {
    ($seed:ty, $value:ty) => {
        impl<'de> DeserializeSeed<'de> for $seed {
            type Value = $value;

            fn deserialize<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<$value, D::Error> {
                deserializer.deserialize_any(self)
            }
        }
    };
}

/// Ignores every scalar a visitor is handed (the outline keeps none of them).
macro_rules! scalars_ignored {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

/// The outline of a notification.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// `resourceType` at the top, when it is a string.
    pub resource_type: Option<String>,
    /// `entry`, when it is an array.
    pub entries: Option<Vec<EntryOutline>>,
}

/// The outline of one entry's resource.
#[derive(Debug, Default)]
pub(crate) struct EntryOutline {
    /// `resource.resourceType`, when it is a string.
    pub resource_type: Option<String>,
    /// `resource.id`, when it is a string.
    pub id: Option<String>,
    /// The string value of every `reference` member at any depth of the resource.
    pub references: Vec<String>,
}

impl Outline {
    /// The outline of `json`; `Err` only when it is not JSON.
    pub(crate) fn read(json: &[u8]) -> Result<Outline, serde_json::Error> {
        let mut outline = Outline::default();
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        OutlineSeed(&mut outline).deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(outline)
    }
}

/// Reads the top level into an [`Outline`].
struct OutlineSeed<'a>(&'a mut Outline);

read_as_any!(OutlineSeed<'_>, ());

impl<'de> Visitor<'de> for OutlineSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "resourceType" => self.0.resource_type = map.next_value_seed(Text)?,
                "entry" => self.0.entries = map.next_value_seed(Entries)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    scalars_ignored!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// A string, or `None` for any other value.
struct Text;

read_as_any!(Text, Option<String>);

impl<'de> Visitor<'de> for Text {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(text.to_owned()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| None)
    }
}

/// `entry`: an array of entries, or `None` for any other value.
struct Entries;

read_as_any!(Entries, Option<Vec<EntryOutline>>);

impl<'de> Visitor<'de> for Entries {
    type Value = Option<Vec<EntryOutline>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_ignored!();

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        loop {
            let mut entry = EntryOutline::default();
            if seq.next_element_seed(EntrySeed(&mut entry))?.is_none() {
                return Ok(Some(entries));
            }
            entries.push(entry);
        }
    }
}

/// One entry: its `resource` read into the outline, its other members skipped.
struct EntrySeed<'a>(&'a mut EntryOutline);

read_as_any!(EntrySeed<'_>, ());

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_ignored!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| ())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "resource" {
                map.next_value_seed(ResourceSeed(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// An entry's resource: its type and id at the top (of a member given twice, the last counts,
/// as when the body is read into a tree), its references at any depth (those of every copy of
/// a member given twice: the stricter reading).
struct ResourceSeed<'a>(&'a mut EntryOutline);

read_as_any!(ResourceSeed<'_>, ());

impl<'de> Visitor<'de> for ResourceSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_ignored!();

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        References(&mut self.0.references).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let outline = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "resourceType" => outline.resource_type = map.next_value_seed(Text)?,
                "id" => outline.id = map.next_value_seed(Text)?,
                "reference" => map.next_value_seed(Reference(&mut outline.references))?,
                _ => map.next_value_seed(References(&mut outline.references))?,
            }
        }
        Ok(())
    }
}

/// Any value, its `reference` members collected at any depth.
struct References<'a>(&'a mut Vec<String>);

read_as_any!(References<'_>, ());

impl<'de> Visitor<'de> for References<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    scalars_ignored!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(References(&mut *self.0))?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "reference" {
                map.next_value_seed(Reference(&mut *self.0))?;
            } else {
                map.next_value_seed(References(&mut *self.0))?;
            }
        }
        Ok(())
    }
}

/// The value of a `reference` member: kept when it is a string, searched further otherwise.
struct Reference<'a>(&'a mut Vec<String>);

read_as_any!(Reference<'_>, ());

impl<'de> Visitor<'de> for Reference<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.0.push(text.to_owned());
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        References(self.0).visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        References(self.0).visit_map(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_found_at_any_depth_of_each_entrys_resource_only() {
        let json = br#"{
            "resourceType": "Bundle",
            "meta": {"reference": "not/in-an-entry"},
            "entry": [
                {"fullUrl": "x", "reference": "entry/itself",
                 "resource": {"resourceType": "Observation", "id": "o1",
                    "subject": {"reference": "Patient/p"},
                    "hasMember": [{"reference": "Observation/a"}, {"reference": 7}],
                    "deep": {"reference": {"reference": "Specimen/s"}}}},
                {"resource": {"id": 5, "resourceType": ["x"], "reference": "Top/level"}},
                "not an object",
                {"resource": "not an object"},
                {}
            ]
        }"#;
        let outline = Outline::read(json).unwrap();
        assert_eq!(outline.resource_type.as_deref(), Some("Bundle"));
        let entries = outline.entries.unwrap();
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[0].resource_type.as_deref(), Some("Observation"));
        assert_eq!(entries[0].id.as_deref(), Some("o1"));
        assert_eq!(
            entries[0].references,
            ["Patient/p", "Observation/a", "Specimen/s"]
        );
        // Members of the wrong type are not kept.
        assert_eq!(entries[1].resource_type, None);
        assert_eq!(entries[1].id, None);
        assert_eq!(entries[1].references, ["Top/level"]);
        for empty in &entries[2..] {
            assert_eq!(
                (&empty.resource_type, &empty.id, empty.references.len()),
                (&None, &None, 0)
            );
        }
    }

    #[test]
    fn any_json_has_an_outline_and_only_what_is_not_json_is_an_error() {
        for odd in [&b"[1, 2]"[..], b"5", b"null", br#"{"entry": {"a": 1}}"#] {
            let outline = Outline::read(odd).unwrap();
            assert_eq!(outline.resource_type, None);
            assert!(outline.entries.is_none());
        }
        let twice = Outline::read(br#"{"resourceType": "Patient", "resourceType": "Bundle"}"#);
        assert_eq!(twice.unwrap().resource_type.as_deref(), Some("Bundle"));
        for broken in [&b"{"[..], b"", b"{} {}", br#"{"entry": [}"#] {
            assert!(Outline::read(broken).is_err());
        }
    }
}
