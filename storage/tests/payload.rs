//! A report's payload (submission, message body, receipt) is written once, apart from the state
//! that changes on the report's way; reports stored with their payload inline, as earlier
//! versions of the sled engine stored them, read and move on whole. What a report reads back
//! (receipt media type, result members, its state alone) is checked on every engine.

mod common;

use chrono::{TimeZone, Utc};
use common::engines::Place;
use common::{reopen, with_raw_db};
use meldewerk_storage::{
    AfterDelivery, Consumed, Outcome, Packing, PreparedMessage, Receipt, Report, ReportKey,
    ReportStatus, SledStore, Store,
};

fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: "birthnotice".into(),
        id: id.into(),
    }
}

fn raw_key(id: &str) -> Vec<u8> {
    format!("alice\0birthnotice\0{id}").into_bytes()
}

/// A submission of some 40 KB, so that a state that carried it could not go unnoticed.
fn report(id: &str) -> Report {
    Report::new_pending(
        key(id),
        serde_json::json!({ "kind": { "vorname": "Erika" }, "anlage": "S".repeat(40_000) }),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    )
}

fn message(id: &str) -> PreparedMessage {
    PreparedMessage {
        message_uuid: format!("uuid-{id}"),
        content_type: "application/xml".into(),
        body: format!("<nachricht>{}</nachricht>", "M".repeat(30_000)).into_bytes(),
        signature: None,
        prepared_at: Utc.timestamp_opt(1_700_000_001, 0).unwrap(),
        sender: None,
    }
}

fn receipt() -> Vec<u8> {
    [&b"%PDF-1.7 "[..], &[b'R'; 20_000]].concat()
}

fn receipt_base64() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(receipt())
}

/// Submits, stores the message, delivers and acknowledges report `id`; leaves it final.
async fn journey(store: &dyn Store, id: &str) {
    let job = store.dispatch_report(report(id)).await.unwrap();
    let job = store.begin_attempt(&job).await.unwrap();
    let stored = store.record_prepared(&job, message(id)).await.unwrap();
    assert_eq!(stored, message(id));
    let now = Utc::now();
    store
        .record_delivered(
            &job,
            "xpersonenstand",
            Some(format!("ref-{id}")),
            now,
            AfterDelivery::AwaitAck { resend_at: now },
        )
        .await
        .unwrap();
    let acknowledged = Outcome::Success {
        receipt: Receipt::pdf(receipt()),
        portal: Some("portal".into()),
    };
    let finished = store
        .record_acknowledgements(
            "xpersonenstand",
            vec![(format!("uuid-{id}"), acknowledged)],
            None,
            now,
        )
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
}

fn assert_whole(report: &Report, id: &str) {
    assert_eq!(report.status, ReportStatus::Success);
    assert_eq!(report.submission, self::report(id).submission);
    assert_eq!(report.message.as_ref().unwrap().body, message(id).body);
    assert_eq!(report.receipt.as_deref(), Some(&receipt()[..]));
}

#[tokio::test]
async fn the_state_is_written_without_the_payload_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    journey(&store, "geb-1").await;
    assert_whole(
        &store.report(&key("geb-1")).await.unwrap().unwrap(),
        "geb-1",
    );
    let result = store.report_result(&key("geb-1")).await.unwrap().unwrap();
    use base64::Engine as _;
    let expected = base64::engine::general_purpose::STANDARD.encode(receipt());
    assert_eq!(result.receipt_base64.as_deref(), Some(expected.as_str()));
    drop(store);

    with_raw_db(dir.path(), |db| {
        let state = db
            .open_tree("reports")
            .unwrap()
            .get(raw_key("geb-1"))
            .unwrap()
            .unwrap();
        assert!(state.len() < 2_000, "the state holds {} bytes", state.len());
        for (tree, size) in [("submissions", 40_000), ("messages", 30_000)] {
            // Packed: the mark of a packed value first, deflated far below the part's size.
            let part = db.open_tree(tree).unwrap().get(raw_key("geb-1")).unwrap();
            assert!(
                part.is_some_and(|p| p[0] == 0 && p.len() < size / 4),
                "{tree}"
            );
        }
        // Receipts are deflated too (with the fixed codes, quick to read at every poll).
        let receipts = db.open_tree("receipts").unwrap();
        let receipt_part = receipts.get(raw_key("geb-1")).unwrap().unwrap();
        assert_eq!(receipt_part[..2], [0, 1]);
        assert!(
            receipt_part.len() < receipt().len() / 4,
            "{} bytes",
            receipt_part.len()
        );
        // An earlier version kept them as they are behind the mark: such a receipt reads too.
        receipts
            .insert(raw_key("geb-1"), [&[0, 0][..], &receipt()].concat())
            .unwrap();
    });

    // Consuming answers with the receipt, and retention removes every part.
    let store = reopen(dir.path());
    let Consumed::Result(consumed) = store.consume_report(&key("geb-1")).await.unwrap() else {
        panic!("a final report is consumed");
    };
    assert_eq!(consumed.receipt_base64, Some(receipt_base64()));
    let expired = store
        .expire_finished_before("birthnotice", Utc::now() + chrono::Duration::days(1))
        .await
        .unwrap();
    assert_eq!(expired, 1);
    drop(store);
    with_raw_db(dir.path(), |db| {
        for tree in ["submissions", "messages", "receipts"] {
            assert!(
                db.open_tree(tree).unwrap().is_empty(),
                "{tree} after retention"
            );
        }
    });
}

/// A module whose payloads are packed quick gets its submission, message body and receipt
/// stored with LZ4; the others' stay deflated, and both read back whole, also after a reopen
/// that no longer names the module.
#[tokio::test]
async fn a_module_packed_quick_stores_its_payload_with_lz4_and_the_others_stay_deflated() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    store.pack_payloads("labreport", Packing::Quick);
    let lab = ReportKey {
        module: "labreport".into(),
        ..key("lab-1")
    };
    let job = store
        .dispatch_report(Report {
            key: lab.clone(),
            ..report("lab-1")
        })
        .await
        .unwrap();
    let job = store.begin_attempt(&job).await.unwrap();
    store.record_prepared(&job, message("lab-1")).await.unwrap();
    let now = Utc::now();
    let accepted = Outcome::Success {
        receipt: Receipt::pdf(receipt()),
        portal: None,
    };
    store
        .record_delivered(&job, "demis", None, now, AfterDelivery::Finished(accepted))
        .await
        .unwrap();
    journey(&store, "geb-1").await;
    let lab_report = store.report(&lab).await.unwrap().unwrap();
    assert_eq!(lab_report.status, ReportStatus::Success);
    assert_eq!(lab_report.submission, report("lab-1").submission);
    assert_eq!(lab_report.message.unwrap().body, message("lab-1").body);
    assert_eq!(lab_report.receipt.as_deref(), Some(&receipt()[..]));
    drop(store);

    with_raw_db(dir.path(), |db| {
        for tree in ["submissions", "messages", "receipts"] {
            let tree_of = db.open_tree(tree).unwrap();
            let quick = tree_of.get("alice\0labreport\0lab-1").unwrap().unwrap();
            assert_eq!(quick[..2], [0, 2], "{tree} of labreport: LZ4");
            let small = tree_of.get(raw_key("geb-1")).unwrap().unwrap();
            assert_eq!(small[..2], [0, 1], "{tree} of birthnotice: deflated");
        }
    });
    let store = reopen(dir.path());
    let lab_report = store.report(&lab).await.unwrap().unwrap();
    assert_eq!(lab_report.message.unwrap().body, message("lab-1").body);
    assert_whole(
        &store.report(&key("geb-1")).await.unwrap().unwrap(),
        "geb-1",
    );
}

/// A quick module's message is stored with LZ4 whichever way it comes: with the report at
/// dispatch, or built by the engine and stored with the first attempt's count.
#[tokio::test]
async fn a_quick_modules_message_is_packed_with_lz4_at_dispatch_and_with_the_first_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    store.pack_payloads("labreport", Packing::Quick);
    let lab = |id: &str| ReportKey {
        module: "labreport".into(),
        ..key(id)
    };
    store
        .dispatch_report(Report {
            key: lab("at-dispatch"),
            message: Some(message("at-dispatch")),
            ..report("at-dispatch")
        })
        .await
        .unwrap();
    let job = store
        .dispatch_report(Report {
            key: lab("at-attempt"),
            ..report("at-attempt")
        })
        .await
        .unwrap();
    let (job, stored) = store
        .begin_attempt_with_message(&job, message("at-attempt"))
        .await
        .unwrap();
    assert_eq!((job.attempts, stored), (1, message("at-attempt")));
    for id in ["at-dispatch", "at-attempt"] {
        let read = store.report(&lab(id)).await.unwrap().unwrap();
        assert_eq!(read.message.unwrap().body, message(id).body, "{id}");
    }
    drop(store);

    with_raw_db(dir.path(), |db| {
        let messages = db.open_tree("messages").unwrap();
        for id in ["at-dispatch", "at-attempt"] {
            let stored = messages
                .get(format!("alice\0labreport\0{id}"))
                .unwrap()
                .unwrap();
            assert_eq!(stored[..2], [0, 2], "the message of {id}: LZ4");
        }
    });
}

/// Receipts read by polls are kept decoded in memory; what a poll answers is still what the
/// report's state says: a read after retention or after consuming never gets a kept receipt.
#[tokio::test]
async fn receipts_read_again_answer_the_same_until_consumed_or_expired() {
    let dir = tempfile::tempdir().unwrap();
    // Caches of 2 MiB in all: 128 KiB for receipts, two generations of two of the 27 KB below.
    let store = SledStore::open_with_cache(dir.path(), 2 * 1024 * 1024).unwrap();
    let ids: Vec<String> = (0..6).map(|i| format!("poll-{i}")).collect();
    for id in &ids {
        journey(&store, id).await;
    }
    // Each report read three times in a row (kept after the first), then all of them in turn
    // (more than the cache holds).
    let reads = ids
        .iter()
        .flat_map(|id| [id; 3])
        .chain(ids.iter().cycle().take(12));
    for id in reads {
        let result = store.report_result(&key(id)).await.unwrap().unwrap();
        assert_eq!(result.receipt_base64, Some(receipt_base64()), "{id}");
    }
    // Read again, then consumed: the answer carries the receipt, later reads are refused.
    let peeked = store.report_result(&key("poll-0")).await.unwrap().unwrap();
    let Consumed::Result(consumed) = store.consume_report(&key("poll-0")).await.unwrap() else {
        panic!("a final report is consumed");
    };
    assert_eq!(consumed.receipt_base64, peeked.receipt_base64);
    assert!(
        store
            .report_result(&key("poll-0"))
            .await
            .unwrap()
            .unwrap()
            .polled
    );
    // Read again, then expired: the answer says so and carries no receipt.
    store.report_result(&key("poll-1")).await.unwrap().unwrap();
    store
        .expire_finished_before("birthnotice", Utc::now() + chrono::Duration::days(1))
        .await
        .unwrap();
    let expired = store.report_result(&key("poll-1")).await.unwrap().unwrap();
    assert!(expired.expired_at.is_some());
    assert_eq!(expired.receipt_base64, None);
}

#[tokio::test]
async fn a_report_stored_with_its_payload_inline_reads_and_moves_on_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    let job = store.dispatch_report(report("alt-1")).await.unwrap();
    drop(store);
    // What an earlier version stored: the whole report in one record, message included.
    with_raw_db(dir.path(), |db| {
        let mut inline = report("alt-1");
        inline.message = Some(message("alt-1"));
        let value = serde_json::to_vec(&inline).unwrap();
        db.open_tree("reports")
            .unwrap()
            .insert(raw_key("alt-1"), value)
            .unwrap();
        db.open_tree("submissions")
            .unwrap()
            .remove(raw_key("alt-1"))
            .unwrap();
        db.open_tree("awaiting")
            .unwrap()
            .insert("uuid-alt-1", &job.id.to_be_bytes()[..])
            .unwrap();
    });

    let store = reopen(dir.path());
    let read = store.report(&key("alt-1")).await.unwrap().unwrap();
    assert_eq!(read.submission, report("alt-1").submission);
    // The stored message stays the one delivered, byte for byte.
    let job = store.begin_attempt(&job).await.unwrap();
    let mut other = message("alt-1");
    other.body = b"<anders/>".to_vec();
    assert_eq!(
        store.record_prepared(&job, other).await.unwrap(),
        message("alt-1")
    );
    let now = Utc::now();
    store
        .record_delivered(
            &job,
            "xpersonenstand",
            Some("ref".into()),
            now,
            AfterDelivery::AwaitAck { resend_at: now },
        )
        .await
        .unwrap();
    let acknowledged = Outcome::Success {
        receipt: Receipt::pdf(receipt()),
        portal: None,
    };
    store
        .record_acknowledgements(
            "xpersonenstand",
            vec![("uuid-alt-1".into(), acknowledged)],
            None,
            now,
        )
        .await
        .unwrap();
    assert_whole(
        &store.report(&key("alt-1")).await.unwrap().unwrap(),
        "alt-1",
    );
    let Consumed::Result(consumed) = store.consume_report(&key("alt-1")).await.unwrap() else {
        panic!("a final report is consumed");
    };
    assert_eq!(consumed.receipt_base64, Some(receipt_base64()));
    store
        .expire_finished_before("birthnotice", now + chrono::Duration::days(1))
        .await
        .unwrap();
    let expired = store.report(&key("alt-1")).await.unwrap().unwrap();
    assert!(expired.expired_at.is_some());
    assert_eq!(
        (expired.submission, expired.message, expired.receipt),
        (None, None, None)
    );
}

#[tokio::test]
async fn a_stored_message_without_its_body_is_corrupt_never_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    let job = store.dispatch_report(report("ohne")).await.unwrap();
    store.record_prepared(&job, message("ohne")).await.unwrap();
    drop(store);
    with_raw_db(dir.path(), |db| {
        db.open_tree("messages")
            .unwrap()
            .remove(raw_key("ohne"))
            .unwrap();
    });
    let store = reopen(dir.path());
    let read = store.report(&key("ohne")).await;
    assert!(
        matches!(read, Err(meldewerk_storage::StoreError::Corrupt(_))),
        "{read:?}"
    );
    let again = store.record_prepared(&job, message("ohne")).await;
    assert!(
        matches!(again, Err(meldewerk_storage::StoreError::Corrupt(_))),
        "{again:?}"
    );
}

#[tokio::test]
async fn parts_written_before_they_were_packed_read_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let store = reopen(dir.path());
    journey(&store, "geb-raw").await;
    drop(store);
    // As the version before packing wrote them: the bytes themselves.
    let submission = serde_json::to_vec(&report("geb-raw").submission.unwrap()).unwrap();
    with_raw_db(dir.path(), |db| {
        for (tree, bytes) in [
            ("submissions", submission.clone()),
            ("messages", message("geb-raw").body),
            ("receipts", receipt()),
        ] {
            db.open_tree(tree)
                .unwrap()
                .insert(raw_key("geb-raw"), bytes)
                .unwrap();
        }
        db.flush().unwrap();
    });
    let store = reopen(dir.path());
    assert_whole(
        &store.report(&key("geb-raw")).await.unwrap().unwrap(),
        "geb-raw",
    );
    let result = store.report_result(&key("geb-raw")).await.unwrap().unwrap();
    assert_eq!(result.receipt_base64, Some(receipt_base64()));
}

/// A report decided at once: its delivery and its end are one transaction, its receipt keeps
/// its media type, and the members its module adds to results come back with every read.
async fn a_report_decided_at_once_keeps_its_receipt_type_and_result_members(place: Place) {
    let store = place.open().await;
    let mut dispatched = report("lab-1");
    dispatched
        .result_members
        .insert("diseaseCode".into(), "Influenza".into());
    let job = store.dispatch_report(dispatched).await.unwrap();
    let job = store.begin_attempt(&job).await.unwrap();
    store.record_prepared(&job, message("lab-1")).await.unwrap();
    let now = Utc::now();
    let receipt = Receipt {
        media_type: "application/xml".into(),
        bytes: b"<quittung/>".to_vec(),
    };
    let ended = store
        .record_delivered(
            &job,
            "reporting",
            Some("n-1".into()),
            now,
            AfterDelivery::Finished(Outcome::Success {
                receipt,
                portal: None,
            }),
        )
        .await
        .unwrap()
        .expect("the report ended with the answer");
    assert_eq!((ended.key, ended.failure), (key("lab-1"), None));
    assert!(
        store.job(job.id).await.unwrap().is_none(),
        "the job left the outbox"
    );

    drop(store);
    let store = place.open().await;
    let report = store.report(&key("lab-1")).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Success);
    assert_eq!(report.transport.as_deref(), Some("reporting"));
    assert_eq!(report.transport_ref.as_deref(), Some("n-1"));
    assert_eq!(report.receipt.as_deref(), Some(&b"<quittung/>"[..]));
    let peeked = store.report_result(&key("lab-1")).await.unwrap().unwrap();
    assert_eq!(
        peeked.receipt_media_type.as_deref(),
        Some("application/xml")
    );
    assert_eq!(peeked.result_members["diseaseCode"], "Influenza");
    let Consumed::Result(consumed) = store.consume_report(&key("lab-1")).await.unwrap() else {
        panic!("a final report is consumed");
    };
    assert_eq!(consumed.result_members, peeked.result_members);
    assert_eq!(
        consumed.receipt_media_type.as_deref(),
        Some("application/xml")
    );
}

async fn the_state_alone_is_read_for_every_stage_of_a_report(place: Place) {
    let store = place.open().await;
    assert_eq!(store.report_status(&key("absent")).await.unwrap(), None);
    store.dispatch_report(report("open")).await.unwrap();
    assert_eq!(
        store.report_status(&key("open")).await.unwrap(),
        Some(ReportStatus::Pending)
    );
    journey(&*store, "done").await;
    assert_eq!(
        store.report_status(&key("done")).await.unwrap(),
        Some(ReportStatus::Success)
    );
    // The state is the one a full read gives, and reading it consumes nothing.
    let result = store.report_result(&key("done")).await.unwrap().unwrap();
    assert_eq!(result.status, ReportStatus::Success);
    assert!(!result.polled);
    assert!(matches!(
        store.consume_report(&key("done")).await.unwrap(),
        Consumed::Result(_)
    ));
    assert_eq!(
        store.report_status(&key("done")).await.unwrap(),
        Some(ReportStatus::Success)
    );
}

contract_tests!(
    a_report_decided_at_once_keeps_its_receipt_type_and_result_members,
    the_state_alone_is_read_for_every_stage_of_a_report,
);
