//! The bed occupancy module's own API routes: `POST /report`, the direct submission answered
//! with the reporting system's decision, and `GET /status/{reportId}`, the stored outcome.
//! Decisions on what the contract leaves open are in docs/decisions.md ("bedreport").

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use meldewerk_actors::Engine;
use meldewerk_storage::{Consumed, Report, ReportKey, ReportResult, ReportStatus, StoreError};
use serde::Serialize;
use serde_json::{json, Map, Value};
use utoipa::ToSchema;

use super::content::missing;
use super::fields::{DETAILS, OCCUPIED};
use super::FORM_NAME;
use crate::module_layer::api_call::ApiCall;
use crate::module_layer::dispatch::{dispatch_and_await_end, signed_message, Awaited};
use crate::module_layer::errors::{ApiError, ModuleError, Violation};
use crate::module_layer::fields::validate;
use crate::module_layer::openapi::schema;
use crate::module_layer::openapi::{
    json_content, json_response, ModuleDocument, API_ERRORS, API_USER, BODY_ERRORS,
};
use crate::module_layer::Completed;
use crate::module_layer::{memento, reports, rfc3339, routes};
use crate::telemetry::log_str;
use crate::web::WebSettings;

/// Largest body `POST /report` reads (or `max_body_bytes`, if smaller): a report with every
/// text at its longest fits several times.
const MAX_REPORT_BYTES: usize = 32 * 1024;

/// `errorMsg` of a report the reporting system has not decided on yet.
const UNDECIDED: &str = "the reporting system has not decided yet; the report is being \
                         delivered, read GET /api/bedreport/v1/status/{reportId} for its outcome";

/// How long `POST /report` waits for the decision (the module's `answer_wait_secs`).
#[derive(Debug, Clone, Copy)]
struct AnswerWait(Duration);

/// Registers `/report` and `/status/{reportId}` inside the module's API scope.
pub(super) fn configure(cfg: &mut web::ServiceConfig, wait: Duration) {
    cfg.app_data(web::Data::new(AnswerWait(wait)))
        .service(
            web::resource("/report")
                .route(web::post().to(submit))
                .default_service(web::to(routes::only_post)),
        )
        .service(
            web::resource("/status/{reportId}")
                .route(web::get().to(status))
                .default_service(web::to(routes::only_get)),
        );
}

/// The answer of a direct submission (spec/02 §2.5).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct SubmissionAnswer<'a> {
    /// The report's id.
    report_id: &'a str,
    /// Whether the reporting system accepted the report.
    succeeded: bool,
    /// Why it was refused, or that it is still undecided (with 202); null when accepted.
    error_msg: Option<&'a str>,
}

/// The answer of a direct submission: `{reportId, succeeded, errorMsg}` with `status`.
fn answer(status: StatusCode, id: &str, failure: Option<&str>) -> HttpResponse {
    HttpResponse::build(status).json(SubmissionAnswer {
        report_id: id,
        succeeded: status == StatusCode::OK && failure.is_none(),
        error_msg: failure,
    })
}

/// The violations of the direct submission's rules beyond the field table: every hospital
/// detail and both occupied-bed counts must be given (spec/02 §2.5, spec/04).
fn mandatory(object: &Map<String, Value>) -> Vec<Violation> {
    let content = Value::Object(object.clone());
    missing(&content)
        .into_iter()
        .map(|m| {
            let pointer = format!("/{}", m.path.replace('.', "/"));
            let rule = if m.blank { "be empty" } else { "be null" };
            Violation::at(pointer, format!("{} must not {rule}", m.path))
        })
        .collect()
}

/// `POST /api/bedreport/v1/report`: validate strictly, store and dispatch the report, and
/// answer the reporting system's decision (200), or 202 when it takes longer than the wait.
#[tracing::instrument(name = "bed_report", skip_all)]
async fn submit(
    call: ApiCall,
    payload: web::Payload,
    settings: web::Data<WebSettings>,
    engine: web::Data<Engine>,
    wait: web::Data<AnswerWait>,
) -> Result<HttpResponse, ModuleError> {
    let ApiCall { user, context, .. } = &call;
    let limit = settings.max_body_bytes.min(MAX_REPORT_BYTES);
    let fail = |e| call.error(e);
    let mut object = memento::read_request(&call.req, payload, limit)
        .await
        .map_err(fail)?;
    let info = context.info;
    let member = info.id.name();
    let mut errors = memento::check_identity(info, &object);
    errors.extend(validate(&context.fields, &object, &[member]));
    errors.extend(mandatory(&object));
    if !errors.is_empty() {
        return Err(fail(ApiError::Validation(errors)));
    }
    let Some(Value::String(id)) = object.remove(member) else {
        return Err(fail(ApiError::Internal(format!(
            "a checked {member} is a string"
        ))));
    };
    let key = ReportKey {
        owner: user.0.name.clone(),
        module: info.module.into(),
        id: id.clone(),
    };
    let content = Value::Object(object);
    // Built and signed now, as a form's submit does, so that the report is dispatched with the
    // message it delivers. One that cannot be built goes without: the engine's build then
    // ends it in FAILURE with the reason, answered below.
    let built = context.module.checked_message(Completed {
        form: &super::FORMS[0],
        id: &id,
        content: &content,
    });
    let mut report = Report::new_pending(
        key,
        content,
        None,
        uuid::Uuid::new_v4().to_string(),
        Utc::now(),
    );
    if let Ok(built) = built {
        report.message = signed_message(context.signer.as_ref(), &report, built).await;
    }
    let awaited = dispatch_and_await_end(call.store(), &engine, report, wait.0).await;
    let (user, logged) = (log_str(&user.0.name), log_str(&id));
    match awaited {
        Ok(Awaited::Ended(finished)) => {
            tracing::info!(%user, id = %logged, succeeded = finished.failure.is_none(), "bed occupancy report decided");
            Ok(answer(StatusCode::OK, &id, finished.failure.as_deref()))
        }
        Ok(Awaited::StillRunning) => {
            tracing::info!(%user, id = %logged, "bed occupancy report undecided within the wait");
            Ok(answer(StatusCode::ACCEPTED, &id, Some(UNDECIDED)))
        }
        Err(StoreError::Conflict(_)) => Err(fail(ApiError::Duplicate(id))),
        Err(e) => Err(fail(e.into())),
    }
}

/// The status object of spec/02 §2.5 for report `id`: `succeeded` once the reporting system
/// accepted it, `errorMsg` its reason for a refusal (or, while undecided, that it is), the
/// receipt when there is one. Also the body of the layer's `GET /reports/{reportId}`.
pub(super) fn status_body(id: &str, result: &ReportResult) -> Value {
    let error_msg = match result.status {
        ReportStatus::Success => None,
        ReportStatus::Failure => result.failure_reason.as_deref(),
        ReportStatus::Pending => Some(UNDECIDED),
    };
    let status = Status {
        report_id: id,
        succeeded: result.status == ReportStatus::Success,
        send_date: rfc3339(result.submitted_at),
        form_name: FORM_NAME,
        error_msg,
        base64_pdf: (result.status == ReportStatus::Success)
            .then_some(result.receipt_base64.as_deref())
            .flatten(),
    };
    serde_json::to_value(status).expect("a status serializes")
}

/// The stored outcome of a report (spec/02 §2.5).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct Status<'a> {
    /// The report's id.
    report_id: &'a str,
    /// Whether the reporting system accepted the report.
    succeeded: bool,
    /// When the report was sent.
    #[schema(format = DateTime)]
    send_date: String,
    /// The form's name, `Bettenbelegung`.
    form_name: &'a str,
    /// The reporting system's reason for a refusal, or that it has not decided yet; null when
    /// accepted.
    error_msg: Option<&'a str>,
    /// The receipt (a base64 PDF), once accepted.
    #[schema(content_encoding = "base64", content_media_type = "application/pdf")]
    base64_pdf: Option<&'a str>,
}

/// `GET /api/bedreport/v1/status/{reportId}[?peek=true]`: the stored outcome, 200 once decided
/// (202 while the reporting system has not decided). A read without `peek` marks a decided
/// report retrieved (it leaves `GET /reports`), yet it stays readable until retention removes
/// it; 404 for an unknown id, another user's, or one past retention.
#[tracing::instrument(name = "bed_status", skip_all)]
async fn status(call: ApiCall, id: web::Path<String>) -> Result<HttpResponse, ModuleError> {
    read_status(&call, &id).await.map_err(|e| call.error(e))
}

async fn read_status(call: &ApiCall, id: &str) -> Result<HttpResponse, ApiError> {
    let (info, store) = (call.context.info, call.store());
    let peek = reports::parse_peek(&call.req)?;
    let key = reports::key(&call.user, info, id);
    let mut result = reports::stored_result(store, &key, info).await?;
    if result.status.is_final() && !result.polled && !peek {
        result = match store.consume_report(&key).await? {
            Consumed::Result(consumed) => consumed,
            // Another read marked it first: the same outcome.
            Consumed::AlreadyRetrieved => result,
            Consumed::Expired | Consumed::NotFound => return Err(ApiError::NotFound(id.into())),
        };
    }
    let code = if result.status.is_final() {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(HttpResponse::build(code).json(status_body(id, &result)))
}

/// The module's part of its OpenAPI document: `POST /report`, `GET /status/{reportId}`, and its
/// status object as the body of the layer's `GET /reports/{reportId}` too.
pub(super) fn document(doc: &mut ModuleDocument) {
    let status = doc.schema_of::<Status>("BedStatus");
    let answer = doc.schema_of::<SubmissionAnswer>("SubmissionAnswer");
    let mandatory: Vec<&str> = DETAILS.iter().chain(OCCUPIED.iter()).copied().collect();
    let request = doc
        .component("MementoRequest")
        .cloned()
        .map(|request| schema::requiring(request, &mandatory))
        .expect("the layer wrote the memento request");
    let request = doc.schema("DirectSubmission", request);
    let decided = |what: &str, schema: &Value| json_response(what, schema.clone());
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        decided("Decided: `succeeded` says how.", &answer),
    );
    responses.insert(
        "202".into(),
        decided(
            "Not decided within the wait; read `GET /status/{reportId}`.",
            &answer,
        ),
    );
    responses.extend(doc.errors(
        &[&BODY_ERRORS[..], &API_ERRORS, &[405, 409]].concat(),
        &[(409, "The reportId was used before.")],
    ));
    let path = doc.api_path("/report");
    doc.operation(
        "post",
        &path,
        json!({
            "operationId": "bedreport_report",
            "summary": "Send a bed occupancy report directly and wait for the decision",
            "security": [{API_USER: []}],
            "requestBody": {"required": true, "content": json_content(request)},
            "responses": responses,
        }),
    );
    let mut responses = Map::new();
    responses.insert("200".into(), decided("The decided outcome.", &status));
    responses.insert("202".into(), decided("Not decided yet.", &status));
    responses.extend(doc.errors(&[&API_ERRORS[..], &[400, 404, 405]].concat(), &[]));
    let path = doc.api_path("/status/{reportId}");
    doc.operation(
        "get",
        &path,
        json!({
            "operationId": "bedreport_status",
            "summary": "Read a report's outcome; a decided one leaves the pending list unless `peek=true`",
            "security": [{API_USER: []}],
            "parameters": [
                {"name": "reportId", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "peek", "in": "query", "required": false,
                 "schema": {"type": "boolean", "default": false},
                 "description": "`true` reads without marking the report retrieved."},
            ],
            "responses": responses,
        }),
    );
    // The layer's `GET /reports/{reportId}` answers the same status object.
    doc.schema("ReportResult", status);
}
