//! The one path by which the engine tells that a report ended, however it ended: the
//! authority's answer to a delivery, an acknowledgement collected from an inbox, the engine giving
//! up (no attempts left, a message that cannot be built), or an operator's discard. The store has
//! recorded the end before; here it is logged, counted in the module actor's health and told to
//! the engine's observers (metrics, alert mails), the same way for every one of them.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::Utc;
use meldewerk_storage::FinishedReport;

use crate::events::SharedEvents;
use crate::health::HealthHandle;

/// Tells of ended reports. One per engine, shared by its module actors, its acknowledgement
/// collectors and its handle.
pub(crate) struct Endings {
    events: SharedEvents,
    /// The health entry of each module's actor, by module.
    modules: HashMap<Arc<str>, HealthHandle>,
}

impl Endings {
    /// Tells `events`, and counts in the health entries of `modules`.
    pub(crate) fn new(events: SharedEvents, modules: HashMap<Arc<str>, HealthHandle>) -> Self {
        Endings { events, modules }
    }

    /// `report` ended (its end is stored).
    pub(crate) fn report_finished(&self, report: &FinishedReport) {
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
