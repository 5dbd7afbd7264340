//! A report dispatched with its message: the message is stored with the report, in the
//! transaction that stores the report and queues its job.

mod common;

use chrono::Utc;
use common::engines::Place;
use common::{message, t};
use meldewerk_storage::{JobKind, Outcome, Receipt, Report, ReportKey, StoreError};

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

async fn the_message_is_stored_with_the_report(place: Place) {
    let store = place.open().await;
    let job = store.dispatch_report(dispatched("r1")).await.unwrap();
    assert_eq!(job.kind, JobKind::Deliver);
    assert_eq!(job.attempts, 0, "nothing attempted yet");
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

async fn a_report_without_a_message_reads_whole_for_its_delivery(place: Place) {
    let store = place.open().await;
    let mut report = dispatched("r1");
    report.message = None;
    let job = store.dispatch_report(report).await.unwrap();
    assert_eq!(job.attempts, 0);
    let to_deliver = store.report_to_deliver(&key("r1")).await.unwrap().unwrap();
    assert_eq!(to_deliver.message, None);
    assert!(to_deliver.submission.is_some(), "the engine builds from it");
}

async fn an_acknowledgement_finds_a_report_dispatched_with_its_message(place: Place) {
    let store = place.open().await;
    store.dispatch_report(dispatched("r1")).await.unwrap();
    let acknowledged = Outcome::Success {
        receipt: Receipt::pdf(b"%PDF-1.7 receipt".to_vec()),
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

async fn the_message_survives_reopening(place: Place) {
    let store = place.open().await;
    let job = store.dispatch_report(dispatched("r1")).await.unwrap();
    drop(store);
    let store = place.open().await;
    let report = store.report_to_deliver(&key("r1")).await.unwrap().unwrap();
    assert_eq!(report.message, Some(message("uuid-r1")));
    let begun = store.begin_attempt(&job).await.unwrap();
    assert_eq!((begun.kind, begun.attempts), (JobKind::Deliver, 1));
}

async fn a_second_dispatch_of_the_same_report_stores_nothing(place: Place) {
    let store = place.open().await;
    store.dispatch_report(dispatched("r1")).await.unwrap();
    let mut again = dispatched("r1");
    again.message = Some(message("uuid-again"));
    assert!(matches!(
        store.dispatch_report(again).await,
        Err(StoreError::Conflict(_))
    ));
    let report = store.report(&key("r1")).await.unwrap().unwrap();
    assert_eq!(report.message, Some(message("uuid-r1")));
    assert_eq!(store.outbox_len().await.unwrap(), 1);
}

contract_tests!(
    the_message_is_stored_with_the_report,
    a_report_without_a_message_reads_whole_for_its_delivery,
    an_acknowledgement_finds_a_report_dispatched_with_its_message,
    the_message_survives_reopening,
    a_second_dispatch_of_the_same_report_stores_nothing,
);
