//! `POST /api/birthnotice/v1/memento`: validate, encrypt, answer `{memento, magicLink}`.
//! Nothing is stored.

use actix_web::{web, HttpResponse};
use chrono::Utc;
use serde_json::{json, Map, Value};

use super::fields::FIELDS;
use super::{FORM_PATH, MODULE};
use crate::auth::ApiUser;
use crate::crypto::{MasterKey, UserKey};
use crate::modules::errors::ApiError;
use crate::modules::fields::{validate, MAX_TEXT};
use crate::routes::{read_limited, BodyError};
use crate::startup::WebSettings;
use crate::tokens::{seal_memento, strip_empty, MagicToken};

/// Longest accepted report id.
pub const MAX_ID: usize = 128;

/// Reads the body up to `limit` bytes, answering 413 above it.
async fn read_body(payload: web::Payload, limit: usize) -> Result<Vec<u8>, ApiError> {
    read_limited(payload, limit).await.map_err(|e| match e {
        BodyError::TooLarge(limit) => ApiError::TooLarge(limit),
        BodyError::Unreadable(e) => ApiError::Validation(vec![format!("unreadable body: {e}")]),
    })
}

/// Problems with `id` and `clientReference`, the members every field table leaves out.
fn check_identity(object: &Map<String, Value>) -> Vec<String> {
    let mut errors = Vec::new();
    match object.get("id") {
        None | Some(Value::Null) => errors.push("id must not be null".to_string()),
        Some(Value::String(id)) if id.trim().is_empty() => {
            errors.push("id must not be empty".to_string())
        }
        Some(Value::String(id)) if id.chars().count() > MAX_ID => {
            errors.push(format!("id must have at most {MAX_ID} characters"))
        }
        Some(Value::String(id)) if id.chars().any(char::is_control) => {
            errors.push("id must not contain control characters".to_string())
        }
        Some(Value::String(id)) if MODULE.mock(id).is_some() => errors.push(format!(
            "id {id} is reserved for test results and cannot be used for a report"
        )),
        Some(Value::String(_)) => {}
        Some(_) => errors.push("id must be a string".to_string()),
    }
    match object.get("clientReference") {
        None | Some(Value::Null) => {}
        Some(Value::String(r)) if r.chars().count() > MAX_TEXT => errors.push(format!(
            "clientReference must have at most {MAX_TEXT} characters"
        )),
        Some(Value::String(_)) => {}
        Some(_) => errors.push("clientReference must be a string".to_string()),
    }
    errors
}

/// Validates the request against the module's schema and answers the memento and magic link.
#[tracing::instrument(name = "birthnotice_memento", skip_all, fields(user = %user.0.name))]
pub async fn create(
    user: ApiUser,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    master: web::Data<MasterKey>,
) -> Result<HttpResponse, ApiError> {
    let body = read_body(payload, settings.max_body_bytes).await?;
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::Validation(vec![format!("invalid JSON: {e}")]))?;
    let Value::Object(object) = value else {
        return Err(ApiError::Validation(vec![
            "the body must be a JSON object".into()
        ]));
    };
    let mut errors = check_identity(&object);
    errors.extend(validate(FIELDS, &object, &["id", "clientReference"]));
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let data = strip_empty(Value::Object(object)).unwrap_or_else(|| json!({}));
    let key = UserKey::cached(&master, &user.0.memento_key)
        .map_err(|e| ApiError::Internal(format!("memento key of {}: {e}", user.0.name)))?;
    let memento = seal_memento(&key, &data);
    let token = MagicToken {
        username: user.0.name.clone(),
        target_url: FORM_PATH.to_string(),
        expires_at: Utc::now() + settings.token_lifetime,
    }
    .seal(&key);
    tracing::info!(id = %data["id"].as_str().unwrap_or_default(), "memento created");
    // Both values are base64url (`A-Z a-z 0-9 - _`), which JSON never escapes: writing the answer
    // directly saves scanning 2 KB for characters that cannot be there.
    let body = format!(r#"{{"magicLink":"/mtl/{token}?m={memento}","memento":"{memento}"}}"#);
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}
