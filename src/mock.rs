//! The receipt PDF returned for the reserved `…-TEST-SUCCESS` ids.

use chrono::{DateTime, Utc};
use meldewerk_transports::receipt::{render_receipt, ReceiptFields};

/// A receipt clearly marked as a test receipt.
pub fn receipt(module: &str, id: &str, at: DateTime<Utc>) -> Vec<u8> {
    render_receipt(&ReceiptFields {
        authority: "meldewerk Testempfang (keine echte Übermittlung)".into(),
        module: module.into(),
        report_id: id.into(),
        message_uuid: "00000000-0000-0000-0000-000000000000".into(),
        message_sha256_hex: "0".repeat(64),
        submitted_at: Some(at),
        received_at: at,
        acknowledged_at: at,
        transport_ref: "mock".into(),
        mock: true,
    })
}
