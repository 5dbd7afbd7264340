//! Helpers of the reporting system's tests: the simulator opened in a folder, deliveries of bed
//! occupancy reports, and its answers taken apart.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::PathBuf;

use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
use meldewerk_fhir::{Facility, RandomIds};
use meldewerk_transports::demis::{DemisConfig, Simulator};
use meldewerk_transports::{Answer, Delivery, Finished, Outcome, TransportError};
use serde_json::Value;

use crate::common;

/// Opens the reporting system in `dir` ([`common::open_retrying`]).
pub fn open(dir: &tempfile::TempDir, config: DemisConfig) -> Simulator {
    common::open_retrying(|| Simulator::open(dir.path(), config.clone()))
}

/// A bed occupancy report of the location `location_id`, naming the IK `ik`.
pub fn bed_report(report_id: &str, location_id: &str, ik: Option<&str>) -> Vec<u8> {
    let report = BedOccupancyReport {
        report_id: report_id.into(),
        report_date: None,
        location_id: location_id.into(),
        location: Facility {
            ik: ik.map(str::to_owned),
            ..Default::default()
        },
        beds: BedCounts {
            adults_occupied: 221,
            adults_operable: Some(250),
            children_occupied: 37,
            children_operable: None,
        },
    };
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-24T14:30:00+01:00").unwrap();
    beds::build(&report, &mut RandomIds, now).unwrap().to_json()
}

/// One of the DEMIS examples beside the repository, as JSON.
pub fn example(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/reference/demis")
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

pub fn delivery(key: &str, module: &str, report_id: &str, body: Vec<u8>) -> Delivery {
    Delivery {
        idempotency_key: key.to_owned(),
        module: module.to_owned(),
        report_id: report_id.to_owned(),
        message_uuid: format!("uuid-{key}"),
        content_type: "application/fhir+json".to_owned(),
        body,
        signature: None,
        sender: None,
    }
}

pub fn bed_delivery(key: &str, report_id: &str) -> Delivery {
    delivery(
        key,
        "bedreport",
        report_id,
        bed_report(report_id, "987654", Some("261101015")),
    )
}

pub fn finished(answer: Result<Answer, TransportError>) -> Finished {
    match answer {
        Ok(Answer::Finished(finished)) => finished,
        other => panic!("expected an answer at once, got {other:?}"),
    }
}

pub fn receipt_pdf(finished: &Finished) -> Vec<u8> {
    match &finished.outcome {
        Outcome::Success { receipt, .. } => {
            assert_eq!(receipt.media_type, "application/pdf");
            receipt.bytes.clone()
        }
        other => panic!("expected an acceptance, got {other:?}"),
    }
}

pub fn reason(finished: &Finished) -> &str {
    match &finished.outcome {
        Outcome::Failure { reason } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}
