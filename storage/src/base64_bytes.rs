//! Byte fields as base64 text (`#[serde(with = "base64_bytes")]`): serde_json would otherwise
//! write them as arrays of numbers, several times larger and slow to read back on every poll.
//! Every crate that stores or shows bytes as JSON uses this one.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serializer};

/// Writes `bytes` as standard base64.
pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&STANDARD.encode(bytes))
}

/// Reads standard base64.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
    STANDARD
        .decode(text.as_bytes())
        .map_err(serde::de::Error::custom)
}

/// The same for `Option<Vec<u8>>` (`null` when absent).
pub mod option {
    use super::*;

    /// Writes `Some(bytes)` as standard base64, `None` as `null`.
    pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(bytes) => super::serialize(bytes, s),
            None => s.serialize_none(),
        }
    }

    /// Reads standard base64 or `null`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let text = <Option<std::borrow::Cow<'de, str>>>::deserialize(d)?;
        text.map(|t| {
            STANDARD
                .decode(t.as_bytes())
                .map_err(serde::de::Error::custom)
        })
        .transpose()
    }
}
