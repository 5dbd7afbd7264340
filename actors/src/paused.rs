//! Modules whose deliveries an operator paused. Their jobs stay in the durable outbox, untouched,
//! until the module is resumed; new submissions still land there.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The set of paused modules, shared by the engine handle and the outbox actor.
#[derive(Default)]
pub(crate) struct Paused(Mutex<HashSet<String>>);

impl Paused {
    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Pauses `module`; `false` when it was paused already.
    pub(crate) fn pause(&self, module: &str) -> bool {
        self.lock().insert(module.to_owned())
    }

    /// Resumes `module`; `false` when it was not paused.
    pub(crate) fn resume(&self, module: &str) -> bool {
        self.lock().remove(module)
    }

    /// Whether `module` is paused.
    pub(crate) fn contains(&self, module: &str) -> bool {
        self.lock().contains(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_and_resume_report_whether_they_changed_anything() {
        let paused = Paused::default();
        assert!(paused.pause("birthnotice"));
        assert!(!paused.pause("birthnotice"));
        assert!(paused.contains("birthnotice") && !paused.contains("birthdata"));
        assert!(paused.resume("birthnotice"));
        assert!(!paused.resume("birthnotice"));
        assert!(!paused.contains("birthnotice"));
    }
}
