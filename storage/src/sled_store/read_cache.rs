//! Decoded records kept in memory, for the records read far more often than they change: every
//! authenticated request reads its user, and every laboratory report reads its facility and its
//! customer's scope (at memento creation and again at the form's submit). Decoding the JSON
//! record each time was a visible share of those requests' cost.
//!
//! Safe because the sled engine is the only writer of its directory (sled locks it), and every
//! change of such a record goes through this store, which invalidates the entry after the
//! change's transaction (also a failed one: sled may have applied it in memory). A generation
//! counter stops a read that started before a change from putting the old record back after the
//! change invalidated it. Records that are not there are not remembered.

use std::collections::HashMap;
use std::sync::Mutex;

/// Most records kept per cache; a cache starts over when full. Users, facilities and customers
/// are expected to number in the hundreds or thousands; with more read in turn, a cache keeps
/// starting over, which costs the reads it would have saved and is never wrong.
const MAX_ENTRIES: usize = 10_000;

/// Records of one kind by their key (a user's name, a BSNR, a customer id).
pub(crate) struct ReadCache<V> {
    inner: Mutex<Inner<V>>,
}

struct Inner<V> {
    generation: u64,
    records: HashMap<String, V>,
}

impl<V> Default for ReadCache<V> {
    fn default() -> Self {
        ReadCache {
            inner: Mutex::new(Inner {
                generation: 0,
                records: HashMap::new(),
            }),
        }
    }
}

impl<V: Clone> ReadCache<V> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<V>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached record, if any.
    fn get(&self, key: &str) -> Option<V> {
        self.lock().records.get(key).cloned()
    }

    /// Generation to hand back to [`ReadCache::fill`] after reading the database.
    fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Remembers a record read from the database, unless one changed since `generation`.
    fn fill(&self, generation: u64, key: &str, record: &V) {
        let mut inner = self.lock();
        if inner.generation != generation {
            return;
        }
        if inner.records.len() >= MAX_ENTRIES {
            inner.records.clear();
        }
        inner.records.insert(key.to_owned(), record.clone());
    }

    /// Forgets a record after a change of it was committed.
    pub(crate) fn invalidate(&self, key: &str) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.records.remove(key);
    }

    /// The record under `key`: from memory, else `read` from the database (and remembered when
    /// found).
    pub(crate) fn get_or_read<E>(
        &self,
        key: &str,
        read: impl FnOnce() -> Result<Option<V>, E>,
    ) -> Result<Option<V>, E> {
        if let Some(record) = self.get(key) {
            return Ok(Some(record));
        }
        let generation = self.generation();
        let record = read()?;
        if let Some(record) = &record {
            self.fill(generation, key, record);
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{UserRecord, WrappedKey};

    fn record(name: &str, hash: &str) -> UserRecord {
        UserRecord {
            name: name.into(),
            customer: None,
            email: None,
            password_hash: hash.into(),
            memento_key: WrappedKey {
                key_id: "k".into(),
                wrapped: vec![1],
            },
            seal: None,
            created_at: chrono::Utc::now(),
            password_changed_at: chrono::Utc::now(),
            magic_links: true,
            court_message_contact: None,
        }
    }

    #[test]
    fn a_record_read_while_it_changes_is_not_kept() {
        let cache = ReadCache::<UserRecord>::default();
        let read = cache.get_or_read("alice", || {
            cache.invalidate("alice"); // a change commits while the database is read
            Ok::<_, ()>(Some(record("alice", "old")))
        });
        assert_eq!(read.unwrap().unwrap().password_hash, "old");
        assert!(cache.get("alice").is_none(), "the old record is not kept");
        let read = cache.get_or_read("alice", || Ok::<_, ()>(Some(record("alice", "new"))));
        assert_eq!(read.unwrap().unwrap().password_hash, "new");
        assert_eq!(cache.get("alice").unwrap().password_hash, "new");
    }

    #[test]
    fn a_read_from_before_a_change_is_not_cached() {
        let cache = ReadCache::<UserRecord>::default();
        let seen = cache.generation();
        cache.invalidate("alice"); // a change commits while the read is under way
        cache.fill(seen, "alice", &record("alice", "old"));
        assert!(cache.get("alice").is_none());
        let seen = cache.generation();
        cache.fill(seen, "alice", &record("alice", "new"));
        assert_eq!(cache.get("alice").unwrap().password_hash, "new");
        cache.invalidate("alice");
        assert!(cache.get("alice").is_none());
    }
}
