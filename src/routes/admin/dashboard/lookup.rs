//! `GET /admin/reports[?module=&id=[&user=]]`: a report looked up by module and id (a GET form),
//! with its history (each state it reached and when) and the message it delivers, read as
//! `GET /admin/api/v1/reports/{module}/{id}/message` reads it.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse};
use maud::{html, Markup};
use meldewerk_actors::Engine;
use meldewerk_storage::{Report, ReportStatus, Store};
use meldewerk_xml::local_time::LocalZone;
use serde::Deserialize;

use super::PageRefusals;
use super::{encoded, failure_page, frame, page, when};
use crate::auth::Operator;
use crate::routes::admin::messages::{named_report, sha256_hex, Named};
use crate::web::WebSettings;

/// Query of the look-up.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LookupQuery {
    /// The report's module.
    module: Option<String>,
    /// The report's id.
    id: Option<String>,
    /// Its owner, when several API users have a report with the id.
    user: Option<String>,
}

/// The GET form, filled with what was asked.
fn form(modules: &[String], query: &LookupQuery) -> Markup {
    let chosen = query.module.as_deref().unwrap_or("");
    html! {
        form #lookup method="get" action="/admin/reports" {
            label { "Module " select name="module" {
                @for module in modules {
                    option value=(module) selected[module == chosen] { (module) }
                }
            } }
            " "
            label { "Report id " input type="text" name="id" required value=(query.id.as_deref().unwrap_or("")); }
            " "
            button type="submit" { "Look up" }
        }
    }
}

/// The report's states with their times, oldest first.
fn history(report: &Report, zone: &LocalZone) -> Markup {
    let status = match report.status {
        ReportStatus::Pending => "PENDING",
        ReportStatus::Success => "SUCCESS",
        ReportStatus::Failure => "FAILURE",
    };
    html! {
        table #history {
            thead { tr { th { "When" } th { "What" } } }
            tbody {
                tr { td data-label="When" { (when(zone, report.submitted_at)) } td data-label="What" { "submitted by the end user (PENDING)" } }
                @if let Some(message) = &report.message {
                    tr { td data-label="When" { (when(zone, message.prepared_at)) } td data-label="What" { @if message.signature.is_some() { "message built and signed" } @else { "message built" } } }
                }
                @if let Some(at) = report.delivered_at {
                    tr { td data-label="When" { (when(zone, at)) } td data-label="What" {
                        "accepted by the transport " (report.transport.as_deref().unwrap_or("–"))
                        @if let Some(reference) = &report.transport_ref { " as " code { (reference) } }
                    } }
                }
                @if let Some(at) = report.finished_at {
                    tr { td data-label="When" { (when(zone, at)) } td data-label="What" {
                        (status)
                        @if let Some(reason) = &report.failure_reason { ": " span.error { (reason) } }
                        @if report.receipt.is_some() { ", receipt received" }
                    } }
                }
                @if let Some(at) = report.expired_at {
                    tr { td data-label="When" { (when(zone, at)) } td data-label="What" { "payload removed by retention" } }
                }
            }
        }
        p #status { "State now: " strong { (status) }
            @if report.polled { ", result fetched by the integrator" }
            @else if report.status.is_final() { ", result not fetched yet" }
        }
    }
}

/// The delivered message: its identity and its exact bytes.
fn message(report: &Report) -> Markup {
    let Some(message) = &report.message else {
        return html! { p #no-message { "No message: " (if report.expired_at.is_some() { "its payload was removed by retention." } else { "it has not been built yet." }) } };
    };
    let sha256 = sha256_hex(&message.body);
    let key = &report.key;
    let raw = format!(
        "/admin/api/v1/reports/{}/{}/message?user={}",
        key.module,
        encoded(&key.id),
        encoded(&key.owner)
    );
    html! {
        dl {
            dt { "Message UUID" } dd { code { (message.message_uuid) } }
            dt { "SHA-256" } dd { code { (sha256) } }
            dt { "Signature" } dd { (message.signature.as_ref().map_or("none", |s| s.kind.as_str())) }
            dt { "Exact bytes" } dd { a href=(raw) { "download (" (message.content_type) ")" } }
        }
        pre #message { (String::from_utf8_lossy(&message.body)) }
    }
}

/// `GET /admin/reports`: the look-up form, and the report it found.
#[utoipa::path(
    params(LookupQuery),
    responses(
        (status = 200, description = "The form, and the report found.", content_type = "text/html",
            body = String),
        (status = 404, description = "No such report.", content_type = "text/html", body = String),
        (status = 409, description = "Several API users have a report with the id: the page lets \
            the operator choose.", content_type = "text/html", body = String),
        PageRefusals,
    ),
)]
#[get("/reports")]
pub async fn lookup(
    _operator: Operator,
    query: web::Query<LookupQuery>,
    engine: web::Data<Engine>,
    store: web::Data<Arc<dyn Store>>,
    settings: web::Data<WebSettings>,
) -> HttpResponse {
    let modules: Vec<String> = engine
        .health()
        .into_iter()
        .filter_map(|a| a.name.strip_prefix("module:").map(str::to_owned))
        .collect();
    let answer = |status: StatusCode, found: Markup| {
        let body = html! {
            h1 { "Report lookup" }
            (form(&modules, &query))
            (found)
        };
        page(status, frame("Report lookup – meldewerk", None, body))
    };
    let (Some(module), Some(id)) = (query.module.as_deref(), query.id.as_deref()) else {
        return answer(StatusCode::OK, html! {});
    };
    if !modules.iter().any(|m| m == module) {
        return answer(
            StatusCode::NOT_FOUND,
            html! { p.problem #problem { "There is no module " (module) "." } },
        );
    }
    let not_found = || html! { p.problem #problem { "No " (module) " report with id " (id) " was submitted." } };
    let report = match named_report(&store, module, id, query.user.as_deref()).await {
        Ok(Named::Found(report)) => report,
        Ok(Named::Missing) => return answer(StatusCode::NOT_FOUND, not_found()),
        Ok(Named::Several(owners)) => {
            let choice = html! {
                p.problem #problem { "Several API users have a " (module) " report with id " (id) "; choose one:" }
                ul { @for owner in &owners {
                    li { a href=(format!("/admin/reports?module={module}&id={}&user={}", encoded(id), encoded(owner))) { (owner) } }
                } }
            };
            return answer(StatusCode::CONFLICT, choice);
        }
        Err(e) => return failure_page(e.into()),
    };
    let zone = &settings.time_zone;
    answer(
        StatusCode::OK,
        html! {
            h2 #report { (module) " / " (id) " of " (report.key.owner) }
            @if let Some(reference) = &report.client_reference { p { "Client reference: " (reference) } }
            (history(&report, zone))
            h2 { "Delivered message" }
            (message(&report))
        },
    )
}
