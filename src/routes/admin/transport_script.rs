//! `/admin/api/v1/transports/{name}/script`: testers script a simulated authority at run time
//! (latency, transient faults, timeouts, resets, rejections, delayed or lost acknowledgements).
//!
//! `GET` answers the script, `PUT` replaces it, `POST …/script/rules` appends one rule, `DELETE`
//! resets it to configuration; every change answers the script as it now is. Bodies are read
//! strictly ([`meldewerk_transports::script::json`]): a bad script is a 400 listing every
//! problem, and the script stays as it was. A simulator running as its own process
//! (`transports.<name>.url`) is scripted there, at the same paths (`crate::simulate` serves them
//! with the functions here); this API then answers 409 saying where. Every change made through
//! this API is recorded in the audit log.

use std::sync::Arc;

use actix_web::{delete, get, post, put, web, HttpRequest, HttpResponse};
use meldewerk_storage::Store;
use meldewerk_transports::script::json::{rule_from_json, script_from_json, script_to_json};
use meldewerk_transports::script::{ScriptError, Scriptable};
use serde_json::{json, Value};

use super::openapi::{BodyRefusals, CrossSite, NoSimulatorHere, Refusals, Script, ScriptRule};
use super::{audited, error};
use crate::auth::Operator;
use crate::routes::json;
use crate::transports::{NoSimulator, Transports};
use crate::web::WebSettings;

/// The simulator called `name`, or why it cannot be scripted here.
fn scriptable(
    name: &str,
    transports: &Transports,
) -> Result<Arc<dyn meldewerk_transports::Simulated>, NoSimulator> {
    transports.simulator(name, "/script", "script it there")
}

/// 200 with the current script: `{"rules": [...], "transient_rate": r}`.
pub(crate) fn current(simulator: &dyn Scriptable) -> HttpResponse {
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
    json::read_json(req, payload, limit)
        .await
        .map_err(|e| error(e.status(), e.to_string()))
}

/// A change of a script from a JSON body: how it applies, what the log says, what the audit log
/// records.
pub(crate) struct ScriptEdit {
    change: fn(&dyn Scriptable, &Value) -> Result<(), ScriptError>,
    done: &'static str,
    action: &'static str,
}

/// A whole script from a JSON body replaces the script.
pub(crate) const REPLACE: ScriptEdit = ScriptEdit {
    change: |simulator, value| script_from_json(value).and_then(|s| simulator.set_script(s)),
    done: "script replaced",
    action: "replace-script",
};

/// One rule from a JSON body is appended to the script.
pub(crate) const APPEND: ScriptEdit = ScriptEdit {
    change: |simulator, value| rule_from_json(value).and_then(|rule| simulator.push_rule(rule)),
    done: "script rule added",
    action: "add-script-rule",
};

/// Reads a JSON body (at most `limit` bytes) and applies it to the script of the simulator
/// `name` with `edit`; answers the script as it now is, or what was wrong (the script stays as
/// it was).
pub(crate) async fn change_script(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
    name: &str,
    simulator: &dyn Scriptable,
    edit: &ScriptEdit,
) -> HttpResponse {
    let value = match json_body(req, payload, limit).await {
        Ok(value) => value,
        Err(answer) => return answer,
    };
    match (edit.change)(simulator, &value) {
        Ok(()) => {
            tracing::info!(transport = %name, "{}", edit.done);
            current(simulator)
        }
        Err(e) => invalid(e),
    }
}

/// [`change_script`] through the operator API: the simulator `name` must be scriptable here,
/// and a change is recorded in the audit log.
#[allow(clippy::too_many_arguments)] // a handler's extractors, handed on
async fn operator_change(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    transports: web::Data<Transports>,
    edit: &ScriptEdit,
) -> HttpResponse {
    let simulator = match scriptable(&name, &transports) {
        Ok(simulator) => simulator,
        Err(none) => return none.answer(),
    };
    let limit = settings.max_body_bytes;
    let answer = change_script(&req, payload, limit, &name, simulator.scriptable(), edit).await;
    audited(
        answer,
        &store,
        &operator,
        edit.action,
        format!("transport {name}"),
    )
    .await
}

/// Resets the script of the simulator `name`: 200 with the empty script.
pub(crate) fn reset(name: &str, simulator: &dyn Scriptable) -> HttpResponse {
    simulator.reset_script();
    tracing::info!(transport = %name, "script reset");
    current(simulator)
}

/// The current script: 200 `{"rules": [...], "transient_rate": r}`.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`xpersonenstand`).")),
    responses(
        (status = 200, description = "The script.", body = Script),
        NoSimulatorHere,
        Refusals,
    ),
)]
#[get("/transports/{name}/script")]
pub async fn get_script(
    _operator: Operator,
    name: web::Path<String>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    match scriptable(&name, &transports) {
        Ok(simulator) => current(simulator.scriptable()),
        Err(none) => none.answer(),
    }
}

/// Replaces the script: 200 with the new script; 400 `{"errors": [...]}` for a bad one.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`xpersonenstand`).")),
    request_body = Script,
    responses(
        (status = 200, description = "The script as it now is.", body = Script),
        BodyRefusals,
        NoSimulatorHere,
        CrossSite,
        Refusals,
    ),
)]
#[put("/transports/{name}/script")]
pub async fn put_script(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    operator_change(
        operator, store, req, name, payload, settings, transports, &REPLACE,
    )
    .await
}

/// Appends one rule: 200 with the whole script; 400 `{"errors": [...]}` for a bad rule.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`xpersonenstand`).")),
    request_body = ScriptRule,
    responses(
        (status = 200, description = "The script as it now is.", body = Script),
        BodyRefusals,
        NoSimulatorHere,
        CrossSite,
        Refusals,
    ),
)]
#[post("/transports/{name}/script/rules")]
pub async fn add_rule(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    req: HttpRequest,
    name: web::Path<String>,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    operator_change(
        operator, store, req, name, payload, settings, transports, &APPEND,
    )
    .await
}

/// Resets the script to configuration: 200 with the empty script.
#[utoipa::path(
    params(("name" = String, Path, description = "The transport's name (`xpersonenstand`).")),
    responses(
        (status = 200, description = "The script of configuration (empty).", body = Script),
        NoSimulatorHere,
        CrossSite,
        Refusals,
    ),
)]
#[delete("/transports/{name}/script")]
pub async fn reset_script(
    operator: Operator,
    store: web::Data<Arc<dyn Store>>,
    name: web::Path<String>,
    transports: web::Data<Transports>,
) -> HttpResponse {
    let answer = match scriptable(&name, &transports) {
        Ok(simulator) => reset(&name, simulator.scriptable()),
        Err(none) => none.answer(),
    };
    audited(
        answer,
        &store,
        &operator,
        "reset-script",
        format!("transport {name}"),
    )
    .await
}
