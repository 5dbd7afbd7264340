//! The simulated Standesamt through the `Transport` trait, as the engine uses it.

mod common;

use common::{outcome_of, signed_delivery, unsigned_delivery};
use meldewerk_transports::xpersonenstand::{RecordedOutcome, Simulator, SimulatorConfig};
use meldewerk_transports::{Inbox, Outcome, SimulatorError, Transport, TransportError};

/// Acknowledges at the first fetch, accepts unsigned messages unless a test says otherwise.
fn quick_config() -> SimulatorConfig {
    SimulatorConfig {
        ack_delay_ms: 0,
        require_signature: false,
        ..SimulatorConfig::default()
    }
}

/// Like [`quick_config`], with every acknowledgement held back for an hour.
fn holding_config() -> SimulatorConfig {
    SimulatorConfig {
        ack_delay_ms: 3_600_000,
        ..quick_config()
    }
}

/// Opens the office in `dir` ([`common::open_retrying`]).
fn open(dir: &tempfile::TempDir, config: SimulatorConfig) -> Simulator {
    common::open_retrying(|| Simulator::open(dir.path(), config.clone()))
}

#[tokio::test]
async fn same_key_twice_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    assert_eq!(office.name(), "xpersonenstand");

    let delivery = signed_delivery("k1");
    let first = common::accepted(office.submit(delivery.clone()).await);
    let second = common::accepted(office.submit(delivery.clone()).await);

    assert!(!first.duplicate);
    assert!(second.duplicate);
    assert_eq!(second.transport_ref, first.transport_ref);
    assert_eq!(second.accepted_at, first.accepted_at);

    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.repeat_submissions, 1);
    assert_eq!(received[0].delivered.body, delivery.body);
    assert_eq!(received[0].transport_ref, first.transport_ref);
}

#[tokio::test]
async fn concurrent_repeats_store_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    let delivery = unsigned_delivery("race");

    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let office = office.clone();
            let delivery = delivery.clone();
            tokio::spawn(async move { common::accepted(office.submit(delivery).await) })
        })
        .collect();
    let mut accepted = Vec::new();
    for task in tasks {
        accepted.push(task.await.unwrap());
    }

    assert_eq!(accepted.iter().filter(|a| !a.duplicate).count(), 1);
    assert!(accepted
        .iter()
        .all(|a| a.transport_ref == accepted[0].transport_ref));
    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.repeat_submissions, 15);
}

#[tokio::test]
async fn unsigned_message_is_rejected_when_signature_required() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, SimulatorConfig::default());

    let reason = common::refused(office.submit(unsigned_delivery("u1")).await);
    {
        assert!(
            reason.starts_with("Nachricht ist nicht signiert"),
            "{reason}"
        )
    }
    assert!(office.received().unwrap().is_empty());
}

#[tokio::test]
async fn tampered_body_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, SimulatorConfig::default());

    let mut delivery = signed_delivery("bad");
    delivery.body.push(b' ');
    let reason = common::refused(office.submit(delivery).await);
    assert!(reason.contains("ungültig"), "{reason}");
    assert!(office.received().unwrap().is_empty());
}

#[tokio::test]
async fn foreign_algorithm_is_rejected_even_when_signatures_are_optional() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());

    let mut delivery = signed_delivery("rsa");
    delivery.signature.as_mut().unwrap().algorithm = "RSA-PSS".to_owned();
    let reason = common::refused(office.submit(delivery).await);
    assert!(reason.contains("RSA-PSS"), "{reason}");
}

#[tokio::test]
async fn valid_ed25519_signature_is_accepted_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, SimulatorConfig::default());

    let delivery = signed_delivery("good");
    let accepted = common::accepted(office.submit(delivery.clone()).await);
    assert!(!accepted.duplicate);

    let stored = office.received().unwrap().remove(0);
    assert_eq!(stored.delivered.idempotency_key, "good");
    assert_eq!(stored.signature, delivery.signature);
    assert_eq!(stored.delivered.message_uuid, delivery.message_uuid);
    assert_eq!(stored.delivered.content_type, "application/xml");
    assert_eq!(stored.delivered.received_at, accepted.accepted_at);
    assert_eq!(stored.delivered.sha256_hex.len(), 64);
    assert!(stored.outcome.is_none());
    uuid::Uuid::parse_str(&stored.transport_ref).expect("transport ref is a UUID");
}

/// The engine's runtime may stop (a shutdown past its grace) while the office stores a delivery:
/// the message, once in the journal, is still scheduled for its decision by this office, not
/// only by the next one opened on the directory.
#[test]
fn a_delivery_whose_runtime_stops_while_it_is_stored_is_still_scheduled() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, holding_config());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let submitting = office.clone();
    runtime.spawn(async move { submitting.submit(unsigned_delivery("cut")).await });
    // Drive the runtime until the journal holds the message, then drop it with the delivery
    // still on its way (its answer waits for the flush).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while office.received().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the message never arrived"
        );
        runtime.block_on(tokio::task::yield_now());
    }
    drop(runtime);
    while office.undecided() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the message is in the journal but was never scheduled"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(office.undecided(), 1);
}

#[tokio::test]
async fn nothing_reaches_the_inbox_before_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, holding_config());
    let accepted = common::accepted(office.submit(unsigned_delivery("p")).await);
    for _ in 0..3 {
        assert_eq!(outcome_of(&office, &accepted.transport_ref).await, None);
    }
    assert!(office.received().unwrap()[0].outcome.is_none());
    assert_eq!(office.undecided(), 1);
}

#[tokio::test]
async fn acknowledgement_after_the_delay_carries_a_valid_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    let delivery = unsigned_delivery("ack");
    let accepted = common::accepted(office.submit(delivery.clone()).await);

    let status = outcome_of(&office, &accepted.transport_ref).await;
    let Some(Outcome::Success {
        receipt: meldewerk_transports::Receipt {
            bytes: receipt_pdf, ..
        },
        portal,
    }) = status
    else {
        panic!("expected acknowledgement, got {status:?}");
    };
    assert_eq!(office.undecided(), 0);
    assert_eq!(portal.as_deref(), Some("meldewerk-sim-xpersonenstand"));

    let path = dir.path().join("receipt.pdf");
    std::fs::write(&path, &receipt_pdf).unwrap();
    common::assert_qpdf_check(&path);
    let text = common::squeeze(&common::pdf_text(&path));
    let stored = office.received().unwrap().remove(0);
    for value in [
        &delivery.report_id,
        &delivery.message_uuid,
        &stored.delivered.sha256_hex,
        &accepted.transport_ref,
    ] {
        assert!(
            text.contains(value.as_str()),
            "{value} missing from receipt"
        );
    }
    assert!(text.contains("Empfangsbestätigung"));
    assert!(text.contains("TEST/MOCKRECEIPT"));
    assert!(matches!(
        stored.outcome,
        Some(RecordedOutcome::Acknowledged { receipt_pdf: ref pdf, .. }) if *pdf == receipt_pdf
    ));
}

#[tokio::test]
async fn the_journal_keeps_no_receipt_and_every_reader_gets_the_one_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    let delivery = unsigned_delivery("k-receipt");
    let accepted = common::accepted(office.submit(delivery).await);
    let Some(Outcome::Success { receipt, .. }) = outcome_of(&office, &accepted.transport_ref).await
    else {
        panic!("expected an acknowledgement");
    };
    let receipt_pdf = receipt.bytes;
    // Rendered again from the record, byte for byte, under the name the office had when it
    // decided, not the one it has now.
    office.set_config(SimulatorConfig {
        authority_name: "Standesamt Umbenannt".into(),
        ..quick_config()
    });
    for stored in [
        office.received().unwrap().remove(0),
        office
            .received_by_report("birthnotice", "report-k-receipt")
            .unwrap()
            .remove(0),
    ] {
        assert!(matches!(
            stored.outcome,
            Some(RecordedOutcome::Acknowledged { receipt_pdf: ref pdf, .. }) if *pdf == receipt_pdf
        ));
    }
    drop(office);
    let records = journal_records(&dir);
    assert_eq!(records[0]["outcome"]["status"], "acknowledged");
    assert!(records[0]["outcome"].get("receipt_pdf").is_none());
}

/// The office's journal records as JSON, read the way the journal reads them.
fn journal_records(dir: &tempfile::TempDir) -> Vec<serde_json::Value> {
    let journal: meldewerk_storage::Journal<serde_json::Value> =
        meldewerk_storage::Journal::open(dir.path(), "xpersonenstand").unwrap();
    journal.all().unwrap()
}

#[tokio::test]
async fn the_body_is_journaled_once_apart_from_the_record_its_decision_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    let delivery = unsigned_delivery("k-body");
    let body = delivery.body.clone();
    let accepted = common::accepted(office.submit(delivery.clone()).await);
    assert!(outcome_of(&office, &accepted.transport_ref).await.is_some());
    // A repeat compares against the body kept apart and changes nothing of it.
    assert!(common::accepted(office.submit(delivery).await).duplicate);
    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.body, body);
    assert_eq!(received[0].delivered.repeat_submissions, 1);
    drop(office);

    {
        let db = sled::Config::new().path(dir.path()).open().unwrap();
        let tree = db.open_tree("xpersonenstand").unwrap();
        let values: Vec<_> = tree.iter().values().map(Result::unwrap).collect();
        // A body this short is kept as it is (behind the two bytes that say so), not compressed.
        assert_eq!(
            values
                .iter()
                .filter(|v| v.windows(body.len()).any(|w| w == body.as_slice()))
                .count(),
            1,
            "the body is stored once"
        );
    }
    let records = journal_records(&dir);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["body"], "", "the record holds no body");
    assert_eq!(records[0]["outcome"]["status"], "acknowledged");
}

#[tokio::test]
async fn a_record_of_an_earlier_version_keeps_its_body_in_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let old = unsigned_delivery("k-old");
    {
        // As a version before the body was kept apart wrote it: inline, base64.
        let journal: meldewerk_storage::Journal<serde_json::Value> =
            meldewerk_storage::Journal::open(dir.path(), "xpersonenstand").unwrap();
        let record = serde_json::json!({
            "transport_ref": "t-old", "idempotency_key": "k-old", "module": "birthnotice",
            "report_id": "report-k-old", "message_uuid": old.message_uuid,
            "content_type": "application/xml",
            "body": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &old.body),
            "signature": null, "sha256_hex": "00", "received_at": "2026-11-01T10:00:00Z",
            "repeat_submissions": 0,
            "outcome": {"status": "acknowledged", "decided_at": "2026-11-01T10:00:02Z",
                        "portal": "p", "authority": "Standesamt Alt"}
        });
        journal
            .append_grouped(
                &record,
                &[("idempotency-key", "k-old"), ("transport-ref", "t-old")],
                &[("report", "report-k-old"), ("module", "birthnotice")],
            )
            .unwrap();
    }
    let office = open(&dir, quick_config());
    assert!(common::accepted(office.submit(old.clone()).await).duplicate);
    let new = unsigned_delivery("k-new");
    common::accepted(office.submit(new.clone()).await);
    let received = office.received().unwrap();
    assert_eq!(received.len(), 2);
    assert_eq!(
        (
            received[0].delivered.body.as_slice(),
            received[0].delivered.repeat_submissions
        ),
        (old.body.as_slice(), 1)
    );
    assert_eq!(received[1].delivered.body, new.body);
}

#[tokio::test]
async fn failure_rate_decides_rejection() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(
        &dir,
        SimulatorConfig {
            failure_rate: 1.0,
            ..quick_config()
        },
    );
    let failing = common::accepted(office.submit(unsigned_delivery("f1")).await);
    assert_eq!(
        outcome_of(&office, &failing.transport_ref).await,
        Some(Outcome::Failure {
            reason: "Standesamt: Nachricht abgelehnt (simuliert, Fehlerquote)".to_owned()
        })
    );

    office.set_config(SimulatorConfig {
        failure_rate: 0.0,
        ..office.config()
    });
    let passing = common::accepted(office.submit(unsigned_delivery("f2")).await);
    assert!(matches!(
        outcome_of(&office, &passing.transport_ref).await,
        Some(Outcome::Success { .. })
    ));
}

#[tokio::test]
async fn outcome_is_stable_across_fetches_config_changes_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let delivery = unsigned_delivery("stable");
    let (transport_ref, first) = {
        let office = open(&dir, quick_config());
        let accepted = common::accepted(office.submit(delivery.clone()).await);
        let first = outcome_of(&office, &accepted.transport_ref).await;
        assert!(matches!(first, Some(Outcome::Success { .. })));

        // A changed failure rate applies to undecided messages only.
        office.set_config(SimulatorConfig {
            failure_rate: 1.0,
            ..quick_config()
        });
        assert_eq!(outcome_of(&office, &accepted.transport_ref).await, first);
        (accepted.transport_ref, first)
    };

    // Reopening the same directory is what a restarted test harness sees after an engine crash.
    let office = open(
        &dir,
        SimulatorConfig {
            failure_rate: 1.0,
            ..quick_config()
        },
    );
    assert_eq!(outcome_of(&office, &transport_ref).await, first);
    let again = common::accepted(office.submit(delivery).await);
    assert!(again.duplicate);
    assert_eq!(again.transport_ref, transport_ref);
    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.repeat_submissions, 1);
}

#[tokio::test]
async fn an_unknown_cursor_is_told_apart_from_other_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    for cursor in ["1", "not-a-cursor", "-1"] {
        assert_eq!(
            office.acknowledgements(Some(cursor), 10).await.unwrap_err(),
            TransportError::UnknownCursor(format!(
                "{cursor:?} is not a position in this office's feed"
            ))
        );
    }
    // The start of an empty inbox is a cursor like any other.
    let empty = office.acknowledgements(None, 10).await.unwrap();
    assert!(empty.acknowledgements.is_empty() && !empty.more);
    assert_eq!(empty.cursor.as_deref(), Some("0"));
    assert!(office.acknowledgements(Some("0"), 10).await.is_ok());
}

#[tokio::test]
async fn the_inbox_hands_out_batches_since_a_cursor_in_the_order_of_decision() {
    let dir = tempfile::tempdir().unwrap();
    let mut refs = Vec::new();
    {
        let office = open(&dir, quick_config());
        for i in 0..5 {
            let accepted =
                common::accepted(office.submit(unsigned_delivery(&format!("b{i}"))).await);
            refs.push(accepted.transport_ref);
        }
        let first = office.acknowledgements(None, 2).await.unwrap();
        assert!(first.more);
        let again = office.acknowledgements(None, 2).await.unwrap();
        assert_eq!(again, first, "fetching does not consume");
        let second = office
            .acknowledgements(first.cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(second.more);
        let third = office
            .acknowledgements(second.cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(!third.more);
        let handed: Vec<String> = [first, second, third.clone()]
            .into_iter()
            .flat_map(|batch| batch.acknowledgements)
            .map(|ack| ack.transport_ref)
            .collect();
        let mut sorted = handed.clone();
        sorted.sort();
        let mut expected = refs.clone();
        expected.sort();
        assert_eq!(sorted, expected, "each message once");
        let end = office
            .acknowledgements(third.cursor.as_deref(), 2)
            .await
            .unwrap();
        assert!(end.acknowledgements.is_empty());
        assert_eq!(end.cursor, third.cursor, "an empty batch keeps the cursor");
    }
    // Reopened: the same cursor reads the same inbox.
    let office = open(&dir, quick_config());
    let all = office.acknowledgements(None, 100).await.unwrap();
    assert_eq!(all.acknowledgements.len(), 5);
}

#[tokio::test]
async fn undecided_messages_survive_a_restart_and_are_decided_by_the_new_delay() {
    let dir = tempfile::tempdir().unwrap();
    let long = holding_config();
    let transport_ref = {
        let office = open(&dir, long.clone());
        let accepted = common::accepted(office.submit(unsigned_delivery("u")).await);
        assert_eq!(outcome_of(&office, &accepted.transport_ref).await, None);
        accepted.transport_ref
    };
    let office = open(&dir, long);
    assert_eq!(office.undecided(), 1);
    assert_eq!(outcome_of(&office, &transport_ref).await, None);
    // A shorter delay set at run time applies to the messages waiting.
    office.set_config(quick_config());
    assert!(matches!(
        outcome_of(&office, &transport_ref).await,
        Some(Outcome::Success { .. })
    ));
    assert_eq!(office.undecided(), 0);
}

#[tokio::test]
async fn received_lists_in_order_and_filters_by_report() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    for key in ["a", "b", "c"] {
        common::accepted(office.submit(unsigned_delivery(key)).await);
    }
    let mut other_module = unsigned_delivery("d");
    other_module.module = "deathnotice".to_owned();
    other_module.report_id = "report-b".to_owned();
    common::accepted(office.submit(other_module).await);

    let keys: Vec<_> = office
        .received()
        .unwrap()
        .into_iter()
        .map(|m| m.delivered.idempotency_key)
        .collect();
    assert_eq!(keys, ["a", "b", "c", "d"]);

    let for_b = office
        .received_by_report("birthnotice", "report-b")
        .unwrap();
    assert_eq!(for_b.len(), 1);
    assert_eq!(for_b[0].delivered.idempotency_key, "b");
    assert!(office
        .received_by_report("birthnotice", "nope")
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn received_message_serialises_body_as_base64() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    common::accepted(office.submit(unsigned_delivery("json")).await);
    let json = serde_json::to_value(office.received().unwrap()).unwrap();
    let body = json[0]["body"].as_str().expect("body is a string");
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    assert_eq!(decoded, unsigned_delivery("json").body);
}

#[test]
fn second_open_of_a_journal_reports_locked() {
    let dir = tempfile::tempdir().unwrap();
    let _office = open(&dir, quick_config());
    let error = Simulator::open(dir.path(), quick_config()).unwrap_err();
    assert_eq!(error, SimulatorError::Locked(dir.path().to_path_buf()));
    assert!(error.to_string().contains("in use by another process"));
}

/// A message with the given contact channel and nationality codes, shaped like a 081021.
fn delivery_with_codes(key: &str, kanal: &str, staat: &str) -> meldewerk_transports::Delivery {
    let mut delivery = unsigned_delivery(key);
    delivery.module = "birthdata".to_owned();
    delivery.body = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<xpsw:portal2StA.Geburt.081021 xmlns:xpsw="http://xpsw.domap.de/xpsw2611">
<xpsw:mutter><xpsw:staatsangehoerigkeit><xpsw:code listURI="urn:de:bund:destatis:bevoelkerungsstatistik:schluessel:staatsangehoerigkeit" listVersionID="2023-02-24"><code>{staat}</code></xpsw:code></xpsw:staatsangehoerigkeit></xpsw:mutter>
<xpsw:kontaktdaten><kanal listURI="urn:de:xoev:codeliste:erreichbarkeit" listVersionID="1"><code>{kanal}</code></kanal><kennung>a@b.example</kennung></xpsw:kontaktdaten>
</xpsw:portal2StA.Geburt.081021>"#
    )
    .into_bytes();
    delivery
}

#[tokio::test]
async fn codes_outside_their_lists_are_refused_in_the_acknowledgement() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir, quick_config());
    let wrong = common::accepted(
        office
            .submit(delivery_with_codes("codes-wrong", "E-Mail", "DE"))
            .await,
    );
    assert_eq!(
        outcome_of(&office, &wrong.transport_ref).await,
        Some(Outcome::Failure {
            reason: "Standesamt: Nachricht abgelehnt, Codes außerhalb ihrer Codeliste: \
                     portal2StA.Geburt.081021/mutter/staatsangehoerigkeit/code: Code 'DE' der \
                     Liste urn:de:bund:destatis:bevoelkerungsstatistik:schluessel:staatsangehoerigkeit \
                     (Version 2023-02-24): kein Code der Liste; \
                     portal2StA.Geburt.081021/kontaktdaten/kanal: Code 'E-Mail' der Liste \
                     urn:de:xoev:codeliste:erreichbarkeit (Version 1): kein Code der Liste"
                .to_owned()
        })
    );
    let right = common::accepted(
        office
            .submit(delivery_with_codes("codes-right", "01", "000"))
            .await,
    );
    assert!(matches!(
        outcome_of(&office, &right.transport_ref).await,
        Some(Outcome::Success { .. })
    ));
}
