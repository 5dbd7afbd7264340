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
            outcome: Outcome::Success { .. },
            transport_ref,
            ..
        } => {
            let recorded = transport_ref
                .as_deref()
                .map(|reference| shared.simulator.recorded_answer(reference));
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
