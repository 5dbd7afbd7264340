//! Receipts of final reports, decoded into the base64 that results carry, kept in memory for
//! the polls that read the same report again (`peek=true` does not consume, so an integrator may
//! poll a final report many times).
//!
//! Decoding a stored receipt (inflating it, then encoding it as base64) was the largest part of
//! such a poll's cost. A receipt never changes once its report finished: the change that
//! finishes a report writes it, and only retention or consuming makes it unreadable. So an entry
//! cannot go stale while the report's state still says it is readable, and readers consult the
//! cache only after reading that state. Removal on retention and consuming merely frees memory.
//!
//! Bounded in bytes: two generations of at most half the budget each; when the current one is
//! full it becomes the previous one and the old previous one is dropped, and a hit in the
//! previous generation moves the entry to the current one. That keeps what is read again
//! without the bookkeeping of an exact least-recently-used order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Bytes an entry costs beyond its key and receipt (map slot, `Arc` header, allocations).
const ENTRY_OVERHEAD: usize = 64;

/// Decoded receipts by store key, at most `budget` bytes of them.
pub(crate) struct ReceiptCache {
    /// Bytes each generation may hold.
    generation_budget: usize,
    inner: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    current: HashMap<Vec<u8>, Arc<str>>,
    current_bytes: usize,
    previous: HashMap<Vec<u8>, Arc<str>>,
}

fn cost(key: &[u8], receipt: &str) -> usize {
    key.len() + receipt.len() + ENTRY_OVERHEAD
}

impl ReceiptCache {
    /// A cache holding at most `budget` bytes; 0 keeps nothing.
    pub(crate) fn new(budget: usize) -> ReceiptCache {
        ReceiptCache {
            generation_budget: budget / 2,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Generations> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The receipt stored under `key`, if it is kept.
    pub(crate) fn get(&self, key: &[u8]) -> Option<Arc<str>> {
        let mut inner = self.lock();
        if let Some(receipt) = inner.current.get(key) {
            return Some(receipt.clone());
        }
        let receipt = inner.previous.remove(key)?;
        inner.admit(self.generation_budget, key.to_vec(), receipt.clone());
        Some(receipt)
    }

    /// Keeps `receipt`, read from the store under `key`.
    pub(crate) fn insert(&self, key: &[u8], receipt: Arc<str>) {
        if cost(key, &receipt) > self.generation_budget {
            return;
        }
        self.lock()
            .admit(self.generation_budget, key.to_vec(), receipt);
    }

    /// Forgets the receipt under `key` (consumed or removed by retention).
    pub(crate) fn remove(&self, key: &[u8]) {
        let mut inner = self.lock();
        if let Some(receipt) = inner.current.remove(key) {
            inner.current_bytes -= cost(key, &receipt);
        }
        inner.previous.remove(key);
    }
}

impl Generations {
    fn admit(&mut self, budget: usize, key: Vec<u8>, receipt: Arc<str>) {
        let (key_len, cost) = (key.len(), cost(&key, &receipt));
        if self.current_bytes + cost > budget {
            self.previous = std::mem::take(&mut self.current);
            self.current_bytes = 0;
        }
        self.current_bytes += cost;
        if let Some(old) = self.current.insert(key, receipt) {
            // The same receipt read twice at once: count it once.
            self.current_bytes -= key_len + old.len() + ENTRY_OVERHEAD;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(len: usize) -> Arc<str> {
        "A".repeat(len).into()
    }

    #[test]
    fn a_kept_receipt_is_found_and_a_removed_one_is_not() {
        let cache = ReceiptCache::new(10_000);
        cache.insert(b"a", receipt(100));
        assert_eq!(cache.get(b"a").as_deref(), Some(&*receipt(100)));
        assert!(cache.get(b"b").is_none());
        cache.remove(b"a");
        assert!(cache.get(b"a").is_none());
    }

    #[test]
    fn memory_stays_within_the_budget_and_what_is_read_again_stays() {
        // Each entry costs 1 + 400 + 64 bytes; a generation holds two of them.
        let cache = ReceiptCache::new(2 * 1000);
        cache.insert(b"1", receipt(400));
        cache.insert(b"2", receipt(400));
        cache.insert(b"3", receipt(400)); // 1 and 2 become the previous generation
        assert!(cache.get(b"1").is_some()); // moved back to the current one, with 3
        cache.insert(b"4", receipt(400)); // 3 and 1 become the previous generation; 2 is dropped
        assert!(cache.get(b"2").is_none());
        assert!(cache.get(b"1").is_some());
        assert!(cache.get(b"3").is_some());
        let inner = cache.lock();
        let held: usize = inner
            .current
            .iter()
            .chain(inner.previous.iter())
            .map(|(k, v)| cost(k, v))
            .sum();
        assert!(held <= 2000, "{held} bytes held");
        assert_eq!(
            inner.current_bytes,
            inner.current.iter().map(|(k, v)| cost(k, v)).sum::<usize>()
        );
    }

    #[test]
    fn receipts_larger_than_a_generation_and_a_zero_budget_keep_nothing() {
        let cache = ReceiptCache::new(1000);
        cache.insert(b"big", receipt(600));
        assert!(cache.get(b"big").is_none());
        let none = ReceiptCache::new(0);
        none.insert(b"a", receipt(1));
        assert!(none.get(b"a").is_none());
    }

    #[test]
    fn a_receipt_inserted_twice_is_counted_once() {
        let cache = ReceiptCache::new(10_000);
        cache.insert(b"a", receipt(100));
        cache.insert(b"a", receipt(100));
        assert_eq!(cache.lock().current_bytes, cost(b"a", &receipt(100)));
    }
}
