//! The health registry: what every actor last said about itself, for operators.
//!
//! Actors write their own entry; the [`crate::Engine`] handle reads a snapshot. The registry lives
//! outside the actors so that it survives their restarts and outlives a stopped engine.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Life state of one actor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActorState {
    /// Working normally.
    Running,
    /// Stopped after a failure; its supervisor is bringing it back.
    Restarting,
    /// Restarted more often than the restart intensity allows (it keeps being restarted, but only
    /// after a pause), or its work keeps failing (an acknowledgement inbox that does not answer);
    /// operators should look at `last_error`.
    Degraded,
    /// Stopped on purpose (engine shut down).
    Stopped,
}

/// What one actor reports about itself.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct ActorHealth {
    /// Actor name: `outbox`, `retention`, `module:<module>` or `inbox:<transport>`; for a
    /// mailbox a module reads, `mailbox:<transport>`, `sync:<transport>:<account id>` and
    /// `hydration:<transport>`; and `store`, the store the actors work on (degraded while it
    /// refuses requests, see `store_watch.rs`).
    pub name: String,
    /// Life state.
    pub state: ActorState,
    /// Restarts since the engine started (each one followed a panic or failure).
    pub restarts: u64,
    /// Last error the actor saw (panic message, store failure, transport error).
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// Work waiting: outbox length for the outbox actor, jobs in flight for a module actor.
    pub backlog: usize,
    /// Work done: reports brought to a final state (module and inbox actors), jobs routed (outbox actor),
    /// reports whose payload was expired (retention actor).
    pub processed: u64,
    /// Jobs that ended in FAILURE (module actors) or sweeps that failed (retention actor).
    pub failed: u64,
    /// When the actor last showed it was alive (every tick).
    #[schema(required = true)]
    pub last_heartbeat: Option<DateTime<Utc>>,
    /// Module actors: an operator paused the module's deliveries.
    pub paused: bool,
    /// Work one node at a time does (an acknowledgement inbox, a mailbox account's sync,
    /// hydration, retention and cleanups): another node on the shared store does it now, and
    /// this node's actor stands by to take it over when that node stops.
    pub standby: bool,
}

/// Shared table of every actor's health, in registration order.
#[derive(Default)]
pub(crate) struct HealthRegistry {
    entries: Mutex<Vec<ActorHealth>>,
    /// Set at shutdown; from then on every actor reads as stopped, whatever a last tick wrote.
    stopped: AtomicBool,
}

impl HealthRegistry {
    /// Adds an actor (state `Running`) and returns the handle it updates its entry through.
    pub(crate) fn register(self: &Arc<Self>, name: impl Into<String>) -> HealthHandle {
        let mut entries = self.lock();
        let index = entries.len();
        entries.push(ActorHealth {
            name: name.into(),
            state: ActorState::Running,
            restarts: 0,
            last_error: None,
            backlog: 0,
            processed: 0,
            failed: 0,
            last_heartbeat: None,
            paused: false,
            standby: false,
        });
        HealthHandle {
            registry: Arc::clone(self),
            index,
        }
    }

    /// The handle of the actor named `name`, registering it if it is new: an actor started
    /// again under its name (the sync of an account removed and added again) keeps one entry.
    pub(crate) fn register_or_reuse(self: &Arc<Self>, name: &str) -> HealthHandle {
        let found = self.lock().iter().position(|h| h.name == name);
        match found {
            Some(index) => {
                let handle = HealthHandle {
                    registry: Arc::clone(self),
                    index,
                };
                handle.update(|h| h.state = ActorState::Running);
                handle
            }
            None => self.register(name),
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<ActorHealth> {
        let mut entries = self.lock().clone();
        if self.stopped.load(Ordering::SeqCst) {
            for entry in &mut entries {
                entry.state = ActorState::Stopped;
            }
        }
        entries
    }

    /// Marks every actor stopped (after shutdown the actors cannot say so themselves).
    pub(crate) fn mark_all_stopped(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        for entry in self.lock().iter_mut() {
            entry.state = ActorState::Stopped;
        }
    }

    // A panic while holding the lock must not take operators' view down with it.
    fn lock(&self) -> MutexGuard<'_, Vec<ActorHealth>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One actor's write access to its own entry.
#[derive(Clone)]
pub(crate) struct HealthHandle {
    registry: Arc<HealthRegistry>,
    index: usize,
}

impl HealthHandle {
    pub(crate) fn update(&self, f: impl FnOnce(&mut ActorHealth)) {
        let mut entries = self.registry.lock();
        f(&mut entries[self.index]);
    }

    /// Records a tick: the actor is alive, with this much work waiting.
    pub(crate) fn heartbeat(&self, backlog: Option<usize>) {
        self.update(|h| {
            h.last_heartbeat = Some(Utc::now());
            if let Some(backlog) = backlog {
                h.backlog = backlog;
            }
        });
    }

    pub(crate) fn set_error(&self, error: impl Into<String>) {
        let error = error.into();
        self.update(|h| h.last_error = Some(error));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_serializes_lowercase() {
        let json = serde_json::to_string(&ActorState::Degraded).unwrap();
        assert_eq!(json, "\"degraded\"");
    }

    #[test]
    fn handles_update_their_own_entry() {
        let registry = Arc::new(HealthRegistry::default());
        let a = registry.register("a");
        let b = registry.register("b");
        b.update(|h| h.processed += 2);
        a.set_error("boom");
        let snap = registry.snapshot();
        assert_eq!(snap[0].last_error.as_deref(), Some("boom"));
        assert_eq!(snap[1].processed, 2);
        registry.mark_all_stopped();
        assert!(registry
            .snapshot()
            .iter()
            .all(|h| h.state == ActorState::Stopped));
    }
}
