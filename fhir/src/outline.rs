//! What the checks read of a notification beyond its typed resources, in one pass over the bytes
//! that builds no tree: the bundle's `resourceType`, and per entry the `resourceType` and `id` of
//! its resource (also of types we do not model) and every `reference` anywhere in it.
//!
//! The pass reads every value as a tree would (strings, numbers, nesting depth), so whatever is
//! not JSON is refused here, also where the typed reading skips a member unread. It refuses what
//! a tree would not hold as it was written: a member named twice in one object (a tree keeps the
//! last copy, while a typed reading refuses it or takes another copy) and serde_json's reserved
//! member names (which a tree would unwrap). Member names are borrowed from the body where they
//! have no escapes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::check::{shown, MAX_ENTRIES};

/// The prefix of serde_json's own member names.
const RESERVED: &str = "$serde_json::private::";

/// The outline of a notification.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// `resourceType` at the top, when it is a string.
    pub resource_type: Option<String>,
    /// `entry`, when it is an array: the first `MAX_ENTRIES + 1` of its entries (more are read,
    /// not kept: one more than allowed is enough to refuse the bundle).
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
    /// The outline of `json`; `Err` when it is not JSON ([`serde_json::error::Category::Data`]
    /// for a repeated or reserved member name, the message saying which).
    pub(crate) fn read(json: &[u8]) -> Result<Outline, serde_json::Error> {
        let mut outline = Outline::default();
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        Top(&mut outline).deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(outline)
    }
}

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

/// The scalars of a visitor: read (and so checked), then dropped; strings too with
/// `and strings`.
macro_rules! scalars_read {
    (and strings) => {
        scalars_read!();
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
    () => {
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
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
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

/// The member names of one object read so far.
#[derive(Default)]
struct Names<'de>(Vec<Cow<'de, str>>);

impl<'de> Names<'de> {
    /// The next member's name; `Err` for a name this object used already, or a reserved one.
    fn next<A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<Option<Cow<'de, str>>, A::Error> {
        let Some(name) = map.next_key_seed(Name)? else {
            return Ok(None);
        };
        if name.starts_with(RESERVED) {
            return Err(de::Error::custom(format!(
                "the member name {:?} is reserved",
                shown(&name)
            )));
        }
        if self.0.contains(&name) {
            return Err(de::Error::custom(format!(
                "the member {:?} is named twice in one object",
                shown(&name)
            )));
        }
        self.0.push(name.clone());
        Ok(Some(name))
    }
}

/// A member's name, borrowed from the body unless it has escapes.
struct Name;

impl<'de> DeserializeSeed<'de> for Name {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_borrowed_str<E: de::Error>(self, name: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(name))
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(name.to_owned()))
    }
}

/// Any value, read whole; the string of every `reference` member at any depth kept in the
/// list, when there is one.
struct Walk<'a>(Option<&'a mut Vec<String>>);

read_as_any!(Walk<'_>, ());

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    scalars_read!(and strings);

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Walk(self.0.as_deref_mut()))?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut names = Names::default();
        while let Some(name) = names.next(&mut map)? {
            match self.0.as_deref_mut() {
                Some(references) if name == "reference" => {
                    map.next_value_seed(Reference(references))?
                }
                references => map.next_value_seed(Walk(references))?,
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

    scalars_read!();

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.0.push(text.to_owned());
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Walk(Some(self.0)).visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        Walk(Some(self.0)).visit_map(map)
    }
}

/// A string, or `None` for any other value (searched for references, when there is a list).
struct Text<'a>(Option<&'a mut Vec<String>>);

read_as_any!(Text<'_>, Option<String>);

impl<'de> Visitor<'de> for Text<'_> {
    type Value = Option<String>;

    scalars_read!();

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(text.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Walk(self.0).visit_seq(seq).map(|()| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Walk(self.0).visit_map(map).map(|()| None)
    }
}

/// Reads an object's members: each one `read` takes (answering `true`) its way, every other one
/// read over.
fn members<'de, A: MapAccess<'de>>(
    mut map: A,
    mut read: impl FnMut(&str, &mut A) -> Result<bool, A::Error>,
) -> Result<(), A::Error> {
    let mut names = Names::default();
    while let Some(name) = names.next(&mut map)? {
        if !read(&name, &mut map)? {
            map.next_value_seed(Walk(None))?;
        }
    }
    Ok(())
}

/// The top level into an [`Outline`].
struct Top<'a>(&'a mut Outline);

read_as_any!(Top<'_>, ());

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ();

    scalars_read!(and strings);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Walk(None).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        members(map, |name, map| {
            match name {
                "resourceType" => self.0.resource_type = map.next_value_seed(Text(None))?,
                "entry" => self.0.entries = map.next_value_seed(Entries)?,
                _ => return Ok(false),
            }
            Ok(true)
        })
    }
}

/// `entry`: an array of entries, or `None` for any other value.
struct Entries;

read_as_any!(Entries, Option<Vec<EntryOutline>>);

impl<'de> Visitor<'de> for Entries {
    type Value = Option<Vec<EntryOutline>>;

    scalars_read!(and strings);

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Walk(None).visit_map(map).map(|()| None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        loop {
            if entries.len() > MAX_ENTRIES {
                if seq.next_element_seed(Walk(None))?.is_none() {
                    return Ok(Some(entries));
                }
                continue;
            }
            let mut entry = EntryOutline::default();
            if seq.next_element_seed(Entry(&mut entry))?.is_none() {
                return Ok(Some(entries));
            }
            entries.push(entry);
        }
    }
}

/// One entry: its `resource` read into the outline, its other members read over.
struct Entry<'a>(&'a mut EntryOutline);

read_as_any!(Entry<'_>, ());

impl<'de> Visitor<'de> for Entry<'_> {
    type Value = ();

    scalars_read!(and strings);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Walk(None).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        members(map, |name, map| match name {
            "resource" => map.next_value_seed(Resource(&mut *self.0)).map(|()| true),
            _ => Ok(false),
        })
    }
}

/// An entry's resource: its type and id at the top, its references at any depth (inside its
/// `resourceType` and `id` too, when those are not strings).
struct Resource<'a>(&'a mut EntryOutline);

read_as_any!(Resource<'_>, ());

impl<'de> Visitor<'de> for Resource<'_> {
    type Value = ();

    scalars_read!(and strings);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        Walk(Some(&mut self.0.references)).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let outline = self.0;
        let references = &mut outline.references;
        let mut names = Names::default();
        while let Some(name) = names.next(&mut map)? {
            match name.as_ref() {
                "resourceType" => {
                    outline.resource_type = map.next_value_seed(Text(Some(&mut *references)))?
                }
                "id" => outline.id = map.next_value_seed(Text(Some(&mut *references)))?,
                "reference" => map.next_value_seed(Reference(&mut *references))?,
                _ => map.next_value_seed(Walk(Some(&mut *references)))?,
            }
        }
        Ok(())
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
                {"resource": {"id": {"reference": "In/id"}, "resourceType": ["x"],
                    "reference": "Top/level"}},
                "not an object",
                {"resource": "not an object"},
                {"resource": [{"reference": "In/array"}]},
                {}
            ]
        }"#;
        let outline = Outline::read(json).unwrap();
        assert_eq!(outline.resource_type.as_deref(), Some("Bundle"));
        let entries = outline.entries.unwrap();
        assert_eq!(entries.len(), 6);
        assert_eq!(entries[0].resource_type.as_deref(), Some("Observation"));
        assert_eq!(entries[0].id.as_deref(), Some("o1"));
        assert_eq!(
            entries[0].references,
            ["Patient/p", "Observation/a", "Specimen/s"]
        );
        // Members of the wrong type are not kept, but searched.
        assert_eq!(entries[1].resource_type, None);
        assert_eq!(entries[1].id, None);
        assert_eq!(entries[1].references, ["In/id", "Top/level"]);
        assert_eq!(entries[4].references, ["In/array"]);
        for empty in [&entries[2], &entries[3], &entries[5]] {
            assert_eq!(
                (&empty.resource_type, &empty.id, empty.references.len()),
                (&None, &None, 0)
            );
        }
    }

    #[test]
    fn any_json_has_an_outline() {
        for odd in [&b"[1, 2]"[..], b"5", b"null", br#"{"entry": {"a": 1}}"#] {
            let outline = Outline::read(odd).unwrap();
            assert_eq!(outline.resource_type, None);
            assert!(outline.entries.is_none());
        }
        // An escaped name or value is the text it stands for.
        let escaped = Outline::read(
            br#"{"resource\u0054ype": "B\u0075ndle",
                 "entry": [{"resource": {"i\u0064": "\u00e9", "x": {"reference": "P/\u0031"}}}]}"#,
        )
        .unwrap();
        assert_eq!(escaped.resource_type.as_deref(), Some("Bundle"));
        let entry = &escaped.entries.unwrap()[0];
        assert_eq!(entry.id.as_deref(), Some("é"));
        assert_eq!(entry.references, ["P/1"]);
    }

    #[test]
    fn what_is_not_json_is_refused_also_where_nothing_is_kept() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for broken in [
            &b"{"[..],
            b"",
            b"{} {}",
            br#"{"entry": [}"#,
            br#"{"link": "\udc00"}"#,
            br#"{"entry": [{"request": 1e400}]}"#,
            b"{\"total\": \"\xff\"}",
            format!(r#"{{"signature": {deep}}}"#).as_bytes(),
        ] {
            let error = Outline::read(broken).unwrap_err();
            assert!(
                !error.is_data(),
                "{}: {error}",
                String::from_utf8_lossy(broken)
            );
        }
    }

    #[test]
    fn a_member_named_twice_in_one_object_or_a_reserved_name_is_refused() {
        for (body, says) in [
            (
                &br#"{"resourceType": "Patient", "resourceType": "Bundle"}"#[..],
                "the member \"resourceType\" is named twice in one object",
            ),
            (
                br#"{"entry": [{"resource": {"a": {"b": 1, "b": 2}}}]}"#,
                "the member \"b\" is named twice",
            ),
            (br#"{"x": [{"id": 1, "i\u0064": 2}]}"#, "\"id\" is named twice"),
            (
                br#"{"entry": [{"resource": {"subject": {"$serde_json::private::RawValue": "{}"}}}]}"#,
                "the member name \"$serde_json::private::RawValue\" is reserved",
            ),
        ] {
            let error = Outline::read(body).unwrap_err();
            assert!(error.is_data(), "{error}");
            assert!(error.to_string().contains(says), "{error}");
        }
        // The same name in two objects is no repeat.
        assert!(Outline::read(br#"{"a": {"id": 1}, "b": {"id": 2}}"#).is_ok());
    }

    #[test]
    fn entries_past_the_limit_are_read_but_not_kept() {
        let many = format!(
            r#"{{"resourceType":"Bundle","entry":[{}]}}"#,
            vec!["{}"; MAX_ENTRIES + 50].join(",")
        );
        let entries = Outline::read(many.as_bytes()).unwrap().entries.unwrap();
        assert_eq!(entries.len(), MAX_ENTRIES + 1);
    }
}
