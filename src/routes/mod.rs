//! HTTP endpoints that do not belong to one module: health, logins, the operator API.

pub mod admin;
pub mod bal;
pub mod health;
pub mod login;
pub mod magic_link;

use actix_web::http::header;
use actix_web::HttpResponse;

/// A 302 redirect to `location`.
pub(crate) fn found(location: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}
