//! Logging: `tracing` to standard error (coloured only on a terminal), and a root span per HTTP request that never records
//! secrets (tokens in `/mtl/` paths, mementos in query strings, credentials).

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::IsTerminal;
use std::rc::Rc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::{Error, HttpMessage};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RootSpanBuilder};
use tracing_subscriber::{fmt, EnvFilter};

use crate::configuration::LogSettings;

/// Installs the global subscriber. Safe to call once per process.
///
/// The filter is `RUST_LOG` when it is set (the variable every `tracing` and `log` user knows,
/// so that a debug run needs no configuration change), else `log.level`. A filter that does not
/// parse falls back to the other, then to `info`, with a warning once the subscriber runs.
pub fn init(settings: &LogSettings) {
    let from_env = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|value| !value.trim().is_empty());
    let (filter, refused) = match from_env.as_deref().map(EnvFilter::try_new) {
        Some(Ok(filter)) => (filter, None),
        refused => {
            let refused = refused.map(|_| EnvFilter::DEFAULT_ENV);
            match EnvFilter::try_new(&settings.level) {
                Ok(filter) => (filter, refused),
                Err(_) => (EnvFilter::new("info"), refused.or(Some("log.level"))),
            }
        }
    };
    // Colour codes only for a person at a terminal: in a file or a log collector they are noise
    // (and `NO_COLOR` turns them off there too, https://no-color.org).
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let _ = if settings.format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    if let Some(source) = refused {
        tracing::warn!(source, "the log filter does not parse; it is ignored");
    }
}

/// Root span of every request: method, the matched route pattern (never the raw path, which may
/// carry a token), the request id, and the status once known.
pub struct RedactingRootSpan;

impl RootSpanBuilder for RedactingRootSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = route_pattern(request);
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
            // The error behind an error answer, in its display form (a short description; the
            // `Debug` form would carry client-chosen strings such as unknown field names whole),
            // and bounded like every string that may come from a client.
            let error = response.response().error().map(|e| e.to_string());
            let error = error.as_deref().map(log_str);
            if status.is_server_error() {
                tracing::error!(parent: &span, status = status.as_u16(), error = error.map(tracing::field::display), "request failed");
            } else if let Some(error) = error {
                tracing::warn!(parent: &span, status = status.as_u16(), error = %error, "request refused");
            } else if is_probe(response.request().match_info().as_str()) {
                // Load balancers ask every few seconds; a line each would bury the real traffic.
                tracing::debug!(parent: &span, status = status.as_u16(), "request done");
            } else {
                tracing::info!(parent: &span, status = status.as_u16(), "request done");
            }
        } else {
            DefaultRootSpanBuilder::on_request_end(span, outcome);
        }
    }
}

/// The request's route pattern, worked out once per request: the log's root span and the HTTP
/// metrics both name it, and matching walks every route again.
#[derive(Clone)]
struct RoutePattern(Rc<str>);

/// The route pattern that matches `request` (`/api/birthnotice/v1/reports/{id}`), never the raw
/// path, which may carry a token; `unmatched` for any path no route matches, so that scanners
/// cannot grow the metrics registry.
///
/// The path alone decides, as routing reads it (route guards such as methods are not weighed),
/// so a pattern kept by its path ([`StaticPatterns`]) is the one matching would find, whenever
/// it is asked; the outermost middlewares (the log's root span, the metrics) ask first.
pub(crate) fn route_pattern(request: &ServiceRequest) -> Rc<str> {
    if let Some(RoutePattern(route)) = request.extensions().get::<RoutePattern>() {
        return route.clone();
    }
    // The path as routing reads it, percent-encoded characters decoded (all but `%`, `/` and
    // `+`): a route reached by an encoded spelling is named by its pattern too.
    let path = request.match_info().as_str();
    let static_patterns = request.app_data::<StaticPatterns>();
    let known = static_patterns.and_then(|known| known.0.borrow().get(path).cloned());
    let route = known.unwrap_or_else(|| {
        let route: Rc<str> = request
            .resource_map()
            .match_pattern(path)
            .map_or_else(|| "unmatched".into(), Into::into);
        if let Some(known) = static_patterns.filter(|_| *route == *path) {
            known.0.borrow_mut().insert(route.clone());
        }
        route
    });
    request.extensions_mut().insert(RoutePattern(route.clone()));
    route
}

/// The route patterns that requests have matched with a path spelling the pattern itself (every
/// request to a route without a variable segment, `/api/labreport/v1/memento`): one worker's,
/// registered with its app. Finding such a pattern again costs one hash where matching walks
/// every route. A path is kept only when it is the very pattern it matched, so the set holds at
/// most one entry per route whatever clients send, and what it answers is what matching would
/// (the routes do not change while the app runs).
#[derive(Default)]
pub(crate) struct StaticPatterns(RefCell<HashSet<Rc<str>>>);

/// Health probes (`/healthz`, `/readyz`), logged at debug when they succeed.
fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz")
}

/// Longest client-chosen string written to the log, in characters. Names and ids the service
/// accepts are far shorter; anything longer is cut, so a 10 KB header does not become a 10 KB line.
pub const LOG_STR_MAX_CHARS: usize = 128;

/// A client-chosen string (a user name from Basic credentials, an id from a path, a field name)
/// as it may be written to the log: control and line-separator characters escaped, so that a
/// line break cannot start a forged log line, and at most [`LOG_STR_MAX_CHARS`] characters, with
/// the cut marked.
#[derive(Clone, Copy)]
pub struct LogSafe<'a>(pub &'a str);

/// Shorthand for [`LogSafe`]: `tracing::info!(user = %log_str(name), …)`.
pub fn log_str(value: &str) -> LogSafe<'_> {
    LogSafe(value)
}

/// Characters that could change how a log line reads: C0/C1 controls (line breaks, escape
/// sequences of terminals), Unicode line and paragraph separators, and bidirectional overrides
/// (which make a viewer show text in another order than it was written).
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

impl std::fmt::Display for LogSafe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write as _;
        let mut chars = self.0.char_indices();
        for (_, c) in chars.by_ref().take(LOG_STR_MAX_CHARS) {
            if needs_escape(c) {
                write!(f, "{}", c.escape_unicode())?;
            } else {
                f.write_char(c)?;
            }
        }
        if let Some((cut_at, _)) = chars.next() {
            write!(f, "…[{} more bytes]", self.0.len() - cut_at)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for LogSafe<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{self}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service that answers the route pattern of each request, and how many patterns its app
    /// keeps; `known` are kept from the start.
    async fn patterns_app(
        known: &[&str],
    ) -> impl actix_web::dev::Service<actix_http::Request, Response = ServiceResponse, Error = Error>
    {
        use actix_web::dev::Service as _;
        use actix_web::{test, web, App, HttpResponse};
        let patterns = StaticPatterns::default();
        patterns
            .0
            .borrow_mut()
            .extend(known.iter().map(|k| Rc::from(*k)));
        test::init_service(
            App::new()
                .app_data(patterns)
                .wrap_fn(|req, srv| {
                    let route = route_pattern(&req);
                    let kept = req
                        .app_data::<StaticPatterns>()
                        .map_or(0, |known| known.0.borrow().len());
                    let answer = srv.call(req);
                    async move {
                        let mut answer = answer.await?;
                        let headers = answer.headers_mut();
                        let value = |text: &str| text.parse().expect("header value");
                        headers.insert("x-route".parse().unwrap(), value(&route));
                        headers.insert("x-kept".parse().unwrap(), value(&kept.to_string()));
                        Ok(answer)
                    }
                })
                .route("/api/m/v1/memento", web::post().to(HttpResponse::Ok))
                .route("/api/m/v1/reports/{id}", web::get().to(HttpResponse::Ok)),
        )
        .await
    }

    async fn pattern_of(
        app: &impl actix_web::dev::Service<
            actix_http::Request,
            Response = ServiceResponse,
            Error = Error,
        >,
        method: actix_web::http::Method,
        path: &str,
    ) -> (String, usize) {
        use actix_web::test;
        let request = test::TestRequest::default().method(method).uri(path);
        let answer = test::call_service(app, request.to_request()).await;
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned()
        };
        (header("x-route"), header("x-kept").parse().unwrap())
    }

    /// Asserts that `method path` is named `pattern`, with `kept` patterns in the set after it.
    async fn assert_named(
        app: &impl actix_web::dev::Service<
            actix_http::Request,
            Response = ServiceResponse,
            Error = Error,
        >,
        method: Method,
        path: &str,
        (pattern, kept): (&str, usize),
    ) {
        let shown = format!("{method} {path}");
        assert_eq!(
            pattern_of(app, method, path).await,
            (pattern.to_owned(), kept),
            "{shown}"
        );
    }

    use actix_web::http::Method;

    #[actix_web::test]
    async fn a_static_routes_pattern_is_kept_and_answered_as_matching_would() {
        let app = patterns_app(&[]).await;
        // Matched once, kept, then answered from what was kept: the same pattern, whatever the
        // method (the path alone decides).
        for method in [Method::POST, Method::GET, Method::HEAD, Method::POST] {
            assert_named(&app, method, "/api/m/v1/memento", ("/api/m/v1/memento", 1)).await;
        }
        // The query is no part of the pattern.
        assert_eq!(
            pattern_of(&app, Method::POST, "/api/m/v1/memento?x=1")
                .await
                .0,
            "/api/m/v1/memento"
        );
    }

    #[actix_web::test]
    async fn a_kept_pattern_is_answered_without_matching() {
        // A path kept as a pattern (as if matched before) comes back as it was kept: the set
        // is read, not only written.
        let app = patterns_app(&["/not/a/route"]).await;
        assert_named(&app, Method::GET, "/not/a/route", ("/not/a/route", 1)).await;
    }

    #[actix_web::test]
    async fn paths_of_variable_routes_and_unknown_paths_are_never_kept() {
        let app = patterns_app(&[]).await;
        for i in 0..50 {
            assert_named(
                &app,
                Method::GET,
                &format!("/api/m/v1/reports/r-{i}"),
                ("/api/m/v1/reports/{id}", 0),
            )
            .await;
            assert_named(&app, Method::GET, &format!("/scan/{i}"), ("unmatched", 0)).await;
        }
        // A path spelling a variable route's pattern is that pattern: kept, once.
        for _ in 0..3 {
            assert_named(
                &app,
                Method::GET,
                "/api/m/v1/reports/{id}",
                ("/api/m/v1/reports/{id}", 1),
            )
            .await;
        }
    }

    #[actix_web::test]
    async fn an_encoded_spelling_is_named_by_the_route_it_reaches() {
        let app = patterns_app(&[]).await;
        // actix routes `%6F` as `o`: the request reaches the memento route and is named by it,
        // kept once like the plain spelling.
        for path in [
            "/api/m/v1/mement%6F",
            "/api/m/v1/memento",
            "/api/m/v1/mement%6f",
        ] {
            assert_named(&app, Method::POST, path, ("/api/m/v1/memento", 1)).await;
        }
        assert_named(
            &app,
            Method::GET,
            "/api/m/v1/reports/r%2D1",
            ("/api/m/v1/reports/{id}", 1),
        )
        .await;
        // An encoded `/` stays encoded for routing: no route has it.
        assert_named(&app, Method::POST, "/api/m%2Fv1/memento", ("unmatched", 1)).await;
    }

    #[test]
    fn log_str_escapes_line_breaks_and_controls() {
        let shown = log_str("a\nb\r\u{1b}[31mc\u{2028}d").to_string();
        assert_eq!(shown, "a\\u{a}b\\u{d}\\u{1b}[31mc\\u{2028}d");
        assert_eq!(log_str("Klinik Süd").to_string(), "Klinik Süd");
    }

    #[test]
    fn log_str_bounds_the_length() {
        let long = "x".repeat(10_000);
        let shown = log_str(&long).to_string();
        assert!(shown.starts_with(&"x".repeat(LOG_STR_MAX_CHARS)));
        assert!(shown.ends_with(&format!("…[{} more bytes]", 10_000 - LOG_STR_MAX_CHARS)));
        assert!(shown.len() < 200, "{}", shown.len());
        let exact = "y".repeat(LOG_STR_MAX_CHARS);
        assert_eq!(log_str(&exact).to_string(), exact);
    }
}
