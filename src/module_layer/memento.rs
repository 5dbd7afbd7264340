//! `POST /api/{module}/v1/memento`, for every module: validate the request against the module's
//! schema, encrypt it, answer `{memento, magicLink}`. Nothing is stored.

use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use serde_json::{json, Map, Value};

use super::api_call::ApiCall;
use super::errors::{ApiError, ModuleError, Violation};
use super::fields::{validate, MAX_TEXT};
use super::{mock, DispatchProblem, IdMember, LookUp, MementoAnswer, ModuleInfo, Subject};
use crate::crypto::{MasterKey, UserKey};
use crate::routes::json::{self, JsonError};
use crate::telemetry::log_str;
use crate::tokens::{seal_memento, strip_empty, MagicToken};
use crate::web::WebSettings;

/// Longest accepted report id.
pub const MAX_ID: usize = 128;

/// Problems with the report's id and `clientReference`, the members every field table leaves out.
pub(crate) fn check_identity(info: &ModuleInfo, object: &Map<String, Value>) -> Vec<Violation> {
    let mut errors = Vec::new();
    let name = info.id.name();
    let id = |detail: String| Violation::at(format!("/{name}"), detail);
    match object.get(name) {
        None | Some(Value::Null) if matches!(info.id, IdMember::Generated(_)) => {}
        None | Some(Value::Null) => errors.push(id(format!("{name} must not be null"))),
        Some(Value::String(s)) if s.trim().is_empty() => {
            errors.push(id(format!("{name} must not be empty")))
        }
        Some(Value::String(s)) if s.chars().count() > MAX_ID => {
            errors.push(id(format!("{name} must have at most {MAX_ID} characters")))
        }
        Some(Value::String(s)) if s.chars().any(char::is_control) => {
            errors.push(id(format!("{name} must not contain control characters")))
        }
        Some(Value::String(s)) if mock::outcome(info, s).is_some() => errors.push(id(format!(
            "{name} {s} is reserved for test results and cannot be used for a report"
        ))),
        Some(Value::String(_)) => {}
        Some(_) => errors.push(id(format!("{name} must be a string"))),
    }
    if info.echoes_client_reference {
        let reference = |detail: String| Violation::at("/clientReference", detail);
        match object.get("clientReference") {
            None | Some(Value::Null) => {}
            Some(Value::String(r)) if r.chars().count() > MAX_TEXT => errors.push(reference(
                format!("clientReference must have at most {MAX_TEXT} characters"),
            )),
            Some(Value::String(_)) => {}
            Some(_) => errors.push(reference("clientReference must be a string".into())),
        }
    }
    errors
}

/// A problem [`super::Module::look_up`] found, as a violation of the request: its dotted path
/// as a JSON Pointer.
fn violation(problem: DispatchProblem) -> Violation {
    match problem.path {
        Some(path) => Violation::at(format!("/{}", path.replace('.', "/")), problem.message),
        None => Violation::whole(problem.message),
    }
}

/// The members of the request a form is made of (`Einrichtung` for the form with prefix
/// `Einrichtung.`) that were given as objects. They stay in the memento even when empty, since
/// they are what says which form the memento opens.
fn form_members(info: &ModuleInfo, request: &Map<String, Value>) -> Vec<&'static str> {
    info.forms
        .iter()
        .filter_map(|form| form.prefix.strip_suffix('.'))
        .filter(|member| request.get(*member).is_some_and(Value::is_object))
        .collect()
}

/// Validates the request against the module's schema and answers the memento and magic link.
#[tracing::instrument(name = "memento", skip_all, fields(module = call.context.info.module))]
pub(crate) async fn create(
    call: ApiCall,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    master: web::Data<MasterKey>,
) -> Result<HttpResponse, ModuleError> {
    create_memento(&call, payload, &settings, &master)
        .await
        .map_err(|e| call.error(e))
}

/// The request's JSON object, read strictly (`application/json`, at most `limit` bytes, no
/// duplicate member names), or the error a module endpoint answers.
pub(crate) async fn read_request(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Map<String, Value>, ApiError> {
    json::read_object(req, payload, limit)
        .await
        .map_err(|e| match e {
            JsonError::UnsupportedMediaType => ApiError::UnsupportedMediaType,
            JsonError::TooLarge(limit) => ApiError::TooLarge(limit),
            JsonError::TimedOut(secs) => ApiError::TimedOut(secs),
            JsonError::Invalid(message) => ApiError::Validation(vec![Violation::whole(message)]),
        })
}

async fn create_memento(
    call: &ApiCall,
    payload: web::Payload,
    settings: &WebSettings,
    master: &MasterKey,
) -> Result<HttpResponse, ApiError> {
    let ApiCall { req, user, .. } = call;
    let context = &call.context;
    let object = read_request(req, payload, settings.max_body_bytes).await?;
    let info = context.info;
    let mut errors = check_identity(info, &object);
    let id_and_reference = [info.id.name(), "clientReference"];
    let checked_above = if info.echoes_client_reference {
        &id_and_reference[..]
    } else {
        &id_and_reference[..1]
    };
    errors.extend(validate(&context.fields, &object, checked_above));
    errors.extend(context.module.check_request(&object));
    if !errors.is_empty() {
        return Err(ApiError::Validation(errors));
    }
    let look_up = LookUp {
        store: call.store(),
        user: &user.0,
        id: object
            .get(info.id.name())
            .and_then(Value::as_str)
            .unwrap_or_default(),
    };
    let found = context
        .module
        .look_up(look_up, Subject::Request(&object))
        .await?;
    if !found.is_empty() {
        return Err(ApiError::Validation(
            found.into_iter().map(violation).collect(),
        ));
    }
    let kept = form_members(info, &object);
    let mut data = strip_empty(Value::Object(object)).unwrap_or_else(|| json!({}));
    if let Some(data) = data.as_object_mut() {
        for member in kept {
            data.entry(member).or_insert_with(|| json!({}));
        }
    }
    let form = context.module.form_for(&data).ok_or_else(|| {
        ApiError::Internal(format!("a valid {} request opens no form", info.module))
    })?;
    let key = UserKey::cached(master, &user.0.memento_key)
        .map_err(|e| ApiError::Internal(format!("memento key: {e}")))?;
    let memento = seal_memento(&key, info.module, &data);
    tracing::info!(
        user = %log_str(&user.0.name),
        id = %log_str(info.report_id(&data).unwrap_or_default()),
        "memento created"
    );
    // Both values are base64url (`A-Z a-z 0-9 - _`), which JSON never escapes: writing the answer
    // directly saves scanning 2 KB for characters that cannot be there.
    let body = match info.memento_answer {
        MementoAnswer::MementoAndLink if user.0.magic_links => {
            let token = MagicToken {
                username: user.0.name.clone(),
                target_url: info.landing.unwrap_or(form.path).to_string(),
                expires_at: Utc::now() + settings.token_lifetime,
            }
            .seal(&key);
            format!(r#"{{"magicLink":"/mtl/{token}?m={memento}","memento":"{memento}"}}"#)
        }
        // A user whose configuration issues no tokens gets the memento only (spec/02 §4.1).
        MementoAnswer::MementoAndLink => {
            format!(r#"{{"magicLink":null,"memento":"{memento}"}}"#)
        }
        MementoAnswer::MementoOnly => format!(r#"{{"memento":"{memento}"}}"#),
    };
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    static REPORT_ID: ModuleInfo =
        ModuleInfo::new("m", &[], &[], "demis").identified_by(IdMember::Required("reportId"));
    static MELDE_ID: ModuleInfo =
        ModuleInfo::new("m", &[], &[], "demis").identified_by(IdMember::Generated("MeldeId"));

    fn problems(info: &ModuleInfo, request: Value) -> Vec<(Option<String>, String)> {
        let Value::Object(object) = request else {
            panic!("an object")
        };
        check_identity(info, &object)
            .into_iter()
            .map(|v| (v.pointer, v.detail))
            .collect()
    }

    #[test]
    fn the_id_is_checked_under_the_contracts_name() {
        assert_eq!(
            problems(&REPORT_ID, json!({"id": "a"})),
            [(
                Some("/reportId".to_owned()),
                "reportId must not be null".to_owned()
            )]
        );
        assert_eq!(
            problems(&REPORT_ID, json!({"reportId": 7})),
            [(
                Some("/reportId".to_owned()),
                "reportId must be a string".to_owned()
            )]
        );
        assert!(problems(&REPORT_ID, json!({"reportId": "L-1"})).is_empty());
        assert_eq!(
            REPORT_ID.report_id(&json!({"reportId": "L-1"})),
            Some("L-1")
        );
    }

    #[test]
    fn a_generated_id_may_be_left_out_but_not_be_wrong() {
        assert!(problems(&MELDE_ID, json!({})).is_empty());
        assert!(problems(&MELDE_ID, json!({"MeldeId": null})).is_empty());
        assert_eq!(
            problems(&MELDE_ID, json!({"MeldeId": " "})),
            [(
                Some("/MeldeId".to_owned()),
                "MeldeId must not be empty".to_owned()
            )]
        );
        assert_eq!(MELDE_ID.report_id(&json!({})), None);
    }
}
