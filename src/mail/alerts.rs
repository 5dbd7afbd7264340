//! The [`Alerts`] handle: what the engine (and later other parts) raise for operators, and the
//! notices an API user gets about their own reports. Raising one never blocks: it goes into a
//! bounded queue that one task empties (see `worker.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use meldewerk_actors::EngineEvents;
use meldewerk_storage::ReportKey;
use tokio::sync::mpsc;

use crate::telemetry::log_str;

/// Longest detail line of one alert, in characters; the parts taken from outside (report ids,
/// reasons) are bounded on their own already.
const DETAIL_MAX_CHARS: usize = 1000;

/// What happened. Alerts are grouped per kind: one mail per kind and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AlertKind {
    /// An actor restarted more often than the restart intensity allows (escalation), or an
    /// acknowledgement collector cannot fetch its inbox.
    ActorDegraded,
    /// A circuit breaker in front of a transport opened.
    BreakerOpened,
    /// A report ended in FAILURE for good.
    DeliveryFailed,
    /// The store refuses requests: a write failed (a full disk).
    StoreUnavailable,
    /// The store serves requests again.
    StoreRecovered,
    /// A court message arrived in a mailbox account (to the granted users' contacts only).
    CourtMessageArrived,
}

impl AlertKind {
    /// Short name, as in subjects and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::ActorDegraded => "actor degraded",
            AlertKind::BreakerOpened => "circuit breaker opened",
            AlertKind::DeliveryFailed => "delivery failed",
            AlertKind::StoreUnavailable => "store unavailable",
            AlertKind::StoreRecovered => "store available again",
            AlertKind::CourtMessageArrived => "court message arrived",
        }
    }

    /// One sentence for the mail: what the listed events mean.
    pub fn explanation(self) -> &'static str {
        match self {
            AlertKind::ActorDegraded => {
                "These actors restarted more often than the restart intensity allows (they keep \
                 being restarted after a pause), or cannot fetch their acknowledgement inbox \
                 (their reports wait). Their last error is listed."
            }
            AlertKind::BreakerOpened => {
                "Deliveries through these transports pause until the breaker closes again."
            }
            AlertKind::DeliveryFailed => {
                "These reports ended in FAILURE; the integrator reads the reason with the result."
            }
            AlertKind::StoreUnavailable => {
                "The service cannot write its data (is the disk of the data directory full?). \
                 It refuses submissions and API calls with 503 and delivers nothing until the \
                 disk takes writes again; then it recovers by itself. Every report accepted \
                 before is kept on disk and delivered then."
            }
            AlertKind::StoreRecovered => {
                "The store takes writes again: submissions are accepted and waiting reports are \
                 being delivered."
            }
            // Not sent to operators; worded for completeness.
            AlertKind::CourtMessageArrived => "Court messages arrived.",
        }
    }
}

/// Who a mail is for. Each audience has batches of its own, paced on their own.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Audience {
    /// The configured operators (`mail.operators`).
    Operators,
    /// One API user, at the address on their account (none: the notice is not mailed). Only
    /// about their own reports.
    User(String),
    /// One API user, at the contact address they registered for court messages.
    CourtContact(String),
}

impl std::fmt::Display for Audience {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Audience::Operators => f.write_str("operators"),
            Audience::User(name) => write!(f, "user {name}"),
            Audience::CourtContact(name) => write!(f, "court contact of user {name}"),
        }
    }
}

impl AlertKind {
    /// One sentence for an API user's mail: what the listed events mean for them.
    pub fn explanation_for_users(self) -> &'static str {
        match self {
            AlertKind::DeliveryFailed => {
                "These reports of yours ended in FAILURE: the authority refused them, or they \
                 could not be delivered. Your system reads each report's failureReason with its \
                 result over the API."
            }
            AlertKind::CourtMessageArrived => {
                "Court messages arrived in a mailbox account you are granted. Your system lists \
                 them with GET /api/guardianship/v1/messages and downloads each from the url \
                 listed with it."
            }
            // Not sent to users; worded for completeness.
            AlertKind::ActorDegraded
            | AlertKind::BreakerOpened
            | AlertKind::StoreUnavailable
            | AlertKind::StoreRecovered => "Deliveries are delayed; nothing you sent is lost.",
        }
    }
}

impl std::fmt::Display for AlertKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event for operators or for a user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
    /// Who hears of it.
    pub audience: Audience,
    /// What happened.
    pub kind: AlertKind,
    /// When it was raised.
    pub at: DateTime<Utc>,
    /// One line of detail, safe to mail (escaped and bounded).
    pub detail: String,
}

/// Cheap, cloneable, `Send + Sync` handle to raise alerts. Never blocks and never fails: when the
/// queue is full the alert is dropped and counted, and the next mail says how many were dropped.
#[derive(Clone)]
pub struct Alerts {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None`: mail is off, alerts are only logged.
    queue: Option<mpsc::Sender<Alert>>,
    /// Whether operators are mailed; without `mail.operators` only users' notices are queued.
    operators: bool,
    /// Alerts dropped since start (for the warning).
    dropped_total: AtomicU64,
    /// Alerts dropped that no mail has reported yet.
    dropped_unreported: AtomicU64,
}

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerts")
            .field("mailed", &self.inner.queue.is_some())
            .field("operators", &self.inner.operators)
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl Alerts {
    /// Alerts that are only logged (mail is off).
    pub fn log_only() -> Alerts {
        Alerts::with_queue(None, false)
    }

    /// A handle feeding a queue of `capacity` alerts, and the queue's receiving end. With
    /// `operators` false, operators' alerts are only logged and only users' notices are queued.
    pub fn queued(capacity: usize, operators: bool) -> (Alerts, mpsc::Receiver<Alert>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Alerts::with_queue(Some(tx), operators), rx)
    }

    fn with_queue(queue: Option<mpsc::Sender<Alert>>, operators: bool) -> Alerts {
        Alerts {
            inner: Arc::new(Inner {
                queue,
                operators,
                dropped_total: AtomicU64::new(0),
                dropped_unreported: AtomicU64::new(0),
            }),
        }
    }

    /// Raises an alert for operators. `detail` is one line; control characters are escaped and
    /// it is cut at 1000 characters.
    pub fn alert(&self, kind: AlertKind, detail: &str) {
        let detail = bounded(detail);
        match &self.inner.queue {
            Some(queue) if self.inner.operators => {
                self.enqueue(queue, Audience::Operators, kind, detail)
            }
            _ => {
                tracing::info!(%kind, %detail, "alert (mail is off or no operators are configured; only logged)")
            }
        }
    }

    /// Raises a notice for the API user `user` about one of their reports (mailed when their
    /// account has an address). `detail` is bounded like an alert's.
    pub fn notify_user(&self, user: &str, kind: AlertKind, detail: &str) {
        if let Some(queue) = &self.inner.queue {
            let audience = Audience::User(user.to_string());
            self.enqueue(queue, audience, kind, bounded(detail));
        }
    }

    fn enqueue(
        &self,
        queue: &mpsc::Sender<Alert>,
        audience: Audience,
        kind: AlertKind,
        detail: String,
    ) {
        let alert = Alert {
            audience,
            kind,
            at: Utc::now(),
            detail,
        };
        if queue.try_send(alert).is_err() {
            // Full (or the mail task is gone at shutdown): drop rather than block an actor.
            self.inner
                .dropped_unreported
                .fetch_add(1, Ordering::Relaxed);
            let total = self.inner.dropped_total.fetch_add(1, Ordering::Relaxed) + 1;
            // Powers of two only: an overflowing queue must not flood the log instead.
            if total.is_power_of_two() {
                tracing::warn!(%kind, dropped_total = total, "alert queue full; alert dropped");
            }
        }
    }

    /// A report ended in FAILURE: operators hear of it, and so does the report's owner. The id
    /// is integrator-chosen: escaped and bounded like in logs.
    pub fn delivery_failed(&self, report: &ReportKey, reason: &str) {
        let detail = format!(
            "module={} report={} reason={}",
            log_str(&report.module),
            log_str(&report.id),
            log_str(reason)
        );
        self.alert(AlertKind::DeliveryFailed, &detail);
        self.notify_user(&report.owner, AlertKind::DeliveryFailed, &detail);
    }

    /// An actor became degraded.
    pub fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
        let detail = format!(
            "actor={} last_error={}",
            log_str(actor),
            log_str(last_error.unwrap_or("none recorded"))
        );
        self.alert(AlertKind::ActorDegraded, &detail);
    }

    /// A circuit breaker opened.
    pub fn breaker_opened(&self, breaker: &str, reason: &str) {
        let detail = format!("breaker={} reason={}", log_str(breaker), log_str(reason));
        self.alert(AlertKind::BreakerOpened, &detail);
    }

    /// Alerts dropped since start because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped_total.load(Ordering::Relaxed)
    }

    /// Takes the count of dropped alerts no mail has reported yet.
    pub(crate) fn take_unreported_drops(&self) -> u64 {
        self.inner.dropped_unreported.swap(0, Ordering::Relaxed)
    }
}

/// The engine's events become alerts.
impl EngineEvents for Alerts {
    fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
        Alerts::actor_degraded(self, actor, last_error);
    }

    fn delivery_failed(&self, report: &ReportKey, reason: &str) {
        Alerts::delivery_failed(self, report, reason);
    }

    fn breaker_opened(&self, breaker: &str, reason: &str) {
        Alerts::breaker_opened(self, breaker, reason);
    }

    fn store_unavailable(&self, reason: &str) {
        self.alert(
            AlertKind::StoreUnavailable,
            &format!("store unavailable: {}", log_str(reason)),
        );
    }

    fn court_message_arrived(&self, users: &[String], message: &meldewerk_storage::CourtMessage) {
        // The account and the index id only: nothing of the message's content leaves by mail.
        let detail = format!(
            "message {} in mailbox account {} ({})",
            message.id, message.account, message.safe_id
        );
        if let Some(queue) = &self.inner.queue {
            for user in users {
                let audience = Audience::CourtContact(user.clone());
                self.enqueue(
                    queue,
                    audience,
                    AlertKind::CourtMessageArrived,
                    bounded(&detail),
                );
            }
        }
    }

    fn store_recovered(&self) {
        self.alert(AlertKind::StoreRecovered, "store available again");
    }
}

/// `text` escaped like a log string, bounded at [`DETAIL_MAX_CHARS`].
fn bounded(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    match escaped.char_indices().nth(DETAIL_MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &escaped[..cut]),
        None => escaped,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn assert_handle<T: Clone + Send + Sync + 'static>() {}

    #[test]
    fn the_handle_is_cheap_to_share() {
        assert_handle::<Alerts>();
    }

    pub(crate) fn report(owner: &str, id: &str) -> ReportKey {
        ReportKey {
            owner: owner.into(),
            module: "birthnotice".into(),
            id: id.into(),
        }
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_blocking() {
        let (alerts, mut rx) = Alerts::queued(2, true);
        for i in 0..5 {
            alerts.alert(AlertKind::DeliveryFailed, &format!("report=id-{i}"));
        }
        assert_eq!(alerts.dropped(), 3);
        assert_eq!(alerts.take_unreported_drops(), 3);
        assert_eq!(alerts.take_unreported_drops(), 0);
        let first = rx.try_recv().unwrap();
        assert_eq!(first.kind, AlertKind::DeliveryFailed);
        assert_eq!(first.detail, "report=id-0");
        assert!(rx.try_recv().unwrap().detail.contains("id-1"));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_failure_is_told_to_the_operators_and_to_the_reports_owner() {
        let (alerts, mut rx) = Alerts::queued(4, true);
        alerts.delivery_failed(&report("klinik", "geb-1"), "refused");
        let detail = "module=birthnotice report=geb-1 reason=refused";
        let operators = rx.try_recv().unwrap();
        assert_eq!(operators.audience, Audience::Operators);
        assert_eq!(operators.detail, detail);
        let owner = rx.try_recv().unwrap();
        assert_eq!(owner.audience, Audience::User("klinik".into()));
        assert_eq!(owner.detail, detail);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn without_operators_only_users_notices_are_queued() {
        let (alerts, mut rx) = Alerts::queued(4, false);
        alerts.actor_degraded("outbox", None);
        alerts.delivery_failed(&report("klinik", "geb-1"), "refused");
        assert_eq!(
            rx.try_recv().unwrap().audience,
            Audience::User("klinik".into())
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn untrusted_text_is_escaped_and_bounded() {
        let (alerts, mut rx) = Alerts::queued(4, true);
        let id = format!("evil\r\nBcc: x@example.org{}", "y".repeat(5000));
        alerts.delivery_failed(&report("klinik", &id), "line1\nline2");
        let detail = rx.try_recv().unwrap().detail;
        assert!(!detail.contains('\n') && !detail.contains('\r'), "{detail}");
        assert!(detail.contains("evil\\u{d}\\u{a}Bcc"), "{detail}");
        assert!(detail.chars().count() < 400, "{}", detail.len());
        assert_eq!(
            bounded(&"z".repeat(3000)).chars().count(),
            DETAIL_MAX_CHARS + 1
        );
    }

    #[test]
    fn log_only_alerts_go_nowhere_quietly() {
        let alerts = Alerts::log_only();
        alerts.actor_degraded("module:birthnotice", Some("panic: boom"));
        assert_eq!(alerts.dropped(), 0);
    }
}
