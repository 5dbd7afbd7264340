//! HTTP endpoints that do not belong to one module: health, logins, the operator API.

pub mod admin;
pub mod bal;
pub(crate) mod body_deadline;
pub mod health;
pub(crate) mod json;
pub mod login;
pub mod magic_link;
pub(crate) mod multipart;
pub mod security_headers;

use std::sync::Arc;

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use meldewerk_actors::MessageSigner;

use crate::module_layer::{self, Module};

/// Every route the service serves: health, metrics, the logins, each module's API and forms
/// with the module's signer, the operator API and dashboard, and the API documents with their
/// UI (`api_docs`, [`crate::api_docs::ApiDocs::service`]).
pub(crate) fn configure(
    modules: Vec<(Arc<dyn Module>, Arc<dyn MessageSigner>)>,
    api_docs: utoipa_swagger_ui::SwaggerUi,
) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg| {
        cfg.service(health::healthz)
            .service(health::readyz)
            .service(crate::metrics::scrape)
            .service(magic_link::redeem)
            .service(bal::bal_login)
            .service(login::login)
            .service(login::logout());
        for (module, signer) in modules {
            module_layer::routes::configure(module, signer)(cfg);
        }
        admin::configure(cfg);
        cfg.service(api_docs);
    }
}

/// A 302 redirect to `location`.
pub(crate) fn found(location: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, location))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// Why a request body could not be read.
pub(crate) enum BodyError {
    /// Larger than the limit (the rest is not read).
    TooLarge(usize),
    /// The body did not arrive within `body_timeout_secs` (this many seconds).
    TimedOut(u64),
    /// The connection failed while reading.
    Unreadable(String),
}

/// Reads a request body up to `limit` bytes; a larger body is refused without reading it all.
pub(crate) async fn read_limited(
    mut payload: actix_web::web::Payload,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    use futures::StreamExt;
    let mut body = Vec::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match body_deadline::timed_out(&e) {
            Some(late) => BodyError::TimedOut(late.0),
            // A body announced as over the limit (`crate::http_server`).
            None if matches!(e, actix_web::error::PayloadError::Overflow) => {
                BodyError::TooLarge(limit)
            }
            None => BodyError::Unreadable(e.to_string()),
        })?;
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge(limit));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Where no route leads: 405 with `Allow` for a path the service has under another method
/// (the documents know its methods), else 404; both with a JSON `errors` body.
pub(crate) async fn no_route(
    req: actix_web::HttpRequest,
    methods: web::Data<crate::api_docs::Methods>,
) -> HttpResponse {
    // The path as routing read it (percent-encoded characters decoded), so that an encoded
    // spelling of a route is answered as the route is.
    match methods.allowed(req.match_info().as_str()) {
        Some(allow) => HttpResponse::MethodNotAllowed()
            .insert_header((header::ALLOW, allow))
            .json(serde_json::json!({ "errors": [format!("method not allowed; use {allow}")] })),
        None => HttpResponse::NotFound().json(serde_json::json!({ "errors": ["not found"] })),
    }
}
