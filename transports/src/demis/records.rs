//! What the simulated reporting system records of each notification, kept in its journal
//! ([`meldewerk_storage::Journal`]): indexed by idempotency key and by its reference, grouped by
//! report id and by module for the received log's filters ([`crate::received::BY_REPORT`],
//! [`crate::received::BY_MODULE`]). An accepted notification's record holds the whole
//! `Parameters` answer the reporting system sent, receipt PDF included.

use chrono::{DateTime, Utc};
use meldewerk_fhir::answer;
use meldewerk_storage::{base64_bytes, JournalError, Receipt};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::received::Logged;

/// Journal index of notifications by the sender's idempotency key.
pub(crate) const BY_IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Journal index of notifications by the reference the reporting system gave them.
pub(crate) const BY_TRANSPORT_REF: &str = "transport-ref";

/// A notification as the simulated reporting system recorded it. Serialises to JSON with `body`
/// as standard base64.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceivedNotification {
    /// When the reporting system received it.
    pub received_at: DateTime<Utc>,
    /// The reporting system's reference of the notification (a UUID v4).
    pub transport_ref: String,
    /// The integrator's report id the delivery named (else the notification's `NotificationId`).
    pub report_id: String,
    /// The module the delivery came from, e.g. `labreport` (empty when the sender did not say).
    pub module: String,
    /// The key the reporting system registers each notification under once: the delivery's
    /// idempotency key (else `bundle:` and the bundle's `NotificationBundleId`).
    pub idempotency_key: String,
    /// The delivery's message id (else the bundle's `NotificationBundleId`).
    pub message_uuid: String,
    /// The media type the notification was declared as.
    pub content_type: String,
    /// The notification's exact bytes: kept apart from the record in the journal (its
    /// attachment), filled in for every reader.
    #[serde(default, with = "base64_bytes")]
    pub body: Vec<u8>,
    /// Lower-case hex SHA-256 of `body`.
    pub sha256_hex: String,
    /// How often the same idempotency key came again; each repeat was answered with the
    /// original answer and registered nothing.
    pub repeat_submissions: u32,
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
        /// The answer as sent.
        answer: AnswerJson,
    },
    /// Refused by its checks: the reasons of its `OperationOutcome`, one per line.
    Refused {
        /// The reasons.
        reason: String,
    },
}

/// The JSON text of an answer, kept as the reporting system sent it: recorded and handed out
/// again without being parsed into a tree and written out anew (each was a tenth of the
/// simulator's time per notification). As JSON it is that text, so records read and write as
/// they did when the answer was a tree.
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
    pub(crate) fn new(json: Vec<u8>) -> Result<Self, serde_json::Error> {
        let text = String::from_utf8(json).map_err(serde::de::Error::custom)?;
        RawValue::from_string(text).map(AnswerJson)
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
    /// The receipt carried by an accepted notification's answer.
    pub(crate) fn receipt(&self) -> Result<Option<Receipt>, JournalError> {
        let Decision::Accepted { answer } = &self.decision else {
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
    fn module(&self) -> &str {
        &self.module
    }

    fn received_at(&self) -> DateTime<Utc> {
        self.received_at
    }
}
