//! What the simulated reporting system keeps in its journal and finds there again after a
//! restart: each registration with what its answer is made of, the answer written again for
//! every reader, and the records of earlier versions, which hold their answers.

mod common;
mod demis_support;

use base64::Engine as _;
use demis_support::*;
use meldewerk_fhir::answer::{self, AcceptedIds};
use meldewerk_fhir::RandomIds;
use meldewerk_storage::{Journal, Outcome, Receipt};
use meldewerk_transports::demis::{Decision, DemisConfig};
use meldewerk_transports::received::ReceivedQuery;
use meldewerk_transports::{Simulated, Transport};
use serde_json::{json, Value};

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The reporting system's journal in `dir`, opened while no simulator has it, its records as
/// JSON.
fn journal(dir: &tempfile::TempDir) -> Journal<Value> {
    Journal::open(dir.path(), "demis").unwrap()
}

#[tokio::test]
async fn a_restart_keeps_what_was_registered() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let demis = open(&dir, DemisConfig::default());
        finished(demis.submit(bed_delivery("k", "B")).await)
    };
    let demis = open(&dir, DemisConfig::default());
    let again = finished(demis.submit(bed_delivery("k", "B")).await);
    assert!(again.duplicate);
    assert_eq!(again.transport_ref, first.transport_ref);
    assert_eq!(again.outcome, first.outcome);
}

#[tokio::test]
async fn an_answer_is_journaled_as_what_it_is_made_of_and_written_the_same_for_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let delivery = bed_delivery("k-receipt", "BED-RECEIPT");
    let body = delivery.body.clone();
    let (pdf, transport_ref, document) = {
        let demis = open(&dir, DemisConfig::default());
        let accepted = finished(demis.submit(delivery.clone()).await);
        let transport_ref = accepted.transport_ref.clone().unwrap();
        let document = demis
            .recorded_answer(&transport_ref, None)
            .unwrap()
            .unwrap();
        // Answering the delivery just submitted, with the receipt it was handed: the same bytes,
        // that receipt carried as it is rather than made again.
        let Outcome::Success { receipt, .. } = &accepted.outcome else {
            panic!("{:?}", accepted.outcome);
        };
        let handed = demis.recorded_answer(&transport_ref, Some(receipt.clone()));
        assert_eq!(handed.unwrap().unwrap(), document);
        let marked = Receipt {
            media_type: receipt.media_type.clone(),
            bytes: b"%PDF-1.7 as handed".to_vec(),
        };
        let carried = demis
            .recorded_answer(&transport_ref, Some(marked.clone()))
            .unwrap();
        let Ok(answer::Answer::Accepted(carried)) = answer::read(&carried.unwrap()) else {
            panic!("the answer carries no receipt");
        };
        assert_eq!(carried.document, marked.bytes);
        (receipt_pdf(&accepted), transport_ref, document)
    };
    let Ok(answer::Answer::Accepted(receipt)) = answer::read(&document) else {
        panic!("the recorded answer carries no receipt");
    };
    assert_eq!(receipt.document, pdf);

    {
        let journal = journal(&dir);
        let records = journal.range(0, 10).unwrap();
        assert_eq!(records.len(), 1);
        let (seq, record) = &records[0];
        // The record keeps what the answer is made of, not the answer, nor the receipt in it;
        // the attachment is the body alone.
        assert!(record["decision"].get("answer").is_none(), "{record}");
        let made_of = &record["decision"]["made_of"];
        assert_eq!(
            made_of["report_type"],
            "Bettenbelegungsbericht (ReportBundle)"
        );
        assert_eq!(made_of["sender"], "Standort 987654, IK 261101015");
        let parameters: Value = serde_json::from_slice(&document).unwrap();
        let receipt_bundle = &parameters["parameter"][0]["resource"];
        assert_eq!(
            made_of["ids"]["composition"],
            receipt_bundle["entry"][0]["resource"]["id"]
        );
        assert_eq!(
            made_of["ids"]["binary"],
            receipt_bundle["entry"][2]["resource"]["id"]
        );
        assert!(
            !record.to_string().contains(&base64(&pdf[..90])),
            "{record}"
        );
        assert_eq!(journal.attachment(*seq).unwrap().unwrap(), body);
    }

    let demis = open(&dir, DemisConfig::default());
    assert_eq!(
        demis
            .recorded_answer(&transport_ref, None)
            .unwrap()
            .unwrap(),
        document,
        "the answer comes back as it was sent"
    );
    let again = finished(demis.submit(delivery).await);
    assert!(again.duplicate);
    assert_eq!(receipt_pdf(&again), pdf);
    // A repeat answered over HTTP with the receipt the repeat was handed: the same bytes.
    let Outcome::Success { receipt, .. } = again.outcome else {
        panic!("{:?}", again.outcome);
    };
    let repeated = demis.recorded_answer(&transport_ref, Some(receipt));
    assert_eq!(repeated.unwrap().unwrap(), document);
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    let record = &page.messages[0].1;
    assert_eq!(record.delivered.body, body);
    assert_eq!(record.delivered.repeat_submissions, 1);
    let Decision::Accepted { answer, made_of } = &record.decision else {
        panic!("{:?}", record.decision);
    };
    assert_eq!(answer.as_bytes(), document);
    assert_eq!(*made_of, None);
    // The received log, as operators read it.
    let logged = Simulated::received_page(&demis, &ReceivedQuery::default()).unwrap();
    let logged = &logged.messages[0].1;
    assert_eq!(
        logged["decision"]["answer"],
        serde_json::from_slice::<Value>(&document).unwrap()
    );
    assert!(logged["decision"].get("made_of").is_none(), "{logged}");
    drop(demis);

    // Counting the repeat wrote the record again: still what the answer is made of, not the
    // answer every reader was handed.
    let journal = journal(&dir);
    let records = journal.range(0, 10).unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0].1;
    assert_eq!(record["repeat_submissions"], 1);
    assert!(record["decision"].get("answer").is_none(), "{record}");
    assert_eq!(
        record["decision"]["made_of"]["sender"],
        "Standort 987654, IK 261101015"
    );
}

#[tokio::test]
async fn a_record_of_an_earlier_version_keeps_the_receipt_in_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let delivery = bed_delivery("k-old", "BED-OLD");
    let old_pdf = b"%PDF-1.7 the receipt of an earlier version".to_vec();
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-01T10:00:00+01:00").unwrap();
    let receipt = answer::Receipt {
        bundle_id: "bundle-old".into(),
        notification_id: "BED-OLD".into(),
        content_type: answer::PDF.into(),
        document: old_pdf.clone(),
    };
    let document = answer::accepted(&receipt, &AcceptedIds::draw(&mut RandomIds), now).to_json();
    // Answers compare as JSON: the journal reads a record's members through a tree.
    let as_json = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap();
    {
        // As a version before the receipt was kept apart wrote it: the answer whole, the
        // attachment only the body.
        let record = json!({
            "received_at": "2026-11-01T09:00:00Z", "transport_ref": "t-old",
            "report_id": "BED-OLD", "module": "bedreport", "idempotency_key": "k-old",
            "message_uuid": delivery.message_uuid, "content_type": delivery.content_type,
            "sha256_hex": "00", "repeat_submissions": 0,
            "bundle_profile": "ReportBundle", "bundle_id": "bundle-old",
            "notification_id": "BED-OLD",
            "decision": {
                "status": "accepted",
                "answer": as_json(&document)
            }
        });
        journal(&dir)
            .append_attached(
                &record,
                &delivery.body,
                &[("idempotency-key", "k-old"), ("transport-ref", "t-old")],
                &[("report", "BED-OLD"), ("module", "bedreport")],
            )
            .unwrap();
    }

    let demis = open(&dir, DemisConfig::default());
    let recorded = demis.recorded_answer("t-old", None).unwrap().unwrap();
    assert_eq!(as_json(&recorded), as_json(&document));
    // Its answer is whole: a receipt handed in changes nothing.
    let handed = Receipt {
        media_type: answer::PDF.into(),
        bytes: b"%PDF-1.7 handed in".to_vec(),
    };
    let answered = demis.recorded_answer("t-old", Some(handed)).unwrap();
    assert_eq!(answered.unwrap(), recorded);
    let again = finished(demis.submit(delivery.clone()).await);
    assert!(again.duplicate);
    assert_eq!(again.transport_ref.as_deref(), Some("t-old"));
    assert_eq!(receipt_pdf(&again), old_pdf);
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    assert_eq!(page.messages[0].1.delivered.body, delivery.body);
    assert!(matches!(
        &page.messages[0].1.decision,
        Decision::Accepted { answer, made_of: None } if answer.as_bytes() == recorded
    ));
}

/// An answer is written again from what its record keeps, so the same record must give the same
/// bytes in every later version: its SHA-256 is pinned (as the receipts' are in `receipt_pdf.rs`).
/// A change here changes what a repeat of an earlier notification is answered with.
#[test]
fn answer_bytes_stay_what_they_were() {
    let receipt = answer::Receipt {
        bundle_id: "00000000-0000-4000-8000-00000000000a".into(),
        notification_id: "LAB-2026-000123".into(),
        content_type: answer::PDF.into(),
        document: b"%PDF-1.7 receipt".to_vec(),
    };
    let ids = AcceptedIds {
        composition: "00000000-0000-4000-8000-0000000000c1".into(),
        binary: "00000000-0000-4000-8000-0000000000b1".into(),
    };
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-28T09:00:00+00:00").unwrap();
    let written = answer::accepted(&receipt, &ids, now).to_json();
    let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, &written));
    assert_eq!(
        digest,
        "5979b5796dba27947243edca3200d9a7a59ad9412e7967410b8d576f63f06457",
        "{}",
        String::from_utf8_lossy(&written)
    );
}
