//! Claims on keys: one holder per key at a time, any number of keys at once.
//!
//! A simulated authority answers a second delivery of a message (same idempotency key) as a
//! repeat of the first, with the first's answer. While the first is still being stored, the second
//! must wait for it rather than be checked on its own; deliveries of other messages need not
//! wait for either.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// The keys claimed right now.
#[derive(Default)]
pub(crate) struct Claims {
    held: Mutex<HashSet<String>>,
    released: Condvar,
}

/// A claim on one key, given up when dropped. It owns its way back to the claims, so that it can
/// travel with the delivery it guards until that is committed (the office drops it on the
/// journal's committing thread). Nothing between a claim and its release may wait for a blocking
/// thread: a second claimant of the key waits on one.
pub(crate) struct Claim {
    claims: Arc<Claims>,
    key: String,
}

impl Claims {
    /// Claims `key`, blocking the calling thread while the key is claimed.
    pub(crate) fn claim(self: &Arc<Self>, key: &str) -> Claim {
        let mut held = self.held();
        while held.contains(key) {
            held = self
                .released
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
        held.insert(key.to_owned());
        Claim {
            claims: Arc::clone(self),
            key: key.to_owned(),
        }
    }

    fn held(&self) -> MutexGuard<'_, HashSet<String>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.claims.held().remove(&self.key);
        // Waiters on other keys wake and wait again; a key is rarely contended (only by copies of
        // one message), and a claim lasts until its delivery is committed.
        self.claims.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn one_holder_per_key_and_other_keys_go_on() {
        let claims = Arc::new(Claims::default());
        let inside = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    let _claim = claims.claim("same");
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    inside.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(most.load(Ordering::SeqCst), 1);

        // A held key does not keep another from being claimed.
        let first = claims.claim("a");
        let second = claims.claim("b");
        drop((first, second));
        let _again = claims.claim("a");
    }
}
