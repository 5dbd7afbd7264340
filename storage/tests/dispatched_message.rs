//! A report dispatched with its message: the message is stored with the report and the job's
//! first attempt is counted in the same transaction, reserved to the store that counted it.

mod common;

use chrono::Utc;
use common::{message, reopen, t};
use meldewerk_storage::{JobKind, Outcome, Report, ReportKey, SledStore, Store, StoreError};

fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: "birthnotice".into(),
        id: id.into(),
    }
}

fn dispatched(id: &str) -> Report {
    let mut report = Report::new_pending(
        key(id),
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{id}"),
        t(0),
    );
    report.message = Some(message(&format!("uuid-{id}")));
    report
}

#[tokio::test]
async fn the_message_is_stored_and_the_first_attempt_counted_for_this_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let job = store.submit_report(dispatched("r1")).await.unwrap();
    assert_eq!(job.kind, JobKind::Deliver);
    assert_eq!(job.attempts, 1);
    assert_eq!(job.counted_by, Some(store.instance()));
    assert_eq!(store.job(job.id).await.unwrap(), Some(job.clone()));

    let whole = store.report(&key("r1")).await.unwrap().unwrap();
    assert_eq!(whole.message, Some(message("uuid-r1")));
    assert!(whole.submission.is_some());
    // A delivery reads the message, not the submission it was built from.
    let to_deliver = store.report_to_deliver(&key("r1")).await.unwrap().unwrap();
    assert_eq!(to_deliver.message, Some(message("uuid-r1")));
    assert_eq!(to_deliver.submission, None);

    // Storing another message keeps the one of the dispatch.
    let kept = store
        .record_prepared(&job, message("uuid-other"))
        .await
        .unwrap();
    assert_eq!(kept, message("uuid-r1"));
}

#[tokio::test]
async fn a_report_without_a_message_reads_whole_for_its_delivery() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let mut report = dispatched("r1");
    report.message = None;
    let job = store.submit_report(report).await.unwrap();
    assert_eq!((job.attempts, job.counted_by), (0, None));
    let to_deliver = store.report_to_deliver(&key("r1")).await.unwrap().unwrap();
    assert_eq!(to_deliver.message, None);
    assert!(to_deliver.submission.is_some(), "the engine builds from it");
}

#[tokio::test]
async fn an_acknowledgement_finds_a_report_dispatched_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    store.submit_report(dispatched("r1")).await.unwrap();
    let acknowledged = Outcome::Acknowledged {
        receipt_pdf: b"%PDF-1.7 receipt".to_vec(),
        portal: None,
    };
    let finished = store
        .record_acknowledgements(
            "xpersonenstand",
            vec![("uuid-r1".into(), acknowledged)],
            None,
            Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(store.outbox_len().await.unwrap(), 0);
}

#[tokio::test]
async fn every_change_of_the_job_ends_the_reservation() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();

    let job = store.submit_report(dispatched("r1")).await.unwrap();
    store
        .reschedule(&job, t(5), Some("busy".into()))
        .await
        .unwrap();
    let stored = store.job(job.id).await.unwrap().unwrap();
    assert_eq!((stored.attempts, stored.counted_by), (1, None));

    let job = store.submit_report(dispatched("r2")).await.unwrap();
    let begun = store.begin_attempt(&job).await.unwrap();
    assert_eq!((begun.attempts, begun.counted_by), (2, None));
    assert_eq!(store.job(job.id).await.unwrap(), Some(begun));

    let job = store.submit_report(dispatched("r3")).await.unwrap();
    let now = Utc::now();
    store
        .record_delivered(&job, "xpersonenstand", "ref-3".into(), now, now)
        .await
        .unwrap();
    let waiting = store.job(job.id).await.unwrap().unwrap();
    assert_eq!(
        (waiting.kind, waiting.counted_by),
        (JobKind::AwaitAck, None)
    );
}

#[tokio::test]
async fn a_store_opened_again_is_another_instance() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let job = store.submit_report(dispatched("r1")).await.unwrap();
    let first = store.instance();
    drop(store);
    let store = reopen(dir.path());
    assert_ne!(store.instance(), first);
    // The reservation stays stored; it is just no longer this store's.
    let stored = store.job(job.id).await.unwrap().unwrap();
    assert_eq!(stored.counted_by, Some(first));
}

#[tokio::test]
async fn a_second_dispatch_of_the_same_report_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    store.submit_report(dispatched("r1")).await.unwrap();
    let mut again = dispatched("r1");
    again.message = Some(message("uuid-again"));
    assert!(matches!(
        store.submit_report(again).await,
        Err(StoreError::Conflict(_))
    ));
    let report = store.report(&key("r1")).await.unwrap().unwrap();
    assert_eq!(report.message, Some(message("uuid-r1")));
    assert_eq!(store.outbox_len().await.unwrap(), 1);
}
