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
use meldewerk_storage::{Job, JobKind, Store, StoreError};
use serde::Deserialize;
use serde_json::json;

use super::{error, store_failed, ActionFailure};
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
pub struct Page<K = u64> {
    /// The key the page starts after (exclusive): a job id, or what the listing is ordered by.
    pub(super) after: Option<K>,
    limit: Option<usize>,
}

impl<K> Page<K> {
    /// The page size asked for, or a 400 answer.
    pub(super) fn limit(&self) -> Result<usize, Box<HttpResponse>> {
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

impl Page<String> {
    /// The page size and the key to continue after, read by `parse` (a BSNR, an account id); or
    /// a 400 answer (`after <problem>`, `limit must be …`).
    pub(super) fn limit_after<K, E: std::fmt::Display>(
        &self,
        parse: impl Fn(&str) -> Result<K, E>,
    ) -> Result<(usize, Option<K>), Box<HttpResponse>> {
        let limit = self.limit()?;
        let after = self
            .after
            .as_deref()
            .map(parse)
            .transpose()
            .map_err(|e| Box::new(error(StatusCode::BAD_REQUEST, format!("after {e}"))))?;
        Ok((limit, after))
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
pub(super) fn page_answer<K: serde::Serialize>(
    name: &str,
    items: Vec<serde_json::Value>,
    last_key: Option<K>,
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
) -> Result<Job, ActionFailure> {
    let Ok(id) = segment.parse::<u64>() else {
        return Err(no_job(&log_str(segment)));
    };
    if engine.working_on(id) {
        return Err(ActionFailure::Refused(
            StatusCode::CONFLICT,
            format!("job {id} is being worked on right now; try again in a moment"),
        ));
    }
    store.job(id).await?.ok_or_else(|| no_job(&id))
}

fn no_job(id: &dyn std::fmt::Display) -> ActionFailure {
    ActionFailure::Refused(StatusCode::NOT_FOUND, format!("no job {id} in the outbox"))
}

/// A job that left the outbox between reading and changing it is gone like any other.
fn gone_meanwhile(job: &Job, e: StoreError) -> ActionFailure {
    match e {
        StoreError::NotFound(_) => no_job(&job.id),
        e => ActionFailure::Store(e),
    }
}

/// Records the action on `job` in the audit log.
async fn audit(
    store: &Arc<dyn Store>,
    who: &str,
    action: &str,
    job: &Job,
) -> Result<(), ActionFailure> {
    let target = format!("job {} ({})", job.id, job.report);
    super::audit(store, who, action, target).await?;
    Ok(())
}

/// Makes the job named by `segment` due now, records it for `who` in the audit log and wakes
/// the engine; returns the job as it was.
pub(crate) async fn retry_job(
    who: &str,
    segment: &str,
    store: &Arc<dyn Store>,
    engine: &Engine,
) -> Result<Job, ActionFailure> {
    let job = job_for_action(segment, store, engine).await?;
    store
        .reschedule(&job, Utc::now(), job.last_error.clone())
        .await
        .map_err(|e| gone_meanwhile(&job, e))?;
    audit(store, who, "retry-now", &job).await?;
    engine.wake();
    Ok(job)
}

/// Ends the report of the job named by `segment` in FAILURE ("discarded by the operator") and
/// records it for `who`. A job waiting for its acknowledgement was accepted by the authority
/// already: without `force` it is refused with 409.
pub(crate) async fn discard_job(
    who: &str,
    segment: &str,
    force: bool,
    store: &Arc<dyn Store>,
    engine: &Engine,
) -> Result<Job, ActionFailure> {
    let job = job_for_action(segment, store, engine).await?;
    if job.kind == JobKind::AwaitAck && !force {
        return Err(ActionFailure::Refused(
            StatusCode::CONFLICT,
            format!(
                "job {} waits for the acknowledgement of a message the authority accepted; \
                 discarding it leaves the report registered there without a receipt. \
                 Add ?force=true to discard it anyway",
                job.id
            ),
        ));
    }
    engine
        .discard(&job, DISCARDED)
        .await
        .map_err(|e| gone_meanwhile(&job, e))?;
    audit(store, who, "discard", &job).await?;
    Ok(job)
}

/// `POST /admin/api/v1/jobs/{id}/retry`: the job is due now.
#[post("/jobs/{id}/retry")]
pub async fn retry(
    operator: Operator,
    id: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    match retry_job(&operator.0, &id, &store, &engine).await {
        Ok(job) => HttpResponse::Ok().json(json!({ "job": job.id, "action": "retry-now" })),
        Err(failure) => failure.json(),
    }
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
    let force = query.force == Some(true);
    match discard_job(&operator.0, &id, force, &store, &engine).await {
        Ok(job) => HttpResponse::Ok().json(json!({ "job": job.id, "action": "discard" })),
        Err(failure) => failure.json(),
    }
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
