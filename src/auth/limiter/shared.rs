//! Failed-login limits counted in the database every node shares ([`LoginState`]): the same keys
//! and rules as [`super::memory`], each key's count one row that every node's failures move
//! atomically, on the database's clock. The keys are stored as SHA-256 digests (of the scope,
//! the kind, and the name or address), so that the table does not hold what guessers typed.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use meldewerk_storage::{Allowance, LoginState, StoreResult};

use super::memory::{KnownAddresses, MAX_KNOWN};
use crate::configuration::SecuritySettings;

/// How often one node writes that a known address logged in again, at most: every
/// authenticated API request logs in, and the database needs to hear of it only now and then to
/// keep the address known (a tenth of the time it stays known, and at most once a minute).
fn refresh_after(known_for: Duration) -> Duration {
    (known_for / 10).min(Duration::from_secs(60))
}

/// The shared counts of one kind of login.
pub(super) struct SharedLimiter {
    state: Arc<dyn LoginState>,
    scope: &'static str,
    per_user: Allowance,
    per_address: Allowance,
    known_for: Duration,
    /// The logins this node wrote as known lately, so that it need not write them again yet.
    written: KnownAddresses,
}

/// What a digest is of.
#[derive(Clone, Copy)]
enum Kind {
    /// A user name's failures from anywhere.
    User,
    /// An address's failures under any name.
    Address,
    /// A user name's failures from one address.
    Pair,
    /// A user name that logged in from an address.
    Known,
}

impl SharedLimiter {
    pub(super) fn new(
        security: &SecuritySettings,
        state: Arc<dyn LoginState>,
        scope: &'static str,
    ) -> Self {
        let known_for = Duration::from_secs(security.known_address_secs);
        SharedLimiter {
            state,
            scope,
            per_user: Allowance::per_minute(security.failed_logins_per_user_per_minute),
            per_address: Allowance::per_minute(security.failed_logins_per_address_per_minute),
            known_for,
            written: KnownAddresses::new(refresh_after(known_for), MAX_KNOWN),
        }
    }

    /// The digest a key is stored under: its parts with their lengths, so that no two keys
    /// (a user name holding what looks like an address, say) share one.
    fn digest(&self, kind: Kind, user: Option<&str>, address: Option<IpAddr>) -> [u8; 32] {
        let kind = match kind {
            Kind::User => "user",
            Kind::Address => "address",
            Kind::Pair => "pair",
            Kind::Known => "known",
        };
        let address = address.map(|a| a.to_string());
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        for part in [Some(self.scope), Some(kind), user, address.as_deref()] {
            let part = part.unwrap_or("");
            context.update(&(part.len() as u64).to_be_bytes());
            context.update(part.as_bytes());
        }
        context
            .finish()
            .as_ref()
            .try_into()
            .expect("SHA-256 has 32 bytes")
    }

    /// As [`super::memory::MemoryLimiter::blocked`], on the shared counts: one query for the
    /// three keys, and one more only when the name or the address is blocked (whether the
    /// address is known for the name).
    pub(super) async fn blocked(
        &self,
        user: &str,
        address: Option<IpAddr>,
    ) -> StoreResult<Option<Duration>> {
        let by_user = (self.digest(Kind::User, Some(user), None), self.per_user);
        let Some(address) = address else {
            return Ok(self.state.failure_blocks(&[by_user]).await?[0]);
        };
        let keys = [
            (
                self.digest(Kind::Pair, Some(user), Some(address)),
                self.per_user,
            ),
            by_user,
            (
                self.digest(Kind::Address, None, Some(address)),
                self.per_address,
            ),
        ];
        let blocks = self.state.failure_blocks(&keys).await?;
        let (by_pair, by_user, by_address) = (blocks[0], blocks[1], blocks[2]);
        if by_user.is_some() || by_address.is_some() {
            let known = self.digest(Kind::Known, Some(user), Some(address));
            if self.state.login_known(&known).await? {
                return Ok(by_pair);
            }
        }
        Ok(by_pair.into_iter().chain(by_user).chain(by_address).max())
    }

    /// Marks the address known for the name, unless this node did so lately.
    pub(super) async fn record_success(
        &self,
        user: &str,
        address: Option<IpAddr>,
    ) -> StoreResult<()> {
        let Some(address) = address else {
            return Ok(());
        };
        let now = Instant::now();
        if self.written.contains(user, address, now) {
            return Ok(());
        }
        let known = self.digest(Kind::Known, Some(user), Some(address));
        self.state.remember_login(&known, self.known_for).await?;
        self.written.remember(user, address, now);
        Ok(())
    }

    /// Counts a failure against the name, the address and the pair. A block needs no record
    /// of its own: it is how far a count has run ahead, which every node reads alike.
    pub(super) async fn record_failure(
        &self,
        user: &str,
        address: Option<IpAddr>,
    ) -> StoreResult<()> {
        let by_user = self.digest(Kind::User, Some(user), None);
        self.state.count_failure(&by_user, self.per_user).await?;
        if let Some(address) = address {
            let by_address = self.digest(Kind::Address, None, Some(address));
            self.state
                .count_failure(&by_address, self.per_address)
                .await?;
            let pair = self.digest(Kind::Pair, Some(user), Some(address));
            self.state.count_failure(&pair, self.per_user).await?;
        }
        Ok(())
    }
}
