//! The store's condition as operators see it: an entry `store` in the health table, degraded
//! while the store refuses requests (a full disk), and an event when that starts and ends.
//!
//! The outbox actor looks at every tick: while the store is unavailable it skips its scan, which
//! would only fail, and jobs wait in the outbox, which the store keeps on disk, until the store
//! recovers by itself.

use std::sync::Arc;

use meldewerk_storage::{Store, StoreCondition};

use crate::events::SharedEvents;
use crate::health::{ActorState, HealthHandle};

/// Watches the store's condition for the health table and the events.
pub(crate) struct StoreWatch {
    store: Arc<dyn Store>,
    health: HealthHandle,
    events: SharedEvents,
    unavailable: bool,
}

impl StoreWatch {
    pub(crate) fn new(store: Arc<dyn Store>, health: HealthHandle, events: SharedEvents) -> Self {
        StoreWatch {
            store,
            health,
            events,
            unavailable: false,
        }
    }

    /// The store it watches.
    pub(crate) fn store(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store)
    }

    /// Looks at the store now: whether it serves requests. The health entry follows, and the
    /// events hear of every change.
    pub(crate) fn available(&mut self) -> bool {
        self.health.heartbeat(None);
        match self.store.condition() {
            StoreCondition::Available => {
                if std::mem::take(&mut self.unavailable) {
                    self.health.update(|h| h.state = ActorState::Running);
                    tracing::warn!("the store is available again; deliveries resume");
                    self.events.store_recovered();
                }
                true
            }
            StoreCondition::Unavailable { reason, .. } => {
                let first = !std::mem::replace(&mut self.unavailable, true);
                self.health.update(|h| {
                    h.state = ActorState::Degraded;
                    h.last_error = Some(reason.clone());
                });
                if first {
                    tracing::error!(error = %reason, "the store is unavailable; deliveries wait in the outbox");
                    self.events.store_unavailable(&reason);
                }
                false
            }
        }
    }
}
