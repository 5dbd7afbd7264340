//! The transports the service delivers through, one for each of the registry
//! ([`meldewerk_transports::TRANSPORTS`]), opened from its section `[transports.<name>]`: the
//! simulated authority in this process, or the authority at the section's `url` over HTTP. The
//! operator API and the dashboard reach the simulators through [`Transports::simulator`].

use std::path::PathBuf;
use std::sync::Arc;

use actix_web::http::StatusCode;
use meldewerk_transports::tls::Credentials;
use meldewerk_transports::{Simulated, SimulatorError, Transport, TransportKind, TRANSPORTS};

use crate::configuration::Settings;

/// Where a transport's authority runs.
#[derive(Clone)]
pub(crate) enum Site {
    /// Simulated in this process: the operator API scripts it and reads its log.
    InProcess(Arc<dyn Simulated>),
    /// As its own process (or a tester's mock) at this url (`transports.<name>.url`): scripted
    /// and read there, not here.
    Remote(String),
}

/// One opened transport.
#[derive(Clone)]
struct Opened {
    kind: &'static TransportKind,
    transport: Arc<dyn Transport>,
    site: Site,
}

/// Every transport of the registry, opened. Cheap to clone.
#[derive(Clone)]
pub struct Transports {
    opened: Arc<Vec<Opened>>,
}

/// Why the operator API has no simulator to offer for a request; [`NoSimulator::status`] and
/// [`NoSimulator::message`] are what it answers.
#[derive(Debug)]
pub(crate) struct NoSimulator {
    /// 404 for a name no transport has, 409 for a simulator in another process.
    pub(crate) status: StatusCode,
    /// Says which, and where to go instead.
    pub(crate) message: String,
}

impl Transports {
    /// Opens every transport of the registry as its section says; one reaching its authority
    /// over HTTP gets the facilities' deposited certificates (`credentials`) to present.
    pub fn open(
        settings: &Settings,
        credentials: &dyn Credentials,
    ) -> Result<Self, SimulatorError> {
        let opened = TRANSPORTS
            .iter()
            .map(|kind| open(settings, kind, credentials))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Transports {
            opened: Arc::new(opened),
        })
    }

    /// The transport called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Transport>> {
        self.find(name).map(|o| Arc::clone(&o.transport))
    }

    /// For operators: the authority the transport `name` reaches, and where: simulated in this
    /// process, or at its url.
    pub fn describe(&self, name: &str) -> Option<String> {
        let opened = self.find(name)?;
        Some(match &opened.site {
            Site::InProcess(_) => format!("{}; simulated in this process", opened.kind.authority),
            Site::Remote(url) => format!("{}; at {url}", opened.kind.authority),
        })
    }

    /// The in-process simulator of the transport `name`, or why there is none here: 404 for an
    /// unknown name, 409 telling the operator to use `path` of the remote authority instead
    /// (`what`: "script it there").
    pub(crate) fn simulator(
        &self,
        name: &str,
        path: &str,
        what: &str,
    ) -> Result<Arc<dyn Simulated>, NoSimulator> {
        let Some(opened) = self.find(name) else {
            return Err(NoSimulator {
                status: StatusCode::NOT_FOUND,
                message: format!("no simulated transport named {name}"),
            });
        };
        match &opened.site {
            Site::InProcess(simulator) => Ok(Arc::clone(simulator)),
            Site::Remote(url) => {
                let base = url.trim_end_matches('/');
                Err(NoSimulator {
                    status: StatusCode::CONFLICT,
                    message: format!(
                        "the {name} authority runs as its own process at {url} \
                         (transports.{name}.url); {what}: {base}{path}"
                    ),
                })
            }
        }
    }

    fn find(&self, name: &str) -> Option<&Opened> {
        self.opened.iter().find(|o| o.kind.name == name)
    }
}

/// Opens the transport of `kind`: over HTTP when its section has a `url`, else its simulator on
/// its journal in the data directory.
fn open(
    settings: &Settings,
    kind: &'static TransportKind,
    credentials: &dyn Credentials,
) -> Result<Opened, SimulatorError> {
    let name = kind.name;
    let section = settings.transports.section(name);
    match section.http() {
        Some(http) => {
            // Named like the channel, so that metrics, breaker and inbox cursor stay the same
            // whichever way the authority is reached; spoken as the registry entry says.
            let transport = (kind.connect)(kind, &http, section.simulator_config(), credentials)
                .map_err(SimulatorError::Config)?;
            tracing::info!(
                transport = name,
                url = %http.url,
                "delivering over HTTP; no simulator in this process"
            );
            Ok(Opened {
                kind,
                transport,
                site: Site::Remote(http.url),
            })
        }
        None => {
            let simulator = (kind.simulate)(
                &settings.simulator_journal_dir(name),
                section.simulator_config(),
            )?;
            Ok(Opened {
                kind,
                transport: Arc::clone(&simulator).into_transport(),
                site: Site::InProcess(simulator),
            })
        }
    }
}

/// The simulators' journals a server with `settings` keeps open (those simulated in-process).
pub fn journal_dirs(settings: &Settings) -> Vec<PathBuf> {
    TRANSPORTS
        .iter()
        .filter(|kind| settings.transports.section(kind.name).http().is_none())
        .flat_map(|kind| {
            let dir = settings.simulator_journal_dir(kind.name);
            kind.journals.iter().map(move |journal| match *journal {
                "" => dir.clone(),
                journal => dir.join(journal),
            })
        })
        .collect()
}
