//! The operators' dashboard under `/admin/` (operator credentials, server-rendered HTML, no
//! scripts, no external assets): the engine's health, modules to pause and resume, a chart of
//! the last hour ([`overview`]), the queue with retry and discard ([`queue`]), a report looked up
//! by module and id ([`lookup`]) and the audit log ([`audit`]).
//!
//! Every action is a form posted to the same operation the JSON API runs (`jobs::retry_job`,
//! `jobs::discard_job`, `modules::set_paused`), so both are audited alike. A form carries the
//! operator's CSRF token ([`OperatorCredentials::csrf_token`]) and passes the cross-site guard
//! (`refuse_cross_site_forms`); its answer is a redirect (303) to a page that says
//! what was done.

mod audit;
mod chart;
mod lookup;
mod overview;
mod queue;

use std::future::Future;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{header, StatusCode};
use actix_web::middleware::Next;
use actix_web::{middleware, web, Error, HttpResponse};
use chrono::{DateTime, Utc};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use meldewerk_storage::StoreResult;
use meldewerk_xml::local_time::LocalZone;

use super::cross_site::{self, Provenance};
use super::ActionFailure;
use crate::auth::operator::OperatorCredentials;
use crate::web::WebSettings;

/// Registers the dashboard's pages and forms under `/admin/` (after the API's scope, which owns
/// `/admin/api/v1/`).
pub(crate) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/admin")
            .wrap(middleware::from_fn(refuse_cross_site_forms))
            .service(overview::dashboard)
            .service(overview::act)
            .service(queue::queue)
            .service(queue::act)
            .service(lookup::lookup)
            .service(audit::audit),
    );
}

/// The dashboard's pages and forms under `/admin` (nested there by [`crate::api_docs`]).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    overview::dashboard,
    overview::act,
    queue::queue,
    queue::act,
    lookup::lookup,
    audit::audit
))]
pub(crate) struct DashboardPages;

/// What a dashboard page or form can answer besides its own page: the operator's credentials
/// missing (the API's JSON answer, so that the browser asks for them), too many failed logins,
/// a store failure as a page.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum PageRefusals {
    /// No or wrong operator credentials: the browser asks for them.
    #[response(status = 401, headers(("WWW-Authenticate" = String, description = "`Basic realm=\"meldewerk operators\"`")))]
    Unauthorized(super::openapi::Errors),
    /// Too many failed operator logins.
    #[response(status = 429, headers(("Retry-After" = u64)))]
    TooManyAttempts(super::openapi::Errors),
    /// The store failed: a page saying so.
    #[response(status = 500, content_type = "text/html")]
    Internal(String),
    /// The store is unavailable (a full disk): a page saying so.
    #[response(status = 503, content_type = "text/html", headers(("Retry-After" = u64)))]
    Unavailable(String),
}

/// What a paged dashboard page (`?page=N`) answers besides its own page and [`PageRefusals`].
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum PagerRefusals {
    /// A page number that is no whole number from 1.
    #[response(status = 400, content_type = "text/html")]
    NoPageNumber(String),
    /// A page past the end.
    #[response(status = 404, content_type = "text/html")]
    PastTheEnd(String),
}

/// What a dashboard form (a `POST`) answers besides [`PageRefusals`] and its own redirect.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // describes answers; never built
pub(crate) enum FormRefusals {
    /// The form's CSRF token is missing or not the operator's, or the browser says another site
    /// sent it: a page saying so.
    #[response(status = 403, content_type = "text/html")]
    Refused(String),
    /// No such action, job or module: a page saying so.
    #[response(status = 404, content_type = "text/html")]
    Unknown(String),
    /// The job is being worked on, or waits for its acknowledgement and `force` is not given.
    #[response(status = 409, content_type = "text/html")]
    Conflict(String),
}

/// The fields of a dashboard form: its CSRF token, and what the form says besides.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // describes a form read field by field
pub(crate) struct ActionForm {
    /// The operator's CSRF token, as the page's form carries it.
    csrf: String,
    /// The queue's page to return to (the queue's forms).
    #[schema(minimum = 1)]
    page: Option<u32>,
    /// `true` discards a job waiting for its acknowledgement too (the queue's discard).
    force: Option<String>,
}

/// Rows of a page of the queue and of the audit log.
const PAGE_SIZE: usize = 25;

const STYLE: &str = r#"
body{font-family:system-ui,sans-serif;margin:1rem auto;max-width:70rem;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:1.5rem}nav{display:flex;gap:1rem;flex-wrap:wrap;margin-bottom:.5rem}
.summary{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.summary div{border:1px solid #bbb;border-radius:6px;padding:.5rem 1rem}.summary strong{display:block;font-size:1.4rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
.state-running{color:#1b5e20}.state-degraded{color:#b00020;font-weight:700}.state-restarting,.state-paused{color:#a65e00;font-weight:700}.state-stopped{color:#555}
.error{font-family:monospace;font-size:.85rem;word-break:break-word}footer,.since,.utc{color:#555;font-size:.85rem}
.note{border:1px solid #1b5e20;background:#e8f5e9;border-radius:6px;padding:.5rem 1rem}
.problem{border:1px solid #b00020;background:#fdecea;border-radius:6px;padding:.5rem 1rem}
form.inline{display:inline}button{font:inherit;padding:.25rem .75rem;margin:.1rem 0}
.pager{display:flex;gap:1rem;margin:.75rem 0}pre{overflow-x:auto;background:#f5f5f5;padding:.5rem;font-size:.8rem}
figure{margin:0}.chart>svg{width:100%;height:auto;max-width:36rem;display:block}.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1.5rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dd{margin:0;overflow-wrap:anywhere}
@media (max-width:40rem){table,thead,tbody,tr,td{display:block}thead{display:none}
tr{border:1px solid #bbb;border-radius:6px;margin-bottom:.75rem;padding:.25rem}td{border:0}
td::before{content:attr(data-label) ": ";font-weight:600}dl{grid-template-columns:1fr}dt{font-weight:600}}
"#;

/// The page frame: title, navigation, the body; `refresh` reloads the page every so many
/// seconds (the overview, which holds no form a reload would clear).
fn frame(title: &str, refresh: Option<u32>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content=(REFERRER_POLICY);
                @if let Some(seconds) = refresh { meta http-equiv="refresh" content=(seconds); }
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                main {
                    nav {
                        a href="/admin/" { "Overview" }
                        a href="/admin/jobs" { "Queue" }
                        a href="/admin/reports" { "Report lookup" }
                        a href="/admin/audit" { "Audit log" }
                    }
                    (body)
                }
            }
        }
    }
}

/// The dashboard's referrer policy, in place of the service's `no-referrer`: under that, a
/// browser sends `Origin: null` with a form's post, which the cross-site guard must refuse; under
/// `same-origin` it names the service's own origin to the service, and still tells other sites
/// nothing.
const REFERRER_POLICY: &str = "same-origin";

/// A page as an answer.
fn page(status: StatusCode, markup: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::REFERRER_POLICY, REFERRER_POLICY))
        .body(markup.into_string())
}

/// [`cross_site::refuse_cross_site`] for the dashboard's forms: form bodies are admitted (their CSRF token is checked by
/// each handler), requests another site made are refused with a 403 page.
pub(crate) async fn refuse_cross_site_forms<B: MessageBody + 'static>(
    settings: web::Data<WebSettings>,
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    cross_site::guard(&settings, req, next, Provenance::FormsWithToken, |_| {
        problem_page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This form was sent from a page of another site; the dashboard takes its forms only \
             from its own pages.",
        )
    })
    .await
}

/// A page that says why a request was not done, with the status it deserves.
pub(crate) fn problem_page(status: StatusCode, title: &str, message: &str) -> HttpResponse {
    page(
        status,
        frame(
            &format!("{title} – meldewerk"),
            None,
            html! {
                h1 { (title) }
                p.problem #problem { (message) }
                p { a href="/admin/" { "Back to the dashboard" } }
            },
        ),
    )
}

/// An action or a read that failed, as a page: refused with its status and message; a store
/// that takes no requests now 503 with `Retry-After`; any other store failure 500.
fn failure_page(failure: ActionFailure) -> HttpResponse {
    match failure {
        ActionFailure::Refused(status, message) => problem_page(status, "Not done", &message),
        ActionFailure::Store(e) if e.is_unavailable() => {
            tracing::warn!(error = %e, "dashboard refused: the store is unavailable");
            let mut answer = problem_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Unavailable",
                crate::module_layer::UNAVAILABLE_MESSAGE,
            );
            answer.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(crate::module_layer::errors::UNAVAILABLE_RETRY_SECS),
            );
            answer
        }
        ActionFailure::Store(e) => {
            tracing::error!(error = %e, "store failed in the dashboard");
            problem_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal error",
                "The store failed; the error is in the service's log.",
            )
        }
    }
}

/// The note a page shows after an action: `what` was done, and where it is recorded.
fn done(what: &str) -> Markup {
    html! {
        p.note #done role="status" { (what) ". Recorded in the " a href="/admin/audit" { "audit log" } "." }
    }
}

/// 303 to `location` (a path of the dashboard), after an action.
fn see_other(location: String) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .finish()
}

/// The hidden field that carries the operator's CSRF token in every form.
fn csrf_field(credentials: &OperatorCredentials) -> Markup {
    html! { input type="hidden" name="csrf" value=(credentials.csrf_token().unwrap_or_default()); }
}

/// The posted fields of an action's form, after its CSRF token was checked: 403 with a page
/// when it is missing or not the operator's.
fn checked_form(
    posted: &[(String, String)],
    credentials: &OperatorCredentials,
) -> Result<(), Box<HttpResponse>> {
    let token = field(posted, "csrf");
    if token.is_some_and(|token| credentials.csrf_matches(token)) {
        return Ok(());
    }
    tracing::warn!(
        token = if token.is_some() { "wrong" } else { "missing" },
        "dashboard form refused: CSRF token"
    );
    Err(Box::new(problem_page(
        StatusCode::FORBIDDEN,
        "Refused",
        "The form's security token is missing or wrong. Open the dashboard again and repeat \
         the action from there.",
    )))
}

/// The value of the posted field `name` (the first, if several).
fn field<'a>(posted: &'a [(String, String)], name: &str) -> Option<&'a str> {
    posted
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// A page number from the query: 1 when absent; 400 with a page unless a whole number from 1.
fn page_number(raw: Option<&str>) -> Result<usize, Box<HttpResponse>> {
    match raw.map(str::parse::<u32>) {
        None => Ok(1),
        Some(Ok(n)) if n >= 1 => Ok(n as usize),
        Some(_) => Err(Box::new(problem_page(
            StatusCode::BAD_REQUEST,
            "No such page",
            "The page number must be a whole number from 1.",
        ))),
    }
}

/// The page of a listing that the query's `page` asks for: its number, its items and whether a
/// next page exists. The listing is read with `fetch(after, limit)` in key order. A page number
/// that is no whole number from 1 is a 400 page, one past the end a 404 page naming `listing`
/// ("The queue"), a store failure its page.
async fn requested_page<T, F, Fut>(
    raw: Option<&str>,
    listing: &str,
    fetch: F,
    key: fn(&T) -> u64,
) -> Result<(usize, Vec<T>, bool), Box<HttpResponse>>
where
    F: Fn(Option<u64>, usize) -> Fut,
    Fut: Future<Output = StoreResult<Vec<T>>>,
{
    let number = page_number(raw)?;
    match page_of(number, fetch, key).await {
        Ok(Some((items, more))) => Ok((number, items, more)),
        Ok(None) => Err(Box::new(problem_page(
            StatusCode::NOT_FOUND,
            "No such page",
            &format!("{listing} has no page {number}; it ends earlier."),
        ))),
        Err(e) => Err(Box::new(failure_page(e.into()))),
    }
}

/// Page `number` of a listing read with `fetch(after, limit)` in key order, and whether a next
/// page exists; `None` when the listing ends before that page. The store pages by key, not by
/// position, so earlier pages are read to find where this one starts (in steps of a thousand;
/// operators page through a few hundred at most).
async fn page_of<T, F, Fut>(
    number: usize,
    fetch: F,
    key: fn(&T) -> u64,
) -> StoreResult<Option<(Vec<T>, bool)>>
where
    F: Fn(Option<u64>, usize) -> Fut,
    Fut: Future<Output = StoreResult<Vec<T>>>,
{
    let mut skip = (number - 1).saturating_mul(PAGE_SIZE);
    let mut after = None;
    while skip > 0 {
        let read = fetch(after, skip.min(1000)).await?;
        let Some(last) = read.last() else {
            return Ok(None);
        };
        after = Some(key(last));
        skip -= read.len();
    }
    let mut items = fetch(after, PAGE_SIZE + 1).await?;
    if items.is_empty() && number > 1 {
        return Ok(None);
    }
    let more = items.len() > PAGE_SIZE;
    items.truncate(PAGE_SIZE);
    Ok(Some((items, more)))
}

/// 404 for an action the dashboard has no form for.
fn no_action(action: &str) -> HttpResponse {
    problem_page(
        StatusCode::NOT_FOUND,
        "Not done",
        &format!("There is no action {action}."),
    )
}

/// Links to the previous and the next page of `path`.
fn pager(path: &str, number: usize, more: bool) -> Markup {
    html! {
        p.pager {
            @if number > 1 { a rel="prev" href=(format!("{path}?page={}", number - 1)) { "← previous page" } }
            span { "page " (number) }
            @if more { a rel="next" href=(format!("{path}?page={}", number + 1)) { "next page →" } }
        }
    }
}

/// `value` as a query parameter's value.
fn encoded(value: &str) -> percent_encoding::PercentEncode<'_> {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
}

/// An instant for operators: local time (the service's `time_zone`) with the UTC instant beside
/// it, exact to the second.
fn when(zone: &LocalZone, at: DateTime<Utc>) -> Markup {
    let utc = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    html! {
        time datetime=(utc) { (zone.local(at).format("%Y-%m-%d %H:%M:%S")) }
        " " span.utc { "(" (zone) ", " (utc) ")" }
    }
}

/// How long ago `at` was, roughly: `12 s ago`, `3 min ago`, `2 h ago`, `4 d ago`.
fn ago(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    let seconds = (now - at).num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds} s ago"),
        60..3600 => format!("{} min ago", seconds / 60),
        3600..86400 => format!("{} h ago", seconds / 3600),
        _ => format!("{} d ago", seconds / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_the_largest_whole_unit() {
        let now = Utc::now();
        let before = |s: i64| now - chrono::Duration::seconds(s);
        assert_eq!(ago(now, before(0)), "0 s ago");
        assert_eq!(ago(now, before(59)), "59 s ago");
        assert_eq!(ago(now, before(185)), "3 min ago");
        assert_eq!(ago(now, before(7300)), "2 h ago");
        assert_eq!(ago(now, before(200_000)), "2 d ago");
        // A clock that stepped back shows no negative age.
        assert_eq!(ago(now, now + chrono::Duration::seconds(5)), "0 s ago");
    }

    #[test]
    fn page_numbers_are_whole_numbers_from_one() {
        assert_eq!(page_number(None).ok(), Some(1));
        assert_eq!(page_number(Some("3")).ok(), Some(3));
        for bad in ["0", "-1", "x", "1.5", "", "99999999999"] {
            let answer = page_number(Some(bad)).unwrap_err();
            assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
    }
}
