//! `GET /admin/audit[?page=]`: the audit log, paged, oldest first: every change operators made
//! through the API or the dashboard, who made it and when.

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpResponse};
use maud::html;
use meldewerk_storage::Store;
use serde::Deserialize;

use super::{frame, page, pager, requested_page, when};
use super::{PageRefusals, PagerRefusals};
use crate::auth::Operator;
use crate::web::WebSettings;

/// Query of the audit page.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// The page, from 1.
    #[param(value_type = Option<u32>, minimum = 1)]
    page: Option<String>,
}

/// `GET /admin/audit`: one page of the audit log.
#[utoipa::path(
    params(AuditQuery),
    responses(
        (status = 200, description = "The audit log's page.", content_type = "text/html", body = String),
        PagerRefusals,
        PageRefusals,
    ),
)]
#[get("/audit")]
pub async fn audit(
    _operator: Operator,
    query: web::Query<AuditQuery>,
    store: web::Data<Arc<dyn Store>>,
    settings: web::Data<WebSettings>,
) -> HttpResponse {
    let read = requested_page(
        query.page.as_deref(),
        "The audit log",
        |after, limit| store.audit(after, limit),
        |(n, _)| *n,
    )
    .await;
    let (number, entries, more) = match read {
        Ok(page) => page,
        Err(answer) => return *answer,
    };
    let zone = &settings.time_zone;
    let body = html! {
        h1 { "Audit log" }
        @if entries.is_empty() {
            p #empty { "No operator has changed anything yet." }
        } @else {
            table #audit {
                thead { tr { th { "No." } th { "When" } th { "Who" } th { "Action" } th { "Target" } } }
                tbody { @for (number, entry) in &entries {
                    tr {
                        td data-label="No." { (number) }
                        td data-label="When" { (when(zone, entry.at)) }
                        td data-label="Who" { (entry.who) }
                        td data-label="Action" { (entry.action) }
                        td data-label="Target" { (entry.target) }
                    }
                } }
            }
        }
        (pager("/admin/audit", number, more))
    };
    page(StatusCode::OK, frame("Audit log – meldewerk", None, body))
}
