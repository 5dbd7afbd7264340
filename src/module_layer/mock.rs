//! The reserved mock ids (`BIRTHNOTICE-TEST-SUCCESS`, `…-PENDING`, `…-FAILURE`): fixed outcomes
//! without any lookup, so that integrators can test their polling before a single form is sent.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use meldewerk_transports::receipt::{render_receipt, ReceiptFields};
use meldewerk_xml::local_time::LocalZone;
use serde_json::{json, Value};

use super::rfc3339;
use super::ModuleInfo;

/// Outcome a reserved mock id simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockOutcome {
    /// `…-TEST-SUCCESS`
    Success,
    /// `…-TEST-PENDING`
    Pending,
    /// `…-TEST-FAILURE`
    Failure,
}

/// The mock outcome `id` is reserved for, if it is one of the module's mock ids.
pub fn outcome(info: &ModuleInfo, id: &str) -> Option<MockOutcome> {
    let suffix = id.strip_prefix(info.mock_prefix?)?.strip_prefix("-TEST-")?;
    match suffix {
        "SUCCESS" => Some(MockOutcome::Success),
        "PENDING" => Some(MockOutcome::Pending),
        "FAILURE" => Some(MockOutcome::Failure),
        _ => None,
    }
}

/// The result body of a mock id, as of now.
pub fn result(info: &ModuleInfo, id: &str, outcome: MockOutcome) -> Value {
    let now = Utc::now();
    let (status, receipt, reason) = match outcome {
        MockOutcome::Success => (
            "SUCCESS",
            Some(STANDARD.encode(receipt(info, id, now))),
            None,
        ),
        MockOutcome::Pending => ("PENDING", None, None),
        MockOutcome::Failure => (
            "FAILURE",
            None,
            Some("Simulierter Fehler: die Behörde hat die Testmeldung abgelehnt (Test-ID)"),
        ),
    };
    let mut body = json!({
        "id": id,
        "status": status,
        "module": info.module,
        "submittedAt": rfc3339(now),
        "portal": "meldewerk-mock",
        "receiptPdf": receipt,
        "failureReason": reason,
    });
    if info.echoes_client_reference {
        body["clientReference"] = Value::Null;
    }
    body
}

/// A receipt clearly marked as a test receipt. It names the message type of the module's
/// first form (the one a memento opens unless it says otherwise), and is dated as the office's
/// receipts are, in German time.
pub fn receipt(info: &ModuleInfo, id: &str, at: DateTime<Utc>) -> Vec<u8> {
    let report_type = info
        .forms
        .first()
        .and_then(|form| form.report_type)
        .unwrap_or("Testmeldung")
        .to_owned();
    render_receipt(&ReceiptFields {
        authority: "meldewerk Testempfang (keine echte Übermittlung)".into(),
        report_type,
        sender: "meldewerk (Test-ID: keine Nachricht gesendet)".into(),
        module: info.module.into(),
        report_id: id.into(),
        message_uuid: "00000000-0000-0000-0000-000000000000".into(),
        message_sha256_hex: "0".repeat(64),
        submitted_at: at,
        received_at: at,
        acknowledged_at: at,
        time_zone: LocalZone::BERLIN,
        transport_ref: "mock".into(),
        mock: true,
    })
}
