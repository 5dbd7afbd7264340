//! The outbox's two lanes: first-time deliveries are found before overdue acknowledgements,
//! however many of those there are; one module's backlog hides no other module's jobs (on every
//! engine); and a sled outbox written in an earlier layout is rewritten into the current one.

mod common;

use chrono::{Duration, TimeZone, Utc};
use common::engines::Place;
use common::{message, reopen, with_raw_db};
use meldewerk_storage::{AfterDelivery, Job, JobKind, Report, ReportKey, Store};

fn key_in(module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: module.into(),
        id: id.into(),
    }
}

fn report(id: &str) -> Report {
    report_in("birthnotice", id)
}

fn report_in(module: &str, id: &str) -> Report {
    Report::new_pending(
        key_in(module, id),
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    )
}

/// Submits and delivers report `id`; its acknowledgement was due at `resend_at`.
async fn waiting(store: &dyn Store, id: &str, resend_at: chrono::DateTime<Utc>) -> Job {
    let job = store.dispatch_report(report(id)).await.unwrap();
    store
        .record_prepared(&job, message(&format!("uuid-{id}")))
        .await
        .unwrap();
    let delivered_at = resend_at - Duration::hours(1);
    store
        .record_delivered(
            &job,
            "xpersonenstand",
            Some(format!("ref-{id}")),
            delivered_at,
            AfterDelivery::AwaitAck { resend_at },
        )
        .await
        .unwrap();
    store.job(job.id).await.unwrap().unwrap()
}

fn ids(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|job| job.report.id.as_str()).collect()
}

async fn new_deliveries_come_before_overdue_acknowledgements(place: Place) {
    let store = place.open().await;
    let long_ago = Utc::now() - Duration::hours(2);
    for i in 0..20 {
        let job = waiting(
            &*store,
            &format!("alt-{i:02}"),
            long_ago + Duration::seconds(i),
        )
        .await;
        assert_eq!(job.kind, JobKind::AwaitAck);
    }
    store.dispatch_report(report("neu-1")).await.unwrap();
    store.dispatch_report(report("neu-2")).await.unwrap();

    // Due far later than the overdue acknowledgements, and still first; each lane has the
    // whole limit, so new reports never hide the overdue ones either.
    let due = store.due_jobs(Utc::now(), 3, &|_| false).await.unwrap();
    assert_eq!(ids(&due), ["neu-1", "neu-2", "alt-00", "alt-01", "alt-02"]);
    let due = store.due_jobs(Utc::now(), 1, &|_| false).await.unwrap();
    assert_eq!(ids(&due), ["neu-1", "alt-00"]);
    let all = store.due_jobs(Utc::now(), 100, &|_| false).await.unwrap();
    assert_eq!(all.len(), 22);
    assert_eq!(ids(&all)[2..5], ["alt-00", "alt-01", "alt-02"]);
    // Jobs being worked on are passed over and leave the limit to the others.
    let first = due[0].id;
    let skipping = store
        .due_jobs(Utc::now(), 2, &|id| id == first)
        .await
        .unwrap();
    assert_eq!(ids(&skipping), ["neu-2", "alt-00", "alt-01"]);
    // An acknowledgement not yet due is not listed.
    waiting(&*store, "spaeter", Utc::now() + Duration::hours(1)).await;
    assert_eq!(
        store
            .due_jobs(Utc::now(), 100, &|_| false)
            .await
            .unwrap()
            .len(),
        22
    );
}

async fn one_modules_backlog_hides_no_other_modules_jobs(place: Place) {
    let store = place.open().await;
    let long_ago = Utc::now() - Duration::hours(2);
    // An old backlog in "birthnotice", in both lanes, then one new job of each other module.
    for i in 0..10 {
        waiting(
            &*store,
            &format!("alt-{i}"),
            long_ago + Duration::seconds(i),
        )
        .await;
        store
            .dispatch_report(report(&format!("neu-{i}")))
            .await
            .unwrap();
    }
    store
        .dispatch_report(report_in("deathnotice", "tod-1"))
        .await
        .unwrap();
    store
        .dispatch_report(report_in("a-first", "a-1"))
        .await
        .unwrap();

    let due = store.due_jobs(Utc::now(), 2, &|_| false).await.unwrap();
    assert_eq!(
        ids(&due),
        ["a-1", "neu-0", "neu-1", "tod-1", "alt-0", "alt-1"],
        "each module's oldest, module by module, new deliveries first"
    );
    // Passing over a module's jobs being worked on leaves its limit to its next ones.
    let busy = due[1].id;
    let due = store
        .due_jobs(Utc::now(), 1, &|id| id == busy)
        .await
        .unwrap();
    assert_eq!(ids(&due), ["a-1", "neu-1", "tod-1", "alt-0"]);
}

/// Rewrites every outbox key of the store in `dir` with `layout` (of the current key), the
/// way an earlier version wrote them.
fn rewrite_outbox(dir: &std::path::Path, layout: impl Fn(&[u8]) -> Vec<u8>) {
    with_raw_db(dir, |db| {
        let outbox = db.open_tree("outbox").unwrap();
        let by_id = db.open_tree("outbox_by_id").unwrap();
        let entries: Vec<_> = outbox.iter().map(Result::unwrap).collect();
        for (key, value) in entries {
            let old = layout(&key);
            outbox.remove(&key).unwrap();
            outbox.insert(old.as_slice(), value).unwrap();
            by_id.insert(&key[key.len() - 8..], old.as_slice()).unwrap();
        }
    });
}

/// An earlier layout's key, made of the current one.
type Layout = fn(&[u8]) -> Vec<u8>;

/// The outbox keys' earlier layouts, from a current key: both ended in the due time and the job
/// id (16 bytes), first without anything before them, then after the lane's byte.
const EARLIER_LAYOUTS: [(&str, Layout); 2] = [
    ("unlaned", |key| key[key.len() - 16..].to_vec()),
    ("laned", |key| [&key[..1], &key[key.len() - 16..]].concat()),
];

#[tokio::test]
async fn an_outbox_of_an_earlier_layout_is_rewritten_at_open() {
    for (name, layout) in EARLIER_LAYOUTS {
        let dir = tempfile::tempdir().unwrap();
        let store = reopen(dir.path());
        let overdue = waiting(&store, "alt", Utc::now() - Duration::hours(1)).await;
        let new = store.dispatch_report(report("neu")).await.unwrap();
        let other = store
            .dispatch_report(report_in("deathnotice", "tod"))
            .await
            .unwrap();
        drop(store);
        let mut current = Vec::new();
        with_raw_db(dir.path(), |db| {
            let outbox = db.open_tree("outbox").unwrap();
            current = outbox.iter().keys().map(|k| k.unwrap().to_vec()).collect();
        });
        rewrite_outbox(dir.path(), layout);

        let store = reopen(dir.path());
        let due = store.due_jobs(Utc::now(), 10, &|_| false).await.unwrap();
        assert_eq!(ids(&due), ["neu", "tod", "alt"], "{name}");
        assert_eq!(
            store.begin_attempt(&new).await.unwrap().attempts,
            1,
            "{name}"
        );
        assert_eq!(
            store.begin_attempt(&other).await.unwrap().attempts,
            1,
            "{name}"
        );
        assert_eq!(
            store.job(overdue.id).await.unwrap().unwrap().kind,
            JobKind::AwaitAck,
            "{name}"
        );
        drop(store);
        with_raw_db(dir.path(), |db| {
            let outbox = db.open_tree("outbox").unwrap();
            let keys: Vec<Vec<u8>> = outbox.iter().keys().map(|k| k.unwrap().to_vec()).collect();
            assert_eq!(keys, current, "{name}: the current layout, and only that");
        });
    }
}

#[tokio::test]
async fn a_job_that_cannot_be_read_is_passed_over_and_the_others_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    let broken = store.dispatch_report(report("kaputt")).await.unwrap();
    store.dispatch_report(report("heil")).await.unwrap();
    store
        .dispatch_report(report_in("deathnotice", "tod"))
        .await
        .unwrap();
    drop(store);
    with_raw_db(dir.path(), |db| {
        let by_id = db.open_tree("outbox_by_id").unwrap();
        let key = by_id.get(broken.id.to_be_bytes()).unwrap().unwrap();
        db.open_tree("outbox")
            .unwrap()
            .insert(key, &b"{not json"[..])
            .unwrap();
    });

    // Before, the first unreadable job failed every scan, and no module delivered anything.
    let store = reopen(dir.path());
    let due = store.due_jobs(Utc::now(), 10, &|_| false).await.unwrap();
    assert_eq!(ids(&due), ["heil", "tod"]);
}

#[tokio::test]
async fn an_unreadable_job_of_an_earlier_layout_is_rekeyed_and_passed_over() {
    for (name, layout) in EARLIER_LAYOUTS {
        let dir = tempfile::tempdir().unwrap();
        let store = reopen(dir.path());
        // Waiting for its acknowledgement: a lane other than the first.
        let broken = waiting(&store, "kaputt", Utc::now() - Duration::hours(1)).await;
        store.dispatch_report(report("heil")).await.unwrap();
        drop(store);
        let mut lane = 0;
        with_raw_db(dir.path(), |db| {
            let by_id = db.open_tree("outbox_by_id").unwrap();
            let key = by_id.get(broken.id.to_be_bytes()).unwrap().unwrap();
            lane = key[0];
            assert_ne!(lane, 0);
            db.open_tree("outbox")
                .unwrap()
                .insert(key, &b"{not json"[..])
                .unwrap();
        });
        rewrite_outbox(dir.path(), layout);

        let store = reopen(dir.path());
        let due = store.due_jobs(Utc::now(), 10, &|_| false).await.unwrap();
        assert_eq!(ids(&due), ["heil"], "{name}");
        drop(store);
        // Under the empty module name, in its lane (the first for a key without one), its
        // index pointing at it.
        with_raw_db(dir.path(), |db| {
            let by_id = db.open_tree("outbox_by_id").unwrap();
            let key = by_id.get(broken.id.to_be_bytes()).unwrap().unwrap();
            let expected_lane = if name == "laned" { lane } else { 0 };
            assert_eq!(&key[..2], &[expected_lane, 0], "{name}");
            assert_eq!(key.len(), 18, "{name}");
            assert!(key.ends_with(&broken.id.to_be_bytes()), "{name}");
            let outbox = db.open_tree("outbox").unwrap();
            assert_eq!(outbox.get(&key).unwrap().unwrap().as_ref(), b"{not json");
        });
    }
}

contract_tests!(
    new_deliveries_come_before_overdue_acknowledgements,
    one_modules_backlog_hides_no_other_modules_jobs,
);
