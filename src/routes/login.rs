//! `/login` (where every failed login lands) and `/logout`.

use actix_web::{get, web, HttpRequest, HttpResponse};
use maud::{html, Markup};

use crate::auth::session::{Sessions, COOKIE_NAME};
use crate::forms::page;

/// Where every failed magic link or `/bal/` login goes, without saying why.
pub(crate) fn redirect_to_login_error() -> HttpResponse {
    super::found("/login?error")
}

/// `GET /login`: a plain page. With `?error` it says that the link did not work.
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

/// `GET /logout`: ends the session and forgets the cookie.
#[get("/logout")]
pub async fn logout(req: HttpRequest, sessions: web::Data<Sessions>) -> HttpResponse {
    if let Some(cookie) = req.cookie(COOKIE_NAME) {
        sessions.end(cookie.value());
    }
    let body = html! { h1 { "Abgemeldet" } p { "Sie sind abgemeldet." } };
    HttpResponse::Ok()
        .cookie(sessions.removal_cookie())
        .content_type("text/html; charset=utf-8")
        .body(page("Abgemeldet", body).into_string())
}
