//! The limits as a login sees them, on both kinds of count: the same journeys in one node's
//! memory and in a PostgreSQL database, and what only a shared database gives: guesses spread
//! over two nodes count against one allowance.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use meldewerk_storage::postgres::testing;
use meldewerk_storage::LoginState;

use super::FailedLoginLimiter;
use crate::configuration::SecuritySettings;

const DAY: u64 = 86_400;

fn address(text: &str) -> Option<IpAddr> {
    Some(text.parse().unwrap())
}

fn settings(per_user: u32, per_address: u32) -> SecuritySettings {
    SecuritySettings {
        failed_logins_per_user_per_minute: per_user,
        failed_logins_per_address_per_minute: per_address,
        known_address_secs: DAY,
        ..SecuritySettings::default()
    }
}

/// A fresh PostgreSQL database's login state, as every node on it shares it.
async fn database() -> Arc<dyn LoginState> {
    Arc::new(testing::cluster().fresh_store().await)
}

/// One limiter in memory and one on a fresh database, both allowing `per_user` and
/// `per_address` failures a minute.
async fn both(per_user: u32, per_address: u32) -> [(&'static str, FailedLoginLimiter); 2] {
    let security = settings(per_user, per_address);
    [
        ("memory", FailedLoginLimiter::configured(&security)),
        (
            "postgres",
            FailedLoginLimiter::shared(&security, database().await, "api"),
        ),
    ]
}

#[actix_web::test]
async fn blocks_after_the_allowance_and_only_that_key() {
    for (kind, limiter) in both(3, 100).await {
        let here = address("127.0.0.1");
        for _ in 0..2 {
            limiter.record_failure("alice", here).await;
            assert!(limiter.blocked("alice", here).await.is_none(), "{kind}");
        }
        // The 3rd failure uses up the allowance: the 4th attempt is refused, for about the
        // minute's third that refills one failure.
        limiter.record_failure("alice", here).await;
        let wait = limiter.blocked("alice", here).await.expect(kind);
        assert!(
            wait > Duration::from_secs(15) && wait <= Duration::from_secs(20),
            "{kind}: {wait:?}"
        );
        assert!(limiter.blocked("bob", here).await.is_none(), "{kind}");
        // Without an address only the name counts; it is blocked all the same.
        assert!(limiter.blocked("alice", None).await.is_some(), "{kind}");
    }
}

#[actix_web::test]
async fn the_address_allowance_counts_failures_of_every_user_name() {
    for (kind, limiter) in both(100, 3).await {
        let (here, other) = (address("192.0.2.7"), address("192.0.2.8"));
        for name in ["a", "b"] {
            limiter.record_failure(name, here).await;
            assert!(limiter.blocked("z", here).await.is_none(), "{kind}");
        }
        limiter.record_failure("c", here).await;
        assert!(limiter.blocked("z", here).await.is_some(), "{kind}");
        assert!(limiter.blocked("z", other).await.is_none(), "{kind}");
    }
}

#[actix_web::test]
async fn a_known_address_keeps_its_access_while_the_name_is_blocked_elsewhere() {
    for (kind, limiter) in both(3, 100).await {
        let (operator, attacker, stranger) = (
            address("10.0.0.1"),
            address("203.0.113.9"),
            address("10.0.0.2"),
        );
        limiter.record_success("operator", operator).await;
        for _ in 0..3 {
            limiter.record_failure("operator", attacker).await;
        }
        assert!(
            limiter.blocked("operator", attacker).await.is_some(),
            "{kind}"
        );
        assert!(
            limiter.blocked("operator", stranger).await.is_some(),
            "{kind}"
        );
        assert!(
            limiter.blocked("operator", operator).await.is_none(),
            "{kind}"
        );
        // Known for that name only, and still limited for its own guesses.
        assert!(limiter.blocked("operator", None).await.is_some(), "{kind}");
        for _ in 0..3 {
            limiter.record_failure("operator", operator).await;
        }
        assert!(
            limiter.blocked("operator", operator).await.is_some(),
            "{kind}"
        );
    }
}

#[actix_web::test]
async fn guesses_spread_over_two_nodes_use_one_allowance_and_the_block_holds_on_both() {
    let state = database().await;
    let security = settings(4, 100);
    let a = FailedLoginLimiter::shared(&security, state.clone(), "api");
    let b = FailedLoginLimiter::shared(&security, state.clone(), "api");
    let here = address("198.51.100.4");
    for node in [&a, &b, &a] {
        node.record_failure("alice", here).await;
        assert!(a.blocked("alice", here).await.is_none());
        assert!(b.blocked("alice", here).await.is_none());
    }
    b.record_failure("alice", here).await;
    assert!(a.blocked("alice", here).await.is_some(), "blocked on A");
    assert!(b.blocked("alice", here).await.is_some(), "blocked on B");
    // A login known on one node is known on the other.
    let office = address("10.1.1.1");
    a.record_success("alice", office).await;
    assert!(b.blocked("alice", office).await.is_none());
    // Another scope (the operator's logins) counts on its own.
    let operators = FailedLoginLimiter::shared(&security, state, "operator");
    assert!(operators.blocked("alice", here).await.is_none());
}

#[actix_web::test]
async fn while_the_database_is_away_a_node_limits_on_its_own() {
    // A database address where nothing answers: every shared count fails.
    let gone = testing::unreached_store("host=/nonexistent/meldewerk dbname=none");
    let limiter = FailedLoginLimiter::shared(&settings(2, 100), Arc::new(gone), "api");
    let here = address("192.0.2.1");
    limiter.record_failure("alice", here).await;
    assert!(limiter.blocked("alice", here).await.is_none());
    limiter.record_failure("alice", here).await;
    assert!(limiter.blocked("alice", here).await.is_some());
}
