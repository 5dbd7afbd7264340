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
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// Largest number of blocked keys remembered per list.
const MAX_BLOCKED: usize = 100_000;

/// A keyed rate limiter that reports the state after each accepted cell, so that the failure that
/// uses up the allowance can be recognised as such.
type FailureCounter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// Counts failures and tells whether a user or address is currently blocked.
pub struct FailedLoginLimiter {
    per_user: FailureCounter<String>,
    per_address: FailureCounter<IpAddr>,
    blocked_users: BlockList<String>,
    blocked_addresses: BlockList<IpAddr>,
    clock: DefaultClock,
}

fn quota(per_minute: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(per_minute.max(1)).expect("at least 1"))
}

fn counter<K: Hash + Eq + Clone>(per_minute: u32) -> FailureCounter<K> {
    RateLimiter::keyed(quota(per_minute)).with_middleware::<StateInformationMiddleware>()
}

/// Blocked keys and when each may try again.
///
/// The list is bounded. When it is full, blocks that have run out make room; when every block is
/// still running, the list does not forget one of them (that would let the most persistent
/// guesser go on) and does not grow: it refuses every key it does not hold until the longest
/// block of those it could not record has run out. That turns an attack on this many keys at once
/// into a short lockout for everyone, which is the safe side for a login.
struct BlockList<K> {
    state: Mutex<BlockState<K>>,
    capacity: usize,
    /// Entries plus one while `overflow_until` is set, kept in step under the lock: every
    /// authenticated request asks, and almost always nothing is blocked, so that answer should
    /// need no lock.
    len: AtomicUsize,
}

struct BlockState<K> {
    map: HashMap<K, Instant>,
    /// Set while a block could not be recorded for lack of room: every key not in `map` counts
    /// as blocked until then.
    overflow_until: Option<Instant>,
}

impl<K: Hash + Eq> BlockList<K> {
    fn new(capacity: usize) -> Self {
        BlockList {
            state: Mutex::new(BlockState {
                map: HashMap::new(),
                overflow_until: None,
            }),
            capacity,
            len: AtomicUsize::new(0),
        }
    }

    fn sync_len(&self, state: &BlockState<K>) {
        let len = state.map.len() + usize::from(state.overflow_until.is_some());
        self.len.store(len, Ordering::SeqCst);
    }

    fn remaining<Q: Hash + Eq + ?Sized>(&self, key: &Q, now: Instant) -> Option<Duration>
    where
        K: Borrow<Q>,
    {
        if self.len.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut state = self.state.lock().expect("limiter lock");
        if state.overflow_until.is_some_and(|until| until <= now) {
            state.overflow_until = None;
        }
        let own = match state.map.get(key) {
            Some(until) => {
                let left = until.checked_duration_since(now).filter(|d| !d.is_zero());
                if left.is_none() {
                    // Expired: forget it, so that the lock-free answer above applies again.
                    state.map.remove(key);
                }
                left
            }
            None => None,
        };
        let overflow = state
            .overflow_until
            .and_then(|until| until.checked_duration_since(now));
        self.sync_len(&state);
        own.into_iter().chain(overflow).max()
    }

    fn block(&self, key: K, wait: Duration, now: Instant) {
        let until = now + wait;
        let mut state = self.state.lock().expect("limiter lock");
        if !state.map.contains_key(&key) && state.map.len() >= self.capacity {
            state.map.retain(|_, blocked_until| *blocked_until > now);
        }
        if state.map.contains_key(&key) || state.map.len() < self.capacity {
            let entry = state.map.entry(key).or_insert(until);
            *entry = (*entry).max(until);
        } else {
            state.overflow_until = Some(state.overflow_until.map_or(until, |u| u.max(until)));
        }
        self.sync_len(&state);
    }
}

impl FailedLoginLimiter {
    /// Allows `per_user` failures a minute per user name and `per_address` per client address.
    pub fn new(per_user: u32, per_address: u32) -> Self {
        FailedLoginLimiter {
            per_user: counter(per_user),
            per_address: counter(per_address),
            blocked_users: BlockList::new(MAX_BLOCKED),
            blocked_addresses: BlockList::new(MAX_BLOCKED),
            clock: DefaultClock::default(),
        }
    }

    /// How long the user or the address must still wait, if either is blocked.
    pub fn blocked(&self, user: &str, address: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        let by_user = self.blocked_users.remaining(user, now);
        let by_address = address.and_then(|a| self.blocked_addresses.remaining(&a, now));
        by_user.into_iter().chain(by_address).max()
    }

    /// Counts a failure; blocks the key whose allowance this failure used up, so that the
    /// allowance is exactly the number of failures answered as such (10 a minute means the
    /// 11th attempt is refused).
    pub fn record_failure(&self, user: &str, address: Option<IpAddr>) {
        let now = Instant::now();
        if let Some(wait) = self.count(&self.per_user, &user.to_string()) {
            self.blocked_users.block(user.to_string(), wait, now);
        }
        if let Some(address) = address {
            if let Some(wait) = self.count(&self.per_address, &address) {
                self.blocked_addresses.block(address, wait, now);
            }
        }
        self.per_user.retain_recent();
        self.per_address.retain_recent();
    }

    /// Uses one cell of `key`'s allowance; how long to block it if none is left afterwards.
    fn count<K: Hash + Eq + Clone>(
        &self,
        counter: &FailureCounter<K>,
        key: &K,
    ) -> Option<Duration> {
        match counter.check_key(key) {
            // The allowance is used up once this failure took the last cell. The next cell comes
            // one replenish interval later at the latest (sooner if the failures were spread out):
            // blocking for that interval errs towards refusing.
            Ok(state) if state.remaining_burst_capacity() == 0 => {
                Some(state.quota().replenish_interval())
            }
            Ok(_) => None,
            // Only reached by failures that raced past `blocked` at the same time.
            Err(not_until) => Some(not_until.wait_time_from(self.clock.now())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_the_allowance_and_only_that_key() {
        let limiter = FailedLoginLimiter::new(3, 100);
        let addr: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..2 {
            limiter.record_failure("alice", Some(addr));
            assert!(limiter.blocked("alice", Some(addr)).is_none());
        }
        // The 3rd failure uses up the allowance: the 4th attempt is refused.
        limiter.record_failure("alice", Some(addr));
        assert!(limiter.blocked("alice", Some(addr)).is_some());
        assert!(limiter.blocked("bob", Some(addr)).is_none());
    }

    #[test]
    fn the_address_allowance_counts_failures_of_every_user_name() {
        let limiter = FailedLoginLimiter::new(100, 3);
        let addr: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        for name in ["a", "b"] {
            limiter.record_failure(name, Some(addr));
            assert!(limiter.blocked("z", Some(addr)).is_none());
        }
        limiter.record_failure("c", Some(addr));
        assert!(limiter.blocked("z", Some(addr)).is_some());
        assert!(limiter.blocked("z", Some(other)).is_none());
    }

    #[test]
    fn a_full_block_list_makes_room_only_from_blocks_that_ran_out() {
        let list = BlockList::new(2);
        let now = Instant::now();
        list.block("expired", Duration::from_secs(1), now);
        list.block("active", Duration::from_secs(60), now);
        let later = now + Duration::from_secs(2);
        list.block("new", Duration::from_secs(60), later);
        assert!(list.remaining("active", later).is_some());
        assert!(list.remaining("new", later).is_some());
        assert!(list.remaining("expired", later).is_none());
        assert!(list.remaining("anyone", later).is_none(), "no overflow");
    }

    #[test]
    fn a_block_list_full_of_active_blocks_forgets_none_and_refuses_the_rest() {
        let list = BlockList::new(2);
        let now = Instant::now();
        list.block("a", Duration::from_secs(60), now);
        list.block("b", Duration::from_secs(60), now);
        list.block("c", Duration::from_secs(30), now);
        for key in ["a", "b", "c"] {
            assert!(list.remaining(key, now).is_some(), "{key} was forgotten");
        }
        // Until the unrecorded block has run out, keys the list cannot hold are refused too.
        assert!(list.remaining("d", now).is_some());
        let after = now + Duration::from_secs(31);
        assert!(list.remaining("d", after).is_none());
        assert!(list.remaining("a", after).is_some());
    }
}
