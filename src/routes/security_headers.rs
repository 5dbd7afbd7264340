//! Headers every answer carries: a Content-Security-Policy, `Cache-Control: no-store`, and
//! `Strict-Transport-Security` when the service is reached over HTTPS.
//!
//! One middleware for all answers (including those of failed extractors, such as 401 and 400),
//! so that no handler can forget them.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{web, Error};

use crate::web::WebSettings;

/// The pages need their own scripts (none today), their own forms, and the one inline `<style>`
/// of the page frame; nothing may frame them, and no `<base>` may redirect relative links.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'self'";

/// One year, subdomains included: a service that is configured with an `https://` address must
/// never be reached over plain HTTP again.
pub const STRICT_TRANSPORT_SECURITY: &str = "max-age=31536000; includeSubDomains";

/// Adds the security headers to every answer. Nothing this service answers may be cached: API
/// answers carry magic links and personal data, operator answers and pages carry the same, and
/// there are no static files that would gain from caching.
pub async fn add_headers<B: MessageBody>(
    settings: web::Data<WebSettings>,
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, Error> {
    let https = settings.base_url.starts_with("https://");
    // Handlers and extractors hand their errors (401, 400, 413…) on as answers, so they pass
    // here like any other answer.
    let mut response = next.call(req).await?;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if https {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(STRICT_TRANSPORT_SECURITY),
        );
    }
    Ok(response)
}
