//! Acknowledgements recorded in batches from a transport's inbox: a waiting job is found by
//! transport and reference, a batch and its cursor are one transaction, and a batch recorded
//! twice (fetched again after a crash) finishes nothing twice.

use chrono::{TimeZone, Utc};
use meldewerk_storage::{Job, Outcome, Report, ReportKey, ReportStatus, SledStore, Store};

fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "klinik".into(),
        module: "birthnotice".into(),
        id: id.into(),
    }
}

/// Submits report `id` and records its delivery through `transport` under `transport_ref`.
async fn delivered(store: &SledStore, id: &str, transport: &str, transport_ref: &str) -> Job {
    let report = Report::new_pending(
        key(id),
        serde_json::json!({}),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    );
    let job = store.submit_report(report).await.unwrap();
    let now = Utc::now();
    store
        .record_delivered(&job, transport, transport_ref.into(), now, now)
        .await
        .unwrap();
    job
}

fn ack(transport_ref: &str) -> (String, Outcome) {
    let outcome = Outcome::Acknowledged {
        receipt_pdf: format!("%PDF {transport_ref}").into_bytes(),
        portal: Some("portal-a".into()),
    };
    (transport_ref.into(), outcome)
}

fn refused(transport_ref: &str, reason: &str) -> (String, Outcome) {
    let outcome = Outcome::Failed {
        reason: reason.into(),
    };
    (transport_ref.into(), outcome)
}

#[tokio::test]
async fn a_batch_finishes_exactly_the_waiting_jobs_it_names_and_moves_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let store = SledStore::open(&path).unwrap();
        assert_eq!(store.inbox_cursor("a").await.unwrap(), None);
        let one = delivered(&store, "one", "a", "r1").await;
        // The same reference from another transport is another message.
        delivered(&store, "other", "b", "r1").await;
        delivered(&store, "two", "a", "r2").await;
        delivered(&store, "three", "a", "r3").await;
        assert_eq!(store.outbox_len().await.unwrap(), 4);

        let batch = vec![
            ack("r1"),
            ack("not-ours"),
            refused("r2", "Standesamt unbekannt"),
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
        assert_eq!(one.receipt_pdf.as_deref(), Some(&b"%PDF r1"[..]));
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
            store.expire_finished_before("birthnotice", later).await.unwrap(),
            2
        );
    }
    // Reopened: the cursor and the waiting job are still there.
    let store = SledStore::open(&path).unwrap();
    assert_eq!(store.inbox_cursor("a").await.unwrap().as_deref(), Some("3"));
    let finished = store
        .record_acknowledgements("a", vec![ack("r3")], Some("4".into()), Utc::now())
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].key.id, "three");
}

#[tokio::test]
async fn a_message_delivered_again_waits_under_its_new_reference_and_a_discard_ends_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("db")).unwrap();
    let job = delivered(&store, "lost", "a", "old").await;
    // The transport had lost the message and took it again under a new reference.
    let now = Utc::now();
    store
        .record_delivered(&job, "a", "new".into(), now, now)
        .await
        .unwrap();
    let finished = store
        .record_acknowledgements("a", vec![ack("old")], Some("1".into()), now)
        .await
        .unwrap();
    assert!(finished.is_empty(), "the old reference waits no more");
    let finished = store
        .record_acknowledgements("a", vec![ack("new")], Some("2".into()), now)
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);

    // An operator discards a waiting job: its acknowledgement arriving later changes nothing.
    let job = delivered(&store, "discarded", "a", "r9").await;
    let discarded = Outcome::Failed {
        reason: "discarded by the operator".into(),
    };
    store.record_outcome(&job, discarded, now).await.unwrap();
    let finished = store
        .record_acknowledgements("a", vec![ack("r9")], Some("3".into()), now)
        .await
        .unwrap();
    assert!(finished.is_empty());
    let report = store.report(&key("discarded")).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(report.receipt_pdf, None);
}
