//! The simulated reporting system (DEMIS) through the `Transport` trait, as the engine uses it:
//! what it accepts with a receipt, what it refuses and why, one registration per idempotency key,
//! the script and the received log (what survives a restart: `demis_journal.rs`).

mod common;
mod demis_support;

use demis_support::*;
use meldewerk_fhir::answer;
use meldewerk_transports::demis::{Decision, DemisConfig, Simulator, KIND};
use meldewerk_transports::received::ReceivedQuery;
use meldewerk_transports::script::{Effect, Rule};
use meldewerk_transports::{Delivery, Outcome, Simulated, Transport, TransportError};
use serde_json::{json, Value};

#[tokio::test]
async fn an_accepted_report_gets_its_receipt_and_the_answer_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    assert_eq!(demis.name(), "demis");
    assert!(demis.inbox().is_none(), "it decides at once");

    let answer = finished(demis.submit(bed_delivery("k1", "BED-2026-0001")).await);
    assert!(!answer.duplicate);
    let transport_ref = answer.transport_ref.clone().expect("a reference");
    let pdf = receipt_pdf(&answer);

    // The receipt: a valid PDF naming the report and the notification.
    let file = dir.path().join("receipt.pdf");
    std::fs::write(&file, &pdf).unwrap();
    common::assert_qpdf_check(&file);
    let text = common::squeeze(&common::pdf_text(&file));
    assert!(text.contains("BED-2026-0001"), "{text}");
    assert!(
        text.contains("Bettenbelegungsbericht(ReportBundle)"),
        "{text}"
    );
    assert!(text.contains("Standort987654,IK261101015"), "{text}");

    // The whole `Parameters` answer is recorded, its receipt the same PDF.
    let document = demis
        .recorded_answer(&transport_ref, None)
        .unwrap()
        .unwrap();
    let parameters: Value = serde_json::from_slice(&document).unwrap();
    assert_eq!(parameters["resourceType"], "Parameters");
    let Ok(answer::Answer::Accepted(receipt)) = answer::read(&document) else {
        panic!("the recorded answer carries no receipt");
    };
    assert_eq!(receipt.document, pdf);
    assert_eq!(receipt.notification_id, "BED-2026-0001");
    assert_eq!(demis.recorded_answer("no-such-ref", None).unwrap(), None);

    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 1);
    let record = &page.messages[0].1;
    assert_eq!(record.delivered.module, "bedreport");
    assert_eq!(record.delivered.report_id, "BED-2026-0001");
    assert_eq!(record.bundle_profile.as_deref(), Some("ReportBundle"));
    assert_eq!(record.notification_id.as_deref(), Some("BED-2026-0001"));
    assert_eq!(record.delivered.body, bed_report_body_of(&demis));
    assert!(matches!(record.decision, Decision::Accepted { .. }));
}

/// The body the one received record holds (read back through the received log).
fn bed_report_body_of(demis: &Simulator) -> Vec<u8> {
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    let body = page.messages[0].1.delivered.body.clone();
    assert!(body.starts_with(b"{"), "the body is kept");
    body
}

#[tokio::test]
async fn the_demis_examples_of_notifications_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    for (n, name) in [
        "LaboratoryNotificationExample.json",
        "DiseaseHospitalizationNotificationExample.json",
        "BedOccupancyExample.json",
    ]
    .into_iter()
    .enumerate()
    {
        let body = serde_json::to_vec(&example(name)).unwrap();
        let answer = finished(
            demis
                .submit(delivery(&format!("e{n}"), "m", "r", body))
                .await,
        );
        receipt_pdf(&answer);
    }
}

/// The reasons the simulator gives for `body`, one per line.
async fn refusal(body: Vec<u8>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    let answer = finished(demis.submit(delivery("k", "labreport", "r", body)).await);
    assert_eq!(answer.transport_ref, None);
    reason(&answer).to_owned()
}

fn lab_example_with(change: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut bundle = example("LaboratoryNotificationExample.json");
    change(&mut bundle);
    serde_json::to_vec(&bundle).unwrap()
}

/// The position of the first entry of `resource_type` in a bundle.
fn entry_of(bundle: &Value, resource_type: &str) -> usize {
    bundle["entry"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["resource"]["resourceType"] == resource_type)
        .unwrap()
}

#[tokio::test]
async fn a_wrong_bundle_type_is_refused() {
    let body = lab_example_with(|b| b["type"] = json!("collection"));
    assert_eq!(refusal(body).await, "Bundle.type must be document");
}

#[tokio::test]
async fn a_bundle_without_a_known_profile_is_refused() {
    let body = lab_example_with(|b| {
        b["meta"]["profile"] = json!(["https://example.org/StructureDefinition/Other"])
    });
    assert_eq!(
        refusal(body).await,
        "Bundle.meta.profile names none of NotificationBundleLaboratory, \
         NotificationBundleDisease, ReportBundle"
    );
}

#[tokio::test]
async fn a_missing_required_resource_is_refused() {
    let body = lab_example_with(|b| {
        let specimen = entry_of(b, "Specimen");
        b["entry"].as_array_mut().unwrap().remove(specimen);
    });
    let reason = refusal(body).await;
    assert!(
        reason.contains("names no entry of the bundle") && reason.contains("Specimen/"),
        "{reason}"
    );
}

#[tokio::test]
async fn an_unknown_notifier_is_refused() {
    let body = lab_example_with(|b| {
        let text = serde_json::to_string(b)
            .unwrap()
            .replace("98765430", "111111111");
        *b = serde_json::from_str(&text).unwrap();
    });
    assert_eq!(
        refusal(body).await,
        "the notifier's BSNR 111111111 is not a facility registered with the reporting system"
    );
    assert_eq!(
        refusal(bed_report("B", "123123", Some("999999999"))).await,
        "the hospital location 123123 is not registered with the reporting system\n\
         the institution code (IK) 999999999 is not registered with the reporting system"
    );
    // A report without an IK is not refused for it.
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    let body = bed_report("B", "987654", None);
    receipt_pdf(&finished(demis.submit(delivery("k", "b", "B", body)).await));
}

#[tokio::test]
async fn the_known_notifiers_come_from_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let config = DemisConfig {
        known_location_ids: vec!["123123".into()],
        ..DemisConfig::default()
    };
    let demis = open(&dir, config);
    let body = bed_report("B", "123123", None);
    receipt_pdf(&finished(
        demis.submit(delivery("k1", "b", "B", body)).await,
    ));
    let body = bed_report("B", "987654", None);
    assert_eq!(
        reason(&finished(
            demis.submit(delivery("k2", "b", "B", body)).await
        )),
        "the hospital location 987654 is not registered with the reporting system"
    );
}

#[tokio::test]
async fn what_is_no_fhir_json_is_refused() {
    assert_eq!(
        refusal(b"<Bundle/>".to_vec()).await,
        "the body is not JSON (line 1, column 1)"
    );
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    let mut xml = bed_delivery("k", "B");
    xml.content_type = "application/fhir+xml".into();
    assert_eq!(
        reason(&finished(demis.submit(xml).await)),
        "Content-Type application/fhir+xml is not taken: notifications are application/fhir+json"
    );
}

#[tokio::test]
async fn concurrent_repeats_register_one_report() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    let delivery = bed_delivery("race", "BED-RACE");
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let demis = demis.clone();
            let delivery = delivery.clone();
            tokio::spawn(async move { finished(demis.submit(delivery).await) })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    assert_eq!(answers.iter().filter(|a| !a.duplicate).count(), 1);
    assert!(answers
        .iter()
        .all(|a| a.transport_ref == answers[0].transport_ref && a.outcome == answers[0].outcome));
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 1);
    assert_eq!(page.messages[0].1.delivered.repeat_submissions, 15);
}

#[tokio::test]
async fn a_refused_notification_repeated_gets_the_original_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    let body = bed_report("B", "123123", None);
    let first = finished(demis.submit(delivery("k", "b", "B", body.clone())).await);
    // The location is known by now; the repeat still gets the original answer.
    demis.set_config(DemisConfig {
        known_location_ids: vec!["123123".into()],
        ..DemisConfig::default()
    });
    let second = finished(demis.submit(delivery("k", "b", "B", body)).await);
    assert!(second.duplicate);
    assert_eq!(second.outcome, first.outcome);
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    assert!(matches!(
        page.messages[0].1.decision,
        Decision::Refused { .. }
    ));
}

#[tokio::test]
async fn the_script_fails_refuses_and_panics_before_anything_is_registered() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());

    demis
        .scriptable()
        .push_rule(Rule::next(
            1,
            Effect::Transient {
                message: "überlastet".into(),
            },
        ))
        .unwrap();
    demis
        .scriptable()
        .push_rule(Rule::next(1, Effect::Reset))
        .unwrap();
    demis
        .scriptable()
        .push_rule(Rule::next(1, Effect::Timeout { after_ms: 1 }))
        .unwrap();
    for expected in [
        "überlastet",
        "connection reset by peer (scripted)",
        "timeout after 1 ms (scripted)",
    ] {
        match demis.submit(bed_delivery("k", "B")).await {
            Err(TransportError::Transient(message)) => assert_eq!(message, expected),
            other => panic!("expected a transient fault, got {other:?}"),
        }
    }
    // Used up: the retry gets through, and is registered once.
    let accepted = finished(demis.submit(bed_delivery("k", "B")).await);
    receipt_pdf(&accepted);

    // An outcome for one report id: refused with exactly the scripted reason.
    demis
        .scriptable()
        .push_rule(Rule::for_report(
            "bedreport",
            "B-REFUSED",
            Effect::Reject {
                reason: "Meldung abgelehnt (Test)".into(),
            },
        ))
        .unwrap();
    let refused = finished(demis.submit(bed_delivery("k2", "B-REFUSED")).await);
    assert_eq!(reason(&refused), "Meldung abgelehnt (Test)");

    demis
        .scriptable()
        .push_rule(Rule::next(
            1,
            Effect::Panic {
                message: "kaputt".into(),
            },
        ))
        .unwrap();
    let submitting = demis.clone();
    let panicked = tokio::spawn(async move { submitting.submit(bed_delivery("k3", "B3")).await })
        .await
        .unwrap_err();
    assert!(panicked.is_panic());

    // A repeat of a registered key does not consult the script.
    demis
        .scriptable()
        .push_rule(Rule::always(Effect::Reset))
        .unwrap();
    let repeat = finished(demis.submit(bed_delivery("k", "B")).await);
    assert!(repeat.duplicate);

    // Reset: as configured again.
    demis.scriptable().reset_script();
    receipt_pdf(&finished(demis.submit(bed_delivery("k4", "B4")).await));

    // Scripted refusals, faults and panics registered nothing.
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    let registered: Vec<&str> = page
        .messages
        .iter()
        .map(|(_, m)| m.delivered.idempotency_key.as_str())
        .collect();
    assert_eq!(registered, ["k", "k4"]);
}

#[tokio::test]
async fn the_received_log_pages_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    for (key, module, report) in [
        ("k0", "bedreport", "a"),
        ("k1", "bedreport", "b"),
        ("k2", "labreport", "a"),
        ("k3", "bedreport", "c"),
        ("k4", "labreport", "a"),
    ] {
        let body = bed_report(report, "987654", None);
        finished(demis.submit(delivery(key, module, report, body)).await);
    }
    let seqs = |query: ReceivedQuery| common::seqs_of(demis.received_page(&query).unwrap());
    let page = common::page_of;
    assert_eq!(seqs(page(2, None)), (vec![0, 1], Some(1)));
    assert_eq!(seqs(page(2, Some(1))), (vec![2, 3], Some(3)));
    assert_eq!(seqs(page(2, Some(3))), (vec![4], None));
    let report_a = ReceivedQuery {
        report_id: Some("a".into()),
        ..page(100, None)
    };
    assert_eq!(seqs(report_a.clone()), (vec![0, 2, 4], None));
    let lab = ReceivedQuery {
        module: Some("labreport".into()),
        ..page(1, None)
    };
    assert_eq!(seqs(lab.clone()), (vec![2], Some(2)));
    assert_eq!(
        seqs(ReceivedQuery {
            module: Some("labreport".into()),
            ..report_a
        }),
        (vec![2, 4], None)
    );
    // As JSON for the operator API, body in base64.
    let json = Simulated::received_page(&demis, &page(1, None)).unwrap();
    assert_eq!(json.messages[0].1["decision"]["status"], "accepted");
    assert!(json.messages[0].1["body"].is_string());
}

#[test]
fn the_registry_entry_reads_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let error = (KIND.simulate)(dir.path(), json!({"ack_delay_ms": 5}))
        .err()
        .unwrap();
    assert!(
        error
            .to_string()
            .starts_with("transports.demis: unknown field `ack_delay_ms`"),
        "{error}"
    );
    let error = (KIND.process_tls)(json!({})).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("transports.demis: `meldewerk simulate demis` serves TLS only"),
        "{error}"
    );
    // A file that is not there, or holds no certificate, is named with its key.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let error = (KIND.process_tls)(json!({
        "server_certificate": empty, "server_key": empty, "ca": dir.path().join("missing.pem")
    }))
    .err()
    .unwrap();
    assert!(
        error.to_string().starts_with(&format!(
            "transports.demis.ca {}: ",
            dir.path().join("missing.pem").display()
        )),
        "{error}"
    );
    let error = (KIND.process_tls)(json!({
        "server_certificate": empty, "server_key": empty, "ca": empty
    }))
    .err()
    .unwrap();
    assert_eq!(
        error.to_string(),
        format!(
            "transports.demis.ca {}: no CERTIFICATE in the PEM file",
            empty.display()
        )
    );
    let settings = meldewerk_transports::wire::HttpTransportSettings {
        url: "https://127.0.0.1:1".into(),
        connect_timeout: std::time::Duration::from_secs(1),
        request_timeout: std::time::Duration::from_secs(1),
    };
    let error = (KIND.connect)(&KIND, &settings, json!({}), &NoneDeposited)
        .err()
        .unwrap();
    assert!(
        error.starts_with("transports.demis.url is set: the reporting system authenticates"),
        "{error}"
    );
    // One of the PEM pair without the other is a mistake, not "deposited only".
    let error = (KIND.connect)(
        &KIND,
        &settings,
        json!({"ca": empty, "client_certificate": empty}),
        &NoneDeposited,
    )
    .err()
    .unwrap();
    assert!(
        error.starts_with("transports.demis.client_certificate and client_key go together"),
        "{error}"
    );
}

/// A system slow to answer registers the notification all the same: a sender that stops
/// waiting and sends again gets the original answer, and the report is registered once.
#[tokio::test]
async fn a_sender_that_stops_waiting_and_retries_registers_the_report_once() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    demis
        .scriptable()
        .push_rule(Rule::next(
            1,
            Effect::Latency {
                ms: 2_000,
                random_ms: None,
            },
        ))
        .unwrap();
    let delivery = bed_delivery("slow", "BED-SLOW");
    let waited = tokio::time::timeout(
        std::time::Duration::from_millis(100),
        demis.submit(delivery.clone()),
    )
    .await;
    assert!(waited.is_err(), "the sender gave up before the answer");
    let registered = || {
        demis
            .received_page(&ReceivedQuery::default())
            .unwrap()
            .messages
            .len()
    };
    for _ in 0..200 {
        if registered() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        registered(),
        1,
        "registered although the answer never arrived"
    );
    let again = finished(demis.submit(delivery).await);
    assert!(again.duplicate, "the retry is answered as the repeat it is");
    assert!(matches!(again.outcome, Outcome::Success { .. }));
    let page = demis.received_page(&ReceivedQuery::default()).unwrap();
    assert_eq!(page.messages.len(), 1);
    assert_eq!(page.messages[0].1.delivered.repeat_submissions, 1);
}

/// The service's certificates where none are deposited: every delivery is refused before
/// anything is sent.
struct NoneDeposited;

impl meldewerk_transports::tls::Credentials for NoneDeposited {
    fn deposited(
        &self,
        _roots: std::sync::Arc<rustls::RootCertStore>,
    ) -> std::sync::Arc<dyn meldewerk_transports::tls::ClientIdentity> {
        std::sync::Arc::new(NoneDeposited)
    }
}

#[async_trait::async_trait]
impl meldewerk_transports::tls::ClientIdentity for NoneDeposited {
    async fn client_config(
        &self,
        _delivery: &Delivery,
    ) -> Result<std::sync::Arc<rustls::ClientConfig>, TransportError> {
        Err(TransportError::Transient(
            "no certificate is deposited".into(),
        ))
    }
}

/// Notifications checked side by side are logged in the order of their times (`since` pages by
/// them): each is stamped as the journal numbers it, after its checks and before its receipt.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn notifications_checked_side_by_side_are_logged_in_the_order_of_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let demis = open(&dir, DemisConfig::default());
    common::assert_logged_in_time_order(demis, 48, |i| {
        bed_delivery(&format!("k-order-{i}"), &format!("BED-ORDER-{i}"))
    })
    .await;
}
