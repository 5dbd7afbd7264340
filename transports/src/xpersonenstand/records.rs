//! What the simulated office records of each message, kept in its journal
//! ([`meldewerk_storage::Journal`]), indexed by idempotency key and by transport reference, and
//! grouped by report id and by module for the received log's filters.

use chrono::{DateTime, Utc};
use meldewerk_storage::{base64_bytes, Journal, JournalError};
use serde::{Deserialize, Serialize};

use crate::receipt::{render_receipt, ReceiptFields};
use crate::MessageSignature;

/// Journal index of messages by the sender's idempotency key.
pub(crate) const BY_IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Journal index of messages by the transport reference the office handed out.
pub(crate) const BY_TRANSPORT_REF: &str = "transport-ref";
/// Journal group of messages by report id (several messages may share one).
pub(crate) const BY_REPORT: &str = "report";
/// Journal group of messages by module.
pub(crate) const BY_MODULE: &str = "module";
/// Journal group (one key, `""`) of the messages not decided yet; a message leaves it in the
/// batch that settles its decision into the feed.
pub(crate) const UNDECIDED: &str = "undecided";

/// A message as the simulated office recorded it. Serialises to JSON with `body` and
/// `receipt_pdf` as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceivedMessage {
    /// Reference the office handed out on acceptance (a UUID v4).
    pub transport_ref: String,
    /// The sender's idempotency key; the office accepts each key once.
    pub idempotency_key: String,
    /// Module path segment, e.g. `birthnotice`.
    pub module: String,
    /// The integrator's report id.
    pub report_id: String,
    /// Message UUID from the message header.
    pub message_uuid: String,
    /// Media type of `body`.
    pub content_type: String,
    /// The exact bytes received. The journal keeps them apart from the record (its attachment,
    /// written once), so the record itself holds an empty body; records of earlier versions hold
    /// them. Always serialised: the received log lists every message with its `body`.
    #[serde(default, with = "base64_bytes")]
    pub body: Vec<u8>,
    /// The detached signature that came with the message, if any (already verified).
    pub signature: Option<MessageSignature>,
    /// Lower-case hex SHA-256 of `body`, as printed on the receipt.
    pub sha256_hex: String,
    /// When the office accepted the message.
    pub received_at: DateTime<Utc>,
    /// How often the same idempotency key was submitted again after the first acceptance; each
    /// repeat was answered with the original acceptance and stored nothing new.
    pub repeat_submissions: u32,
    /// The office's decision, once made; `None` while the acknowledgement is still pending.
    pub outcome: Option<RecordedOutcome>,
    /// Why the office refuses the message when it decides, found on receipt: code elements whose
    /// code or list version does not fit the list they name. `None`: nothing found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

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
        if self.body.is_empty() {
            if let Some(body) = journal.attachment(seq)? {
                self.body = body;
            }
        }
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
                *receipt_pdf = render_receipt(&ReceiptFields {
                    authority: authority.clone().unwrap_or_default(),
                    module: self.module.clone(),
                    report_id: self.report_id.clone(),
                    message_uuid: self.message_uuid.clone(),
                    message_sha256_hex: self.sha256_hex.clone(),
                    // The office only knows when the message arrived, not when it was sent.
                    submitted_at: None,
                    received_at: self.received_at,
                    acknowledged_at: *decided_at,
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
}
