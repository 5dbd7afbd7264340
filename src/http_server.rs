//! The HTTP server of the service and of `meldewerk simulate`: actix-web's `HttpServer` built from
//! its parts, for the one thing `HttpServer` does not let an application decide: what happens to
//! a request with `Expect: 100-continue`.
//!
//! actix-http's default answers `100 Continue` to every such request before any handler has
//! seen it, so a client without credentials was invited to send a 100 MB body that would then be
//! refused. Here a request that announces more than the largest body the server takes is not
//! continued: the endpoint answers it from its head alone, as it would answer the whole request
//! (401 without valid credentials, else 413 in the route family's error shape, since its body
//! reads as over the limit at once), and no body is asked for. A body within the limit is
//! continued as before: reading it costs no more than a client that sends without asking.

use std::fmt;
use std::io;
use std::net::TcpListener;
use std::rc::Rc;
use std::time::Duration;

use actix_http::body::{BoxBody, MessageBody};
use actix_http::error::PayloadError;
use actix_http::{HttpMessage, HttpService, KeepAlive, Payload, Request, Response};
use actix_service::{fn_factory, fn_service, map_config, IntoServiceFactory, Service};
use actix_service::{ServiceFactory, ServiceFactoryExt};
use actix_web::dev::{AppConfig, Server};
use actix_web::http::header;
use actix_web::web::Bytes;

/// How the server runs.
pub(crate) struct ServerOptions {
    /// Largest request body any endpoint takes: a request announcing more is not continued.
    pub(crate) max_body_bytes: usize,
    /// Threads each worker may use for blocking work, if bounded.
    pub(crate) blocking_threads: Option<usize>,
    /// Seconds requests in flight get on shutdown.
    pub(crate) shutdown_timeout_secs: u64,
    /// Serve HTTPS only, with this configuration (`server.tls`); plain HTTP without.
    pub(crate) tls: Option<rustls::ServerConfig>,
}

/// Serves the applications `factory` makes (one per worker) on `listener`, with actix-web's
/// defaults (keep-alive 5 s, 5 s for a request's head, a worker per core, SIGTERM/SIGINT stop
/// it) and the handling of `Expect: 100-continue` described above.
pub(crate) fn serve<F, I, S, B>(
    factory: F,
    listener: TcpListener,
    options: ServerOptions,
) -> io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let address = listener.local_addr()?;
    let limit = options.max_body_bytes;
    let mut builder = Server::build().shutdown_timeout(options.shutdown_timeout_secs);
    if let Some(threads) = options.blocking_threads {
        builder = builder.worker_max_blocking_threads(threads);
    }
    // The same HTTP/1.1 service over TCP or over TLS: only the stream type differs, which the
    // two `listen` calls below fix.
    macro_rules! h1 {
        () => {{
            let app = factory()
                .into_factory()
                .map_err(|e| e.into().error_response());
            HttpService::build()
                .keep_alive(KeepAlive::default())
                .client_request_timeout(Duration::from_secs(5))
                .client_disconnect_timeout(Duration::from_secs(1))
                .h1_allow_half_closed(true)
                .local_addr(address)
                .expect(expect_factory(factory.clone(), limit))
                .h1(map_config(app, |_| AppConfig::default()))
        }};
    }
    match options.tls {
        Some(config) => builder.listen("meldewerk-https", listener, move || {
            h1!().rustls_0_23(config.clone())
        }),
        None => builder.listen("meldewerk-http", listener, move || h1!().tcp()),
    }
    .map(actix_server::ServerBuilder::run)
}

/// The handler of `Expect: 100-continue`, with an application of its own to answer requests
/// that are not continued.
fn expect_factory<F, I, S, B>(
    factory: F,
    limit: usize,
) -> impl ServiceFactory<
    Request,
    Config = (),
    Response = Request,
    Error = Response<BoxBody>,
    InitError = (),
>
where
    F: Fn() -> I + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    fn_factory(move || {
        let app = factory().into_factory().new_service(AppConfig::default());
        async move {
            let app = Rc::new(app.await.map_err(|e| {
                tracing::error!(error = ?e, "the application could not be built");
            })?);
            Ok(fn_service(move |req: Request| {
                let app = Rc::clone(&app);
                async move {
                    if !announces_more_than(&req, limit) {
                        return Ok(req);
                    }
                    // The body the client holds back must not be waited for: it reads as over
                    // the limit at once.
                    let (req, _held_back) = req.replace_payload(over_limit());
                    let answer: Response<BoxBody> = match app.call(req).await {
                        Ok(response) => response.into().map_into_boxed_body(),
                        Err(e) => e.into().error_response().into(),
                    };
                    Err(answer)
                }
            }))
        }
    })
}

/// Whether the request's `Content-Length` is above `limit` (a chunked body announces no length:
/// it is continued and read up to the limit).
fn announces_more_than(req: &Request, limit: usize) -> bool {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|length| length > limit as u64)
}

/// A body that is over the limit as soon as it is read.
fn over_limit() -> Payload {
    let chunks = futures::stream::once(async { Err::<Bytes, _>(PayloadError::Overflow) });
    Payload::from(Box::pin(chunks) as actix_http::BoxedPayloadStream)
}
