//! `meldewerk simulate <name>`: a simulated authority as its own process, speaking over HTTP
//! what its registry entry says ([`TransportKind::protocol`]): the wire protocol of
//! [`meldewerk_transports::wire`], or the authority's own FHIR operation ([`fhir`]), so that the
//! service reaches it the way it would reach the real one (`transports.<name>.url`) and killing
//! it is a real network fault. Over TLS, requiring client certificates, when the entry says so
//! ([`TransportKind::process_tls`]).
//!
//! The process serves the protocol's calls (`POST /deliveries`, `GET /acknowledgements`, the
//! mailbox face `/mailboxes/{safeId}/messages` with testers' drops there; or
//! `POST [base]/$<operation>`) and, for testers, the simulator's script and received log at the same paths and with the same
//! bodies as the service's operator API for an in-process simulator (`/script`,
//! `/script/rules`, `/received`). It asks for no credentials: it is a test tool, listening on
//! loopback unless told otherwise (`docs/decisions.md`), and answering only requests whose `Host`
//! it knows ([`hosts`]), so that a web page cannot reach it by DNS rebinding.

mod api_docs;
mod fhir;
mod hosts;
mod routes;

use std::net::TcpListener;
use std::time::Duration;

use actix_web::{middleware, web, App};
use std::sync::Arc;

use meldewerk_transports::{Simulated, TransportKind};
use tracing_actix_web::TracingLogger;

use crate::configuration::Settings;
use crate::startup::StartupError;
use crate::telemetry::RedactingRootSpan;

/// What the request handlers share.
struct Shared {
    /// The transport's registry entry.
    kind: &'static TransportKind,
    simulator: Arc<dyn Simulated>,
    /// Largest script body, as the operator API takes it.
    max_body_bytes: usize,
}

/// Opens the simulator `name` on its journal in the data directory, serves it on `listen` until
/// SIGTERM/SIGINT, then lets requests in flight finish (up to `shutdown_grace_secs`).
pub async fn run(settings: Settings, name: &str, listen: &str) -> Result<(), StartupError> {
    let kind = meldewerk_transports::kind(name)
        .ok_or_else(|| StartupError::Config(format!("no transport named {name}")))?;
    let section = settings.transports.section(name);
    let journal = settings.simulator_journal_dir(name);
    std::fs::create_dir_all(&journal).map_err(|e| StartupError::DataDir {
        path: journal.display().to_string(),
        reason: e.to_string(),
    })?;
    let tls = (kind.process_tls)(section.simulator_config())?;
    let simulator = (kind.simulate)(&journal, section.simulator_config())?;
    let listener = TcpListener::bind(listen).map_err(|e| StartupError::Listen {
        address: listen.to_owned(),
        reason: e.to_string(),
    })?;
    let address = listener
        .local_addr()
        .map_err(|e| StartupError::Server(e.to_string()))?;
    if !address.ip().is_loopback() {
        tracing::warn!(
            %address,
            "the simulator asks for no credentials: whoever reaches this address can deliver to it, \
             script it and read what it received"
        );
    }
    let shared = web::Data::new(Shared {
        kind,
        simulator,
        max_body_bytes: settings.max_body_bytes,
    });
    let allowed = web::Data::new(hosts::AllowedHosts::new(
        address.ip(),
        &section.allowed_hosts,
    ));
    let body_deadline = web::Data::new(settings.body_deadline());
    let grace = Duration::from_secs(settings.shutdown_grace_secs);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let server = crate::http_server::serve(
        move || {
            App::new()
                .app_data(shared.clone())
                .app_data(allowed.clone())
                .app_data(body_deadline.clone())
                .wrap(middleware::from_fn(
                    crate::routes::body_deadline::limit_body_time,
                ))
                .wrap(middleware::from_fn(hosts::check_host))
                .wrap(TracingLogger::<RedactingRootSpan>::new())
                .configure(|cfg| routes::configure(cfg, kind.protocol))
        },
        listener,
        crate::http_server::ServerOptions {
            // `/deliveries` takes the most.
            max_body_bytes: settings
                .max_body_bytes
                .max(meldewerk_transports::wire::MAX_BODY_BYTES),
            blocking_threads: None,
            shutdown_timeout_secs: grace.as_secs(),
            tls,
        },
    )
    .map_err(|e| StartupError::Server(e.to_string()))?;

    tracing::info!(
        simulator = name,
        %address,
        journal = %journal.display(),
        "simulator started"
    );
    // Tests and scripts read this line to learn the port when listening on port 0. A closed
    // standard output must not stop the simulator, so errors are ignored.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout();
        let _ = writeln!(
            stdout,
            "meldewerk simulator {name} listening on {scheme}://{address}"
        );
        let _ = stdout.flush();
    }
    let result = server.await;
    tracing::info!(simulator = name, "simulator stopped");
    result.map_err(|e| StartupError::Server(e.to_string()))
}
