//! `/login` (where every failed login lands) and `/logout` (a button that ends the session).

use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse, Resource};
use maud::{html, Markup};

use crate::auth::session::{Sessions, COOKIE_NAME};
use crate::forms::page;

/// `GET /login`: a plain page. With `?error` it says that the link did not work.
#[utoipa::path(
    tag = "service",
    params(("error" = Option<String>, Query, description = "Present: the page says the link did not work.")),
    responses((status = 200, description = "The login page.", content_type = "text/html", body = String)),
)]
#[get("/login")]
pub async fn login(req: HttpRequest) -> HttpResponse {
    let error = req
        .query_string()
        .split('&')
        .any(|p| p == "error" || p.starts_with("error="));
    let body: Markup = html! {
        h1 { "Anmeldung" }
        @if error {
            p.error role="alert" {
                "Der Link ist ungültig oder abgelaufen. Bitte fordern Sie bei der absendenden Stelle einen neuen Link an."
            }
        } @else {
            p { "Formulare öffnen Sie über den Link, den Sie von Ihrer Einrichtung erhalten haben." }
        }
    };
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(page("Anmeldung", body).into_string())
}

/// `/logout`: `GET` shows a button that ends the session, `POST` (from that button) ends it.
/// Other methods answer 405. Ending a session changes state, so a plain link (or an image on
/// another site) must not do it: the post carries the session's CSRF token.
pub fn logout() -> Resource {
    web::resource("/logout")
        .route(web::get().to(logout_page))
        .route(web::post().to(end_session))
}

/// The button that ends a session: a form posting the session's CSRF token to `/logout`. Pages
/// of a session show it.
pub fn logout_button(csrf: &str) -> Markup {
    html! {
        form method="post" action="/logout" {
            input type="hidden" name="csrf" value=(csrf);
            button type="submit" { "Abmelden" }
        }
    }
}

/// An HTML page with `status`.
fn html_answer(status: StatusCode, title: &str, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(page(title, body).into_string())
}

/// `GET /logout`: with a live session a page with the button, else a note that nobody is
/// logged in. Ends nothing.
async fn logout_page(req: HttpRequest, sessions: web::Data<Sessions>) -> HttpResponse {
    let session = match req.cookie(COOKIE_NAME) {
        Some(cookie) => sessions.touch(cookie.value()).await,
        None => None,
    };
    let body = match &session {
        Some(session) => html! {
            h1 { "Abmelden" }
            p { "Beenden Sie hier Ihre Sitzung. Nicht abgesendete Eingaben gehen verloren." }
            (logout_button(&session.csrf))
        },
        None => html! { h1 { "Abmelden" } p { "Sie sind nicht angemeldet." } },
    };
    html_answer(StatusCode::OK, "Abmelden", body)
}

/// The body of a logout post.
#[derive(serde::Deserialize)]
struct LogoutForm {
    csrf: Option<String>,
}

/// `POST /logout`: ends the session when the post carries its CSRF token (403 otherwise, and
/// the session stays), and forgets the cookie. Without a live session there is nothing to end
/// and nothing to protect: the answer is the logged-out page, so a stale tab's button works.
async fn end_session(
    req: HttpRequest,
    body: Result<web::Bytes, actix_web::Error>,
    sessions: web::Data<Sessions>,
) -> HttpResponse {
    let body = match body {
        Ok(body) => body,
        // Too large, too slow or broken off: an answer in the page style, not actix's text.
        Err(e) => {
            let late = e
                .as_error::<actix_web::error::PayloadError>()
                .and_then(super::body_deadline::timed_out);
            let status = late.map_or_else(
                || e.as_response_error().status_code(),
                |_| StatusCode::REQUEST_TIMEOUT,
            );
            let body = html! {
                h1 { "Abmeldung nicht lesbar" }
                p { "Die Anfrage konnte nicht gelesen werden (" (e) "). Bitte versuchen Sie es erneut." }
            };
            return html_answer(status, "Abmeldung nicht lesbar", body);
        }
    };
    let cookie = req.cookie(COOKIE_NAME);
    let session = match &cookie {
        Some(cookie) => sessions.touch(cookie.value()).await,
        None => None,
    };
    if let Some(session) = session {
        // A url-encoded form body has the syntax of a query string. Anything unreadable counts as
        // a post without the token.
        let posted = std::str::from_utf8(&body)
            .ok()
            .and_then(|body| web::Query::<LogoutForm>::from_query(body).ok())
            .and_then(|form| form.into_inner().csrf);
        // Compared as digests: how long the comparison takes then says nothing about the token.
        let sha256 = |s: &str| ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
        let matches =
            posted.is_some_and(|csrf| sha256(&csrf).as_ref() == sha256(&session.csrf).as_ref());
        if !matches {
            let body = html! {
                h1 { "Abmeldung abgelehnt" }
                p { "Die Anfrage kam nicht aus Ihrer Sitzung. Bitte melden Sie sich über die Schaltfläche ab." }
            };
            return html_answer(StatusCode::FORBIDDEN, "Abmeldung abgelehnt", body);
        }
    }
    if let Some(cookie) = &cookie {
        sessions.end(cookie.value()).await;
    }
    let body = html! { h1 { "Abgemeldet" } p { "Sie sind abgemeldet." } };
    let mut response = html_answer(StatusCode::OK, "Abgemeldet", body);
    response
        .add_cookie(&sessions.removal_cookie())
        .expect("a valid cookie");
    response
}
