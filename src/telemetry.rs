//! Logging: `tracing` to standard error, and a root span per HTTP request that never records
//! secrets (tokens in `/mtl/` paths, mementos in query strings, credentials).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::{Error, HttpMessage};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RootSpanBuilder};
use tracing_subscriber::{fmt, EnvFilter};

use crate::configuration::LogSettings;

/// Installs the global subscriber. Safe to call once per process.
pub fn init(settings: &LogSettings) {
    let filter = EnvFilter::try_new(&settings.level).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if settings.format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Root span of every request: method, the matched route pattern (never the raw path, which may
/// carry a token), the request id, and the status once known.
pub struct RedactingRootSpan;

impl RootSpanBuilder for RedactingRootSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = request
            .match_pattern()
            .unwrap_or_else(|| "unmatched".to_string());
        let request_id = request
            .extensions()
            .get::<tracing_actix_web::RequestId>()
            .map(|id| id.to_string())
            .unwrap_or_default();
        tracing::info_span!(
            "http_request",
            method = %request.method(),
            route = %route,
            request_id = %request_id,
            status = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        if let Ok(response) = outcome {
            span.record("status", response.response().status().as_u16());
            let status = response.response().status();
            if status.is_server_error() {
                tracing::error!(parent: &span, status = status.as_u16(), "request failed");
            } else {
                tracing::info!(parent: &span, status = status.as_u16(), "request done");
            }
        } else {
            DefaultRootSpanBuilder::on_request_end(span, outcome);
        }
    }
}
