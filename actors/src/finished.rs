//! The one path by which the engine tells that a report ended, however it ended: the
//! authority's answer to a delivery, an acknowledgement collected from an inbox, the engine giving
//! up (no attempts left, a message that cannot be built), or an operator's discard. The store has
//! recorded the end before; here it is logged, counted in the module actor's health and told to
//! the engine's observers (metrics, alert mails), the same way for every one of them, and handed
//! to whoever waits for that report ([`Watch`]: a request that answers with the authority's
//! decision, for an authority that decides at once).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::Utc;
use meldewerk_storage::{FinishedReport, ReportKey};
use tokio::sync::oneshot;

use crate::events::SharedEvents;
use crate::health::HealthHandle;

/// Tells of ended reports. One per engine, shared by its module actors, its acknowledgement
/// collectors and its handle.
pub(crate) struct Endings {
    events: SharedEvents,
    /// The health entry of each module's actor, by module.
    modules: HashMap<Arc<str>, HealthHandle>,
    /// Who waits for which report to end.
    watchers: Mutex<HashMap<ReportKey, Vec<oneshot::Sender<FinishedReport>>>>,
}

impl Endings {
    /// Tells `events`, and counts in the health entries of `modules`.
    pub(crate) fn new(events: SharedEvents, modules: HashMap<Arc<str>, HealthHandle>) -> Self {
        Endings {
            events,
            modules,
            watchers: Mutex::default(),
        }
    }

    /// From now on, the end of the report `key` is handed to the returned [`Watch`].
    pub(crate) fn watch(self: &Arc<Self>, key: ReportKey) -> Watch {
        let (sender, receiver) = oneshot::channel();
        self.lock().entry(key.clone()).or_default().push(sender);
        Watch {
            key,
            receiver: Some(receiver),
            endings: Arc::downgrade(self),
        }
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ReportKey, Vec<oneshot::Sender<FinishedReport>>>> {
        self.watchers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `report` ended (its end is stored).
    pub(crate) fn report_finished(&self, report: &FinishedReport) {
        if let Some(watching) = self.lock().remove(&report.key) {
            for watch in watching {
                // A watcher that gave up has dropped its receiver: nothing to tell.
                let _ = watch.send(report.clone());
            }
        }
        let module = &report.key.module;
        match &report.failure {
            None => {
                tracing::info!(report = %report.key, job = report.job, "report succeeded");
                let took = (Utc::now() - report.submitted_at).to_std().ok();
                self.events.report_finished(module, false, took);
            }
            Some(reason) => {
                tracing::warn!(report = %report.key, job = report.job, %reason, "report failed");
                self.events.delivery_failed(&report.key, reason);
                self.events.report_finished(module, true, None);
            }
        }
        if let Some(health) = self.modules.get(module.as_str()) {
            health.update(|h| {
                h.processed += 1;
                if report.failure.is_some() {
                    h.failed += 1;
                }
            });
        }
    }
}

/// Waits for the end of one report ([`crate::Engine::watch`]). Dropping it stops watching.
pub struct Watch {
    key: ReportKey,
    receiver: Option<oneshot::Receiver<FinishedReport>>,
    endings: std::sync::Weak<Endings>,
}

impl Watch {
    /// The report's end, once the engine has stored and told it; `None` if it did not end within
    /// `limit` (it goes on: the outbox keeps its job) or the engine stopped.
    pub async fn ended(mut self, limit: Duration) -> Option<FinishedReport> {
        let receiver = self.receiver.take()?;
        tokio::time::timeout(limit, receiver).await.ok()?.ok()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // This watch's receiver first (the fields drop only after this), then every sender
        // whose receiver is gone: a report nobody waits for any more leaves nothing behind,
        // also one that never ends (its dispatch was refused, say).
        drop(self.receiver.take());
        if let Some(endings) = self.endings.upgrade() {
            let mut watchers = endings.lock();
            if let Some(watching) = watchers.get_mut(&self.key) {
                watching.retain(|sender| !sender.is_closed());
                if watching.is_empty() {
                    watchers.remove(&self.key);
                }
            }
        }
    }
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> ReportKey {
        ReportKey {
            owner: "klinik".into(),
            module: "bedreport".into(),
            id: id.into(),
        }
    }

    #[tokio::test]
    async fn a_watch_given_up_or_dropped_leaves_nothing_behind() {
        let endings = Arc::new(Endings::new(crate::events::no_events(), HashMap::new()));
        drop(endings.watch(key("never")));
        let waited = endings.watch(key("slow"));
        assert!(waited.ended(Duration::from_millis(1)).await.is_none());
        let kept = endings.watch(key("kept"));
        assert_eq!(endings.lock().len(), 1, "only the watch still held");
        drop(kept);
        assert!(endings.lock().is_empty());
    }
}
