//! Which outbox jobs are being worked on right now.
//!
//! The set lives outside the actors so that it stays right across restarts: the outbox actor
//! claims a job before routing it, and the claim travels with the job as an [`InFlightGuard`].
//! Whatever becomes of the job — answered, dropped with a dead mailbox, or dropped with the future
//! of a module actor that restarted — dropping the guard releases the claim, so a job is never
//! worked twice at once and never stays claimed by work that no longer exists.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

#[derive(Default)]
struct Claims {
    /// Claimed job ids with their module and whether they deliver again.
    jobs: HashMap<u64, (Arc<str>, bool)>,
    per_module: HashMap<Arc<str>, Count>,
}

#[derive(Default)]
struct Count {
    all: usize,
    redeliveries: usize,
}

/// Claimed job ids, counted per module for backpressure.
#[derive(Default)]
pub(crate) struct InFlight {
    claims: Mutex<Claims>,
}

impl InFlight {
    /// Claims `job_id` for `module` unless it is claimed already or the module is at `max`.
    /// A `redelivery` (a message delivered again because its acknowledgement is late) may take
    /// only half of `max`: however many acknowledgements go overdue at once, the other half is
    /// there for new reports.
    pub(crate) fn try_claim(
        self: &Arc<Self>,
        job_id: u64,
        module: &Arc<str>,
        max: usize,
        redelivery: bool,
    ) -> Result<InFlightGuard, ClaimRefused> {
        let mut claims = self.lock();
        if claims.jobs.contains_key(&job_id) {
            return Err(ClaimRefused::AlreadyClaimed);
        }
        let count = claims.per_module.entry(Arc::clone(module)).or_default();
        if count.all >= max {
            return Err(ClaimRefused::ModuleFull);
        }
        if redelivery && count.redeliveries >= (max / 2).max(1) {
            return Err(ClaimRefused::RedeliveriesFull);
        }
        count.all += 1;
        count.redeliveries += usize::from(redelivery);
        claims.jobs.insert(job_id, (Arc::clone(module), redelivery));
        Ok(InFlightGuard {
            set: Arc::clone(self),
            job_id,
        })
    }

    /// Whether the job is being worked on right now.
    pub(crate) fn contains(&self, job_id: u64) -> bool {
        self.lock().jobs.contains_key(&job_id)
    }

    pub(crate) fn total(&self) -> usize {
        self.lock().jobs.len()
    }

    pub(crate) fn module_count(&self, module: &str) -> usize {
        self.lock()
            .per_module
            .get(module)
            .map_or(0, |count| count.all)
    }

    fn release(&self, job_id: u64) {
        let mut claims = self.lock();
        if let Some((module, redelivery)) = claims.jobs.remove(&job_id) {
            if let Some(count) = claims.per_module.get_mut(&module) {
                count.all = count.all.saturating_sub(1);
                count.redeliveries = count.redeliveries.saturating_sub(usize::from(redelivery));
            }
        }
    }

    // Claims must stay usable even if a thread panicked while holding the lock.
    fn lock(&self) -> MutexGuard<'_, Claims> {
        self.claims.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Why a job was not claimed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ClaimRefused {
    AlreadyClaimed,
    /// Every place of the module is taken.
    ModuleFull,
    /// The module's redeliveries have their share; a new delivery may still have a place.
    RedeliveriesFull,
}

/// The claim on one job; releases it when dropped.
#[derive(Debug)]
pub(crate) struct InFlightGuard {
    set: Arc<InFlight>,
    job_id: u64,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.set.release(self.job_id);
    }
}

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InFlight({})", self.total())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_exclusive_bounded_and_released_on_drop() {
        let set = Arc::new(InFlight::default());
        let m: Arc<str> = Arc::from("m");
        let a = set.try_claim(1, &m, 2, false).unwrap();
        assert_eq!(
            set.try_claim(1, &m, 2, false).unwrap_err(),
            ClaimRefused::AlreadyClaimed
        );
        let _b = set.try_claim(2, &m, 2, false).unwrap();
        assert_eq!(
            set.try_claim(3, &m, 2, false).unwrap_err(),
            ClaimRefused::ModuleFull
        );
        assert_eq!(set.module_count("m"), 2);
        drop(a);
        assert_eq!(set.module_count("m"), 1);
        assert!(set.try_claim(1, &m, 2, false).is_ok());
        assert_eq!(set.total(), 1);
    }

    #[test]
    fn redeliveries_leave_half_of_a_module_to_new_deliveries() {
        let set = Arc::new(InFlight::default());
        let m: Arc<str> = Arc::from("m");
        let r1 = set.try_claim(1, &m, 4, true).unwrap();
        let _r2 = set.try_claim(2, &m, 4, true).unwrap();
        assert_eq!(
            set.try_claim(3, &m, 4, true).unwrap_err(),
            ClaimRefused::RedeliveriesFull
        );
        let _n1 = set.try_claim(4, &m, 4, false).unwrap();
        let _n2 = set.try_claim(5, &m, 4, false).unwrap();
        assert_eq!(
            set.try_claim(6, &m, 4, false).unwrap_err(),
            ClaimRefused::ModuleFull
        );
        drop(r1);
        // The freed slot was a redelivery's; either kind may take it.
        let _r3 = set.try_claim(3, &m, 4, true).unwrap();
        assert_eq!(set.module_count("m"), 4);
    }
}
