//! The authority's own FHIR operation, for a simulator whose registry entry says
//! [`Protocol::FhirOperation`](meldewerk_transports::Protocol::FhirOperation):
//! `POST [base]/$<operation>` (at the root or below a base path such as `/fhir`) with a FHIR
//! Bundle. `200` with the answer the simulator recorded (a `Parameters` resource), `422` with an
//! `OperationOutcome` for a refusal, `503` with one for a (scripted) transient fault; errors of
//! the request itself (too large, too slow) are `OperationOutcome`s too, the FHIR error shape.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use meldewerk_fhir::answer::refusal_json;
use meldewerk_transports::wire::MAX_BODY_BYTES;
use meldewerk_transports::{Answer, Delivery, Finished, Outcome, Protocol, TransportError};

use serde_json::{json, Map, Value};

use super::Shared;
use crate::routes::json::read_bytes;
use crate::telemetry::log_str;

/// The media type of every answer.
const FHIR_JSON: &str = "application/fhir+json";

/// Registers `POST /$<operation>` and `POST /<base>/$<operation>`.
pub(super) fn configure(cfg: &mut web::ServiceConfig, operation: &'static str) {
    let path = format!("/${operation}");
    cfg.service(
        web::resource([path.clone(), format!("/{{base:.*}}{path}")]).route(web::post().to(process)),
    );
}

/// The operation's entries of the process's OpenAPI document: the paths [`configure`]
/// registers (`{base}` standing for any base path), each with its one `POST`.
pub(super) fn paths(operation: &str) -> Map<String, Value> {
    let outcome = |description: &str| {
        json!({"description": description, "content": {FHIR_JSON: {"schema": {
            "type": "object",
            "description": "A FHIR `OperationOutcome`, one error issue per reason.",
        }}}})
    };
    let header = |name: &str, description: &str| {
        json!({"name": name, "in": "header", "required": false,
            "schema": {"type": "string"}, "description": description})
    };
    let post = |id: String, base: bool| {
        let mut parameters = vec![
            header(
                Protocol::IDEMPOTENCY_KEY_HEADER,
                "The delivery's idempotency key.",
            ),
            header(Protocol::MODULE_HEADER, "The sending module."),
            header(Protocol::REPORT_ID_HEADER, "The report's id."),
        ];
        if base {
            parameters.insert(
                0,
                json!({"name": "base", "in": "path", "required": true,
                "schema": {"type": "string"}, "description": "Any base path (`fhir`)."}),
            );
        }
        json!({"post": {
            "tags": ["fhir"],
            "operationId": id,
            "summary": format!("The authority's operation `${operation}` with a FHIR Bundle"),
            "parameters": parameters,
            "requestBody": {"required": true, "content": {FHIR_JSON: {"schema": {
                "type": "object", "description": "A FHIR `Bundle`."}}}},
            "responses": {
                "200": {"description": "The answer the simulator recorded (a FHIR `Parameters` \
                    resource).", "content": {FHIR_JSON: {"schema": {"type": "object"}}}},
                "408": outcome("The body did not arrive in time."),
                "413": outcome("The body is too large."),
                "422": outcome("Refused, with every reason."),
                "500": outcome("The simulator could not answer the operation."),
                "503": outcome("A (scripted) transient fault."),
            },
        }})
    };
    let mut paths = Map::new();
    paths.insert(format!("/${operation}"), post(operation.to_owned(), false));
    paths.insert(
        format!("/{{base}}/${operation}"),
        post(format!("{operation}_below_base"), true),
    );
    paths
}

/// An `OperationOutcome` answer with one error issue per reason.
fn outcome(status: StatusCode, reasons: &[String]) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(FHIR_JSON)
        .body(refusal_json(reasons))
}

/// The operation: the bundle handed to the simulator as a delivery, its answer in FHIR.
async fn process(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let body = match read_bytes(payload, MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(e) => return outcome(e.status(), &[e.to_string()]),
    };
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let delivery = Delivery {
        idempotency_key: header(Protocol::IDEMPOTENCY_KEY_HEADER),
        module: header(Protocol::MODULE_HEADER),
        report_id: header(Protocol::REPORT_ID_HEADER),
        // The simulator takes the bundle's own id for it.
        message_uuid: String::new(),
        content_type: header("content-type"),
        body,
        signature: None,
        sender: None,
    };
    // Logged before the script's latency: a tester sees which notifications are in flight.
    tracing::info!(
        simulator = shared.kind.name,
        module = %log_str(&delivery.module),
        report_id = %log_str(&delivery.report_id),
        "notification arrived"
    );
    let answer = match shared.simulator.submit(delivery).await {
        Ok(Answer::Finished(finished)) => finished,
        Ok(Answer::AwaitingAck(_)) => {
            return outcome(
                StatusCode::INTERNAL_SERVER_ERROR,
                &[format!(
                    "{} took the notification for a later acknowledgement, which this \
                     operation cannot answer",
                    shared.kind.name
                )],
            )
        }
        // Only `Transient` comes from a submit; the others name inbox fetches.
        Err(TransportError::Transient(message)) => {
            return outcome(StatusCode::SERVICE_UNAVAILABLE, &[message])
        }
        Err(e) => return outcome(StatusCode::SERVICE_UNAVAILABLE, &[e.to_string()]),
    };
    match answer {
        Finished {
            outcome: Outcome::Failure { reason },
            ..
        } => {
            let reasons: Vec<String> = reason.lines().map(str::to_owned).collect();
            outcome(StatusCode::UNPROCESSABLE_ENTITY, &reasons)
        }
        Finished {
            outcome: Outcome::Success { receipt, .. },
            transport_ref,
            ..
        } => {
            let recorded = transport_ref
                .as_deref()
                .map(|reference| shared.simulator.recorded_answer(reference, Some(receipt)));
            match recorded {
                Some(Ok(Some(document))) => {
                    HttpResponse::Ok().content_type(FHIR_JSON).body(document)
                }
                Some(Err(e)) => outcome(StatusCode::SERVICE_UNAVAILABLE, &[e.to_string()]),
                _ => outcome(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &["the simulator recorded no answer for the notification it accepted".into()],
                ),
            }
        }
    }
}
