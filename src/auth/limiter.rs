//! Failed-login limits per user name and per client address.
//!
//! Only failures are counted: a correct password never uses up the allowance. Once a key has
//! used its allowance, every attempt for it (even with the right password) is refused until the
//! allowance refills, which is what stops password guessing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
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
    blocked_users: Mutex<HashMap<String, Instant>>,
    blocked_addresses: Mutex<HashMap<IpAddr, Instant>>,
    clock: DefaultClock,
}

fn quota(per_minute: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(per_minute.max(1)).expect("at least 1"))
}

fn remaining<K: std::hash::Hash + Eq>(
    map: &Mutex<HashMap<K, Instant>>,
    key: &K,
) -> Option<Duration> {
    let map = map.lock().expect("limiter lock");
    map.get(key)
        .and_then(|until| until.checked_duration_since(Instant::now()))
}

fn block<K: std::hash::Hash + Eq>(map: &Mutex<HashMap<K, Instant>>, key: K, wait: Duration) {
    let mut map = map.lock().expect("limiter lock");
    if map.len() >= MAX_BLOCKED {
        let now = Instant::now();
        map.retain(|_, until| *until > now);
    }
    if map.len() < MAX_BLOCKED {
        map.insert(key, Instant::now() + wait);
    }
}

impl FailedLoginLimiter {
    /// Allows `per_user` failures a minute per user name and `per_address` per client address.
    pub fn new(per_user: u32, per_address: u32) -> Self {
        FailedLoginLimiter {
            per_user: RateLimiter::keyed(quota(per_user)),
            per_address: RateLimiter::keyed(quota(per_address)),
            blocked_users: Mutex::new(HashMap::new()),
            blocked_addresses: Mutex::new(HashMap::new()),
            clock: DefaultClock::default(),
        }
    }

    /// How long the user or the address must still wait, if either is blocked.
    pub fn blocked(&self, user: &str, address: Option<IpAddr>) -> Option<Duration> {
        let by_user = remaining(&self.blocked_users, &user.to_string());
        let by_address = address.and_then(|a| remaining(&self.blocked_addresses, &a));
        by_user.into_iter().chain(by_address).max()
    }

    /// Counts a failure; blocks the key whose allowance is used up.
    pub fn record_failure(&self, user: &str, address: Option<IpAddr>) {
        if let Err(not_until) = self.per_user.check_key(&user.to_string()) {
            let wait = not_until.wait_time_from(self.clock.now());
            block(&self.blocked_users, user.to_string(), wait);
        }
        if let Some(address) = address {
            if let Err(not_until) = self.per_address.check_key(&address) {
                let wait = not_until.wait_time_from(self.clock.now());
                block(&self.blocked_addresses, address, wait);
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
