//! What the simulated reporting system records of each notification, kept in its journal
//! ([`meldewerk_storage::Journal`]): indexed by idempotency key and by its reference, grouped by
//! report id and by module for the received log's filters ([`crate::received::BY_REPORT`],
//! [`crate::received::BY_MODULE`]). An accepted notification's record stands for the whole
//! `Parameters` answer the reporting system sent, receipt PDF included.
//!
//! The journal keeps neither: an accepted notification's record keeps what they are made of
//! ([`MadeOf`]: the ids the answer drew, what the receipt prints beyond the record's own facts),
//! and every reader gets the record whole ([`ReceivedNotification::made_whole`]), the answer
//! written again with its receipt rendered. Both are deterministic, so a repeat is answered with
//! the very bytes of the first answer, as the civil-registry office renders its receipts. The
//! receipt's base64 inside the record was most of a notification's bytes in the journal, and
//! packing gained little on it.

use meldewerk_fhir::answer::{self, AcceptedIds};
use meldewerk_storage::{Journal, JournalError, Receipt};
use meldewerk_xml::local_time::LocalZone;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::receipt::{render_receipt, ReceiptFields};
use crate::received::{fill_body, Delivered, Logged};

/// Journal index of notifications by the sender's idempotency key.
pub(crate) const BY_IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Journal index of notifications by the reference the reporting system gave them.
pub(crate) const BY_TRANSPORT_REF: &str = "transport-ref";

/// A notification as the simulated reporting system recorded it. Serialises to JSON with `body`
/// as standard base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceivedNotification {
    /// What every simulator records of a delivery. Where the sender left them out, the report
    /// id is the notification's `NotificationId`, the message id the bundle's
    /// `NotificationBundleId`, and the idempotency key `bundle:` and that id.
    #[serde(flatten)]
    pub delivered: Delivered,
    /// The reporting system's reference of the notification (a UUID v4).
    pub transport_ref: String,
    /// The bundle's profile (`NotificationBundleLaboratory`, …), when the checks got that far.
    pub bundle_profile: Option<String>,
    /// `Bundle.identifier` (`NotificationBundleId`), when readable.
    pub bundle_id: Option<String>,
    /// `Composition.identifier` (`NotificationId`), when readable.
    pub notification_id: Option<String>,
    /// What the reporting system answered.
    pub decision: Decision,
}

/// The reporting system's answer to one notification, given at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Decision {
    /// Registered: the `Parameters` resource it answered with, the receipt bundle and its PDF
    /// (as a `Binary`) inside.
    Accepted {
        /// The answer as sent. Not in the journal when `made_of` is.
        #[serde(
            default = "AnswerJson::unwritten",
            skip_serializing_if = "AnswerJson::is_unwritten"
        )]
        answer: AnswerJson,
        /// In the journal only: what the answer is made of. Unset in every record a reader
        /// gets, and in records of earlier versions (their answer kept whole).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        made_of: Option<MadeOf>,
    },
    /// Refused by its checks: the reasons of its `OperationOutcome`, one per line.
    Refused {
        /// The reasons.
        reason: String,
    },
}

/// What an accepted notification's answer and receipt are made of beyond its record's own
/// facts (its ids, its time, its digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeOf {
    /// The ids the answer gave its receipt bundle's resources.
    pub ids: AcceptedIds,
    /// The reporting system's name on the receipt (its configuration when it decided).
    pub authority: String,
    /// The kind of notification in words, with its profile.
    pub report_type: String,
    /// The notifier's identifiers in words.
    pub sender: String,
}

/// The reporting system's time zone, in which its receipts print every time beside UTC.
const TIME_ZONE: LocalZone = LocalZone::BERLIN;

/// The JSON text of an answer, handed out as written: as JSON it is that text, so records of
/// earlier versions, which hold their answer, read and write as they did when it was a tree.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct AnswerJson(Box<RawValue>);

impl<'de> Deserialize<'de> for AnswerJson {
    /// Through a tree: the record's internally tagged [`Decision`] buffers its members, which
    /// cannot hand out raw text. Records are read only for repeats and the received log.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tree = serde_json::Value::deserialize(deserializer)?;
        RawValue::from_string(tree.to_string())
            .map(AnswerJson)
            .map_err(serde::de::Error::custom)
    }
}

impl AnswerJson {
    /// The answer's JSON; `Err` if `json` is not one JSON value.
    fn new(json: Vec<u8>) -> Result<Self, serde_json::Error> {
        let text = String::from_utf8(json).map_err(serde::de::Error::custom)?;
        RawValue::from_string(text).map(AnswerJson)
    }

    /// What a record in the journal holds in place of an answer it is made of (`null`).
    pub(crate) fn unwritten() -> Self {
        AnswerJson(RawValue::NULL.to_owned())
    }

    fn is_unwritten(&self) -> bool {
        self.0.get() == RawValue::NULL.get()
    }

    /// The answer's JSON bytes, as sent.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.get().as_bytes()
    }
}

impl PartialEq for AnswerJson {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl ReceivedNotification {
    /// What the receipt of an accepted notification prints: the record's facts and `made_of`.
    /// The reporting system decides as it receives, so every time printed is the same.
    pub(crate) fn receipt_fields(&self, made_of: &MadeOf) -> ReceiptFields {
        ReceiptFields {
            authority: made_of.authority.clone(),
            report_type: made_of.report_type.clone(),
            sender: made_of.sender.clone(),
            module: self.delivered.module.clone(),
            report_id: self.delivered.report_id.clone(),
            // The notification's own id (`NotificationId`) is what its receipt names.
            message_uuid: self.notification_id.clone().unwrap_or_default(),
            message_sha256_hex: self.delivered.sha256_hex.clone(),
            submitted_at: self.delivered.received_at,
            received_at: self.delivered.received_at,
            acknowledged_at: self.delivered.received_at,
            time_zone: TIME_ZONE,
            transport_ref: self.transport_ref.clone(),
            mock: true,
        }
    }

    /// The record as every reader of the journal gets it: with its body (read from the journal's
    /// attachment unless the record holds it, as records of earlier versions do) and its answer
    /// written ([`ReceivedNotification::with_answer`]).
    pub(crate) fn made_whole(
        mut self,
        journal: &Journal<ReceivedNotification>,
        seq: u64,
    ) -> Result<Self, JournalError> {
        fill_body(&mut self.delivered.body, journal, seq)?;
        self.with_answer()
    }

    /// The record with its answer written from what it is made of, if the journal holds none
    /// (its body left as the journal holds it, for readers that need only the answer):
    /// the receipt rendered, in the receipt bundle the answer's ids name, dated when the
    /// notification was received. `Corrupt` for an accepted record that holds neither its
    /// answer nor what it is made of.
    pub(crate) fn with_answer(self) -> Result<Self, JournalError> {
        self.answered_with(None)
    }

    /// [`ReceivedNotification::with_answer`], with the receipt's document `rendered` already
    /// when given; the caller hands in only the receipt this record renders (the one its sender
    /// was handed), so the answer is the same bytes. Ignored for a record that holds its answer
    /// whole (of an earlier version): that answer is handed out as it is.
    pub(crate) fn answered_with(mut self, rendered: Option<Vec<u8>>) -> Result<Self, JournalError> {
        let made_of = match &self.decision {
            Decision::Accepted {
                made_of: Some(made_of),
                ..
            } => made_of,
            // Neither the answer nor what it is made of: nothing to hand out as the answer.
            Decision::Accepted { answer, .. } if answer.is_unwritten() => {
                return Err(JournalError::Corrupt(format!(
                    "the record of {} holds neither its answer nor what it is made of",
                    self.transport_ref
                )))
            }
            _ => return Ok(self),
        };
        let receipt = answer::Receipt {
            bundle_id: self.bundle_id.clone().unwrap_or_default(),
            notification_id: self.notification_id.clone().unwrap_or_default(),
            content_type: answer::PDF.to_owned(),
            document: rendered.unwrap_or_else(|| render_receipt(&self.receipt_fields(made_of))),
        };
        let written = answer::accepted(
            &receipt,
            &made_of.ids,
            self.delivered.received_at.fixed_offset(),
        );
        // As sent, with its `resourceType`.
        let answer = AnswerJson::new(written.to_json()).map_err(|e| {
            JournalError::Corrupt(format!("the answer to {}: {e}", self.transport_ref))
        })?;
        self.decision = Decision::Accepted {
            answer,
            made_of: None,
        };
        Ok(self)
    }

    /// The receipt carried by an accepted notification's answer (of a record made whole).
    pub(crate) fn receipt(&self) -> Result<Option<Receipt>, JournalError> {
        let Decision::Accepted { answer, .. } = &self.decision else {
            return Ok(None);
        };
        match answer::read(answer.as_bytes()) {
            Ok(answer::Answer::Accepted(receipt)) => Ok(Some(Receipt {
                media_type: receipt.content_type,
                bytes: receipt.document,
            })),
            Ok(answer::Answer::Rejected(_)) | Err(_) => Err(JournalError::Corrupt(format!(
                "the recorded answer of {} carries no receipt",
                self.transport_ref
            ))),
        }
    }
}

impl Logged for ReceivedNotification {
    fn delivered(&self) -> &Delivered {
        &self.delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted() -> ReceivedNotification {
        ReceivedNotification {
            delivered: Delivered {
                received_at: "2026-11-28T09:00:00Z".parse().unwrap(),
                report_id: "r".into(),
                module: "bedreport".into(),
                idempotency_key: "k".into(),
                message_uuid: "m".into(),
                content_type: "application/fhir+json".into(),
                body: Vec::new(),
                sha256_hex: "00".into(),
                repeat_submissions: 0,
            },
            transport_ref: "t".into(),
            bundle_profile: Some("ReportBundle".into()),
            bundle_id: Some("b".into()),
            notification_id: Some("n".into()),
            decision: Decision::Accepted {
                answer: AnswerJson::unwritten(),
                made_of: Some(MadeOf {
                    ids: AcceptedIds {
                        composition: "c".into(),
                        binary: "d".into(),
                    },
                    authority: "DEMIS (simuliert)".into(),
                    report_type: "Bettenbelegungsbericht (ReportBundle)".into(),
                    sender: "Standort 987654".into(),
                }),
            },
        }
    }

    #[test]
    fn the_journal_keeps_what_an_answer_is_made_of_and_readers_get_it_written() {
        let stored = serde_json::to_value(accepted()).unwrap();
        assert!(stored["decision"].get("answer").is_none(), "{stored}");
        assert_eq!(stored["decision"]["made_of"]["ids"]["binary"], "d");
        let read: ReceivedNotification = serde_json::from_value(stored).unwrap();
        assert_eq!(read, accepted());

        let whole = read.with_answer().unwrap();
        let Decision::Accepted { answer, made_of } = &whole.decision else {
            panic!("{:?}", whole.decision);
        };
        assert_eq!(*made_of, None);
        let receipt = whole.receipt().unwrap().unwrap();
        assert!(receipt.bytes.starts_with(b"%PDF-"));
        let parameters: serde_json::Value = serde_json::from_slice(answer.as_bytes()).unwrap();
        let bundle = &parameters["parameter"][0]["resource"];
        assert_eq!(bundle["entry"][0]["resource"]["id"], "c");
        assert_eq!(bundle["entry"][2]["resource"]["id"], "d");
        // Written the same every time, and shown whole.
        assert_eq!(accepted().with_answer().unwrap(), whole);
        let shown = serde_json::to_value(&whole).unwrap();
        assert_eq!(shown["decision"]["answer"], parameters);
        assert!(shown["decision"].get("made_of").is_none(), "{shown}");
    }

    #[test]
    fn an_accepted_record_with_neither_answer_nor_made_of_is_corrupt_not_null() {
        let mut stored = serde_json::to_value(accepted()).unwrap();
        stored["decision"]
            .as_object_mut()
            .unwrap()
            .remove("made_of");
        let read: ReceivedNotification = serde_json::from_value(stored).unwrap();
        match read.with_answer() {
            Err(JournalError::Corrupt(message)) => {
                assert!(message.contains("neither its answer"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        // A record of an earlier version, its answer whole, is handed out as it is.
        let earlier = accepted().with_answer().unwrap();
        assert_eq!(earlier.clone().with_answer().unwrap(), earlier);
    }
}
