//! Reading JSON request bodies strictly: declared as `application/json`, bounded in size, and
//! with every member name once per object. serde_json keeps the last of duplicate names, so
//! `{"id": "a", "id": "b"}` would pass a check of one value and store another.

use std::fmt;

use actix_web::http::header;
use actix_web::{web, HttpRequest};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::errors::{ApiError, Violation};
use crate::routes::{read_limited, BodyError};

/// Reads the body of a JSON request into an object: 415 unless it is declared as
/// `application/json`, 413 above `limit`, 400 for invalid JSON, duplicate member names or a body
/// that is not an object.
pub async fn read_object(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Map<String, Value>, ApiError> {
    if !is_json(req) {
        return Err(ApiError::UnsupportedMediaType);
    }
    let body = read_limited(payload, limit).await.map_err(|e| match e {
        BodyError::TooLarge(limit) => ApiError::TooLarge(limit),
        BodyError::Unreadable(e) => {
            ApiError::Validation(vec![Violation::whole(format!("unreadable body: {e}"))])
        }
    })?;
    match parse(&body)? {
        Value::Object(object) => Ok(object),
        _ => Err(ApiError::Validation(vec![Violation::whole(
            "the body must be a JSON object",
        )])),
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
pub fn parse(body: &[u8]) -> Result<Value, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let parsed = StrictValue::deserialize(&mut deserializer).and_then(|v| {
        deserializer.end()?;
        Ok(v)
    });
    parsed
        .map(|StrictValue(value)| value)
        .map_err(|e| ApiError::Validation(vec![Violation::whole(format!("invalid JSON: {e}"))]))
}

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
            if object.contains_key(&name) {
                return Err(de::Error::custom(format!("duplicate member {name:?}")));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(name, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(body: &str) -> String {
        match parse(body.as_bytes()) {
            Err(ApiError::Validation(v)) => v[0].detail.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicates_are_refused_at_any_depth() {
        assert!(detail(r#"{"id":"a","id":"b"}"#).contains("duplicate member \"id\""));
        assert!(detail(r#"{"a":[{"x":1,"x":2}]}"#).contains("duplicate member \"x\""));
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
