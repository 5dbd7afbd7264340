//! The verified-credential cache of [`super::basic`]: tags of credentials that passed argon2,
//! each remembered for a fixed time.
//!
//! The clock is a parameter of every call, so that expiry can be tested without waiting.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Tags of verified credentials and when each was verified.
pub struct CredentialCache {
    entries: HashMap<[u8; 32], Instant>,
    ttl: Duration,
    max_entries: usize,
}

impl CredentialCache {
    /// A cache that remembers a credential for `ttl` and holds at most `max_entries`.
    pub fn new(ttl: Duration, max_entries: usize) -> Self {
        CredentialCache {
            entries: HashMap::new(),
            ttl,
            max_entries,
        }
    }

    /// Whether `tag` was verified less than the TTL before `now`.
    pub fn contains(&self, tag: &[u8; 32], now: Instant) -> bool {
        self.entries
            .get(tag)
            .is_some_and(|at| now.saturating_duration_since(*at) < self.ttl)
    }

    /// Remembers `tag` as verified at `now`. When full, expired entries go first; if all are
    /// live, the cache starts over: forgetting a success only costs one more argon2 run.
    pub fn insert(&mut self, tag: [u8; 32], now: Instant) {
        if self.entries.len() >= self.max_entries {
            let ttl = self.ttl;
            self.entries
                .retain(|_, at| now.saturating_duration_since(*at) < ttl);
            if self.entries.len() >= self.max_entries {
                self.entries.clear();
            }
        }
        self.entries.insert(tag, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_after_the_ttl() {
        let start = Instant::now();
        let mut cache = CredentialCache::new(Duration::from_secs(300), 10);
        cache.insert([1; 32], start);
        assert!(cache.contains(&[1; 32], start));
        assert!(cache.contains(&[1; 32], start + Duration::from_secs(299)));
        assert!(!cache.contains(&[1; 32], start + Duration::from_secs(300)));
        assert!(!cache.contains(&[1; 32], start + Duration::from_secs(3600)));
        assert!(!cache.contains(&[2; 32], start), "never inserted");
        // Verifying again starts a new lifetime.
        cache.insert([1; 32], start + Duration::from_secs(400));
        assert!(cache.contains(&[1; 32], start + Duration::from_secs(600)));
    }

    #[test]
    fn a_full_cache_drops_expired_entries_first() {
        let start = Instant::now();
        let mut cache = CredentialCache::new(Duration::from_secs(10), 2);
        cache.insert([1; 32], start);
        cache.insert([2; 32], start + Duration::from_secs(5));
        // [1] has expired at 12 s, [2] has not: only [1] makes room.
        let later = start + Duration::from_secs(12);
        cache.insert([3; 32], later);
        assert!(!cache.contains(&[1; 32], later));
        assert!(cache.contains(&[2; 32], later));
        assert!(cache.contains(&[3; 32], later));
    }

    #[test]
    fn an_entry_exactly_a_ttl_old_makes_room() {
        let start = Instant::now();
        let mut cache = CredentialCache::new(Duration::from_secs(10), 2);
        cache.insert([1; 32], start);
        cache.insert([2; 32], start + Duration::from_secs(5));
        let at = start + Duration::from_secs(10);
        cache.insert([3; 32], at);
        assert!(cache.contains(&[2; 32], at), "kept: [1] made the room");
        assert!(cache.contains(&[3; 32], at));
    }

    #[test]
    fn a_cache_full_of_live_entries_starts_over_rather_than_grow() {
        let start = Instant::now();
        let mut cache = CredentialCache::new(Duration::from_secs(300), 2);
        cache.insert([1; 32], start);
        cache.insert([2; 32], start);
        cache.insert([3; 32], start);
        assert_eq!(cache.entries.len(), 1);
        assert!(!cache.contains(&[1; 32], start));
        assert!(!cache.contains(&[2; 32], start));
        assert!(cache.contains(&[3; 32], start));
        // Below the bound nothing is forgotten.
        cache.insert([4; 32], start);
        assert!(cache.contains(&[3; 32], start) && cache.contains(&[4; 32], start));
    }
}
