//! Failed-login limits per user name, per client address, and per user name from one address.
//!
//! Only failures are counted: a correct password never uses up the allowance. Once a key has
//! used its allowance, every attempt for it (even with the right password) is refused until the
//! allowance refills, which is what stops password guessing.
//!
//! A limit per user name alone would let anyone lock a user out by guessing from anywhere. So an
//! address that logged in as a user recently is *known* for that name (as OWASP's device cookies
//! mark a browser): failures elsewhere, which block the name and their own addresses, do not
//! block it. Its own guesses are still limited, by the allowance of the name from that address,
//! which applies to every address.
//!
//! Where the counts live depends on the store ([`FailedLoginLimiter`]): one node (sled) keeps
//! them in its memory (`memory.rs`); nodes sharing a PostgreSQL database keep them there
//! (`shared.rs`), so that guesses spread over the nodes count against one allowance and a block
//! holds on every node.

mod memory;
mod shared;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use meldewerk_storage::LoginState;

use crate::configuration::SecuritySettings;
use memory::MemoryLimiter;
use shared::SharedLimiter;

/// Counts failures and successes and tells whether a login is currently blocked.
pub struct FailedLoginLimiter {
    /// The node's own counts: all there is on one node, and where nodes sharing a database fall
    /// back to while it cannot be reached (so that a guesser is still limited per node).
    local: MemoryLimiter,
    /// The counts every node on the database shares, if the store is shared.
    shared: Option<SharedLimiter>,
}

impl FailedLoginLimiter {
    /// Allows `per_user` failures a minute per user name (from unknown addresses, and from any
    /// one address) and `per_address` per client address; an address that logged in as a user
    /// within `known_for` is known for that name. Counted in this node's memory.
    pub fn new(per_user: u32, per_address: u32, known_for: Duration) -> Self {
        FailedLoginLimiter {
            local: MemoryLimiter::new(per_user, per_address, known_for),
            shared: None,
        }
    }

    /// The limits configured in `security`, counted in this node's memory.
    pub fn configured(security: &SecuritySettings) -> Self {
        Self::new(
            security.failed_logins_per_user_per_minute,
            security.failed_logins_per_address_per_minute,
            Duration::from_secs(security.known_address_secs),
        )
    }

    /// The limits configured in `security`, counted in `state` with every node that shares it.
    /// `scope` keeps the counts of different logins apart (API users, operators, the metrics
    /// token), as separate limiters do on one node.
    pub fn shared(
        security: &SecuritySettings,
        state: Arc<dyn LoginState>,
        scope: &'static str,
    ) -> Self {
        FailedLoginLimiter {
            local: MemoryLimiter::new(
                security.failed_logins_per_user_per_minute,
                security.failed_logins_per_address_per_minute,
                Duration::from_secs(security.known_address_secs),
            ),
            shared: Some(SharedLimiter::new(security, state, scope)),
        }
    }

    /// How long a login as `user` from `address` must still wait, if it is blocked: when the
    /// name from that address used its allowance, or, unless the address is known for the name,
    /// when the name or the address did.
    pub async fn blocked(&self, user: &str, address: Option<IpAddr>) -> Option<Duration> {
        if let Some(shared) = &self.shared {
            match shared.blocked(user, address).await {
                Ok(wait) => return wait,
                Err(e) => unreachable_database(&e),
            }
        }
        self.local.blocked(user, address)
    }

    /// Remembers that `user` logged in from `address`.
    pub async fn record_success(&self, user: &str, address: Option<IpAddr>) {
        if let Some(shared) = &self.shared {
            match shared.record_success(user, address).await {
                Ok(()) => return,
                Err(e) => unreachable_database(&e),
            }
        }
        self.local.record_success(user, address)
    }

    /// Counts a failure; blocks each key whose allowance this failure used up, so that the
    /// allowance is exactly the number of failures answered as such (10 a minute means the
    /// 11th attempt is refused).
    pub async fn record_failure(&self, user: &str, address: Option<IpAddr>) {
        if let Some(shared) = &self.shared {
            match shared.record_failure(user, address).await {
                Ok(()) => return,
                Err(e) => unreachable_database(&e),
            }
        }
        self.local.record_failure(user, address)
    }
}

/// Logs that the shared counts could not be used. The node then limits with its own counts: a
/// guesser gets a node's allowance per node while the database is away, rather than none at all
/// (failing open) or a refusal of every login (failing closed, which would keep the operator out
/// of the health views just when they matter).
fn unreachable_database(e: &meldewerk_storage::StoreError) {
    tracing::warn!(error = %e, "failed-login counts not shared: the node counts on its own");
}

#[cfg(test)]
mod tests;
