//! Decoded user records kept in memory: every authenticated request reads its user, and decoding
//! the JSON record each time was a visible share of a request's cost.
//!
//! Safe because the sled engine is the only writer of its directory (sled locks it), and every
//! change of a user goes through this store, which invalidates the entry after the commit. A
//! generation counter stops a read that started before a change from putting the old record back
//! after the change invalidated it.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::UserRecord;

/// Most users kept; the cache starts over when full (API users are few).
const MAX_USERS: usize = 10_000;

#[derive(Default)]
pub(crate) struct UserCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    generation: u64,
    users: HashMap<String, UserRecord>,
}

impl UserCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The cached record, if any.
    pub(crate) fn get(&self, name: &str) -> Option<UserRecord> {
        self.lock().users.get(name).cloned()
    }

    /// Generation to hand back to [`UserCache::fill`] after reading the database.
    pub(crate) fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Remembers a record read from the database, unless a user changed since `generation`.
    pub(crate) fn fill(&self, generation: u64, record: &UserRecord) {
        let mut inner = self.lock();
        if inner.generation != generation {
            return;
        }
        if inner.users.len() >= MAX_USERS {
            inner.users.clear();
        }
        inner.users.insert(record.name.clone(), record.clone());
    }

    /// Forgets a user after a change was committed.
    pub(crate) fn invalidate(&self, name: &str) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.users.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WrappedKey;

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
    fn a_read_from_before_a_change_is_not_cached() {
        let cache = UserCache::default();
        let seen = cache.generation();
        cache.invalidate("alice"); // a change commits while the read is under way
        cache.fill(seen, &record("alice", "old"));
        assert!(cache.get("alice").is_none());
        let seen = cache.generation();
        cache.fill(seen, &record("alice", "new"));
        assert_eq!(cache.get("alice").unwrap().password_hash, "new");
        cache.invalidate("alice");
        assert!(cache.get("alice").is_none());
    }
}
