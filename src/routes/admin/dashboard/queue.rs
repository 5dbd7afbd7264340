//! `GET /admin/jobs[?page=]`: the outbox, paged, each job with what it waits for, its attempts,
//! when it is due and the reason of its last failure, and the buttons to retry it now or discard
//! it; below, the reports that failed last with their reasons. `POST /admin/jobs/{id}/retry` and `…/discard` run the API's operations
//! (`jobs::retry_job`, `jobs::discard_job`) and come back to the page they were sent from.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use maud::{html, Markup};
use meldewerk_actors::Engine;
use meldewerk_storage::{Job, JobKind, ReportKey, Store};
use meldewerk_xml::local_time::LocalZone;
use serde::Deserialize;

use super::{
    ago, checked_form, csrf_field, done, encoded, failure_page, field, frame, no_action, page,
    pager, requested_page, see_other, when,
};
use super::{ActionForm, FormRefusals, PageRefusals, PagerRefusals};
use crate::auth::operator::OperatorCredentials;
use crate::auth::Operator;
use crate::metrics::recent::{FailedReport, FAILURES_KEPT};
use crate::metrics::Metrics;
use crate::routes::admin::jobs::{discard_job, retry_job};
use crate::web::WebSettings;

/// A job's state as operators name it.
fn state(job: &Job) -> &'static str {
    match job.kind {
        JobKind::AwaitAck => "awaiting acknowledgement",
        JobKind::Deliver if job.last_error.is_some() => "retrying",
        JobKind::Deliver => "waiting",
    }
}

/// The path of the report's page.
fn report_link(report: &ReportKey) -> String {
    format!(
        "/admin/reports?module={}&id={}&user={}",
        encoded(&report.module),
        encoded(&report.id),
        encoded(&report.owner)
    )
}

fn row(
    job: &Job,
    number: usize,
    zone: &LocalZone,
    now: DateTime<Utc>,
    credentials: &OperatorCredentials,
) -> Markup {
    let action = |name: &str| format!("/admin/jobs/{}/{name}", job.id);
    html! {
        tr id=(format!("job-{}", job.id)) {
            td data-label="Job" { (job.id) }
            td data-label="Report" {
                a href=(report_link(&job.report)) { (job.report.module) " / " (job.report.id) }
                " (" (job.report.owner) ")"
            }
            td data-label="State" { (state(job)) }
            td data-label="Attempts" { (job.attempts) }
            td data-label="Due" {
                @if job.not_before <= now { "now (" (ago(now, job.not_before)) ")" } @else { (when(zone, job.not_before)) }
            }
            td data-label="Reason" class="error" { (job.last_error.as_deref().unwrap_or("–")) }
            td data-label="Actions" {
                form.inline method="post" action=(action("retry")) {
                    (csrf_field(credentials))
                    input type="hidden" name="page" value=(number);
                    button type="submit" { "Retry now" }
                }
                " "
                form.inline method="post" action=(action("discard")) {
                    (csrf_field(credentials))
                    input type="hidden" name="page" value=(number);
                    @if job.kind == JobKind::AwaitAck {
                        // The authority has the message already: discarding leaves it there
                        // without a receipt, so the operator says so explicitly.
                        label {
                            input type="checkbox" name="force" value="true" required;
                            " accepted by the authority: discard anyway"
                        }
                        " "
                    }
                    button type="submit" { "Discard" }
                }
            }
        }
    }
}

/// The reports that failed last, with their reasons: they have left the queue.
fn failures(failed: &[FailedReport], zone: &LocalZone, since: DateTime<Utc>) -> Markup {
    html! {
        h2 { "Failed reports" }
        p.since {
            "The last " (FAILURES_KEPT) " reports that ended in FAILURE since the service started, "
            (when(zone, since)) ", newest first."
        }
        @if failed.is_empty() {
            p #no-failures { "None." }
        } @else {
            table #failures {
                thead { tr { th { "When" } th { "Report" } th { "Reason" } } }
                tbody { @for failure in failed {
                    tr {
                        td data-label="When" { (when(zone, failure.at)) }
                        td data-label="Report" {
                            a href=(report_link(&failure.report)) { (failure.report.module) " / " (failure.report.id) }
                            " (" (failure.report.owner) ")"
                        }
                        td data-label="Reason" class="error" { (failure.reason) }
                    }
                } }
            }
        }
    }
}

/// What an action left for the page to say (`?done=retry-now&job=7`).
fn done_note(query: &QueueQuery) -> Option<Markup> {
    let job: u64 = query.job.as_deref()?.parse().ok()?;
    let what = match query.done.as_deref()? {
        "retry-now" => "is due now and goes to the authority with the next round",
        "discard" => "was discarded: its report ended in FAILURE (\"discarded by the operator\")",
        _ => return None,
    };
    Some(done(&format!("Job {job} {what}")))
}

/// Query of the queue page.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct QueueQuery {
    /// The page, from 1.
    #[param(value_type = Option<u32>, minimum = 1)]
    page: Option<String>,
    /// The action done (`retry-now`, `discard`), for the note the page shows.
    done: Option<String>,
    /// The job it was done to.
    job: Option<String>,
}

/// `GET /admin/jobs`: the queue page.
#[utoipa::path(
    params(QueueQuery),
    responses(
        (status = 200, description = "The queue page.", content_type = "text/html", body = String),
        PagerRefusals,
        PageRefusals,
    ),
)]
#[get("/jobs")]
pub async fn queue(
    _operator: Operator,
    query: web::Query<QueueQuery>,
    store: web::Data<Arc<dyn Store>>,
    settings: web::Data<WebSettings>,
    credentials: web::Data<OperatorCredentials>,
    metrics: web::Data<Metrics>,
) -> HttpResponse {
    let read = requested_page(
        query.page.as_deref(),
        "The queue",
        |after, limit| store.jobs(after, limit),
        |job: &Job| job.id,
    )
    .await;
    let (number, jobs, more) = match read {
        Ok(page) => page,
        Err(answer) => return *answer,
    };
    let now = Utc::now();
    let zone = &settings.time_zone;
    let body = html! {
        h1 { "Queue" }
        @if let Some(note) = done_note(&query) { (note) }
        p { "Reports on their way: waiting for their delivery, retrying after a fault, or delivered and awaiting the authority's acknowledgement. A report that ended leaves the queue." }
        @if jobs.is_empty() {
            p #empty { "The queue is empty." }
        } @else {
            table #jobs {
                thead { tr {
                    th { "Job" } th { "Report" } th { "State" } th { "Attempts" } th { "Due" }
                    th { "Reason" } th { "Actions" }
                } }
                tbody { @for job in &jobs { (row(job, number, zone, now, &credentials)) } }
            }
        }
        (pager("/admin/jobs", number, more))
        (failures(&metrics.recent_failures(), zone, metrics.since()))
    };
    page(StatusCode::OK, frame("Queue – meldewerk", None, body))
}

/// Back to the page of the queue the form was on.
fn back_to_queue(posted: &[(String, String)], action: &str, job: u64) -> HttpResponse {
    let number = field(posted, "page")
        .and_then(|p| p.parse::<u32>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1);
    see_other(format!("/admin/jobs?page={number}&done={action}&job={job}"))
}

/// `POST /admin/jobs/{id}/retry` and `…/discard`: the forms' retry and discard (`force=true`
/// for a job the authority accepted already).
#[utoipa::path(
    operation_id = "dashboard_job_action",
    params(
        ("id" = String, Path, description = "The job's id."),
        ("action" = String, Path, pattern = "^(retry|discard)$", description = "What to do."),
    ),
    request_body(content = ActionForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Done: back to the queue's page, which says so.",
            headers(("Location" = String))),
        FormRefusals,
        PageRefusals,
    ),
)]
#[post("/jobs/{id}/{action}")]
pub async fn act(
    operator: Operator,
    path: web::Path<(String, String)>,
    posted: web::Form<Vec<(String, String)>>,
    credentials: web::Data<OperatorCredentials>,
    store: web::Data<Arc<dyn Store>>,
    engine: web::Data<Engine>,
) -> HttpResponse {
    let (id, action) = path.into_inner();
    if let Err(refused) = checked_form(&posted, &credentials) {
        return *refused;
    }
    let done = match action.as_str() {
        "retry" => retry_job(&operator.0, &id, &store, &engine).await,
        "discard" => {
            let force = field(&posted, "force") == Some("true");
            discard_job(&operator.0, &id, force, &store, &engine).await
        }
        _ => return no_action(&action),
    };
    match done {
        Ok(job) => {
            let action = if action == "retry" {
                "retry-now"
            } else {
                "discard"
            };
            back_to_queue(&posted, action, job.id)
        }
        Err(failure) => failure_page(failure),
    }
}
