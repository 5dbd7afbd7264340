//! Receipt PDFs ("Empfangsbestätigung") handed back by an authority once it confirmed a delivery.
//!
//! The PDF is deliberately plain, a [`crate::pdf::TextDocument`]: one A4 page, the builtin
//! Helvetica fonts (nothing embedded, so the output stays small and deterministic) and one
//! labelled line per fact an integrator may have to prove later: which message (report type in words with its code, UUID and SHA-256 of the
//! exact bytes), from whom, for which report, when (in the office's local time beside UTC).
//! Rendering the same [`ReceiptFields`] twice gives byte-identical PDFs.

use chrono::{DateTime, Utc};
use meldewerk_xml::local_time::LocalZone;

use crate::pdf::TextDocument;

/// Everything printed on a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptFields {
    /// Name of the confirming authority, e.g. `Standesamt Berlin-Mitte (simuliert)`.
    pub authority: String,
    /// The report type in words with its message type code, e.g. `Geburtsanzeige (081020)`
    /// (`meldewerk_xml::xpersonenstand::nachrichtentyp_in_worten`).
    pub report_type: String,
    /// Who sent the message: the author's name and identifier from the message header, e.g.
    /// `meldewerk (sap:000000001)`.
    pub sender: String,
    /// Module path segment of the report, e.g. `birthnotice`.
    pub module: String,
    /// The integrator's report id the message belongs to.
    pub report_id: String,
    /// Message UUID from the message header.
    pub message_uuid: String,
    /// Lower-case hex SHA-256 of the exact bytes the authority received; lets anyone check later
    /// that a stored message is the one this receipt confirms.
    pub message_sha256_hex: String,
    /// When the sender handed the message over: the creation time in its header, or else when it
    /// was delivered.
    pub submitted_at: DateTime<Utc>,
    /// When the authority received the message.
    pub received_at: DateTime<Utc>,
    /// When the authority confirmed receipt.
    pub acknowledged_at: DateTime<Utc>,
    /// The authority's time zone: every time is printed in it beside UTC.
    pub time_zone: LocalZone,
    /// The transport's reference of the delivery.
    pub transport_ref: String,
    /// `true` for receipts from a simulator: the page then carries a prominent
    /// "TEST / MOCK RECEIPT" marker so it can never be mistaken for a real confirmation.
    pub mock: bool,
}

/// Values longer than this many wrapped lines are cut (marked with an ellipsis), which keeps a
/// receipt on one page for all but absurd inputs.
const MAX_VALUE_LINES: usize = 3;

/// Lower-case hex SHA-256 of `bytes`, as a receipt prints the digest of a message.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

/// Renders the receipt as a PDF: one page, unless values run to their line caps.
pub fn render_receipt(fields: &ReceiptFields) -> Vec<u8> {
    let title = format!("Empfangsbestätigung {}", fields.report_id);
    // The acknowledgement time rather than "now", so rendering stays deterministic.
    let mut doc = TextDocument::new(&title, &fields.authority, fields.acknowledged_at);

    doc.heading(&fields.authority, 12.0, 2);
    doc.gap(10.0);
    doc.heading("Empfangsbestätigung", 22.0, 1);
    doc.gap(6.0);

    if fields.mock {
        doc.colour(0.75, 0.0, 0.0);
        doc.heading("TEST / MOCK RECEIPT", 16.0, 1);
        doc.heading(
            "Von einem Simulator erzeugt – keine echte Behörde, keine rechtliche Wirkung.",
            10.0,
            2,
        );
        doc.colour(0.0, 0.0, 0.0);
        doc.gap(6.0);
    }

    let intro = format!(
        "Die unten bezeichnete Nachricht ist eingegangen; ihr Empfang wird hiermit bestätigt. \
         Zeiten in Ortszeit ({}) und in UTC (ISO\u{a0}8601).",
        fields.time_zone
    );
    doc.paragraph(&intro, 10.0, 3);
    doc.gap(10.0);

    let time = |at: DateTime<Utc>| fields.time_zone.show_with_utc(at);
    let rows: [(&str, String); 11] = [
        ("Meldung (Report-ID)", fields.report_id.clone()),
        ("Meldungsart", fields.report_type.clone()),
        ("Absender", fields.sender.clone()),
        ("Modul", fields.module.clone()),
        ("Nachrichten-UUID", fields.message_uuid.clone()),
        (
            "SHA-256 der übermittelten Nachricht",
            fields.message_sha256_hex.clone(),
        ),
        ("Übermittelt", time(fields.submitted_at)),
        ("Eingegangen", time(fields.received_at)),
        ("Bestätigt", time(fields.acknowledged_at)),
        ("Transportreferenz", fields.transport_ref.clone()),
        ("Behörde", fields.authority.clone()),
    ];
    for (label, value) in &rows {
        doc.field(label, value, MAX_VALUE_LINES);
    }

    doc.gap(10.0);
    doc.paragraph("Erstellt mit meldewerk.", 8.0, 1);

    doc.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_matches_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
