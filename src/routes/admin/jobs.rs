//! The operators' queue view and actions on it, each recorded in the audit log:
//! - `GET /admin/api/v1/jobs[?after=&limit=]`: jobs in the outbox in id order, with what they wait
//!   for (`deliver` or `acknowledgement`), attempts, when they are due and their last error;
//! - `POST /admin/api/v1/jobs/{id}/retry`: due now (after a backoff, say);
//! - `POST /admin/api/v1/jobs/{id}/discard[?force=true]`: the report ends in FAILURE ("discarded
//!   by …"); a job whose message the authority accepted already needs `force`;
//! - `GET /admin/api/v1/audit[?after=&limit=]`: who did what, when.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use chrono::Utc;
use meldewerk_actors::Engine;
use meldewerk_storage::{Job, JobKind, Outcome, Store, StoreError};
use serde::Deserialize;
use serde_json::json;

use super::{error, store_failed};
use crate::auth::Operator;
use crate::telemetry::log_str;

/// The failure reason of a discarded job's report.
const DISCARDED: &str = "discarded by the operator";

/// Default and largest page of the listings.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

/// Paging of a listing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    after: Option<u64>,
    limit: Option<usize>,
}

impl Page {
    fn limit(&self) -> Result<usize, Box<HttpResponse>> {
        match self.limit {
            None => Ok(DEFAULT_PAGE),
            Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
            Some(_) => Err(Box::new(error(
                StatusCode::BAD_REQUEST,
                format!("limit must be from 1 to {MAX_PAGE}"),
            ))),
        }
    }
}

fn view(job: &Job) -> serde_json::Value {
    json!({
        "id": job.id,
        "module": job.report.module,
        "report": job.report.id,
        "owner": job.report.owner,
        "waitingFor": match job.kind { JobKind::Deliver => "deliver", JobKind::AwaitAck => "acknowledgement" },
        "attempts": job.attempts,
        "due": job.not_before,
        "lastError": job.last_error,
    })
}

/// `GET /admin/api/v1/jobs`: `{"jobs": [...], "next": <id or null>}`.
#[get("/jobs")]
pub async fn list(
    _operator: Operator,
    page: web::Query<Page>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let limit = match page.limit() {
        Ok(limit) => limit,
        Err(answer) => return *answer,
    };
    match store.jobs(page.after, limit).await {
        Ok(jobs) => {
            let last = jobs.last().map(|j| j.id);
            page_answer("jobs", jobs.iter().map(view).collect(), last, limit)
        }
        Err(e) => store_failed(e),
    }
}

/// `{"<name>": [...], "next": ...}`: `next` is the key to ask for after, when the page is full.
fn page_answer(
    name: &str,
    items: Vec<serde_json::Value>,
    last_key: Option<u64>,
    limit: usize,
) -> HttpResponse {
    let next = (items.len() == limit).then_some(last_key).flatten();
    HttpResponse::Ok().json(json!({ name: items, "next": next }))
}

/// The job named by the path, unless it is gone or the engine is working on it right now. The
/// path segment is read here, after the operator's credentials, not by a typed extractor: a
/// segment that is no job id (`-1`, `x`) is a job that does not exist, answered 404 like any
/// other, in the operator API's error shape.
async fn job_for_action(
    segment: &str,
    store: &Arc<dyn Store>,
    engine: &Engine,
) -> Result<Job, Box<HttpResponse>> {
    let Ok(id) = segment.parse::<u64>() else {
        return Err(Box::new(error(
            StatusCode::NOT_FOUND,
            format!("no job {} in the outbox", log_str(segment)),
        )));
    };
    if engine.working_on(id) {
        return Err(Box::new(error(
            StatusCode::CONFLICT,
            format!("job {id} is being worked on right now; try again in a moment"),
        )));
    }
    match store.job(id).await {
        Ok(Some(job)) => Ok(job),
        Ok(None) => Err(Box::new(error(
            StatusCode::NOT_FOUND,
            format!("no job {id} in the outbox"),
        ))),
        Err(e) => Err(Box::new(store_failed(e))),
    }
}

/// Records the action on `job` in the audit log.
async fn audit(
    store: &Arc<dyn Store>,
    who: &str,
    action: &str,
    job: &Job,
) -> Result<(), Box<HttpResponse>> {
    let target = format!("job {} ({})", job.id, job.report);
    super::audit(store, who, action, target)
        .await
        .map_err(|e| Box::new(store_failed(e)))
}

/// `POST /admin/api/v1/jobs/{id}/retry`: the job is due now.
#[post("/jobs/{id}/retry")]
pub async fn retry(
    operator: Operator,
    id: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    let job = match job_for_action(&id, &store, &engine).await {
        Ok(job) => job,
        Err(answer) => return *answer,
    };
    if let Err(e) = store
        .reschedule(&job, Utc::now(), job.last_error.clone())
        .await
    {
        return match e {
            StoreError::NotFound(_) => error(
                StatusCode::NOT_FOUND,
                format!("no job {} in the outbox", job.id),
            ),
            e => store_failed(e),
        };
    }
    if let Err(answer) = audit(&store, &operator.0, "retry-now", &job).await {
        return *answer;
    }
    engine.wake();
    HttpResponse::Ok().json(json!({ "job": job.id, "action": "retry-now" }))
}

/// Query of a discard.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscardQuery {
    force: Option<bool>,
}

/// `POST /admin/api/v1/jobs/{id}/discard[?force=true]`: the report ends in FAILURE. A job waiting
/// for its acknowledgement was accepted by the authority already; discarding it needs `force`.
#[post("/jobs/{id}/discard")]
pub async fn discard(
    operator: Operator,
    id: web::Path<String>,
    query: web::Query<DiscardQuery>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    let job = match job_for_action(&id, &store, &engine).await {
        Ok(job) => job,
        Err(answer) => return *answer,
    };
    if job.kind == JobKind::AwaitAck && query.force != Some(true) {
        return error(
            StatusCode::CONFLICT,
            format!(
                "job {} waits for the acknowledgement of a message the authority accepted; \
                 discarding it leaves the report registered there without a receipt. \
                 Add ?force=true to discard it anyway",
                job.id
            ),
        );
    }
    let outcome = Outcome::Failed {
        reason: DISCARDED.into(),
    };
    if let Err(e) = store.record_outcome(&job, outcome, Utc::now()).await {
        return match e {
            StoreError::NotFound(_) => error(
                StatusCode::NOT_FOUND,
                format!("no job {} in the outbox", job.id),
            ),
            e => store_failed(e),
        };
    }
    engine.report_discarded(&job.report, DISCARDED);
    if let Err(answer) = audit(&store, &operator.0, "discard", &job).await {
        return *answer;
    }
    HttpResponse::Ok().json(json!({ "job": job.id, "action": "discard" }))
}

/// `GET /admin/api/v1/audit`: `{"entries": [{"number", "at", "who", "action", "target"}], "next"}`.
#[get("/audit")]
pub async fn audit_log(
    _operator: Operator,
    page: web::Query<Page>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let limit = match page.limit() {
        Ok(limit) => limit,
        Err(answer) => return *answer,
    };
    match store.audit(page.after, limit).await {
        Ok(entries) => {
            let last = entries.last().map(|(n, _)| *n);
            let entries = entries
                .into_iter()
                .map(|(number, e)| json!({"number": number, "at": e.at, "who": e.who, "action": e.action, "target": e.target}))
                .collect();
            page_answer("entries", entries, last, limit)
        }
        Err(e) => store_failed(e),
    }
}
