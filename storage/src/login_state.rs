//! End users' browser sessions and the counters of failed logins, kept where several nodes see
//! them: [`LoginState`].
//!
//! One node keeps this state in its memory (the service's `auth` module does, with the sled
//! engine): it is short-lived, lost harmlessly on a restart (a magic link opens a new session),
//! and asked on every request. Nodes sharing one database must share it too, or a session opened
//! on one node would be unknown on the next and a guesser could spread guesses over the nodes;
//! the PostgreSQL engine implements this trait for that. Only digests are stored: a session's
//! SHA-256 of its cookie value, a counter's SHA-256 of its key (a user name, an address), so that
//! the tables hold nothing a reader could log in with, nor the names guessers typed.
//!
//! Every time is the database's own clock, so that the nodes' clocks do not matter.

use std::time::Duration;

use async_trait::async_trait;

use crate::StoreResult;

/// What a session knows, besides its id (of which only the digest is stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    /// The API user the end user acts as.
    pub username: String,
    /// The user's memento key id when the session began (a password change replaces it).
    pub key_id: String,
    /// The token every form post of the session carries.
    pub csrf: String,
}

/// How many failures a key may have: `burst` at once, then one more every `interval` (the
/// generic cell rate algorithm, as a rate limiter counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allowance {
    /// Failures answered as such before the key is blocked (at least 1).
    pub burst: u32,
    /// How long until one more failure is allowed again.
    pub interval: Duration,
}

impl Allowance {
    /// `failures` a minute, all of them at once if they come at once.
    pub fn per_minute(failures: u32) -> Allowance {
        let burst = failures.max(1);
        Allowance {
            burst,
            interval: Duration::from_secs(60) / burst,
        }
    }

    /// How far ahead of now a key's theoretical arrival time may be without the key being
    /// blocked: one interval less than the whole burst (the failure that reaches the whole
    /// burst is the one that uses the allowance up).
    pub fn threshold(&self) -> Duration {
        self.interval * (self.burst - 1)
    }
}

/// Sessions and failed-login counters shared by the nodes on one database.
#[async_trait]
pub trait LoginState: Send + Sync + 'static {
    /// Stores a new session under the digest of its id, alive for `idle` from now.
    async fn open_session(
        &self,
        id_digest: &[u8; 32],
        session: &SessionRecord,
        idle: Duration,
    ) -> StoreResult<()>;
    /// The session under `id_digest` if it is alive, which keeps it alive for `idle` from now;
    /// `None` for an unknown, ended or expired one.
    async fn touch_session(
        &self,
        id_digest: &[u8; 32],
        idle: Duration,
    ) -> StoreResult<Option<SessionRecord>>;
    /// Ends the session under `id_digest` (nothing if there is none).
    async fn end_session(&self, id_digest: &[u8; 32]) -> StoreResult<()>;

    /// Counts one failure of the key under `key_digest`, atomically against every node's; how
    /// long the key is blocked afterwards, if this failure used up its allowance (or one made at
    /// the same moment elsewhere did).
    async fn count_failure(
        &self,
        key_digest: &[u8; 32],
        allowance: Allowance,
    ) -> StoreResult<Option<Duration>>;
    /// For each key (its digest and allowance), how long it is still blocked, if it is.
    async fn failure_blocks(
        &self,
        keys: &[([u8; 32], Allowance)],
    ) -> StoreResult<Vec<Option<Duration>>>;
    /// Marks the login under `key_digest` (a user name from an address) as known for
    /// `known_for` from now.
    async fn remember_login(&self, key_digest: &[u8; 32], known_for: Duration) -> StoreResult<()>;
    /// Whether the login under `key_digest` is known now.
    async fn login_known(&self, key_digest: &[u8; 32]) -> StoreResult<bool>;

    /// Removes expired sessions, counters that have refilled and known logins past their time;
    /// answers how many rows went. Engines also run it on their own now and then, so that the
    /// state stays bounded by what is alive.
    async fn sweep_login_state(&self) -> StoreResult<u64>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowance_per_minute_refills_one_failure_per_share_of_the_minute() {
        let ten = Allowance::per_minute(10);
        assert_eq!((ten.burst, ten.interval), (10, Duration::from_secs(6)));
        assert_eq!(ten.threshold(), Duration::from_secs(54));
        // None is no allowance at all: one failure, then blocked for the minute.
        let none = Allowance::per_minute(0);
        assert_eq!((none.burst, none.interval), (1, Duration::from_secs(60)));
        assert_eq!(none.threshold(), Duration::ZERO);
    }
}
