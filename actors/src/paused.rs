//! Modules whose deliveries an operator paused. Their jobs stay in the durable outbox, untouched,
//! until the module is resumed; new submissions still land there.
//!
//! On a store several nodes share, a pause is the whole service's: the store keeps it, and each
//! node follows the store's list ([`follow`]). A node holds every module until it has read that
//! list once, so that a node joining (or restarted) never delivers what an operator paused.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::outbox::Resumed;
use crate::WeakEngine;

/// How often a node reads the pauses of a shared store: a pause or resume taken by another node
/// holds here within this.
pub(crate) const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// The set of paused modules, shared by the engine handle and the outbox actor.
pub(crate) struct Paused {
    modules: Mutex<HashSet<String>>,
    /// The shared store's pauses were not read yet: every module is held.
    unread: AtomicBool,
    /// One change at a time, an operator's or a round of [`follow`]: a round that read the store
    /// before an operator's change must not undo it.
    pub(crate) changing: tokio::sync::Mutex<()>,
}

impl Paused {
    /// No module paused; with `shared`, every module held until the first [`Paused::follow_store`].
    pub(crate) fn new(shared: bool) -> Self {
        Paused {
            modules: Mutex::default(),
            unread: AtomicBool::new(shared),
            changing: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.modules.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pauses `module`; `false` when it was paused already.
    pub(crate) fn pause(&self, module: &str) -> bool {
        self.lock().insert(module.to_owned())
    }

    /// Resumes `module`; `false` when it was not paused.
    pub(crate) fn resume(&self, module: &str) -> bool {
        self.lock().remove(module)
    }

    /// Whether `module` is held: paused, or the shared store's pauses not read yet.
    pub(crate) fn contains(&self, module: &str) -> bool {
        self.unread.load(Ordering::SeqCst) || self.lock().contains(module)
    }

    /// Takes the shared store's list of paused modules: those of `served` it lists are paused,
    /// the others resumed. Answers the modules whose held jobs may go now: those resumed, and
    /// after the first read every module not listed.
    pub(crate) fn follow_store(&self, listed: &[String], served: &[Arc<str>]) -> Vec<String> {
        let mut modules = self.lock();
        // Cleared under the lock: a reader that finds it clear waits for the list taken here.
        let first = self.unread.swap(false, Ordering::SeqCst);
        let mut released = Vec::new();
        for module in served {
            if listed.iter().any(|l| **l == **module) {
                modules.insert(module.to_string());
            } else if modules.remove(&**module) || first {
                released.push(module.to_string());
            }
        }
        released
    }
}

/// Reads the shared store's paused modules at once and then every [`FOLLOW_EVERY`], until the
/// engine shuts down or is gone; lets go of the jobs of modules resumed elsewhere.
pub(crate) async fn follow(engine: WeakEngine) {
    let mut round = 0u64;
    // Whether the last read failed: the first failure of a streak is a warning (until the list is
    // read once, every module is held), the rest would only repeat it every second.
    let mut failing = false;
    loop {
        if round > 0 {
            actix::clock::sleep(FOLLOW_EVERY).await;
        }
        round += 1;
        let Some(engine) = engine.upgrade() else {
            return;
        };
        let inner = &engine.inner;
        if inner.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        let (store, paused, outbox) = (
            Arc::clone(&inner.store),
            Arc::clone(&inner.paused),
            inner.outbox.clone(),
        );
        let served = inner.modules.clone();
        // The engine is not kept alive across the read.
        drop(engine);
        let _one_change = paused.changing.lock().await;
        match store.paused_modules().await {
            Ok(listed) => {
                if std::mem::take(&mut failing) {
                    tracing::info!("paused modules read again");
                }
                for module in paused.follow_store(&listed, &served) {
                    outbox.do_send(Resumed(module));
                }
            }
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "paused modules not read; the modules stay as they are (every module held until the first read)");
            }
            Err(e) => tracing::debug!(error = %e, "paused modules not read"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_and_resume_report_whether_they_changed_anything() {
        let paused = Paused::new(false);
        assert!(paused.pause("birthnotice"));
        assert!(!paused.pause("birthnotice"));
        assert!(paused.contains("birthnotice") && !paused.contains("birthdata"));
        assert!(paused.resume("birthnotice"));
        assert!(!paused.resume("birthnotice"));
        assert!(!paused.contains("birthnotice"));
    }

    #[test]
    fn a_shared_store_holds_every_module_until_its_list_is_read_and_then_follows_it() {
        let served: Vec<Arc<str>> = vec!["birthnotice".into(), "labreport".into()];
        let paused = Paused::new(true);
        assert!(paused.contains("birthnotice") && paused.contains("labreport"));
        // The first read lets go of every module it does not list.
        let released = paused.follow_store(&["labreport".to_owned()], &served);
        assert_eq!(released, ["birthnotice"]);
        assert!(!paused.contains("birthnotice") && paused.contains("labreport"));
        // Later reads let go only of what was resumed elsewhere.
        assert!(paused
            .follow_store(&["labreport".to_owned()], &served)
            .is_empty());
        assert_eq!(paused.follow_store(&[], &served), ["labreport"]);
        assert!(!paused.contains("labreport"));
        // A module paused elsewhere is held here.
        assert!(paused
            .follow_store(&["birthnotice".to_owned()], &served)
            .is_empty());
        assert!(paused.contains("birthnotice"));
    }
}
