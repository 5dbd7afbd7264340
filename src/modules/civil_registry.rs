//! What the civil-registry modules share: the report endpoints (`GET /reports`,
//! `GET /reports/{id}[?peek=true]`), the result body, and the reserved mock ids.

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use meldewerk_storage::{Consumed, Report, ReportKey, ReportStatus, Store};
use serde_json::{json, Value};

use super::errors::ApiError;
use crate::auth::ApiUser;

/// A civil-registry module as the shared endpoints need to know it.
#[derive(Debug, Clone, Copy)]
pub struct CivilRegistryModule {
    /// Path segment and `module` constant of results, e.g. `birthnotice`.
    pub segment: &'static str,
    /// Prefix of the reserved mock ids, e.g. `BIRTHNOTICE` for `BIRTHNOTICE-TEST-SUCCESS`.
    pub mock_prefix: &'static str,
    /// Whether results carry `clientReference`.
    pub echoes_client_reference: bool,
}

/// Outcome a reserved mock id simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockOutcome {
    /// `…-TEST-SUCCESS`
    Success,
    /// `…-TEST-PENDING`
    Pending,
    /// `…-TEST-FAILURE`
    Failure,
}

impl CivilRegistryModule {
    /// The mock outcome an id is reserved for, if it is one of the module's mock ids.
    pub fn mock(&self, id: &str) -> Option<MockOutcome> {
        let suffix = id.strip_prefix(self.mock_prefix)?.strip_prefix("-TEST-")?;
        match suffix {
            "SUCCESS" => Some(MockOutcome::Success),
            "PENDING" => Some(MockOutcome::Pending),
            "FAILURE" => Some(MockOutcome::Failure),
            _ => None,
        }
    }

    fn key(&self, owner: &str, id: &str) -> ReportKey {
        ReportKey {
            owner: owner.into(),
            module: self.segment.into(),
            id: id.into(),
        }
    }

    /// The result body of a stored report.
    pub fn result_json(&self, report: &Report) -> Value {
        let mut body = json!({
            "id": report.key.id,
            "status": report.status,
            "module": self.segment,
            "submittedAt": rfc3339(report.submitted_at),
            "portal": report.portal,
            "receiptPdf": (report.status == ReportStatus::Success)
                .then(|| report.receipt_pdf.as_ref().map(|pdf| STANDARD.encode(pdf)))
                .flatten(),
            "failureReason": (report.status == ReportStatus::Failure)
                .then(|| report.failure_reason.clone())
                .flatten(),
        });
        if self.echoes_client_reference {
            body["clientReference"] = json!(report.client_reference);
        }
        body
    }

    fn mock_json(&self, id: &str, outcome: MockOutcome) -> Value {
        let now = Utc::now();
        let (status, receipt, reason) = match outcome {
            MockOutcome::Success => (
                "SUCCESS",
                Some(STANDARD.encode(crate::mock::receipt(self.segment, id, now))),
                None,
            ),
            MockOutcome::Pending => ("PENDING", None, None),
            MockOutcome::Failure => (
                "FAILURE",
                None,
                Some("Simulierter Fehler: das Standesamt hat die Testmeldung abgelehnt (Test-ID)"),
            ),
        };
        let mut body = json!({
            "id": id,
            "status": status,
            "module": self.segment,
            "submittedAt": rfc3339(now),
            "portal": "meldewerk-mock",
            "receiptPdf": receipt,
            "failureReason": reason,
        });
        if self.echoes_client_reference {
            body["clientReference"] = Value::Null;
        }
        body
    }
}

/// `YYYY-MM-DDThh:mm:ss+00:00`, the contract's date-time with offset.
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// Registers `GET /reports` and `GET /reports/{id}` in the module's scope.
pub fn configure(module: CivilRegistryModule) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.app_data(web::Data::new(module))
            .route("/reports", web::get().to(list_pending))
            .route("/reports/{id}", web::get().to(get_report));
    }
}

/// `GET /api/{seg}/v1/reports`: ids of the caller's dispatched reports not yet consumed.
#[tracing::instrument(skip_all, fields(user = %user.0.name))]
async fn list_pending(
    user: ApiUser,
    module: web::Data<CivilRegistryModule>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, ApiError> {
    let ids = store.pending_ids(&user.0.name, module.segment).await?;
    Ok(HttpResponse::Ok().json(ids))
}

/// Whether `peek` asks for a non-consuming read; anything but `true`/`false` is a 400.
fn parse_peek(req: &HttpRequest) -> Result<bool, ApiError> {
    let mut peek = false;
    for (name, value) in url_pairs(req.query_string()) {
        if name == "peek" {
            peek = match value.as_str() {
                "true" => true,
                "false" => false,
                other => {
                    return Err(ApiError::Validation(vec![format!(
                        "peek must be true or false, got {other:?}"
                    )]))
                }
            };
        }
    }
    Ok(peek)
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// `GET /api/{seg}/v1/reports/{id}[?peek=true]`: the result. Without `peek` a final result is
/// consumed (atomically: of two concurrent reads one gets 200, the other 410).
#[tracing::instrument(skip_all, fields(user = %user.0.name, id = %id))]
async fn get_report(
    req: HttpRequest,
    user: ApiUser,
    id: web::Path<String>,
    module: web::Data<CivilRegistryModule>,
    store: web::Data<Arc<dyn Store>>,
) -> Result<HttpResponse, ApiError> {
    let peek = parse_peek(&req)?;
    let id = id.into_inner();
    if let Some(outcome) = module.mock(&id) {
        return Ok(HttpResponse::Ok().json(module.mock_json(&id, outcome)));
    }
    let key = module.key(&user.0.name, &id);
    let report = if peek {
        match store.report(&key).await? {
            Some(report) if report.expired_at.is_some() => return Err(ApiError::Expired(id)),
            Some(report) if report.polled => return Err(ApiError::AlreadyRetrieved(id)),
            Some(report) => report,
            None => return Err(ApiError::NotFound(id)),
        }
    } else {
        match store.consume_report(&key).await? {
            Consumed::Report(report) => *report,
            Consumed::AlreadyRetrieved => return Err(ApiError::AlreadyRetrieved(id)),
            Consumed::Expired => return Err(ApiError::Expired(id)),
            Consumed::NotFound => return Err(ApiError::NotFound(id)),
        }
    };
    Ok(HttpResponse::Ok().json(module.result_json(&report)))
}
