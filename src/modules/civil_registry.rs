//! What the civil-registry modules share: the report endpoints (`GET /reports`,
//! `GET /reports/{id}[?peek=true]`), the result body, and the reserved mock ids.

use std::sync::Arc;

use actix_web::{web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use meldewerk_storage::{Consumed, ReportKey, ReportResult, ReportStatus, Store};
use serde::Serialize;
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

    /// The result body of the stored report `id`.
    fn result_body<'a>(&self, id: &'a str, report: &'a ReportResult) -> ResultBody<'a> {
        ResultBody {
            client_reference: self
                .echoes_client_reference
                .then_some(report.client_reference.as_deref()),
            failure_reason: (report.status == ReportStatus::Failure)
                .then_some(report.failure_reason.as_deref())
                .flatten(),
            id,
            module: self.segment,
            portal: report.portal.as_deref(),
            receipt_pdf: (report.status == ReportStatus::Success)
                .then_some(report.receipt_pdf_base64.as_deref())
                .flatten(),
            status: report.status,
            submitted_at: rfc3339(report.submitted_at),
        }
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

/// The result body of a stored report, serialized from borrowed fields: polls are frequent and
/// the receipt is large. Members in alphabetical order, as the `json!` map this replaces wrote
/// them; `clientReference` only for modules that echo it (then `null` when absent).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    client_reference: Option<Option<&'a str>>,
    failure_reason: Option<&'a str>,
    id: &'a str,
    module: &'a str,
    portal: Option<&'a str>,
    receipt_pdf: Option<&'a str>,
    status: ReportStatus,
    submitted_at: String,
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
    let result = if peek {
        match store.report_result(&key).await? {
            Some(result) if result.expired_at.is_some() => return Err(ApiError::Expired(id)),
            Some(result) if result.polled => return Err(ApiError::AlreadyRetrieved(id)),
            Some(result) => result,
            None => return Err(ApiError::NotFound(id)),
        }
    } else {
        match store.consume_report(&key).await? {
            Consumed::Report(report) => ReportResult::from(&*report),
            Consumed::AlreadyRetrieved => return Err(ApiError::AlreadyRetrieved(id)),
            Consumed::Expired => return Err(ApiError::Expired(id)),
            Consumed::NotFound => return Err(ApiError::NotFound(id)),
        }
    };
    Ok(HttpResponse::Ok().json(module.result_body(&id, &result)))
}
