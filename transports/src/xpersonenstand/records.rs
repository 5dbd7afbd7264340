//! What the simulated office records of each message, kept in its journal
//! ([`meldewerk_storage::Journal`]), indexed by idempotency key and by transport reference, and
//! grouped by report id and by module for the received log's filters
//! ([`crate::received::BY_REPORT`], [`crate::received::BY_MODULE`]).

use chrono::{DateTime, Utc};
use meldewerk_storage::{base64_bytes, Journal, JournalError};
use meldewerk_xml::local_time::LocalZone;
use meldewerk_xml::xpersonenstand::{lies_kopf, nachrichtentyp_in_worten};
use serde::{Deserialize, Serialize};

use crate::receipt::{render_receipt, ReceiptFields};
use crate::received::Delivered;
use crate::MessageSignature;

/// Journal index of messages by the sender's idempotency key.
pub(crate) const BY_IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Journal index of messages by the transport reference the office handed out.
pub(crate) const BY_TRANSPORT_REF: &str = "transport-ref";
/// Journal group (one key, `""`) of the messages not decided yet; a message leaves it in the
/// batch that settles its decision into the feed.
pub(crate) const UNDECIDED: &str = "undecided";

/// A message as the simulated office recorded it. Serialises to JSON with `body` and
/// `receipt_pdf` as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceivedMessage {
    /// What every simulator records of a delivery (the message UUID is the one of the message
    /// header).
    #[serde(flatten)]
    pub delivered: Delivered,
    /// Reference the office handed out on acceptance (a UUID v4).
    pub transport_ref: String,
    /// The detached signature that came with the message, if any (already verified).
    pub signature: Option<MessageSignature>,
    /// What the office read from the message's header on receipt, for its receipt; `None` for
    /// a message whose header it could not read, and in records of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<MessageHeader>,
    /// The office's decision, once made; `None` while the acknowledgement is still pending.
    pub outcome: Option<RecordedOutcome>,
    /// Why the office refuses the message when it decides, found on receipt: code elements whose
    /// code or list version does not fit the list they name. `None`: nothing found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// The header of a received message, as the office read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageHeader {
    /// Code of the message type, e.g. `081020`.
    pub message_type: String,
    /// The sender's name (`autor/name`).
    pub sender_name: String,
    /// The sender's directory identifier (`autor/kennung`), e.g. `sap:000000001`.
    pub sender_id: String,
    /// When the sender created the message (`erstellungszeitpunkt`), if it could be read.
    pub created_at: Option<DateTime<Utc>>,
}

impl MessageHeader {
    /// The header of the XPersonenstand message `body`, if it has one the office can read.
    pub(crate) fn read(body: &[u8]) -> Option<MessageHeader> {
        let kopf = lies_kopf(body)?;
        Some(MessageHeader {
            message_type: kopf.nachrichtentyp,
            sender_name: kopf.autor_name,
            sender_id: kopf.autor_kennung,
            created_at: kopf.erstellungszeitpunkt,
        })
    }
}

/// The office's time zone: a German civil registry office prints its receipts in German time,
/// whatever zone the sending portal is configured for.
const OFFICE_TIME_ZONE: LocalZone = LocalZone::BERLIN;

/// What a receipt says where the office could not read the message's header.
const NOT_READ: &str = "nicht angegeben";

/// The office's final decision on a message. Made once; the inbox hands it out to every fetch that
/// reads past it, also after a restart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RecordedOutcome {
    /// Receipt confirmed.
    Acknowledged {
        /// When the office decided.
        decided_at: DateTime<Utc>,
        /// The receipt PDF handed back with every acknowledgement. The journal keeps it empty
        /// and every reader gets it rendered from the record ([`ReceivedMessage::with_receipt`];
        /// rendering is deterministic), so that settling a decision does not write a receipt
        /// into the journal; records of earlier versions carry it and keep it.
        #[serde(default, with = "base64_bytes", skip_serializing_if = "Vec::is_empty")]
        receipt_pdf: Vec<u8>,
        /// Portal identifier reported with the acknowledgement.
        portal: String,
        /// The office's name as printed on the receipt (configuration at the time of the
        /// decision).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authority: Option<String>,
    },
    /// Message refused.
    Rejected {
        /// When the office decided.
        decided_at: DateTime<Utc>,
        /// Reason reported to the sender.
        reason: String,
    },
}

impl ReceivedMessage {
    /// The message as received and decided, as every reader of the journal gets it: with its
    /// body (read from the journal's attachment unless the record holds it, as records of earlier
    /// versions do) and its receipt ([`ReceivedMessage::with_receipt`]).
    pub(crate) fn whole(
        mut self,
        journal: &Journal<ReceivedMessage>,
        seq: u64,
    ) -> Result<Self, JournalError> {
        crate::received::fill_body(&mut self.delivered.body, journal, seq)?;
        Ok(self.with_receipt())
    }

    /// The record with its receipt, rendered if the journal holds none; what every reader of the
    /// journal hands out.
    pub(crate) fn with_receipt(mut self) -> Self {
        if let Some(RecordedOutcome::Acknowledged {
            decided_at,
            receipt_pdf,
            authority,
            ..
        }) = &mut self.outcome
        {
            if receipt_pdf.is_empty() {
                let header = self.header.as_ref();
                *receipt_pdf = render_receipt(&ReceiptFields {
                    authority: authority.clone().unwrap_or_default(),
                    report_type: header.map_or(NOT_READ.into(), |h| {
                        nachrichtentyp_in_worten(&h.message_type)
                    }),
                    sender: header.map_or(NOT_READ.into(), |h| {
                        format!("{} ({})", h.sender_name, h.sender_id)
                    }),
                    module: self.delivered.module.clone(),
                    report_id: self.delivered.report_id.clone(),
                    message_uuid: self.delivered.message_uuid.clone(),
                    message_sha256_hex: self.delivered.sha256_hex.clone(),
                    // When the sender created the message, as its header says; the office's
                    // own receipt time for a header without one.
                    submitted_at: header
                        .and_then(|h| h.created_at)
                        .unwrap_or(self.delivered.received_at),
                    received_at: self.delivered.received_at,
                    acknowledged_at: *decided_at,
                    time_zone: OFFICE_TIME_ZONE,
                    transport_ref: self.transport_ref.clone(),
                    mock: true,
                });
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_an_earlier_version_keeps_its_receipt() {
        let json = serde_json::json!({
            "transport_ref": "t", "idempotency_key": "k", "module": "birthnotice",
            "report_id": "r", "message_uuid": "u", "content_type": "application/xml",
            "body": "PGEvPg==", "signature": null, "sha256_hex": "00",
            "received_at": "2026-11-01T10:00:00Z", "repeat_submissions": 0,
            "outcome": {"status": "acknowledged", "decided_at": "2026-11-01T10:00:02Z",
                        "receipt_pdf": "JVBERi0xLjc=", "portal": "p"}
        });
        let record: ReceivedMessage = serde_json::from_value(json).unwrap();
        let Some(RecordedOutcome::Acknowledged { receipt_pdf, .. }) = record.with_receipt().outcome
        else {
            panic!("acknowledged");
        };
        assert_eq!(receipt_pdf, b"%PDF-1.7");
    }

    /// Whether the uncompressed PDF shows `text` (WinAnsi, as the receipt writes it).
    fn shows(pdf: &[u8], text: &str) -> bool {
        let bytes = crate::pdf::to_win_ansi(text);
        pdf.windows(bytes.len()).any(|w| w == bytes.as_slice())
    }

    fn receipt_of(record: serde_json::Value) -> Vec<u8> {
        let record: ReceivedMessage = serde_json::from_value(record).unwrap();
        match record.with_receipt().outcome {
            Some(RecordedOutcome::Acknowledged { receipt_pdf, .. }) => receipt_pdf,
            _ => panic!("acknowledged"),
        }
    }

    fn record(header: serde_json::Value) -> serde_json::Value {
        let mut record = serde_json::json!({
            "transport_ref": "t", "idempotency_key": "k", "module": "birthnotice",
            "report_id": "r", "message_uuid": "u", "content_type": "application/xml",
            "body": "", "signature": null, "sha256_hex": "00",
            "received_at": "2026-11-01T10:00:00Z", "repeat_submissions": 0,
            "outcome": {"status": "acknowledged", "decided_at": "2026-11-01T10:00:02Z",
                        "portal": "p"}
        });
        if !header.is_null() {
            record["header"] = header;
        }
        record
    }

    #[test]
    fn the_receipt_names_what_the_header_said() {
        let pdf = receipt_of(record(serde_json::json!({
            "message_type": "084021", "sender_name": "meldewerk", "sender_id": "sap:000000001",
            "created_at": "2026-11-01T09:59:58Z"
        })));
        assert!(shows(&pdf, "Sterbefallanzeige des Bestatters"));
        assert!(shows(&pdf, "sap:000000001"));
        // Übermittelt: the header's creation time, in German time.
        assert!(shows(&pdf, "01.11.2026, 10:59:58 Uhr"));
    }

    #[test]
    fn a_record_without_header_says_so_and_was_handed_over_on_arrival() {
        let pdf = receipt_of(record(serde_json::Value::Null));
        assert!(shows(&pdf, "nicht angegeben"));
        // Übermittelt, Eingegangen: both the arrival, 11:00 German time.
        let arrival = crate::pdf::to_win_ansi("01.11.2026, 11:00:00 Uhr");
        let times = pdf
            .windows(arrival.len())
            .filter(|w| *w == arrival.as_slice())
            .count();
        assert_eq!(times, 2);
    }
}
