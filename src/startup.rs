//! Builds the running service from [`Settings`] as an [`Application`]: store, keys, transports,
//! the modules (from [`crate::modules::MODULES`]), the engine and the HTTP server; runs it until
//! SIGTERM/SIGINT and shuts down in order.

use std::net::{SocketAddr, TcpListener};

use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Service;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{middleware, web, App, HttpMessage, HttpResponse};
use meldewerk_actors::{Engine, Fanout, MessageSigner, ModuleSpec};
use meldewerk_storage::{LoginState, PgStore, SledStore, Store, StoreError};
use meldewerk_transports::SimulatorError;
use tracing_actix_web::{RequestId, TracingLogger};

use crate::accounts::Accounts;
use crate::auth::limiter::FailedLoginLimiter;
use crate::auth::metrics_token::MetricsToken;
use crate::auth::operator::OperatorCredentials;
use crate::auth::{CredentialVerifier, Sessions, TrustedProxies};
use crate::certificates::DepositedCertificates;
use crate::configuration::Settings;
use crate::crypto::{CryptoError, MasterKey, PasswordHasher};
use crate::mail::{AccountAddresses, AlertService};
use crate::module_layer::{self, Module, ModuleSetup};
use crate::routes;
use crate::signing::Signer;
use crate::telemetry::RedactingRootSpan;
use crate::transports::Transports;
use crate::web::{Readiness, WebSettings};

/// Threads each HTTP worker may use for blocking work.
const HTTP_BLOCKING_THREADS: usize = 4;

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The data directory could not be created or used.
    #[error("data directory {path}: {reason}")]
    DataDir {
        /// The directory.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A key could not be loaded.
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    /// The configuration does not fit the modules or transports.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A transport could not be opened.
    #[error("transport: {0}")]
    Transport(#[from] SimulatorError),
    /// The listen address could not be bound.
    #[error("cannot listen on {address}: {reason}")]
    Listen {
        /// The address.
        address: String,
        /// What went wrong.
        reason: String,
    },
    /// The server failed while running.
    #[error("server: {0}")]
    Server(String),
}

/// A form post that cannot be read (too large, too slow, not url-encoded): an HTML page, like the
/// form.
fn form_error(
    error: actix_web::error::UrlencodedError,
    _: &actix_web::HttpRequest,
) -> actix_web::Error {
    use actix_web::error::UrlencodedError;
    use actix_web::http::StatusCode;
    let status = match &error {
        UrlencodedError::Overflow { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        UrlencodedError::Payload(e) if routes::body_deadline::timed_out(e).is_some() => {
            StatusCode::REQUEST_TIMEOUT
        }
        _ => StatusCode::BAD_REQUEST,
    };
    let body = maud::html! {
        h1 { "Formular nicht lesbar" }
        p { "Die gesendeten Formulardaten konnten nicht gelesen werden (" (error.to_string()) "). Bitte laden Sie das Formular neu." }
    };
    let response = HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(crate::forms::page("Formular nicht lesbar", body).into_string());
    actix_web::error::InternalError::from_response(error, response).into()
}

/// A query string that does not fit the endpoint: 400 `{"errors": [...]}`.
fn query_error(
    error: actix_web::error::QueryPayloadError,
    _: &actix_web::HttpRequest,
) -> actix_web::Error {
    let response = HttpResponse::BadRequest()
        .json(serde_json::json!({ "errors": [format!("invalid query string: {error}")] }));
    actix_web::error::InternalError::from_response(error, response).into()
}

/// Opens the store: the PostgreSQL database of `store.url` (its schema brought up to date), or
/// the sled database in the data directory (created when missing).
pub fn open_store(settings: &Settings) -> Result<Arc<dyn Store>, StartupError> {
    Ok(open_shared_store(settings, true)?.0)
}

/// [`open_store`] for a node (`node`: listed among the nodes, with a heartbeat) or a command.
pub(crate) fn open_store_as(
    settings: &Settings,
    node: bool,
) -> Result<Arc<dyn Store>, StartupError> {
    Ok(open_shared_store(settings, node)?.0)
}

/// A store, and the login state it shares with other nodes if it does.
type OpenedStore = (Arc<dyn Store>, Option<Arc<dyn LoginState>>);

/// [`open_store_as`], answering also the login state the store shares with other nodes: that of
/// the PostgreSQL database, where end users' sessions and the failed-login counts then live;
/// `None` for sled, whose single node keeps them in memory.
fn open_shared_store(settings: &Settings, node: bool) -> Result<OpenedStore, StartupError> {
    if let Some(mut postgres) = settings.postgres() {
        postgres.joins = node;
        let store = Arc::new(PgStore::open_blocking(&postgres)?);
        return Ok((store.clone(), Some(store)));
    }
    std::fs::create_dir_all(&settings.data_dir).map_err(|e| StartupError::DataDir {
        path: settings.data_dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let store =
        SledStore::open_with_cache(&settings.db_dir(), settings.store.cache_capacity_bytes())?;
    Ok((Arc::new(store), None))
}

/// Builds every module of [`crate::modules::MODULES`] from its configuration section; refuses
/// sections no module reads. Each module delivers through a transport of the registry.
pub(crate) fn build_modules(
    settings: &Settings,
    base_url: &str,
) -> Result<Vec<Arc<dyn Module>>, StartupError> {
    let setup = ModuleSetup {
        sections: &settings.modules,
        read: Default::default(),
        base_url,
        data_dir: &settings.data_dir,
    };
    let modules = crate::modules::MODULES
        .iter()
        .map(|build| build(&setup))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StartupError::Config(e.to_string()))?;
    let read = setup.read.borrow();
    for section in settings.modules.keys() {
        if !read.contains(section) && !modules.iter().any(|m| m.info().module == section) {
            let mut known: Vec<&str> = modules.iter().map(|m| m.info().module).collect();
            known.extend(read.iter().map(String::as_str));
            known.sort_unstable();
            known.dedup();
            return Err(StartupError::Config(format!(
                "modules.{section}: no module reads this section (known: {})",
                known.join(", ")
            )));
        }
    }
    Ok(modules)
}

/// The service, built from [`Settings`] and bound to its address, not yet serving.
pub struct Application {
    server: actix_web::dev::Server,
    address: SocketAddr,
    /// `https` when the listener serves TLS itself, else `http`.
    scheme: &'static str,
    base_url: String,
    engine: Engine,
    alert_service: AlertService,
    readiness: web::Data<Readiness>,
    grace: Duration,
}

impl Application {
    /// Opens the store, the keys and the transports, builds the modules, starts the engine and
    /// binds the HTTP server. Must run inside an actix System (`#[actix_web::main]`).
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        // The store and an in-process office's journal are sled databases of their own, and
        // each replays the log written since its last open: side by side, a start after a busy
        // run takes as long as the larger replay, not both.
        let credentials = DepositedCertificates::default();
        let (store, transports) = std::thread::scope(|scope| {
            let transports = scope.spawn(|| {
                let started = std::time::Instant::now();
                let transports = Transports::open(&settings, &credentials);
                tracing::info!(ms = started.elapsed().as_millis(), "transports opened");
                transports
            });
            let started = std::time::Instant::now();
            let store = open_shared_store(&settings, true);
            tracing::info!(ms = started.elapsed().as_millis(), "store opened");
            let transports = transports
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (store, transports)
        });
        let ((store, shared), transports) = (store?, transports?);
        let master = Arc::new(MasterKey::load_or_create(
            &settings.data_dir,
            settings.master_key.as_deref(),
        )?);
        // Before the engine starts: its first delivery may present a deposited certificate.
        credentials.bind(store.clone(), master.clone());
        let listener = TcpListener::bind(&settings.listen).map_err(|e| StartupError::Listen {
            address: settings.listen.clone(),
            reason: e.to_string(),
        })?;
        let address = listener
            .local_addr()
            .map_err(|e| StartupError::Server(e.to_string()))?;
        // Read before anything else is built on it: a certificate that cannot be used stops
        // the start with the reason.
        let tls = match &settings.server.tls {
            Some(files) => Some(crate::tls::server_config(files).map_err(StartupError::Config)?),
            None => None,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let base_url = settings
            .base_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{address}"))
            .trim_end_matches('/')
            .to_string();
        let modules = build_modules(&settings, &base_url)?;
        for module in &modules {
            store.pack_payloads(module.info().module, module.info().packing);
        }

        // One signer a module, for the forms (which sign at dispatch) and the engine (which signs
        // what it builds itself).
        let modules: Vec<(Arc<dyn Module>, Arc<dyn MessageSigner>)> = modules
            .into_iter()
            .map(|module| {
                let signer = Signer::new(store.clone(), master.clone(), Arc::clone(&module));
                (module, Arc::new(signer) as Arc<dyn MessageSigner>)
            })
            .collect();
        let specs = modules
            .iter()
            .map(|(module, signer)| {
                Ok(ModuleSpec {
                    module: module.info().module.into(),
                    builder: module.messages(),
                    signer: Arc::clone(signer),
                    transport: transports.get(module.info().transport).ok_or_else(|| {
                        StartupError::Config(format!(
                            "module {} delivers through {}, a transport the service does not know",
                            module.info().module,
                            module.info().transport
                        ))
                    })?,
                    retention: module_layer::retention(&settings.modules, module.info())
                        .map_err(|e| StartupError::Config(e.to_string()))?,
                    reading: module.reading(),
                })
            })
            .collect::<Result<Vec<_>, StartupError>>()?;
        // Before the engine, so that nothing it reports is missed.
        let addresses = Arc::new(AccountAddresses(store.clone()));
        let alert_service = AlertService::start(&settings.mail, addresses)
            .map_err(|e| StartupError::Config(e.to_string()))?;
        let metrics = web::Data::new(crate::metrics::Metrics::new().with_node(&settings.node.name));
        let events = Fanout(vec![
            Arc::new(alert_service.alerts()),
            metrics.clone().into_inner(),
        ]);
        let engine = Engine::start_with_events(
            store.clone(),
            specs,
            settings.engine.clone(),
            Arc::new(events),
        );
        metrics.watch(&engine);

        let security = &settings.security;
        let hasher = PasswordHasher::new(security.argon2_memory_kib, security.argon2_iterations)?;
        // The operator API's user administration: the same operations as `meldewerk user …`.
        let accounts = web::Data::new(Accounts::new(store.clone(), master.clone(), hasher.clone()));
        // One node keeps sessions and failed-login counts in memory; nodes on one database
        // share them there, so that any node serves a session and a guesser's attempts count
        // together whichever node they reach.
        let limiter = |scope| match &shared {
            Some(state) => FailedLoginLimiter::shared(security, state.clone(), scope),
            None => FailedLoginLimiter::configured(security),
        };
        let verifier = web::Data::new(CredentialVerifier::new(
            store.clone(),
            hasher,
            &master,
            security,
            limiter("api"),
        )?);
        let idle = Duration::from_secs(settings.session_idle_secs);
        let secure = base_url.starts_with("https://");
        let sessions = web::Data::new(match &shared {
            Some(state) => Sessions::shared(idle, secure, state.clone()),
            None => Sessions::new(idle, secure),
        });
        let web_settings = web::Data::new(WebSettings {
            base_url: base_url.clone(),
            token_lifetime: chrono::Duration::seconds(settings.token_lifetime_secs as i64),
            max_body_bytes: settings.max_body_bytes,
            time_zone: settings.time_zone.parse().map_err(StartupError::Config)?,
            node: settings.node.name.clone(),
        });
        let operator = web::Data::new(OperatorCredentials::new(
            &settings.operator.username,
            settings.operator.password.as_deref(),
            &master.derive("operator-credentials"),
            limiter("operator"),
        ));
        let metrics_token = web::Data::new(MetricsToken::new(
            settings.metrics.token.as_deref(),
            &master.derive("metrics-token"),
            limiter("metrics"),
        ));
        let trusted_proxies = web::Data::new(
            TrustedProxies::new(
                &settings.server.trusted_proxies,
                settings.server.forwarded_header,
            )
            .map_err(StartupError::Config)?,
        );
        let readiness = web::Data::new(Readiness::default());
        let store_data = web::Data::new(store.clone());
        let master_data = web::Data::from(master.clone());
        let engine_data = web::Data::new(engine.clone());
        let transports_data = web::Data::new(transports.clone());
        let max_body = settings.max_body_bytes;
        let body_deadline = web::Data::new(settings.body_deadline());
        let grace = Duration::from_secs(settings.shutdown_grace_secs);
        let api_docs = crate::api_docs::ApiDocs::new(modules.iter().map(|(module, _)| module));
        let methods = web::Data::new(api_docs.methods());
        let api_docs = api_docs.service();

        let tls = match tls {
            Some((config, reloader)) => {
                reloader
                    .watch()
                    .map_err(|e| StartupError::Server(format!("SIGHUP handler: {e}")))?;
                Some(config)
            }
            None => None,
        };
        let server = crate::http_server::serve(
            {
                let readiness = readiness.clone();
                move || {
                    let modules = modules.clone();
                    App::new()
                        .app_data(store_data.clone())
                        .app_data(master_data.clone())
                        .app_data(verifier.clone())
                        .app_data(accounts.clone())
                        .app_data(sessions.clone())
                        .app_data(web_settings.clone())
                        .app_data(operator.clone())
                        .app_data(trusted_proxies.clone())
                        .app_data(metrics_token.clone())
                        .app_data(readiness.clone())
                        .app_data(engine_data.clone())
                        .app_data(metrics.clone())
                        .app_data(transports_data.clone())
                        .app_data(body_deadline.clone())
                        .app_data(crate::telemetry::StaticPatterns::default())
                        .app_data(
                            web::FormConfig::default()
                                .limit(max_body)
                                .error_handler(form_error),
                        )
                        .app_data(web::QueryConfig::default().error_handler(query_error))
                        .app_data(web::PayloadConfig::new(max_body))
                        .wrap(middleware::from_fn(routes::body_deadline::limit_body_time))
                        .wrap(middleware::from_fn(routes::security_headers::add_headers))
                        .wrap(
                            middleware::DefaultHeaders::new()
                                .add(("X-Content-Type-Options", "nosniff"))
                                .add(("X-Frame-Options", "DENY"))
                                .add(("Referrer-Policy", "no-referrer")),
                        )
                        .wrap_fn(|req, srv| {
                            let request_id = req.extensions().get::<RequestId>().copied();
                            let response = srv.call(req);
                            async move {
                                let mut response = response.await?;
                                if let Some(id) = request_id {
                                    if let Ok(value) = HeaderValue::from_str(&id.to_string()) {
                                        response
                                            .headers_mut()
                                            .insert(HeaderName::from_static("x-request-id"), value);
                                    }
                                }
                                Ok(response)
                            }
                        })
                        .wrap(middleware::from_fn(crate::metrics::count_requests))
                        .wrap(TracingLogger::<RedactingRootSpan>::new())
                        .configure(routes::configure(modules, api_docs.clone()))
                        .app_data(methods.clone())
                        .default_service(web::to(routes::no_route))
                }
            },
            listener,
            crate::http_server::ServerOptions {
                max_body_bytes: max_body,
                // Each worker's blocking pool (argon2, store flushes) bounded like the engine's:
                // idle threads of a burst keep their allocator memory.
                blocking_threads: Some(HTTP_BLOCKING_THREADS),
                shutdown_timeout_secs: grace.as_secs(),
                tls,
            },
        )
        .map_err(|e| StartupError::Server(e.to_string()))?;

        Ok(Application {
            server,
            address,
            scheme,
            base_url,
            engine,
            alert_service,
            readiness,
            grace,
        })
    }

    /// The address the server is bound to (the real port when configured with port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves until SIGTERM/SIGINT, then stops accepting, lets in-flight requests and deliveries
    /// finish (up to `shutdown_grace_secs`), and returns.
    pub async fn run_until_stopped(self) -> Result<(), StartupError> {
        let Application {
            server,
            address,
            scheme,
            base_url,
            engine,
            alert_service,
            readiness,
            grace,
        } = self;
        tracing::info!(%address, %base_url, "meldewerk started");
        // Tests and scripts read this line to learn the port when listening on port 0. A closed
        // standard output (a detached start) must not stop the service, so errors are ignored.
        {
            use std::io::Write;
            let mut stdout = std::io::stdout();
            let _ = writeln!(stdout, "meldewerk listening on {scheme}://{address}");
            let _ = stdout.flush();
        }
        readiness.set(true);
        let result = server.await;
        readiness.set(false);
        tracing::info!("HTTP server stopped; finishing deliveries");
        engine.shutdown(grace).await;
        // After the engine: failures while it drained are mailed too.
        alert_service.shutdown(grace).await;
        tracing::info!("meldewerk stopped");
        result.map_err(|e| StartupError::Server(e.to_string()))
    }
}

/// The databases a server with `settings` keeps open: the store, and the journals of the
/// authorities simulated in the process.
pub fn databases(settings: &Settings) -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    if settings.postgres().is_none() {
        dirs.push(settings.db_dir());
    }
    dirs.extend(crate::transports::journal_dirs(settings));
    dirs
}

/// After a clean stop, once every handle is dropped: checkpoints each of `dirs` so that the next
/// start replays no log (see [`meldewerk_storage::checkpoint`]). A database still open after a
/// few seconds, or failing, is logged and left as it is: the next start replays its log then.
pub fn checkpoint(dirs: &[std::path::PathBuf]) {
    // Side by side, as they open at start-up: each replays its own log.
    std::thread::scope(|scope| {
        for dir in dirs {
            scope.spawn(move || {
                let started = std::time::Instant::now();
                match meldewerk_storage::checkpoint(dir, Duration::from_secs(5)) {
                    Ok(took) => tracing::info!(
                        dir = %dir.display(),
                        // With the wait for sled's threads to let go of the database.
                        total_ms = started.elapsed().as_millis() as u64,
                        ms = took.as_millis() as u64,
                        "checkpoint written; the next start replays no log"
                    ),
                    Err(e) => tracing::warn!(
                        error = %e,
                        "no checkpoint; the next start replays the log written since this one"
                    ),
                }
            });
        }
    });
}

/// Builds the service from `settings` and runs it until a shutdown signal.
pub async fn run(settings: Settings) -> Result<(), StartupError> {
    Application::build(settings)
        .await?
        .run_until_stopped()
        .await
}
