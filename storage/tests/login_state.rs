//! The login state the nodes on one PostgreSQL database share ([`LoginState`]), seen from two
//! stores on one database, as two nodes see it: a session opened through one is alive through
//! the other, ended or expired for both at once; failures counted through both use one allowance,
//! exactly, also when they race; a known login is known to both; the sweep leaves only what is
//! alive. (The sled engine's single node keeps this state in memory, in the service's `auth`
//! module, whose tests run the same journeys on both.)

use std::sync::Arc;
use std::time::Duration;

use meldewerk_storage::postgres::testing;
use meldewerk_storage::{Allowance, LoginState, PgSettings, PgStore, SessionRecord};

/// Two stores on one fresh database: node A and node B.
async fn two_nodes() -> (Arc<PgStore>, Arc<PgStore>) {
    let url = testing::cluster().fresh_database().await;
    let open = || async { Arc::new(PgStore::open(&PgSettings::new(url.clone())).await.unwrap()) };
    (open().await, open().await)
}

fn digest(n: u8) -> [u8; 32] {
    [n; 32]
}

fn session(user: &str) -> SessionRecord {
    SessionRecord {
        username: user.into(),
        key_id: format!("key-of-{user}"),
        csrf: format!("csrf-of-{user}"),
    }
}

const HOUR: Duration = Duration::from_secs(3600);

#[tokio::test]
async fn a_session_opened_on_one_node_lives_on_the_other_and_ends_for_both() {
    let (a, b) = two_nodes().await;
    a.open_session(&digest(1), &session("klinik"), HOUR)
        .await
        .unwrap();
    a.open_session(&digest(2), &session("praxis"), HOUR)
        .await
        .unwrap();
    assert_eq!(
        b.touch_session(&digest(1), HOUR).await.unwrap(),
        Some(session("klinik"))
    );
    assert_eq!(
        b.touch_session(&digest(2), HOUR).await.unwrap(),
        Some(session("praxis"))
    );
    assert_eq!(b.touch_session(&digest(3), HOUR).await.unwrap(), None);
    // Ended through B: gone on A too, and the other session stays.
    b.end_session(&digest(1)).await.unwrap();
    assert_eq!(a.touch_session(&digest(1), HOUR).await.unwrap(), None);
    assert_eq!(b.touch_session(&digest(1), HOUR).await.unwrap(), None);
    assert!(a.touch_session(&digest(2), HOUR).await.unwrap().is_some());
    // Ending what is not there is no error.
    a.end_session(&digest(1)).await.unwrap();
}

#[tokio::test]
async fn use_on_either_node_keeps_a_session_alive_and_idleness_ends_it_everywhere() {
    let (a, b) = two_nodes().await;
    let idle = Duration::from_millis(800);
    a.open_session(&digest(1), &session("klinik"), idle)
        .await
        .unwrap();
    // Used in turn on both, each use well within the idle time, over twice the idle time in all.
    for node in [&b, &a, &b, &a] {
        tokio::time::sleep(idle / 2).await;
        assert!(node
            .touch_session(&digest(1), idle)
            .await
            .unwrap()
            .is_some());
    }
    tokio::time::sleep(idle * 3 / 2).await;
    assert_eq!(b.touch_session(&digest(1), idle).await.unwrap(), None);
    assert_eq!(a.touch_session(&digest(1), idle).await.unwrap(), None);
}

#[tokio::test]
async fn failures_on_both_nodes_use_one_allowance_and_the_block_holds_on_both() {
    let (a, b) = two_nodes().await;
    let three = Allowance::per_minute(3); // a block lasts 20 s
    let (guessed, other) = (digest(7), digest(8));
    assert_eq!(a.count_failure(&guessed, three).await.unwrap(), None);
    assert_eq!(b.count_failure(&guessed, three).await.unwrap(), None);
    for node in [&a, &b] {
        assert_eq!(
            node.failure_blocks(&[(guessed, three)]).await.unwrap(),
            vec![None]
        );
    }
    // The third failure, on A, uses the allowance up: blocked for about an interval.
    let wait = a.count_failure(&guessed, three).await.unwrap().unwrap();
    assert!(
        wait > Duration::from_secs(19) && wait <= Duration::from_secs(20),
        "{wait:?}"
    );
    for node in [&a, &b] {
        let blocks = node
            .failure_blocks(&[(other, three), (guessed, three)])
            .await
            .unwrap();
        assert_eq!(blocks[0], None, "another key");
        let left = blocks[1].expect("blocked on both nodes");
        assert!(left > Duration::from_secs(19) && left <= wait, "{left:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_failures_on_two_nodes_are_counted_exactly() {
    let (a, b) = two_nodes().await;
    let ten = Allowance::per_minute(10);
    let key = digest(9);
    let mut racing = Vec::new();
    for n in 0..30 {
        let node: Arc<PgStore> = if n % 2 == 0 { a.clone() } else { b.clone() };
        racing.push(tokio::spawn(async move {
            node.count_failure(&key, ten).await.unwrap()
        }));
    }
    let mut unblocked = 0;
    for failure in racing {
        if failure.await.unwrap().is_none() {
            unblocked += 1;
        }
    }
    // Nine failures leave the key open; the tenth, whichever node counted it, blocks it, and so
    // does every later one. (Thirty failures within the test's second cannot have refilled one.)
    assert_eq!(unblocked, 9);
    let block = a.failure_blocks(&[(key, ten)]).await.unwrap()[0].unwrap();
    // However many came after the allowance, a block lasts one interval past the last failure.
    assert!(block <= ten.interval, "{block:?}");
}

#[tokio::test]
async fn a_block_runs_out_after_its_interval_on_both_nodes() {
    let (a, b) = two_nodes().await;
    // One failure per 0.6 s, two at once: blocked for 0.6 s after the second.
    let fast = Allowance {
        burst: 2,
        interval: Duration::from_millis(600),
    };
    let key = digest(4);
    assert_eq!(a.count_failure(&key, fast).await.unwrap(), None);
    assert!(b.count_failure(&key, fast).await.unwrap().is_some());
    assert!(a.failure_blocks(&[(key, fast)]).await.unwrap()[0].is_some());
    tokio::time::sleep(Duration::from_millis(700)).await;
    for node in [&a, &b] {
        assert_eq!(
            node.failure_blocks(&[(key, fast)]).await.unwrap(),
            vec![None]
        );
    }
    // One cell refilled: one more failure uses it up again.
    assert!(b.count_failure(&key, fast).await.unwrap().is_some());
}

#[tokio::test]
async fn a_login_known_on_one_node_is_known_on_the_other_until_its_time() {
    let (a, b) = two_nodes().await;
    let known_for = Duration::from_millis(600);
    assert!(!b.login_known(&digest(5)).await.unwrap());
    a.remember_login(&digest(5), known_for).await.unwrap();
    assert!(b.login_known(&digest(5)).await.unwrap());
    assert!(!b.login_known(&digest(6)).await.unwrap());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!a.login_known(&digest(5)).await.unwrap());
    // Remembered again: known again.
    b.remember_login(&digest(5), known_for).await.unwrap();
    assert!(a.login_known(&digest(5)).await.unwrap());
}

#[tokio::test]
async fn the_sweep_removes_what_ran_out_and_keeps_what_lives() {
    let (a, b) = two_nodes().await;
    let short = Duration::from_millis(300);
    let fast = Allowance {
        burst: 1,
        interval: short,
    };
    a.open_session(&digest(1), &session("gone"), short)
        .await
        .unwrap();
    a.open_session(&digest(2), &session("alive"), HOUR)
        .await
        .unwrap();
    a.count_failure(&digest(3), fast).await.unwrap();
    a.count_failure(&digest(4), Allowance::per_minute(1))
        .await
        .unwrap();
    a.remember_login(&digest(5), short).await.unwrap();
    a.remember_login(&digest(6), HOUR).await.unwrap();
    tokio::time::sleep(short * 2).await;
    // An expired session, a refilled counter and a stale known login.
    assert_eq!(b.sweep_login_state().await.unwrap(), 3);
    assert_eq!(
        b.sweep_login_state().await.unwrap(),
        0,
        "nothing left to sweep"
    );
    assert!(a.touch_session(&digest(2), HOUR).await.unwrap().is_some());
    assert!(a
        .failure_blocks(&[(digest(4), Allowance::per_minute(1))])
        .await
        .unwrap()[0]
        .is_some());
    assert!(a.login_known(&digest(6)).await.unwrap());
}
