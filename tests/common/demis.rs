//! What the tests of the health modules share: the FHIR notifications the in-process reporting
//! system (the `demis` simulator) recorded, validated by Python's `fhir.resources` and compared
//! with their DEMIS example by the validator of the `fhir` crate's tests (included by its path,
//! not copied); a complete bed occupancy report.

#[path = "../../fhir/tests/validator/mod.rs"]
mod validator;

use base64::Engine as _;
use serde_json::{json, Value};

use super::{received_page, Server};

/// Every notification the reporting system recorded for `module` (all pages of its received
/// log), oldest first.
pub fn received_notifications(server: &Server, module: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut after = None;
    loop {
        let mut path = format!("/admin/api/v1/transports/demis/received?module={module}");
        if let Some(next) = after {
            path.push_str(&format!("&after={next}"));
        }
        let (messages, next) = received_page(server, &path);
        all.extend(messages);
        match next {
            Some(next) => after = Some(next),
            None => return all,
        }
    }
}

/// Validates the body of every notification in `records` (records of the received log) as FHIR
/// R4B shaped like the DEMIS example `example` (`BedOccupancyExample.json`, …); panics naming
/// every failure. Returns how many were checked.
pub fn assert_valid_fhir(records: &[Value], example: &'static str) -> usize {
    let cases: Vec<(&Value, Option<&'static str>)> = records.iter().map(|r| (r, None)).collect();
    validate_recorded(&cases, example)
}

/// [`assert_valid_fhir`] for laboratory notifications, each with the profile suffix of its
/// disease (`INVP`, `RSVP`, `NOVP`, `CVDP`), compared with the DEMIS laboratory example.
pub fn assert_valid_laboratory_notifications(records: &[(Value, &'static str)]) -> usize {
    let cases: Vec<(&Value, Option<&'static str>)> = records
        .iter()
        .map(|(r, suffix)| (r, Some(*suffix)))
        .collect();
    validate_recorded(&cases, validator::LABORATORY)
}

/// Runs the validator over the bodies of `records`, each with its disease's profile suffix
/// where it has one.
fn validate_recorded(records: &[(&Value, Option<&'static str>)], example: &'static str) -> usize {
    assert!(!records.is_empty(), "no notification to validate");
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<validator::Case> = records
        .iter()
        .enumerate()
        .map(|(n, (record, suffix))| {
            let body = base64::engine::general_purpose::STANDARD
                .decode(record["body"].as_str().expect("a recorded body"))
                .unwrap();
            let path = dir.path().join(format!("notification-{n}.json"));
            std::fs::write(&path, body).unwrap();
            validator::Case {
                suffix: *suffix,
                ..validator::Case::new(path, example)
            }
        })
        .collect();
    let output = validator::validate(dir.path(), &cases);
    let text = validator::report(&output);
    assert!(output.status.success(), "{text}");
    let summary = format!("{} documents checked, 0 failures", cases.len());
    assert!(text.contains(&summary), "{text}");
    cases.len()
}

/// A complete bed occupancy report (`bedreport`) of the location the simulated reporting
/// system knows.
pub fn complete_bed_report(id: &str) -> Value {
    json!({
        "reportId": id,
        "dateOfReport": "2026-11-24",
        "StandortId": "987654",
        "IK_Nummer": "261101015",
        "Standortname": "Klinikum Mitte, Standort Nord",
        "Strasse": "Chausseestraße",
        "Hausnummer": "12",
        "PLZ": "10115",
        "Ort": "Berlin",
        "Telefon": "030 1234567",
        "numbers": {
            "kinder_betten_belegt": 37,
            "kinder_betten_betrieben": 40,
            "erwachsenen_betten_belegt": 221,
            "erwachsenen_betten_betrieben": 250
        }
    })
}
