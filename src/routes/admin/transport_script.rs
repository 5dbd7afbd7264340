//! `/admin/api/v1/transports/{name}/script`: testers script a simulated authority at run time
//! (latency, transient faults, timeouts, resets, rejections, delayed or lost acknowledgements).
//!
//! `GET` answers the script, `PUT` replaces it, `POST …/script/rules` appends one rule, `DELETE`
//! resets it to configuration; every change answers the script as it now is. Bodies are read
//! strictly ([`meldewerk_transports::script::json`]): a bad script is a 400 listing every
//! problem, and the script stays as it was.

use actix_web::http::StatusCode;
use actix_web::{delete, get, post, put, web, HttpRequest, HttpResponse};
use meldewerk_transports::script::json::{rule_from_json, script_from_json, script_to_json};
use meldewerk_transports::script::{ScriptError, Scriptable};
use meldewerk_transports::xpersonenstand::Simulator;
use serde_json::{json, Value};

use super::error;
use crate::auth::Operator;
use crate::routes::json::{self, JsonError};
use crate::startup::WebSettings;

/// The simulator called `name`. One arm per simulated authority.
fn scriptable<'a>(
    name: &str,
    xpersonenstand: &'a web::Data<Simulator>,
) -> Option<&'a dyn Scriptable> {
    match name {
        "xpersonenstand" => Some(xpersonenstand.get_ref()),
        _ => None,
    }
}

fn unknown(name: &str) -> HttpResponse {
    error(
        StatusCode::NOT_FOUND,
        format!("no simulated transport named {name}"),
    )
}

fn current(simulator: &dyn Scriptable) -> HttpResponse {
    HttpResponse::Ok().json(script_to_json(&simulator.script()))
}

fn invalid(ScriptError(errors): ScriptError) -> HttpResponse {
    HttpResponse::BadRequest().json(json!({ "errors": errors }))
}

/// The body as strict JSON (see [`crate::routes::json`]), or the 400/413/415 answer.
async fn json_body(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Value, HttpResponse> {
    json::read_json(req, payload, limit).await.map_err(|e| {
        let status = match e {
            JsonError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            JsonError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            JsonError::Invalid(_) => StatusCode::BAD_REQUEST,
        };
        error(status, e.to_string())
    })
}

/// The current script: 200 `{"rules": [...], "transient_rate": r}`.
#[get("/transports/{name}/script")]
pub async fn get_script(
    _operator: Operator,
    name: web::Path<String>,
    xpersonenstand: web::Data<Simulator>,
) -> HttpResponse {
    match scriptable(&name, &xpersonenstand) {
        Some(simulator) => current(simulator),
        None => unknown(&name),
    }
}

/// Reads a JSON body and applies it to the named simulator's script with `change`; answers the
/// script as it now is, or what was wrong (the script stays as it was).
async fn change_script(
    req: &HttpRequest,
    name: &str,
    payload: web::Payload,
    settings: &WebSettings,
    xpersonenstand: &web::Data<Simulator>,
    change: impl FnOnce(&dyn Scriptable, &Value) -> Result<(), ScriptError>,
    done: &str,
) -> HttpResponse {
    let Some(simulator) = scriptable(name, xpersonenstand) else {
        return unknown(name);
    };
    let value = match json_body(req, payload, settings.max_body_bytes).await {
        Ok(value) => value,
        Err(answer) => return answer,
    };
    match change(simulator, &value) {
        Ok(()) => {
            tracing::info!(transport = %name, "{done}");
            current(simulator)
        }
        Err(e) => invalid(e),
    }
}

/// Replaces the script: 200 with the new script; 400 `{"errors": [...]}` for a bad one.
#[put("/transports/{name}/script")]
pub async fn put_script(
    _operator: Operator,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    xpersonenstand: web::Data<Simulator>,
) -> HttpResponse {
    let replace = |simulator: &dyn Scriptable, value: &Value| {
        script_from_json(value).and_then(|script| simulator.set_script(script))
    };
    change_script(
        &req,
        &name,
        payload,
        &settings,
        &xpersonenstand,
        replace,
        "script replaced",
    )
    .await
}

/// Appends one rule: 200 with the whole script; 400 `{"errors": [...]}` for a bad rule.
#[post("/transports/{name}/script/rules")]
pub async fn add_rule(
    _operator: Operator,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    xpersonenstand: web::Data<Simulator>,
) -> HttpResponse {
    let append = |simulator: &dyn Scriptable, value: &Value| {
        rule_from_json(value).and_then(|rule| simulator.push_rule(rule))
    };
    change_script(
        &req,
        &name,
        payload,
        &settings,
        &xpersonenstand,
        append,
        "script rule added",
    )
    .await
}

/// Resets the script to configuration: 200 with the empty script.
#[delete("/transports/{name}/script")]
pub async fn reset_script(
    _operator: Operator,
    name: web::Path<String>,
    xpersonenstand: web::Data<Simulator>,
) -> HttpResponse {
    match scriptable(&name, &xpersonenstand) {
        Some(simulator) => {
            simulator.reset_script();
            tracing::info!(transport = %name, "script reset");
            current(simulator)
        }
        None => unknown(&name),
    }
}
