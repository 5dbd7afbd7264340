//! The [`Alerts`] handle: what the engine (and later other parts) raise for operators. Raising an
//! alert never blocks: it goes into a bounded queue that one task empties (see `worker.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use meldewerk_actors::EngineEvents;
use tokio::sync::mpsc;

use crate::telemetry::log_str;

/// Longest detail line of one alert, in characters; the parts taken from outside (report ids,
/// reasons) are bounded on their own already.
const DETAIL_MAX_CHARS: usize = 1000;

/// What happened. Alerts are grouped per kind: one mail per kind and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AlertKind {
    /// An actor restarted more often than the restart intensity allows (escalation).
    ActorDegraded,
    /// A circuit breaker in front of a transport opened.
    BreakerOpened,
    /// A report ended in FAILURE for good.
    DeliveryFailed,
}

impl AlertKind {
    /// Short name, as in subjects and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::ActorDegraded => "actor degraded",
            AlertKind::BreakerOpened => "circuit breaker opened",
            AlertKind::DeliveryFailed => "delivery failed",
        }
    }

    /// One sentence for the mail: what the listed events mean.
    pub fn explanation(self) -> &'static str {
        match self {
            AlertKind::ActorDegraded => {
                "These actors restarted more often than the restart intensity allows; they keep \
                 being restarted after a pause. Their last error is listed."
            }
            AlertKind::BreakerOpened => {
                "Deliveries through these transports pause until the breaker closes again."
            }
            AlertKind::DeliveryFailed => {
                "These reports ended in FAILURE; the integrator reads the reason with the result."
            }
        }
    }
}

impl std::fmt::Display for AlertKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event for operators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
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
    /// Alerts dropped since start (for the warning).
    dropped_total: AtomicU64,
    /// Alerts dropped that no mail has reported yet.
    dropped_unreported: AtomicU64,
}

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerts")
            .field("mailed", &self.inner.queue.is_some())
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl Alerts {
    /// Alerts that are only logged (mail is off).
    pub fn log_only() -> Alerts {
        Alerts::with_queue(None)
    }

    /// A handle feeding a queue of `capacity` alerts, and the queue's receiving end.
    pub fn queued(capacity: usize) -> (Alerts, mpsc::Receiver<Alert>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (Alerts::with_queue(Some(tx)), rx)
    }

    fn with_queue(queue: Option<mpsc::Sender<Alert>>) -> Alerts {
        Alerts {
            inner: Arc::new(Inner {
                queue,
                dropped_total: AtomicU64::new(0),
                dropped_unreported: AtomicU64::new(0),
            }),
        }
    }

    /// Raises an alert. `detail` is one line; control characters are escaped and it is cut at
    /// 1000 characters.
    pub fn alert(&self, kind: AlertKind, detail: &str) {
        let detail = bounded(detail);
        let Some(queue) = &self.inner.queue else {
            tracing::info!(%kind, %detail, "alert (mail is off; only logged)");
            return;
        };
        let alert = Alert {
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

    /// A report ended in FAILURE. The id is integrator-chosen: escaped and bounded like in logs.
    pub fn delivery_failed(&self, module: &str, report_id: &str, reason: &str) {
        let detail = format!(
            "module={} report={} reason={}",
            log_str(module),
            log_str(report_id),
            log_str(reason)
        );
        self.alert(AlertKind::DeliveryFailed, &detail);
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

    fn delivery_failed(&self, module: &str, report_id: &str, reason: &str) {
        Alerts::delivery_failed(self, module, report_id, reason);
    }

    fn breaker_opened(&self, breaker: &str, reason: &str) {
        Alerts::breaker_opened(self, breaker, reason);
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
mod tests {
    use super::*;

    fn assert_handle<T: Clone + Send + Sync + 'static>() {}

    #[test]
    fn the_handle_is_cheap_to_share() {
        assert_handle::<Alerts>();
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_blocking() {
        let (alerts, mut rx) = Alerts::queued(2);
        for i in 0..5 {
            alerts.delivery_failed("birthnotice", &format!("id-{i}"), "refused");
        }
        assert_eq!(alerts.dropped(), 3);
        assert_eq!(alerts.take_unreported_drops(), 3);
        assert_eq!(alerts.take_unreported_drops(), 0);
        let first = rx.try_recv().unwrap();
        assert_eq!(first.kind, AlertKind::DeliveryFailed);
        assert_eq!(
            first.detail,
            "module=birthnotice report=id-0 reason=refused"
        );
        assert!(rx.try_recv().unwrap().detail.contains("id-1"));
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn untrusted_text_is_escaped_and_bounded() {
        let (alerts, mut rx) = Alerts::queued(4);
        let id = format!("evil\r\nBcc: x@example.org{}", "y".repeat(5000));
        alerts.delivery_failed("birthnotice", &id, "line1\nline2");
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
