//! Failed-login limits in the memory of one node (the sled engine's), per user name, per client
//! address, and per user name from one address.
//!
//! The rules are [`super`]'s; here they are kept with governor's keyed rate limiters, block
//! lists with an answer that needs no lock while nothing is blocked, and bounded maps.

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

/// Largest number of (user name, address) pairs remembered as known.
pub(super) const MAX_KNOWN: usize = 100_000;

/// A keyed rate limiter that reports the state after each accepted cell, so that the failure that
/// uses up the allowance can be recognised as such.
type FailureCounter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// A user name as sent from one client address.
type Pair = (String, IpAddr);

/// Counts failures and successes and tells whether a login is currently blocked.
pub(crate) struct MemoryLimiter {
    per_user: FailureCounter<String>,
    per_address: FailureCounter<IpAddr>,
    per_pair: FailureCounter<Pair>,
    blocked_users: BlockList<String>,
    blocked_addresses: BlockList<IpAddr>,
    blocked_pairs: BlockList<Pair>,
    known: KnownAddresses,
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

    /// Whether nothing is blocked (no lock taken).
    fn is_empty(&self) -> bool {
        self.len.load(Ordering::SeqCst) == 0
    }

    fn sync_len(&self, state: &BlockState<K>) {
        let len = state.map.len() + usize::from(state.overflow_until.is_some());
        self.len.store(len, Ordering::SeqCst);
    }

    fn remaining<Q: Hash + Eq + ?Sized>(&self, key: &Q, now: Instant) -> Option<Duration>
    where
        K: Borrow<Q>,
    {
        if self.is_empty() {
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

/// The addresses each user name logged in from recently, with when it last did.
///
/// Bounded: when full, entries older than the window go first, and if every entry is recent the
/// memory starts over. Forgetting a known address only means that it is treated like any other
/// while its name is blocked, which is the safe side. Only successful logins add entries, so a
/// guesser cannot fill it.
pub(super) struct KnownAddresses {
    state: Mutex<KnownState>,
    window: Duration,
    capacity: usize,
}

struct KnownState {
    /// Keyed by address first, so that a login refreshes its entry without allocating.
    by_address: HashMap<IpAddr, HashMap<String, Instant>>,
    len: usize,
}

impl KnownAddresses {
    pub(super) fn new(window: Duration, capacity: usize) -> Self {
        KnownAddresses {
            state: Mutex::new(KnownState {
                by_address: HashMap::new(),
                len: 0,
            }),
            window,
            capacity,
        }
    }

    pub(super) fn remember(&self, user: &str, address: IpAddr, now: Instant) {
        let mut state = self.state.lock().expect("limiter lock");
        if let Some(at) = state
            .by_address
            .get_mut(&address)
            .and_then(|users| users.get_mut(user))
        {
            *at = now;
            return;
        }
        if state.len >= self.capacity {
            let window = self.window;
            state.by_address.values_mut().for_each(|users| {
                users.retain(|_, at| now.saturating_duration_since(*at) < window)
            });
            state.by_address.retain(|_, users| !users.is_empty());
            state.len = state.by_address.values().map(HashMap::len).sum();
            if state.len >= self.capacity {
                state.by_address.clear();
                state.len = 0;
            }
        }
        state
            .by_address
            .entry(address)
            .or_default()
            .insert(user.to_owned(), now);
        state.len += 1;
    }

    pub(super) fn contains(&self, user: &str, address: IpAddr, now: Instant) -> bool {
        let state = self.state.lock().expect("limiter lock");
        state
            .by_address
            .get(&address)
            .and_then(|users| users.get(user))
            .is_some_and(|at| now.saturating_duration_since(*at) < self.window)
    }
}

impl MemoryLimiter {
    /// Allows `per_user` failures a minute per user name (from unknown addresses, and from any
    /// one address) and `per_address` per client address; an address that logged in as a user
    /// within `known_for` is known for that name.
    pub(crate) fn new(per_user: u32, per_address: u32, known_for: Duration) -> Self {
        MemoryLimiter {
            per_user: counter(per_user),
            per_address: counter(per_address),
            per_pair: counter(per_user),
            blocked_users: BlockList::new(MAX_BLOCKED),
            blocked_addresses: BlockList::new(MAX_BLOCKED),
            blocked_pairs: BlockList::new(MAX_BLOCKED),
            known: KnownAddresses::new(known_for, MAX_KNOWN),
            clock: DefaultClock::default(),
        }
    }

    /// How long a login as `user` from `address` must still wait, if it is blocked: when the
    /// name from that address used its allowance, or, unless the address is known for the name,
    /// when the name or the address did.
    pub(crate) fn blocked(&self, user: &str, address: Option<IpAddr>) -> Option<Duration> {
        let now = Instant::now();
        let Some(address) = address else {
            return self.blocked_users.remaining(user, now);
        };
        if self.blocked_users.is_empty()
            && self.blocked_addresses.is_empty()
            && self.blocked_pairs.is_empty()
        {
            return None;
        }
        let by_pair = self
            .blocked_pairs
            .remaining(&(user.to_owned(), address), now);
        let by_user = self.blocked_users.remaining(user, now);
        let by_address = self.blocked_addresses.remaining(&address, now);
        if (by_user.is_some() || by_address.is_some()) && self.known.contains(user, address, now) {
            return by_pair;
        }
        by_pair.into_iter().chain(by_user).chain(by_address).max()
    }

    /// Remembers that `user` logged in from `address`.
    pub(crate) fn record_success(&self, user: &str, address: Option<IpAddr>) {
        if let Some(address) = address {
            self.known.remember(user, address, Instant::now());
        }
    }

    /// Counts a failure; blocks each key whose allowance this failure used up, so that the
    /// allowance is exactly the number of failures answered as such (10 a minute means the
    /// 11th attempt is refused).
    pub(crate) fn record_failure(&self, user: &str, address: Option<IpAddr>) {
        let now = Instant::now();
        if let Some(wait) = self.count(&self.per_user, &user.to_string()) {
            self.blocked_users.block(user.to_string(), wait, now);
        }
        if let Some(address) = address {
            if let Some(wait) = self.count(&self.per_address, &address) {
                self.blocked_addresses.block(address, wait, now);
            }
            let pair = (user.to_string(), address);
            if let Some(wait) = self.count(&self.per_pair, &pair) {
                self.blocked_pairs.block(pair, wait, now);
            }
        }
        self.per_user.retain_recent();
        self.per_address.retain_recent();
        self.per_pair.retain_recent();
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

    const DAY: Duration = Duration::from_secs(86_400);

    fn address(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn a_known_address_keeps_its_access_while_the_name_is_blocked_elsewhere() {
        let limiter = MemoryLimiter::new(3, 100, DAY);
        let (operator, attacker, stranger) = (
            address("10.0.0.1"),
            address("203.0.113.9"),
            address("10.0.0.2"),
        );
        limiter.record_success("operator", operator);
        for _ in 0..3 {
            limiter.record_failure("operator", attacker);
        }
        assert!(limiter.blocked("operator", attacker).is_some());
        assert!(limiter.blocked("operator", stranger).is_some(), "unknown");
        assert!(limiter.blocked("operator", operator).is_none(), "known");
        // Known for that name only.
        assert!(limiter.blocked("operator", None).is_some());
    }

    #[test]
    fn a_known_address_is_still_limited_for_its_own_guesses() {
        let limiter = MemoryLimiter::new(3, 100, DAY);
        let office = address("10.0.0.1");
        limiter.record_success("klinik", office);
        for _ in 0..3 {
            limiter.record_failure("klinik", office);
        }
        assert!(limiter.blocked("klinik", office).is_some());
    }

    #[test]
    fn a_known_pair_is_exempt_from_its_address_block_but_other_names_are_not() {
        let limiter = MemoryLimiter::new(100, 3, DAY);
        let shared = address("10.0.0.1");
        limiter.record_success("klinik", shared);
        for name in ["a", "b", "c"] {
            limiter.record_failure(name, shared);
        }
        assert!(limiter.blocked("klinik", shared).is_none());
        assert!(limiter.blocked("labor", shared).is_some());
    }

    #[test]
    fn known_addresses_are_forgotten_after_the_window_and_bounded() {
        let known = KnownAddresses::new(Duration::from_secs(60), 2);
        let now = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        known.remember("klinik", a, now);
        assert!(known.contains("klinik", a, now + Duration::from_secs(59)));
        assert!(!known.contains("klinik", a, now + Duration::from_secs(60)));
        assert!(!known.contains("labor", a, now));
        // Full of live entries: it starts over rather than grow.
        known.remember("labor", a, now);
        known.remember("klinik", b, now);
        assert!(known.contains("klinik", b, now));
        assert!(!known.contains("klinik", a, now));
        // Full again, one entry stale: only that one goes.
        known.remember("labor", b, now + Duration::from_secs(61));
        let later = now + Duration::from_secs(61);
        known.remember("x", a, later);
        assert!(known.contains("labor", b, later));
        assert!(known.contains("x", a, later));
        assert!(!known.contains("klinik", b, later));
    }

    #[test]
    fn an_entry_exactly_as_old_as_the_window_is_stale_when_room_is_made() {
        let window = Duration::from_secs(60);
        let known = KnownAddresses::new(window, 2);
        let now = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        known.remember("old", a, now);
        known.remember("recent", a, now + window / 2);
        // Full; the oldest entry is exactly a window old: it goes, the recent one stays.
        known.remember("new", a, now + window);
        assert!(known.contains("recent", a, now + window));
        assert!(known.contains("new", a, now + window));
    }

    #[test]
    fn a_block_that_ends_exactly_now_makes_room() {
        let list = BlockList::new(1);
        let now = Instant::now();
        list.block("a", Duration::from_secs(10), now);
        let end = now + Duration::from_secs(10);
        list.block("b", Duration::from_secs(10), end);
        assert!(list.remaining("b", end).is_some());
        assert!(
            list.remaining("anyone", end).is_none(),
            "recorded, no overflow"
        );
    }

    #[test]
    fn blocks_after_the_allowance_and_only_that_key() {
        let limiter = MemoryLimiter::new(3, 100, DAY);
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
        let limiter = MemoryLimiter::new(100, 3, DAY);
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

    #[test]
    fn an_overflow_counts_as_a_block_of_its_own() {
        // One place, taken: the second block is the overflow alone, and must still be seen by
        // the answer that takes no lock.
        let list = BlockList::new(1);
        let now = Instant::now();
        list.block("a", Duration::from_secs(60), now);
        list.block("b", Duration::from_secs(30), now);
        assert!(!list.is_empty());
        assert!(list.remaining("b", now).is_some());
        assert!(list.remaining("anyone", now).is_some());
        // The overflow ends before the recorded block.
        let later = now + Duration::from_secs(31);
        assert!(list.remaining("anyone", later).is_none());
        assert!(list.remaining("a", later).is_some());
        assert!(list.remaining("a", now + Duration::from_secs(61)).is_none());
        assert!(list.is_empty());
    }
}
