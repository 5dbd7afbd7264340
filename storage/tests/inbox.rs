//! Acknowledgements recorded in batches from a transport's inbox: a job is found by the UUID of
//! its message (from the moment the message is stored, so also before the acceptance is
//! recorded), a batch and its cursor are one transaction, and a batch recorded twice (fetched
//! again after a crash) finishes nothing twice.

use chrono::{TimeZone, Utc};
use meldewerk_storage::{
    AfterDelivery, Job, Outcome, PreparedMessage, Receipt, Report, ReportKey, ReportStatus, Store,
    StoreError,
};

mod common;
use common::engines::Place;

fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "klinik".into(),
        module: "birthnotice".into(),
        id: id.into(),
    }
}

/// Submits report `id` and stores its message, whose UUID is `uuid-<id>`.
async fn prepared(store: &dyn Store, id: &str) -> Job {
    let report = Report::new_pending(
        key(id),
        serde_json::json!({}),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    );
    let job = store.dispatch_report(report).await.unwrap();
    let message = PreparedMessage {
        message_uuid: format!("uuid-{id}"),
        content_type: "application/xml".into(),
        body: format!("<msg id=\"{id}\"/>").into_bytes(),
        signature: None,
        prepared_at: Utc::now(),
        sender: None,
    };
    store.record_prepared(&job, message).await.unwrap();
    job
}

/// [`prepared`], then its delivery recorded through `transport` under `transport_ref`.
async fn delivered(store: &dyn Store, id: &str, transport: &str, transport_ref: &str) -> Job {
    let job = prepared(store, id).await;
    deliver(store, &job, transport, transport_ref).await
}

/// Records `job`'s delivery through `transport` under `transport_ref`; the job as it is stored
/// then, waiting for its acknowledgement: what the engine and operators read next.
async fn deliver(store: &dyn Store, job: &Job, transport: &str, transport_ref: &str) -> Job {
    let now = Utc::now();
    store
        .record_delivered(
            job,
            transport,
            Some(transport_ref.into()),
            now,
            AfterDelivery::AwaitAck { resend_at: now },
        )
        .await
        .unwrap();
    store.job(job.id).await.unwrap().unwrap()
}

/// An acknowledgement of report `id`'s message.
fn ack(id: &str) -> (String, Outcome) {
    let outcome = Outcome::Success {
        receipt: Receipt::pdf(format!("%PDF {id}").into_bytes()),
        portal: Some("portal-a".into()),
    };
    (format!("uuid-{id}"), outcome)
}

/// A refusal of report `id`'s message.
fn refused(id: &str, reason: &str) -> (String, Outcome) {
    let outcome = Outcome::Failure {
        reason: reason.into(),
    };
    (format!("uuid-{id}"), outcome)
}

async fn a_batch_finishes_exactly_the_waiting_jobs_it_names_and_moves_the_cursor(place: Place) {
    {
        let store = place.open().await;
        assert_eq!(store.inbox_cursor("a").await.unwrap(), None);
        let one = delivered(&*store, "one", "a", "r1").await;
        // Delivered through another transport: transport a's inbox does not speak for it.
        delivered(&*store, "other", "b", "r1").await;
        delivered(&*store, "two", "a", "r2").await;
        delivered(&*store, "three", "a", "r3").await;
        assert_eq!(store.outbox_len().await.unwrap(), 4);

        let batch = vec![
            ack("one"),
            ack("not-ours"),
            ack("other"),
            refused("two", "Standesamt unbekannt"),
        ];
        let finished = store
            .record_acknowledgements("a", batch.clone(), Some("3".into()), Utc::now())
            .await
            .unwrap();
        let ids: Vec<(&str, Option<&str>)> = finished
            .iter()
            .map(|f| (f.key.id.as_str(), f.failure.as_deref()))
            .collect();
        assert_eq!(ids, [("one", None), ("two", Some("Standesamt unbekannt"))]);
        assert_eq!(finished[0].job, one.id);
        assert_eq!(store.inbox_cursor("a").await.unwrap().as_deref(), Some("3"));
        assert_eq!(store.inbox_cursor("b").await.unwrap(), None);
        assert_eq!(store.outbox_len().await.unwrap(), 2);

        let one = store.report(&key("one")).await.unwrap().unwrap();
        assert_eq!(one.status, ReportStatus::Success);
        assert_eq!(one.receipt.as_deref(), Some(&b"%PDF one"[..]));
        assert_eq!(one.portal.as_deref(), Some("portal-a"));
        assert_eq!(one.transport.as_deref(), Some("a"));
        let two = store.report(&key("two")).await.unwrap().unwrap();
        assert_eq!(two.status, ReportStatus::Failure);
        let other = store.report(&key("other")).await.unwrap().unwrap();
        assert_eq!(other.status, ReportStatus::Pending);

        // The same batch again (fetched again after a crash): nothing finishes twice.
        let again = store
            .record_acknowledgements("a", batch, Some("3".into()), Utc::now())
            .await
            .unwrap();
        assert!(again.is_empty());
        assert_eq!(store.outbox_len().await.unwrap(), 2);

        // Reports finished by a batch expire like any other final report.
        let later = Utc::now() + chrono::Duration::hours(1);
        assert_eq!(
            store
                .expire_finished_before("birthnotice", later)
                .await
                .unwrap(),
            2
        );
    }
    // Reopened: the cursor and the waiting job are still there.
    let store = place.open().await;
    assert_eq!(store.inbox_cursor("a").await.unwrap().as_deref(), Some("3"));
    let finished = store
        .record_acknowledgements("a", vec![ack("three")], Some("4".into()), Utc::now())
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].key.id, "three");
}

async fn an_acknowledgement_before_the_recorded_acceptance_finishes_the_report(place: Place) {
    let store = place.open().await;
    // The message is stored and on its way; the authority decides before the engine has
    // recorded its acceptance.
    let job = prepared(&*store, "quick").await;
    let now = Utc::now();
    let finished = store
        .record_acknowledgements("a", vec![ack("quick")], Some("1".into()), now)
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    let report = store.report(&key("quick")).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Success);
    // The acceptance arriving afterwards finds the job gone.
    let late = store
        .record_delivered(
            &job,
            "a",
            Some("r1".into()),
            now,
            AfterDelivery::AwaitAck { resend_at: now },
        )
        .await
        .unwrap_err();
    assert!(matches!(late, StoreError::NotFound(_)), "{late:?}");
    assert_eq!(store.outbox_len().await.unwrap(), 0);
}

async fn a_message_delivered_again_under_a_new_reference_and_a_discard_ends_the_wait(place: Place) {
    let store = place.open().await;
    let job = delivered(&*store, "lost", "a", "old").await;
    // The transport had lost the message and took it again under a new reference: the
    // acknowledgement names the message, whatever the reference.
    deliver(&*store, &job, "a", "new").await;
    let now = Utc::now();
    let finished = store
        .record_acknowledgements("a", vec![ack("lost")], Some("1".into()), now)
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    let report = store.report(&key("lost")).await.unwrap().unwrap();
    assert_eq!(report.transport_ref.as_deref(), Some("new"));

    // A copy of a job read before the engine moved it on is not the job any more: ending the
    // report through it is refused, and the report waits on.
    let stale = prepared(&*store, "moved-on").await;
    let now = Utc::now();
    store
        .record_delivered(
            &stale,
            "a",
            Some("r8".into()),
            now,
            AfterDelivery::AwaitAck { resend_at: now },
        )
        .await
        .unwrap();
    let refused = Outcome::Failure {
        reason: "discarded by the operator".into(),
    };
    let late = store
        .record_outcome(&stale, refused, now)
        .await
        .unwrap_err();
    assert!(matches!(late, StoreError::NotFound(_)), "{late:?}");
    let waiting = store.report(&key("moved-on")).await.unwrap().unwrap();
    assert_eq!(waiting.status, ReportStatus::Pending);

    // An operator discards a waiting job: its acknowledgement arriving later changes nothing.
    let job = delivered(&*store, "discarded", "a", "r9").await;
    let discarded = Outcome::Failure {
        reason: "discarded by the operator".into(),
    };
    store.record_outcome(&job, discarded, now).await.unwrap();
    let finished = store
        .record_acknowledgements("a", vec![ack("discarded")], Some("3".into()), now)
        .await
        .unwrap();
    assert!(finished.is_empty());
    let report = store.report(&key("discarded")).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(report.receipt, None);
}

async fn a_batch_of_none_of_ours_still_moves_the_cursor(place: Place) {
    let store = place.open().await;
    delivered(&*store, "one", "a", "r1").await;
    for (batch, cursor) in [(vec![ack("not-ours")], "1"), (vec![], "2")] {
        let finished = store
            .record_acknowledgements("a", batch, Some(cursor.into()), Utc::now())
            .await
            .unwrap();
        assert!(finished.is_empty());
        assert_eq!(
            store.inbox_cursor("a").await.unwrap().as_deref(),
            Some(cursor)
        );
    }
    // Without a cursor, nothing moves.
    store
        .record_acknowledgements("a", vec![], None, Utc::now())
        .await
        .unwrap();
    assert_eq!(store.inbox_cursor("a").await.unwrap().as_deref(), Some("2"));
    assert_eq!(store.outbox_len().await.unwrap(), 1);
}

async fn a_delivered_job_waits_without_the_error_of_an_earlier_attempt(place: Place) {
    let store = place.open().await;
    let job = prepared(&*store, "once-failed").await;
    let job = store.begin_attempt(&job).await.unwrap();
    store
        .reschedule(&job, Utc::now(), Some("connection refused".into()))
        .await
        .unwrap();
    let job = store.job(job.id).await.unwrap().unwrap();
    assert_eq!(job.last_error.as_deref(), Some("connection refused"));
    let waiting = deliver(&*store, &job, "a", "r1").await;
    assert_eq!(waiting.last_error, None);
    assert_eq!(waiting.attempts, 0);
}

contract_tests!(
    a_batch_finishes_exactly_the_waiting_jobs_it_names_and_moves_the_cursor,
    an_acknowledgement_before_the_recorded_acceptance_finishes_the_report,
    a_message_delivered_again_under_a_new_reference_and_a_discard_ends_the_wait,
    a_batch_of_none_of_ours_still_moves_the_cursor,
    a_delivered_job_waits_without_the_error_of_an_earlier_attempt,
);
