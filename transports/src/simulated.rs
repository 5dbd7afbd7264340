//! Every transport the service knows, by name ([`TRANSPORTS`]), and what a simulated authority
//! provides beyond delivering ([`Simulated`]): its script, what it received, its journal.
//!
//! Start-up, configuration (`[transports.<name>]`), the operator routes
//! (`/admin/api/v1/transports/{name}/…`), `meldewerk simulate <name>` and the dashboard find a
//! transport here and nowhere else, so adding one is its folder plus one line of the
//! `transports!` list in `lib.rs`.

use std::path::Path;
use std::sync::Arc;

use crate::received::{ReceivedPage, ReceivedQuery};
use crate::script::Scriptable;
use crate::Transport;
use meldewerk_storage::{JournalError, Receipt};

/// Opens a simulated authority on its journal in a directory, configured by JSON.
pub type OpenSimulator =
    fn(dir: &Path, config: serde_json::Value) -> Result<Arc<dyn Simulated>, SimulatorError>;

/// Builds the transport that reaches the authority at `transports.<name>.url`, from the url's
/// settings and the section's own keys (as JSON), with the facilities' deposited certificates
/// at hand for an authority that knows senders by them; `Err` says what is wrong with them.
pub type Connect = fn(
    kind: &'static TransportKind,
    settings: &crate::wire::HttpTransportSettings,
    config: serde_json::Value,
    credentials: &dyn crate::tls::Credentials,
) -> Result<Arc<dyn Transport>, String>;

/// The TLS server configuration of `meldewerk simulate <name>`, from the section's own keys (as
/// JSON); `None`: the process serves plain HTTP. A simulator that must serve TLS refuses to
/// start without its certificates ([`SimulatorError::Config`]).
pub type ProcessTls =
    fn(config: serde_json::Value) -> Result<Option<rustls::ServerConfig>, SimulatorError>;

/// What `meldewerk simulate <name>` speaks over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The wire protocol of [`crate::wire`] (`POST /deliveries`, `GET /acknowledgements`), which
    /// a tester's mock speaks too.
    Wire,
    /// The authority's own FHIR operation: `POST [base]/$<operation>` with a FHIR Bundle,
    /// answered `200` with the simulator's recorded answer
    /// ([`Simulated::recorded_answer`]) or `422` with an `OperationOutcome` for a refusal.
    FhirOperation {
        /// The operation's name without the `$`, e.g. `process-notification`.
        operation: &'static str,
    },
}

impl Protocol {
    /// [`Protocol::FhirOperation`]: header carrying the delivery's idempotency key. The
    /// simulator registers a key once; the real endpoint ignores the header. Without it the
    /// simulator keys a notification by its bundle's own identifier.
    pub const IDEMPOTENCY_KEY_HEADER: &'static str = "idempotency-key";
    /// [`Protocol::FhirOperation`]: header carrying the module the notification comes from, for
    /// the simulator's received log.
    pub const MODULE_HEADER: &'static str = "x-meldewerk-module";
    /// [`Protocol::FhirOperation`]: header carrying the integrator's report id, for the
    /// simulator's received log (without it: the notification's own id).
    pub const REPORT_ID_HEADER: &'static str = "x-meldewerk-report-id";
}

/// One transport the service knows.
pub struct TransportKind {
    /// Its name: the configuration section `[transports.<name>]`, the operator routes
    /// `/admin/api/v1/transports/<name>/…`, `meldewerk simulate <name>`, metrics and logs.
    pub name: &'static str,
    /// The authority it reaches, in a few words, for operators.
    pub authority: &'static str,
    /// Whether the authority acknowledges later through an inbox (the engine then collects it,
    /// and a transport over HTTP fetches `/acknowledgements`), or decides every delivery at once.
    pub inbox: bool,
    /// Whether the authority keeps mailboxes the service reads from ([`crate::Mailbox`]): the
    /// operator routes `/admin/api/v1/transports/<name>/mailboxes/…` and, over HTTP, the wire
    /// protocol's mailbox face are then there.
    pub mailbox: bool,
    /// Opens the simulated authority on its journal in `dir`, behaving as `config` says (the
    /// simulator keys of the section, as JSON; absent keys take their defaults). A key the
    /// simulator does not know, or a value of the wrong type, is a [`SimulatorError::Config`].
    pub simulate: OpenSimulator,
    /// Where below its directory the simulator keeps its journals (`""`: the directory itself),
    /// so that the service's clean stop checkpoints each of them.
    pub journals: &'static [&'static str],
    /// The simulator's keys with their defaults (for the configuration's check of unknown keys).
    pub simulator_defaults: fn() -> serde_json::Value,
    /// Builds the transport for `url` mode (the wire protocol's [`crate::wire::connect`], or the
    /// authority's own protocol).
    pub connect: Connect,
    /// What its simulator speaks as its own process.
    pub protocol: Protocol,
    /// Whether, and with which certificates, its simulator's process serves TLS.
    pub process_tls: ProcessTls,
}

impl std::fmt::Debug for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransportKind")
            .field("name", &self.name)
            .field("inbox", &self.inbox)
            .field("mailbox", &self.mailbox)
            .finish_non_exhaustive()
    }
}

/// The transport called `name`, if the service knows one.
pub fn kind(name: &str) -> Option<&'static TransportKind> {
    crate::TRANSPORTS.iter().find(|kind| kind.name == name)
}

/// A simulated authority: a [`Transport`] that behaves like the real one, keeps a journal of what
/// it received and runs a tester's script.
pub trait Simulated: Transport {
    /// One page of what it received, oldest first, filtered by `query`; records as JSON.
    fn received_page(&self, query: &ReceivedQuery) -> Result<ReceivedPage, SimulatorError>;
    /// The simulator as the transport the engine delivers through.
    fn into_transport(self: Arc<Self>) -> Arc<dyn Transport>;
    /// The simulator's script, as testers change it.
    fn scriptable(&self) -> &dyn Scriptable;
    /// The answer document the simulator recorded for the delivery it gave `transport_ref`, as
    /// the authority's own protocol sends it ([`Protocol::FhirOperation`]); `None` (the default)
    /// for a simulator that records none, or an unknown reference. `receipt`: the receipt that
    /// delivery was answered with, when the caller has it at hand (it answers the delivery it
    /// just submitted), so that the answer carries it as it is rather than a receipt made again.
    fn recorded_answer(
        &self,
        transport_ref: &str,
        receipt: Option<Receipt>,
    ) -> Result<Option<Vec<u8>>, SimulatorError> {
        let _ = (transport_ref, receipt);
        Ok(None)
    }
    /// The simulated mailbox server operators drop court messages into, for an authority that
    /// keeps mailboxes; `None` (the default) for every other.
    fn mailbox_server(&self) -> Option<&dyn crate::MailboxServer> {
        None
    }
}

/// [`TransportKind::process_tls`] of a simulator whose process serves plain HTTP.
pub fn plain_http(
    _config: serde_json::Value,
) -> Result<Option<rustls::ServerConfig>, SimulatorError> {
    Ok(None)
}

/// Why a simulated authority could not open or use its journal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimulatorError {
    /// Another process (or another instance in this process) already has the journal open.
    #[error(
        "the simulator's journal at {0} is in use by another process; \
         only one process at a time may run the simulator on a directory"
    )]
    Locked(std::path::PathBuf),
    /// The journal could not be read or written.
    #[error("the simulator's journal failed: {0}")]
    Journal(String),
    /// The journal holds an entry the simulator cannot make sense of.
    #[error("the simulator's journal is corrupt: {0}")]
    Corrupt(String),
    /// The journal takes no requests until it has been opened again from disk (a write failed:
    /// a full disk); it recovers by itself.
    #[error("the simulator's journal is unavailable: {0}")]
    Unavailable(String),
    /// The simulator's configuration cannot be used.
    #[error("{0}")]
    Config(String),
}

impl From<JournalError> for SimulatorError {
    fn from(error: JournalError) -> Self {
        match error {
            JournalError::Locked(dir) => SimulatorError::Locked(dir),
            JournalError::Backend(e) => SimulatorError::Journal(e),
            JournalError::Unavailable(e) => SimulatorError::Unavailable(e),
            JournalError::Corrupt(e) => SimulatorError::Corrupt(e),
            taken @ JournalError::Taken(_) => SimulatorError::Journal(taken.to_string()),
        }
    }
}

impl From<JournalError> for crate::TransportError {
    fn from(error: JournalError) -> Self {
        SimulatorError::from(error).into()
    }
}

impl From<SimulatorError> for crate::TransportError {
    /// The authority being unable to consult its records is an outage, not a verdict on the
    /// message.
    fn from(error: SimulatorError) -> Self {
        crate::TransportError::Transient(error.to_string())
    }
}

/// What every simulator's `impl Simulated` says alike: its received page is its own typed
/// page as JSON records, it is the transport the engine delivers through, and its script is
/// `self.inner.script`. Expanded inside the `impl`, beside what is the simulator's own.
macro_rules! simulated_basics {
    () => {
        fn received_page(
            &self,
            query: &$crate::received::ReceivedQuery,
        ) -> Result<$crate::received::ReceivedPage, $crate::SimulatorError> {
            Simulator::received_page(self, query)?.into_simulated()
        }

        fn into_transport(self: std::sync::Arc<Self>) -> std::sync::Arc<dyn $crate::Transport> {
            self
        }

        fn scriptable(&self) -> &dyn $crate::script::Scriptable {
            &self.inner.script
        }
    };
}
pub(crate) use simulated_basics;

/// `Debug` for a simulator (`$name`, e.g. `demis::Simulator`) that shows its configuration only:
/// its journals and its script tell nothing in a log line.
macro_rules! debug_shows_config {
    ($name:literal) => {
        impl std::fmt::Debug for Simulator {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct($name)
                    .field("config", &self.config())
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use debug_shows_config;

/// The `blocking` method of a simulator whose state is `self.inner`: journal work off the async
/// executor ([`blocking`]), a task that died being a transient fault of `$authority`.
macro_rules! journal_work {
    ($authority:literal) => {
        /// Runs journal work off the async executor: appending waits for the disk.
        async fn blocking<T, F>(&self, work: F) -> Result<T, $crate::TransportError>
        where
            T: Send + 'static,
            F: FnOnce(&std::sync::Arc<Inner>) -> Result<T, $crate::TransportError> + Send + 'static,
        {
            $crate::simulated::blocking(&self.inner, $authority, work).await
        }
    };
}
pub(crate) use journal_work;

/// Runs a simulator's journal work on `inner` off the async executor (appending waits for the
/// disk); a task that died is a transient fault of `authority` (e.g. `simulated DEMIS`).
pub(crate) async fn blocking<I, T, F>(
    inner: &Arc<I>,
    authority: &'static str,
    work: F,
) -> Result<T, crate::TransportError>
where
    I: Send + Sync + 'static,
    T: Send + 'static,
    F: FnOnce(&Arc<I>) -> Result<T, crate::TransportError> + Send + 'static,
{
    let inner = Arc::clone(inner);
    tokio::task::spawn_blocking(move || work(&inner))
        .await
        .map_err(|e| crate::TransportError::Transient(format!("{authority} failed: {e}")))?
}

/// A simulator's configuration read from the section's simulator keys: every key optional,
/// unknown keys refused (each simulator's configuration type denies them).
pub fn read_config<T: serde::de::DeserializeOwned>(
    name: &str,
    config: serde_json::Value,
) -> Result<T, SimulatorError> {
    serde_json::from_value(config)
        .map_err(|e| SimulatorError::Config(format!("transports.{name}: {e}")))
}
