//! The outbox's two lanes: first-time deliveries are found before overdue acknowledgements,
//! however many of those there are, and an outbox written before the lanes is moved into them.

mod common;

use chrono::{Duration, TimeZone, Utc};
use common::with_raw_db;
use meldewerk_storage::{Job, JobKind, PreparedMessage, Report, ReportKey, SledStore, Store};

fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: "birthnotice".into(),
        id: id.into(),
    }
}

fn report(id: &str) -> Report {
    Report::new_pending(
        key(id),
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    )
}

/// Submits and delivers report `id`; its acknowledgement was due at `resend_at`.
async fn waiting(store: &SledStore, id: &str, resend_at: chrono::DateTime<Utc>) -> Job {
    let job = store.submit_report(report(id)).await.unwrap();
    let message = PreparedMessage {
        message_uuid: format!("uuid-{id}"),
        content_type: "application/xml".into(),
        body: b"<nachricht/>".to_vec(),
        signature: None,
        prepared_at: Utc::now(),
    };
    store.record_prepared(&job, message).await.unwrap();
    let delivered_at = resend_at - Duration::hours(1);
    store
        .record_delivered(
            &job,
            "xpersonenstand",
            format!("ref-{id}"),
            delivered_at,
            resend_at,
        )
        .await
        .unwrap();
    store.job(job.id).await.unwrap().unwrap()
}

fn ids(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|job| job.report.id.as_str()).collect()
}

#[tokio::test]
async fn new_deliveries_come_before_overdue_acknowledgements() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let long_ago = Utc::now() - Duration::hours(2);
    for i in 0..20 {
        let job = waiting(
            &store,
            &format!("alt-{i:02}"),
            long_ago + Duration::seconds(i),
        )
        .await;
        assert_eq!(job.kind, JobKind::AwaitAck);
    }
    store.submit_report(report("neu-1")).await.unwrap();
    store.submit_report(report("neu-2")).await.unwrap();

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
    waiting(&store, "spaeter", Utc::now() + Duration::hours(1)).await;
    assert_eq!(
        store
            .due_jobs(Utc::now(), 100, &|_| false)
            .await
            .unwrap()
            .len(),
        22
    );
}

#[tokio::test]
async fn an_outbox_written_before_the_lanes_is_moved_into_them_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let overdue = waiting(&store, "alt", Utc::now() - Duration::hours(1)).await;
    let new = store.submit_report(report("neu")).await.unwrap();
    drop(store);
    // Earlier versions keyed the outbox by due time and job id alone.
    with_raw_db(dir.path(), |db| {
        let outbox = db.open_tree("outbox").unwrap();
        let by_id = db.open_tree("outbox_by_id").unwrap();
        let entries: Vec<_> = outbox.iter().map(Result::unwrap).collect();
        for (key, value) in entries {
            outbox.remove(&key).unwrap();
            outbox.insert(&key[1..], value).unwrap();
            by_id.insert(&key[9..], &key[1..]).unwrap();
        }
    });

    let store = SledStore::open(dir.path()).unwrap();
    let due = store.due_jobs(Utc::now(), 10, &|_| false).await.unwrap();
    assert_eq!(ids(&due), ["neu", "alt"]);
    assert_eq!(store.begin_attempt(&new).await.unwrap().attempts, 1);
    assert_eq!(
        store.job(overdue.id).await.unwrap().unwrap().kind,
        JobKind::AwaitAck
    );
    drop(store);
    with_raw_db(dir.path(), |db| {
        let outbox = db.open_tree("outbox").unwrap();
        assert_eq!(outbox.len(), 2);
        assert!(outbox.iter().keys().all(|key| key.unwrap().len() == 17));
    });
}
