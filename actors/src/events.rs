//! What the engine tells the world beyond its health registry: events operators should hear about
//! at once (an actor degraded, a report failed for good, a circuit breaker opened).
//!
//! The engine only calls an [`EngineEvents`] implementation; what happens then (a mail, a page, a
//! metric) is the embedding service's business, so the engine depends on no mailer. Calls happen
//! on the engine's actor thread: an implementation must return at once and never block or panic.

use std::sync::Arc;
use std::time::Duration;

use meldewerk_storage::{CourtMessage, ReportKey};

/// Observer of the engine's notable events. Every method has a no-op default, so an implementation
/// names only what it cares about, and a new event does not break existing implementations.
pub trait EngineEvents: Send + Sync + 'static {
    /// An actor restarted more often than the restart intensity allows, or an acknowledgement
    /// collector's inbox keeps failing (its reports cannot finish), and it is now degraded.
    /// Called once when it becomes degraded, again only after it had recovered in between.
    /// `actor` is `outbox`, `retention`, `module:<module>` or `inbox:<transport>`; `last_error`
    /// is its last error.
    fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
        let _ = (actor, last_error);
    }

    /// A report reached its final state FAILURE (recorded in the store before this call). The
    /// key names its owner (the API user) and module; its id is integrator-chosen: untrusted text.
    fn delivery_failed(&self, report: &ReportKey, reason: &str) {
        let _ = (report, reason);
    }

    /// A circuit breaker in front of a transport opened: deliveries through it pause.
    fn breaker_opened(&self, breaker: &str, reason: &str) {
        let _ = (breaker, reason);
    }

    /// A report reached its final state; `took` is the time from submission to acknowledgement
    /// for a SUCCESS (unknown for a FAILURE).
    fn report_finished(&self, module: &str, failed: bool, took: Option<Duration>) {
        let _ = (module, failed, took);
    }

    /// A delivery met a transient fault and will be retried.
    fn delivery_retried(&self, module: &str) {
        let _ = module;
    }

    /// The store refuses requests (a write failed: a full disk, a file system gone read-only);
    /// deliveries wait in the outbox until it recovers. Called once per episode.
    fn store_unavailable(&self, reason: &str) {
        let _ = reason;
    }

    /// The store serves requests again after [`EngineEvents::store_unavailable`].
    fn store_recovered(&self) {}

    /// A court message came into a mailbox account and can be downloaded now (its hydration
    /// was recorded); `users` are those granted the account.
    fn court_message_arrived(&self, users: &[String], message: &CourtMessage) {
        let _ = (users, message);
    }
}

/// Several observers, each told every event in turn (alert mails and metrics, say).
pub struct Fanout(pub Vec<Arc<dyn EngineEvents>>);

impl EngineEvents for Fanout {
    fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
        self.0
            .iter()
            .for_each(|e| e.actor_degraded(actor, last_error));
    }

    fn delivery_failed(&self, report: &ReportKey, reason: &str) {
        self.0
            .iter()
            .for_each(|e| e.delivery_failed(report, reason));
    }

    fn breaker_opened(&self, breaker: &str, reason: &str) {
        self.0
            .iter()
            .for_each(|e| e.breaker_opened(breaker, reason));
    }

    fn report_finished(&self, module: &str, failed: bool, took: Option<Duration>) {
        self.0
            .iter()
            .for_each(|e| e.report_finished(module, failed, took));
    }

    fn delivery_retried(&self, module: &str) {
        self.0.iter().for_each(|e| e.delivery_retried(module));
    }

    fn store_unavailable(&self, reason: &str) {
        self.0.iter().for_each(|e| e.store_unavailable(reason));
    }

    fn store_recovered(&self) {
        self.0.iter().for_each(|e| e.store_recovered());
    }

    fn court_message_arrived(&self, users: &[String], message: &CourtMessage) {
        self.0
            .iter()
            .for_each(|e| e.court_message_arrived(users, message));
    }
}

/// Events that go nowhere: the default of [`crate::Engine::start`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEvents;

impl EngineEvents for NoEvents {}

/// The shared form the actors hold.
pub(crate) type SharedEvents = Arc<dyn EngineEvents>;

/// A [`NoEvents`] as the actors hold it.
pub(crate) fn no_events() -> SharedEvents {
    Arc::new(NoEvents)
}
