//! Failed-login limits per user name and per client address.
//!
//! Only failures are counted: a correct password never uses up the allowance. Once a key has
//! used its allowance, every attempt for it (even with the right password) is refused until the
//! allowance refills, which is what stops password guessing.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Largest number of blocked keys remembered; expired entries are dropped first.
const MAX_BLOCKED: usize = 100_000;

/// Counts failures and tells whether a user or address is currently blocked.
pub struct FailedLoginLimiter {
    per_user: DefaultKeyedRateLimiter<String>,
    per_address: DefaultKeyedRateLimiter<IpAddr>,
    blocked_users: BlockList<String>,
    blocked_addresses: BlockList<IpAddr>,
    clock: DefaultClock,
}

fn quota(per_minute: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(per_minute.max(1)).expect("at least 1"))
}

/// Blocked keys and when each may try again.
struct BlockList<K> {
    map: Mutex<HashMap<K, Instant>>,
    /// `map.len()`, kept in step under the lock: every authenticated request asks, and almost
    /// always nothing is blocked, so that answer should need no lock.
    len: AtomicUsize,
}

impl<K: Hash + Eq> BlockList<K> {
    fn new() -> Self {
        BlockList {
            map: Mutex::new(HashMap::new()),
            len: AtomicUsize::new(0),
        }
    }

    fn remaining<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<Duration>
    where
        K: Borrow<Q>,
    {
        if self.len.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut map = self.map.lock().expect("limiter lock");
        let left = map.get(key)?.checked_duration_since(Instant::now());
        if left.is_none() {
            // Expired: forget it, so that the lock-free answer above applies again.
            map.remove(key);
            self.len.store(map.len(), Ordering::SeqCst);
        }
        left
    }

    fn block(&self, key: K, wait: Duration) {
        let mut map = self.map.lock().expect("limiter lock");
        if map.len() >= MAX_BLOCKED {
            let now = Instant::now();
            map.retain(|_, until| *until > now);
        }
        if map.len() < MAX_BLOCKED {
            map.insert(key, Instant::now() + wait);
        }
        self.len.store(map.len(), Ordering::SeqCst);
    }
}

impl FailedLoginLimiter {
    /// Allows `per_user` failures a minute per user name and `per_address` per client address.
    pub fn new(per_user: u32, per_address: u32) -> Self {
        FailedLoginLimiter {
            per_user: RateLimiter::keyed(quota(per_user)),
            per_address: RateLimiter::keyed(quota(per_address)),
            blocked_users: BlockList::new(),
            blocked_addresses: BlockList::new(),
            clock: DefaultClock::default(),
        }
    }

    /// How long the user or the address must still wait, if either is blocked.
    pub fn blocked(&self, user: &str, address: Option<IpAddr>) -> Option<Duration> {
        let by_user = self.blocked_users.remaining(user);
        let by_address = address.and_then(|a| self.blocked_addresses.remaining(&a));
        by_user.into_iter().chain(by_address).max()
    }

    /// Counts a failure; blocks the key whose allowance is used up.
    pub fn record_failure(&self, user: &str, address: Option<IpAddr>) {
        if let Err(not_until) = self.per_user.check_key(&user.to_string()) {
            let wait = not_until.wait_time_from(self.clock.now());
            self.blocked_users.block(user.to_string(), wait);
        }
        if let Some(address) = address {
            if let Err(not_until) = self.per_address.check_key(&address) {
                let wait = not_until.wait_time_from(self.clock.now());
                self.blocked_addresses.block(address, wait);
            }
        }
        self.per_user.retain_recent();
        self.per_address.retain_recent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_allowance_and_only_that_key() {
        let limiter = FailedLoginLimiter::new(3, 100);
        let addr: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..3 {
            assert!(limiter.blocked("alice", Some(addr)).is_none());
            limiter.record_failure("alice", Some(addr));
        }
        assert!(
            limiter.blocked("alice", Some(addr)).is_none(),
            "3 failures are allowed"
        );
        limiter.record_failure("alice", Some(addr));
        assert!(limiter.blocked("alice", Some(addr)).is_some());
        assert!(limiter.blocked("bob", Some(addr)).is_none());
    }
}
