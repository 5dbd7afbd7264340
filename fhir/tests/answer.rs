//! The reporting system's answer: built by one side, read by the other, and the DEMIS
//! example read.

mod common;

use common::*;
use meldewerk_fhir::answer::{self, AcceptedIds, Answer, AnswerError, Receipt, PDF};
use meldewerk_fhir::SequentialIds;
use serde_json::json;

fn receipt() -> Receipt {
    Receipt {
        bundle_id: "00000000-0000-4000-8000-00000000000a".into(),
        notification_id: "LAB-2026-000123".into(),
        content_type: PDF.into(),
        document: b"%PDF-1.7 receipt".to_vec(),
    }
}

#[test]
fn an_acceptance_is_read_back_as_its_receipt() {
    let parameters = answer::accepted(
        &receipt(),
        &AcceptedIds::draw(&mut SequentialIds::new()),
        now(),
    );
    assert_eq!(
        answer::read(&parameters.to_json()),
        Ok(Answer::Accepted(receipt()))
    );
}

#[test]
fn an_acceptance_is_shaped_like_the_example() {
    let ours: serde_json::Value = serde_json::from_slice(
        &answer::accepted(
            &receipt(),
            &AcceptedIds::draw(&mut SequentialIds::new()),
            now(),
        )
        .to_json(),
    )
    .unwrap();
    let example = example("BedOccupancyExampleResult.json");
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&ours), names(&example));
    let bundle = &ours["parameter"][0]["resource"];
    assert_eq!(bundle["type"], "collection");
    assert_eq!(bundle["meta"], example["parameter"][0]["resource"]["meta"]);
    let composition = resource(bundle, "Composition");
    let theirs = resource(&example["parameter"][0]["resource"], "Composition");
    for path in [
        "/meta",
        "/type",
        "/title",
        "/author",
        "/extension/0/url",
        "/relatesTo/0/code",
    ] {
        assert_eq!(composition.pointer(path), theirs.pointer(path), "{path}");
    }
    assert_eq!(
        composition["relatesTo"][0]["targetReference"]["identifier"]["value"],
        "LAB-2026-000123"
    );
    assert_eq!(composition["date"], "2026-11-24T14:30:05+01:00");
    let binary = resource(bundle, "Binary");
    assert_eq!(binary["contentType"], "application/pdf");
    assert_eq!(binary["data"], "JVBERi0xLjcgcmVjZWlwdA==");
    assert_eq!(
        composition["section"][0]["entry"][0]["reference"],
        format!("Binary/{}", binary["id"].as_str().unwrap())
    );
    let outcome = &ours["parameter"][1]["resource"];
    assert_eq!(outcome["meta"], example["parameter"][1]["resource"]["meta"]);
    assert_eq!(
        outcome["issue"],
        example["parameter"][1]["resource"]["issue"]
    );
}

#[test]
fn the_examples_answer_is_read() {
    let text = std::fs::read(reference_dir().join("BedOccupancyExampleResult.json")).unwrap();
    assert_eq!(
        answer::read(&text),
        Ok(Answer::Accepted(Receipt {
            bundle_id: "94709a92-ee29-4b85-99a0-e9c8dd2afd3d".into(),
            notification_id: "5e1e89ce-7a44-4ec1-801c-0f988992e8fe".into(),
            content_type: PDF.into(),
            document: b"MockPdf".to_vec(),
        }))
    );
}

#[test]
fn a_refusal_is_read_back_as_its_reasons() {
    let reasons = vec![
        "Bundle.type must be document".to_owned(),
        "the NotifierFacility needs a BSNR identifier".to_owned(),
    ];
    let parameters = answer::rejected(&reasons);
    let json: serde_json::Value = serde_json::from_slice(&parameters.to_json()).unwrap();
    assert_eq!(json["parameter"].as_array().unwrap().len(), 1);
    assert_eq!(json["parameter"][0]["name"], "operationOutcome");
    assert_eq!(
        json["parameter"][0]["resource"]["issue"][1]["severity"],
        "error"
    );
    assert_eq!(
        answer::read(&parameters.to_json()),
        Ok(Answer::Rejected(reasons.join("\n")))
    );
}

#[test]
fn a_refusal_as_a_bare_operation_outcome_carries_every_reason() {
    let reasons = vec![
        "Bundle.type must be document".to_owned(),
        "no BSNR".to_owned(),
    ];
    let body = answer::refusal_json(&reasons);
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["resourceType"], "OperationOutcome");
    assert_eq!(
        json["issue"][0]["details"]["text"],
        "Bundle.type must be document"
    );
    assert_eq!(
        answer::read(&body),
        Ok(Answer::Rejected(reasons.join("\n")))
    );
}

#[test]
fn a_bare_operation_outcome_is_read_as_a_refusal() {
    let outcome = json!({
        "resourceType": "OperationOutcome",
        "issue": [
            {"severity": "warning", "code": "informational", "diagnostics": "ignored"},
            {"severity": "error", "code": "invalid", "details": {"text": "Unknown BSNR"},
             "diagnostics": "not registered", "expression": ["Organization.identifier"]},
            {"severity": "fatal", "code": "exception"}
        ]
    });
    assert_eq!(
        answer::read(outcome.to_string().as_bytes()),
        Ok(Answer::Rejected(
            "Unknown BSNR: not registered (Organization.identifier)\nexception".into()
        ))
    );
}

#[test]
fn what_is_no_answer_is_said_so() {
    assert_eq!(answer::read(b"<html>"), Err(AnswerError::NotAnAnswer));
    assert_eq!(
        answer::read(br#"{"resourceType": "Patient"}"#),
        Err(AnswerError::NotAnAnswer)
    );
    assert_eq!(
        answer::read(br#"{"resourceType": "Parameters", "parameter": []}"#),
        Err(AnswerError::NoReceipt)
    );
    let mut example = example("BedOccupancyExampleResult.json");
    example["parameter"][0]["resource"]["entry"][3]["resource"]["data"] = json!("not base64!");
    assert_eq!(
        answer::read(example.to_string().as_bytes()),
        Err(AnswerError::BadData)
    );
    example["parameter"][0]["resource"]["entry"][3]["resource"]["data"] = json!("");
    assert_eq!(
        answer::read(example.to_string().as_bytes()),
        Err(AnswerError::NoReceipt)
    );
    assert_eq!(
        AnswerError::NoReceipt.to_string(),
        "the answer carries neither a receipt nor an error"
    );
}

#[test]
fn any_element_of_an_answer_removed_or_retyped_is_read_without_a_panic() {
    let accepted: serde_json::Value = serde_json::from_slice(
        &answer::accepted(
            &receipt(),
            &AcceptedIds::draw(&mut SequentialIds::new()),
            now(),
        )
        .to_json(),
    )
    .unwrap();
    for (pointer, changed) in every_element_changed(&accepted) {
        let read = answer::read(changed.to_string().as_bytes());
        // Whatever was changed, an acceptance never names another document.
        if let Ok(Answer::Accepted(receipt)) = read {
            assert!(
                receipt.document.is_empty() || receipt.document == b"%PDF-1.7 receipt",
                "{pointer}"
            );
        }
    }
}
