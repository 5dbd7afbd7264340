//! Reading JSON request bodies strictly, for every JSON endpoint (module APIs and operator API):
//! declared as `application/json`, bounded in size, and with every member name once per object.
//! serde_json keeps the last of duplicate names, so `{"id": "a", "id": "b"}` would pass a check
//! of one value and store another.

use std::fmt;

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::{read_limited, BodyError};

/// Why a JSON body could not be read; each endpoint writes it in its own error style.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum JsonError {
    /// 415: not declared as `application/json`.
    UnsupportedMediaType,
    /// 413: larger than the limit.
    TooLarge(usize),
    /// 408: the body did not arrive within this many seconds (`body_timeout_secs`).
    TimedOut(u64),
    /// 400: unreadable, invalid JSON, or duplicate member names; the message says which.
    Invalid(String),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::UnsupportedMediaType => {
                f.write_str("the request body must be sent as Content-Type: application/json")
            }
            JsonError::TooLarge(limit) => write!(f, "request body exceeds {limit} bytes"),
            JsonError::TimedOut(secs) => write!(f, "{}", super::body_deadline::BodyTimedOut(*secs)),
            JsonError::Invalid(message) => f.write_str(message),
        }
    }
}

impl JsonError {
    /// The status of the answer, for endpoints whose error shape has no other use for the kind.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            JsonError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            JsonError::TimedOut(_) => StatusCode::REQUEST_TIMEOUT,
            JsonError::Invalid(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Reads the body, at most `limit` bytes, without looking at it (413 above the limit).
pub(crate) async fn read_bytes(payload: web::Payload, limit: usize) -> Result<Vec<u8>, JsonError> {
    read_limited(payload, limit).await.map_err(|e| match e {
        BodyError::TooLarge(limit) => JsonError::TooLarge(limit),
        BodyError::TimedOut(secs) => JsonError::TimedOut(secs),
        BodyError::Unreadable(e) => JsonError::Invalid(format!("unreadable body: {e}")),
    })
}

/// Reads a JSON body: 415 unless declared as JSON, 413 above `limit`, 400 for invalid JSON or
/// duplicate member names.
pub(crate) async fn read_json(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Value, JsonError> {
    if !is_json(req) {
        return Err(JsonError::UnsupportedMediaType);
    }
    parse(&read_bytes(payload, limit).await?)
}

/// A body already read, as JSON: 415 unless declared as JSON, 400 for invalid JSON or duplicate
/// member names (for endpoints that take an empty body too).
pub(crate) fn json_of(req: &HttpRequest, body: &[u8]) -> Result<Value, JsonError> {
    if !is_json(req) {
        return Err(JsonError::UnsupportedMediaType);
    }
    parse(body)
}

/// [`read_json`] for a body that must be an object.
pub(crate) async fn read_object(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Map<String, Value>, JsonError> {
    match read_json(req, payload, limit).await? {
        Value::Object(object) => Ok(object),
        _ => Err(JsonError::Invalid("the body must be a JSON object".into())),
    }
}

/// Whether the request declares a JSON body (`application/json`, parameters such as `charset`
/// allowed, any case).
fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Parses JSON, refusing duplicate member names anywhere in the document.
pub(crate) fn parse(body: &[u8]) -> Result<Value, JsonError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let parsed = StrictValue::deserialize(&mut deserializer).and_then(|v| {
        deserializer.end()?;
        Ok(v)
    });
    parsed
        .map(|StrictValue(value)| value)
        .map_err(|e| JsonError::Invalid(format!("invalid JSON: {e}")))
}

/// The prefix of the member names serde_json gives a meaning of its own.
const SERDE_JSON_PRIVATE: &str = "$serde_json::private::";

/// A JSON value read with duplicate member names refused.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            // serde_json refuses an object with its raw-value member, and gives the others of
            // this prefix meanings of its own: a body stored with one would not read again as
            // it was taken. Refused at the door, as serde_json would.
            if name.starts_with(SERDE_JSON_PRIVATE) {
                return Err(de::Error::custom(format!(
                    "the member name {name:?} is reserved"
                )));
            }
            match object.entry(name) {
                Entry::Occupied(taken) => {
                    return Err(de::Error::custom(format!(
                        "duplicate member {:?}",
                        taken.key()
                    )))
                }
                Entry::Vacant(slot) => {
                    let StrictValue(value) = map.next_value()?;
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(body: &str) -> String {
        match parse(body.as_bytes()) {
            Err(JsonError::Invalid(message)) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        assert!(detail(r#"{"id":"a","id":"b"}"#).contains("duplicate member \"id\""));
        assert!(detail(r#"{"a":[{"x":1,"x":2}]}"#).contains("duplicate member \"x\""));
    }

    #[test]
    fn serde_jsons_own_member_names_are_refused_at_any_depth() {
        let raw = r#"{"$serde_json::private::RawValue":3,"StandortId":"987"}"#;
        assert!(
            detail(raw).contains("the member name \"$serde_json::private::RawValue\" is reserved")
        );
        // serde_json itself refuses it, alone or beside other members.
        assert!(serde_json::from_str::<Value>(raw).is_err());
        assert!(serde_json::from_str::<Value>(r#"{"$serde_json::private::RawValue":3}"#).is_err());
        assert!(detail(r#"{"a":[{"$serde_json::private::Number":"1"}]}"#).contains("reserved"));
    }

    #[test]
    fn ordinary_json_reads_as_serde_json_does() {
        let text = r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":"\u00e4"}"#;
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
        assert!(detail(r#"{"a":1} x"#).starts_with("invalid JSON"));
    }
}
