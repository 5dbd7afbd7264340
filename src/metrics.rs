//! Prometheus metrics at `GET /metrics` (the metrics token or operator credentials; OpenMetrics
//! text).
//!
//! The HTTP layer is counted by route pattern (never the raw path, which may carry a token),
//! method and status, with a latency histogram; the engine is read from its health registry at
//! each scrape (per actor: processed, failed, restarts, backlog, state), so that the engine needs
//! no metrics code of its own and a scrape always shows the registry's current truth.
//!
//! The same events feed the dashboard's chart of the last hour ([`recent`]), and the registry
//! knows when it started counting ([`Metrics::since`]): every counter here starts with the
//! process.

pub(crate) mod recent;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{get, web, Error, HttpResponse};
use meldewerk_actors::{
    ActorHealth, ActorState, BreakerState, Engine, EngineEvents, TransportHealth, WeakEngine,
};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::auth::metrics_token::MetricsReader;

/// Labels of an HTTP request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

/// Labels of a request duration.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

fn latency_histogram() -> Histogram {
    // 0.25 ms to about 4 s.
    Histogram::new(exponential_buckets(0.000_25, 2.0, 15))
}

/// Labels of a finished report.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    module: String,
    outcome: &'static str,
}

/// Labels of a module.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModuleLabels {
    module: String,
}

fn report_histogram() -> Histogram {
    // 10 ms to about 3 hours: acknowledgements may take long.
    Histogram::new(exponential_buckets(0.01, 2.5, 15))
}

/// The service's metrics registry. Cheap to share: the families count atomically.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<RouteLabels, Histogram, fn() -> Histogram>,
    reports: Family<OutcomeLabels, Counter>,
    report_durations: Family<ModuleLabels, Histogram, fn() -> Histogram>,
    retries: Family<ModuleLabels, Counter>,
    /// Finished reports per minute of the last hour (the dashboard's chart).
    recent: recent::RecentReports,
    /// The reports that failed last (the dashboard's queue page).
    failures: recent::RecentFailures,
    /// When counting began (the process's start).
    since: chrono::DateTime<chrono::Utc>,
    /// Set once the engine runs; the engine is told about this registry as its events observer
    /// before it starts, so it cannot be a constructor argument. Weak, since the engine holds
    /// this registry.
    engine: Arc<OnceLock<WeakEngine>>,
}

impl Metrics {
    /// A registry with the HTTP and report families and the engine's collector (which reads
    /// nothing until [`Metrics::watch`] gave it the engine).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("meldewerk");
        let requests = Family::<RequestLabels, Counter>::default();
        let durations = Family::<RouteLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        registry.register(
            "http_requests",
            "HTTP requests by method, route pattern and status",
            requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time to answer an HTTP request, by method and route pattern",
            prometheus_client::registry::Unit::Seconds,
            durations.clone(),
        );
        let reports = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "reports",
            "Reports that reached a final state, by module and outcome (success, failure)",
            reports.clone(),
        );
        let report_durations =
            Family::<ModuleLabels, Histogram, fn() -> Histogram>::new_with_constructor(
                report_histogram,
            );
        registry.register_with_unit(
            "report_duration",
            "Time from submission to acknowledgement of successful reports, by module",
            prometheus_client::registry::Unit::Seconds,
            report_durations.clone(),
        );
        let retries = Family::<ModuleLabels, Counter>::default();
        registry.register(
            "delivery_retries",
            "Deliveries and acknowledgement polls that met a transient fault, by module",
            retries.clone(),
        );
        let engine = Arc::new(OnceLock::new());
        registry.register_collector(Box::new(EngineCollector(Arc::clone(&engine))));
        Metrics {
            registry,
            requests,
            durations,
            reports,
            report_durations,
            retries,
            recent: recent::RecentReports::default(),
            failures: recent::RecentFailures::default(),
            since: chrono::Utc::now(),
            engine,
        }
    }

    /// Names the node the metrics describe: `meldewerk_node_info{node="…"} 1`, for nodes that
    /// share a store (each is scraped on its own).
    pub fn with_node(mut self, node: &str) -> Self {
        self.registry.register(
            "node",
            "The node these metrics describe (node.name)",
            prometheus_client::metrics::info::Info::new(vec![("node".to_owned(), node.to_owned())]),
        );
        self
    }

    /// When the counters began: the process's start. Nothing here survives a restart.
    pub(crate) fn since(&self) -> chrono::DateTime<chrono::Utc> {
        self.since
    }

    /// The reports that failed last, newest first.
    pub(crate) fn recent_failures(&self) -> Vec<recent::FailedReport> {
        self.failures.newest_first()
    }

    /// Finished reports per minute of the last hour up to `now`, by module and outcome.
    pub(crate) fn per_minute(&self, now: chrono::DateTime<chrono::Utc>) -> recent::PerMinute {
        self.recent.per_minute(now)
    }

    /// From now on the scrape reads `engine`'s actors and transports.
    pub fn watch(&self, engine: &Engine) {
        let _ = self.engine.set(engine.downgrade());
    }

    /// The OpenMetrics text of every metric.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }

    fn observe(&self, method: &str, route: String, status: u16, seconds: f64) {
        self.durations
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.clone(),
            })
            .observe(seconds);
        self.requests
            .get_or_create(&RequestLabels {
                method: method.to_owned(),
                route,
                status,
            })
            .inc();
    }
}

/// The method as a label: the standard ones by name, anything a client invents as `other`, so
/// that made-up methods cannot grow the registry.
fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

/// Middleware counting every request under its route pattern.
pub async fn count_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let registry = req.app_data::<web::Data<Metrics>>().cloned();
    let route = crate::telemetry::route_pattern(&req).to_string();
    let method = method_label(req.method()).to_owned();
    let response = next.call(req).await?;
    if let Some(registry) = registry {
        let status = response.status().as_u16();
        registry.observe(&method, route, status, started.elapsed().as_secs_f64());
    }
    Ok(response)
}

/// `GET /metrics`: the OpenMetrics text (the metrics token, or operator credentials).
#[utoipa::path(
    tag = "service",
    security(("metricsToken" = []), ("operator" = [])),
    responses(
        (status = 200, description = "The metrics (OpenMetrics text).",
            content_type = "application/openmetrics-text", body = String),
        (status = 401, description = "Neither the metrics token nor operator credentials.",
            headers(("WWW-Authenticate" = String))),
        (status = 429, description = "Too many failed logins.", headers(("Retry-After" = u64))),
    ),
)]
#[get("/metrics")]
pub async fn scrape(_reader: MetricsReader, registry: web::Data<Metrics>) -> HttpResponse {
    match registry.encode() {
        Ok(text) => HttpResponse::Ok()
            .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
            .body(text),
        Err(e) => {
            tracing::error!(error = %e, "metrics could not be encoded");
            HttpResponse::InternalServerError()
                .json(serde_json::json!({ "errors": ["metrics could not be encoded"] }))
        }
    }
}

/// Reads the engine's health registry at each scrape (nothing before the engine runs).
#[derive(Debug)]
struct EngineCollector(Arc<OnceLock<WeakEngine>>);

/// One metric family with one series per item, labelled `label` = `label_of(item)`.
#[allow(clippy::too_many_arguments)] // one call per family; a struct would only rename them
fn series<T>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    counter: bool,
    items: &[T],
    label: &str,
    label_of: fn(&T) -> &str,
    value: fn(&T) -> u64,
) -> Result<(), std::fmt::Error> {
    let kind = if counter {
        ConstCounter::new(0u64).metric_type()
    } else {
        ConstGauge::new(0i64).metric_type()
    };
    let mut metric = encoder.encode_descriptor(name, help, None, kind)?;
    for item in items {
        let labels = [(label, label_of(item))];
        let family = metric.encode_family(&labels)?;
        if counter {
            ConstCounter::new(value(item)).encode(family)?;
        } else {
            ConstGauge::new(i64::try_from(value(item)).unwrap_or(i64::MAX)).encode(family)?;
        }
    }
    Ok(())
}

/// Actor series: name, help, counter or gauge, value.
type ActorSeries = (&'static str, &'static str, bool, fn(&ActorHealth) -> u64);
/// Transport series: name, help, counter or gauge, value.
type TransportSeries = (
    &'static str,
    &'static str,
    bool,
    fn(&TransportHealth) -> u64,
);

const ACTOR_SERIES: [ActorSeries; 5] = [
    (
        "actor_processed",
        "Work an actor finished: reports brought to a final state (module actors), jobs routed (outbox), payloads expired (retention), court messages indexed or found gone (sync), fetched and archived (hydration), deleted by the backstop (mailbox)",
        true,
        |a| a.processed,
    ),
    (
        "actor_failed",
        "Reports that ended in FAILURE (module actors), failed sweeps (retention, mailbox), court messages given up (hydration)",
        true,
        |a| a.failed,
    ),
    ("actor_restarts", "Restarts after a panic or failure", true, |a| a.restarts),
    (
        "actor_backlog",
        "Work waiting: outbox length (outbox), jobs in flight (module actors), court messages being fetched (hydration), accounts synced (mailbox)",
        false,
        |a| a.backlog as u64,
    ),
    (
        "actor_degraded",
        "1 while an actor restarts more often than the restart intensity allows",
        false,
        |a| u64::from(a.state == ActorState::Degraded),
    ),
];

const TRANSPORT_SERIES: [TransportSeries; 3] = [
    (
        "transport_breaker_open",
        "1 while the transport's circuit breaker is open or half-open",
        false,
        |t| u64::from(t.breaker != BreakerState::Closed),
    ),
    (
        "transport_calls",
        "Calls to the transport (deliveries and acknowledgement polls)",
        true,
        |t| t.calls,
    ),
    (
        "transport_failures",
        "Calls that ended in a transient fault",
        true,
        |t| t.failures,
    ),
];

impl Collector for EngineCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(engine) = self.0.get().and_then(WeakEngine::upgrade) else {
            return Ok(());
        };
        let actors = engine.health();
        for (name, help, counter, value) in ACTOR_SERIES {
            let label_of: fn(&ActorHealth) -> &str = |a| &a.name;
            series(
                &mut encoder,
                name,
                help,
                counter,
                &actors,
                "actor",
                label_of,
                value,
            )?;
        }
        let transports = engine.transports();
        for (name, help, counter, value) in TRANSPORT_SERIES {
            let label_of: fn(&TransportHealth) -> &str = |t| &t.name;
            series(
                &mut encoder,
                name,
                help,
                counter,
                &transports,
                "transport",
                label_of,
                value,
            )?;
        }
        Ok(())
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// The engine's report events become counters and histograms.
impl EngineEvents for Metrics {
    fn report_finished(&self, module: &str, failed: bool, took: Option<Duration>) {
        let outcome = if failed { "failure" } else { "success" };
        self.reports
            .get_or_create(&OutcomeLabels {
                module: module.to_owned(),
                outcome,
            })
            .inc();
        self.recent.record(module, outcome, chrono::Utc::now());
        if let Some(took) = took {
            self.report_durations
                .get_or_create(&ModuleLabels {
                    module: module.to_owned(),
                })
                .observe(took.as_secs_f64());
        }
    }

    fn delivery_failed(&self, report: &meldewerk_storage::ReportKey, reason: &str) {
        self.failures.record(recent::FailedReport {
            at: chrono::Utc::now(),
            report: report.clone(),
            reason: reason.to_owned(),
        });
    }

    fn delivery_retried(&self, module: &str) {
        self.retries
            .get_or_create(&ModuleLabels {
                module: module.to_owned(),
            })
            .inc();
    }
}
