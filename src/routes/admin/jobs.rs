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
use chrono::{DateTime, Utc};
use meldewerk_actors::Engine;
use meldewerk_storage::{Job, JobKind, Store, StoreError};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::openapi::{CrossSite, Errors, Refusals};
use super::{error, store_failed, ActionFailure};
use crate::auth::Operator;
use crate::telemetry::log_str;

/// The failure reason of a discarded job's report.
const DISCARDED: &str = "discarded by the operator";

/// Default and largest page of the listings.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

/// Paging of a listing.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Page<K = u64> {
    /// The key the page starts after (exclusive): the `next` of the previous page. Described
    /// here as the sequence number of the listings keyed by one (jobs, the audit log, court
    /// messages); the listings keyed otherwise describe their own `after`.
    #[param(value_type = Option<i64>, minimum = 0)]
    pub(super) after: Option<K>,
    /// Items on the page: from 1 to 1000, 100 when absent.
    #[param(minimum = 1, maximum = 1000)]
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

impl Page {
    /// The page size and the sequence number to continue after; or a 400 answer. A number past
    /// the largest the store keeps (`i64::MAX`) is refused rather than answered with an empty page.
    pub(super) fn limit_after_seq(&self) -> Result<(usize, Option<u64>), Box<HttpResponse>> {
        let limit = self.limit()?;
        match self.after {
            Some(after) if after > i64::MAX as u64 => Err(Box::new(error(
                StatusCode::BAD_REQUEST,
                format!("after must be from 0 to {}", i64::MAX),
            ))),
            after => Ok((limit, after)),
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

/// A job in the outbox as operators see it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobView<'a> {
    /// The job's id.
    id: u64,
    /// The module of its report.
    module: &'a str,
    /// Its report's id.
    report: &'a str,
    /// The API user who owns the report.
    owner: &'a str,
    /// What it waits for.
    waiting_for: WaitingFor,
    /// Delivery attempts so far.
    attempts: u32,
    /// When it is due next.
    due: DateTime<Utc>,
    /// The last error an attempt met.
    #[schema(required = true)]
    last_error: Option<&'a str>,
}

/// What a job waits for: its delivery, or the authority's acknowledgement of it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum WaitingFor {
    /// Its delivery (first or again).
    Deliver,
    /// The acknowledgement of a message the authority accepted.
    Acknowledgement,
}

fn view(job: &Job) -> JobView<'_> {
    JobView {
        id: job.id,
        module: &job.report.module,
        report: &job.report.id,
        owner: &job.report.owner,
        waiting_for: match job.kind {
            JobKind::Deliver => WaitingFor::Deliver,
            JobKind::AwaitAck => WaitingFor::Acknowledgement,
        },
        attempts: job.attempts,
        due: job.not_before,
        last_error: job.last_error.as_deref(),
    }
}

/// A page of the outbox.
#[derive(Serialize, ToSchema)]
pub(crate) struct JobsPage<'a> {
    /// The jobs in id order.
    jobs: Vec<JobView<'a>>,
    /// The id to ask for `after`, when the page is full; null on the last page.
    #[schema(required = true)]
    next: Option<u64>,
}

/// `GET /admin/api/v1/jobs`: `{"jobs": [...], "next": <id or null>}`.
#[utoipa::path(
    operation_id = "list_jobs",
    params(Page),
    responses(
        (status = 200, description = "A page of jobs.", body = JobsPage),
        (status = 400, description = "An unusable `after` or `limit`, or an unknown parameter.",
            body = Errors),
        Refusals,
    ),
)]
#[get("/jobs")]
pub async fn list(
    _operator: Operator,
    page: web::Query<Page>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (limit, after) = match page.limit_after_seq() {
        Ok(paging) => paging,
        Err(answer) => return *answer,
    };
    match store.jobs(after, limit).await {
        Ok(jobs) => HttpResponse::Ok().json(JobsPage {
            next: next_after(&jobs, limit, |j| j.id),
            jobs: jobs.iter().map(view).collect(),
        }),
        Err(e) => store_failed(e),
    }
}

/// A listing's `next`: the key of the last of `items` (`key`) to ask for after, when the page is
/// full.
pub(super) fn next_after<T, K>(items: &[T], limit: usize, key: impl Fn(&T) -> K) -> Option<K> {
    (items.len() == limit)
        .then(|| items.last().map(key))
        .flatten()
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
        // Another node delivers it now, as `working_on` says for this node's own.
        StoreError::Busy(why) => ActionFailure::Refused(
            StatusCode::CONFLICT,
            format!("{why}; try again in a moment"),
        ),
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

/// What was done to a job.
#[derive(Serialize, ToSchema)]
pub(crate) struct JobAction {
    /// The job's id.
    job: u64,
    /// `retry-now` or `discard`.
    #[schema(pattern = "^(retry-now|discard)$")]
    action: &'static str,
}

/// `POST /admin/api/v1/jobs/{id}/retry`: the job is due now.
#[utoipa::path(
    params(("id" = String, Path, description = "The job's id.")),
    responses(
        (status = 200, description = "The job is due now.", body = JobAction,
            example = json!({"job": 7, "action": "retry-now"})),
        (status = 404, description = "No such job in the outbox.", body = Errors),
        (status = 409, description = "The engine is working on the job right now.", body = Errors),
        CrossSite,
        Refusals,
    ),
)]
#[post("/jobs/{id}/retry")]
pub async fn retry(
    operator: Operator,
    id: web::Path<String>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    match retry_job(&operator.0, &id, &store, &engine).await {
        Ok(job) => HttpResponse::Ok().json(JobAction {
            job: job.id,
            action: "retry-now",
        }),
        Err(failure) => failure.json(),
    }
}

/// Query of a discard.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DiscardQuery {
    /// `true` discards a job waiting for its acknowledgement too.
    force: Option<bool>,
}

/// `POST /admin/api/v1/jobs/{id}/discard[?force=true]`: the report ends in FAILURE. A job waiting
/// for its acknowledgement was accepted by the authority already; discarding it needs `force`.
#[utoipa::path(
    params(("id" = String, Path, description = "The job's id."), DiscardQuery),
    responses(
        (status = 200, description = "The job's report ended in FAILURE.", body = JobAction,
            example = json!({"job": 7, "action": "discard"})),
        (status = 400, description = "An unknown parameter, or `force` not a boolean.",
            body = Errors),
        (status = 404, description = "No such job in the outbox.", body = Errors),
        (status = 409, description = "The engine is working on the job right now, or the job \
            waits for the acknowledgement of an accepted message and `force` is not given.",
            body = Errors),
        CrossSite,
        Refusals,
    ),
)]
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
        Ok(job) => HttpResponse::Ok().json(JobAction {
            job: job.id,
            action: "discard",
        }),
        Err(failure) => failure.json(),
    }
}

/// An entry of the audit log.
#[derive(Serialize, ToSchema)]
pub(crate) struct AuditView {
    /// Its number, in the order of the log.
    number: u64,
    /// When it was done.
    at: DateTime<Utc>,
    /// The operator's user name.
    who: String,
    /// What was done (`pause`, `discard`, `add-user`, …).
    action: String,
    /// To what (`module birthnotice`, `user klinik`, …).
    target: String,
}

/// A page of the audit log.
#[derive(Serialize, ToSchema)]
pub(crate) struct AuditPage {
    /// The entries, oldest first.
    entries: Vec<AuditView>,
    /// The number to ask for `after`, when the page is full; null on the last page.
    #[schema(required = true)]
    next: Option<u64>,
}

/// `GET /admin/api/v1/audit`: `{"entries": [{"number", "at", "who", "action", "target"}], "next"}`.
#[utoipa::path(
    params(Page),
    responses(
        (status = 200, description = "A page of the audit log.", body = AuditPage),
        (status = 400, description = "An unusable `after` or `limit`, or an unknown parameter.",
            body = Errors),
        Refusals,
    ),
)]
#[get("/audit")]
pub async fn audit_log(
    _operator: Operator,
    page: web::Query<Page>,
    store: web::Data<Arc<dyn Store>>,
) -> HttpResponse {
    let (limit, after) = match page.limit_after_seq() {
        Ok(paging) => paging,
        Err(answer) => return *answer,
    };
    match store.audit(after, limit).await {
        Ok(entries) => HttpResponse::Ok().json(AuditPage {
            next: next_after(&entries, limit, |(n, _)| *n),
            entries: entries
                .into_iter()
                .map(|(number, e)| AuditView {
                    number,
                    at: e.at,
                    who: e.who,
                    action: e.action,
                    target: e.target,
                })
                .collect(),
        }),
        Err(e) => store_failed(e),
    }
}
