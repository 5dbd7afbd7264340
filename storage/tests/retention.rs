//! The retention sweep (`expire_finished_before`) at volume: it expires exactly the module's
//! reports that finished before the cutoff (on every engine), reads only those, and works on a
//! sled database written before its index existed.

mod common;

use chrono::{DateTime, Duration, Utc};
use common::engines::Place;
use common::{reopen, t, with_raw_db};
use meldewerk_storage::{Outcome, Receipt, Report, ReportKey, Store};

const BIRTH: &str = "birthnotice";
const DEATH: &str = "deathnotice";

fn key(module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: module.into(),
        id: id.into(),
    }
}

fn report(module: &str, id: &str) -> Report {
    Report::new_pending(
        key(module, id),
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{module}-{id}"),
        t(0),
    )
}

/// Submits a report and records its acknowledgement at `finished_at`.
async fn finish(store: &dyn Store, module: &str, id: &str, finished_at: DateTime<Utc>) {
    let job = store.dispatch_report(report(module, id)).await.unwrap();
    let acknowledged = Outcome::Success {
        receipt: Receipt::pdf(b"%PDF-1.7".to_vec()),
        portal: None,
    };
    store
        .record_outcome(&job, acknowledged, finished_at)
        .await
        .unwrap();
}

async fn is_expired(store: &dyn Store, module: &str, id: &str) -> bool {
    let report = store.report(&key(module, id)).await.unwrap().unwrap();
    assert_eq!(
        report.expired_at.is_some(),
        report.submission.is_none(),
        "{module}/{id}: the payload goes exactly when the report expires"
    );
    report.expired_at.is_some()
}

async fn the_sweep_expires_exactly_the_modules_reports_finished_before_the_cutoff(place: Place) {
    let store = place.open().await;
    finish(&*store, BIRTH, "early", t(10)).await;
    finish(&*store, BIRTH, "later", t(20)).await;
    finish(&*store, BIRTH, "at-cutoff", t(30)).await;
    finish(&*store, BIRTH, "after", t(40)).await;
    finish(&*store, DEATH, "early", t(10)).await;
    store.dispatch_report(report(BIRTH, "open")).await.unwrap();
    // Two reports that finish in the same millisecond, one before a cutoff within it, one after.
    let millisecond = t(50);
    let micros = |us| millisecond + Duration::microseconds(us);
    finish(&*store, BIRTH, "same-ms-before", micros(300)).await;
    finish(&*store, BIRTH, "same-ms-after", micros(700)).await;

    assert_eq!(store.expire_finished_before(BIRTH, t(30)).await.unwrap(), 2);
    for (id, expired) in [
        ("early", true),
        ("later", true),
        ("at-cutoff", false),
        ("after", false),
        ("open", false),
    ] {
        assert_eq!(is_expired(&*store, BIRTH, id).await, expired, "{id}");
    }
    assert!(!is_expired(&*store, DEATH, "early").await);

    // Nothing is expired twice; the cutoff itself counts as not yet.
    assert_eq!(store.expire_finished_before(BIRTH, t(30)).await.unwrap(), 0);
    assert_eq!(
        store
            .expire_finished_before(BIRTH, t(30) + Duration::milliseconds(1))
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.expire_finished_before(DEATH, t(30)).await.unwrap(), 1);

    assert_eq!(
        store
            .expire_finished_before(BIRTH, micros(500))
            .await
            .unwrap(),
        2,
        "after and same-ms-before"
    );
    assert!(is_expired(&*store, BIRTH, "same-ms-before").await);
    assert!(!is_expired(&*store, BIRTH, "same-ms-after").await);
    assert_eq!(
        store
            .expire_finished_before(BIRTH, Utc::now() + Duration::days(1))
            .await
            .unwrap(),
        1
    );
    assert!(!is_expired(&*store, BIRTH, "open").await, "pending stays");
}

async fn a_sweep_over_more_reports_than_one_batch_expires_them_all(place: Place) {
    let store = place.open().await;
    // More than one batch of the sweep (256), each finishing in its own millisecond, and a few
    // in the cutoff's millisecond that are not due.
    let total = 600;
    for i in 0..total {
        finish(
            &*store,
            BIRTH,
            &format!("r{i:04}"),
            t(0) + Duration::milliseconds(i),
        )
        .await;
    }
    let cutoff = t(0) + Duration::milliseconds(total - 3);
    assert_eq!(
        store.expire_finished_before(BIRTH, cutoff).await.unwrap(),
        (total - 3) as usize
    );
    assert!(is_expired(&*store, BIRTH, "r0000").await);
    assert!(is_expired(&*store, BIRTH, &format!("r{:04}", total - 4)).await);
    assert!(!is_expired(&*store, BIRTH, &format!("r{:04}", total - 3)).await);
    assert_eq!(store.expire_finished_before(BIRTH, t(60)).await.unwrap(), 3);
}

#[tokio::test]
async fn the_sweep_reads_only_the_reports_that_are_due() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = reopen(&path);
        finish(&store, BIRTH, "due", t(10)).await;
        finish(&store, BIRTH, "recent", t(100)).await;
    }
    // A report the sweep has no business with, stored in bytes no decoder accepts: reading it
    // would fail the sweep.
    with_raw_db(&path, |db| {
        let reports = db.open_tree("reports").unwrap();
        reports
            .insert(b"alice\0birthnotice\0unreadable", &b"not a report"[..])
            .unwrap();
    });
    let store = reopen(&path);
    assert_eq!(store.expire_finished_before(BIRTH, t(50)).await.unwrap(), 1);
    assert!(is_expired(&store, BIRTH, "due").await);
    assert!(!is_expired(&store, BIRTH, "recent").await);
}

#[tokio::test]
async fn a_database_written_without_the_index_gets_it_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = reopen(&path);
        finish(&store, BIRTH, "old", t(10)).await;
        finish(&store, BIRTH, "gone-already", t(5)).await;
        finish(&store, BIRTH, "recent", t(100)).await;
        finish(&store, DEATH, "old", t(10)).await;
        store.dispatch_report(report(BIRTH, "open")).await.unwrap();
        assert_eq!(store.expire_finished_before(BIRTH, t(8)).await.unwrap(), 1);
    }
    // As an older version left the database: no index at all, and one damaged record, which
    // must not keep the store from opening.
    with_raw_db(&path, |db| {
        assert!(db.drop_tree("finished").unwrap());
        db.open_tree("reports")
            .unwrap()
            .insert(b"alice\0birthnotice\0unreadable", &b"{"[..])
            .unwrap();
    });
    let store = reopen(&path);
    assert_eq!(store.expire_finished_before(BIRTH, t(50)).await.unwrap(), 1);
    assert!(is_expired(&store, BIRTH, "old").await);
    assert!(!is_expired(&store, BIRTH, "recent").await);
    assert!(!is_expired(&store, DEATH, "old").await);
    assert_eq!(store.expire_finished_before(DEATH, t(50)).await.unwrap(), 1);
    assert_eq!(
        store.expire_finished_before(BIRTH, t(500)).await.unwrap(),
        1,
        "recent; the expired and the pending report are not indexed"
    );
    drop(store);

    // Built once: a later open finds the index complete and leaves it as the sweeps left it.
    let store = reopen(&path);
    assert_eq!(
        store.expire_finished_before(BIRTH, t(500)).await.unwrap(),
        0
    );
}

contract_tests!(
    the_sweep_expires_exactly_the_modules_reports_finished_before_the_cutoff,
    a_sweep_over_more_reports_than_one_batch_expires_them_all,
);
