//! The wire protocol between the service and an authority that runs as its own process: a
//! simulator started with `meldewerk simulate <name>`, or a tester's own mock in any language.
//! JSON over HTTP, two calls:
//!
//! - `POST {url}/deliveries` with a [`crate::Delivery`]: `200` [`WireAnswer`], which either
//!   says the message waits for its acknowledgement, or carries the authority's decision made at
//!   once (`outcome`); `422` [`WireError`] is a refusal at once (the report fails with its
//!   reason); anything else (another status, a connection error, a timeout, an unreadable
//!   answer) is transient.
//! - `GET {url}/acknowledgements?cursor=…&limit=…`, for an authority that acknowledges later
//!   (a transport whose authority has an inbox, such as the civil-registry office): `200` [`WireAckBatch`]; `410` [`WireError`]
//!   for a cursor the inbox does not know ([`crate::TransportError::UnknownCursor`]: the service
//!   starts again from the inbox's oldest entry); `403` a refusal of the fetch itself
//!   ([`crate::TransportError::Refused`]); anything else is transient.
//!
//! An authority that keeps mailboxes the service reads from (a court mailbox) has a third face,
//! below `{url}/mailboxes`: listing, fetching and deleting an account's messages ([`mailbox`]).
//!
//! The types here are the one definition of the format: the client ([`HttpTransport`]) and the
//! simulator's server (in the service crate) both use them, and `docs/testing-integrations.md`
//! describes them for mock authors. Byte fields travel as standard base64.

pub(crate) mod client;
pub mod mailbox;

pub use client::{connect, HttpTransport, HttpTransportSettings};

use chrono::{DateTime, Utc};
use meldewerk_storage::base64_bytes;
use serde::{Deserialize, Serialize};

use crate::{Accepted, AckBatch, Acknowledgement, Answer, Finished, Outcome, Receipt};

/// Path of the delivery call, below the authority's url.
pub const DELIVERIES_PATH: &str = "/deliveries";
/// Path of the inbox call, below the authority's url.
pub const ACKNOWLEDGEMENTS_PATH: &str = "/acknowledgements";
/// Largest body either side reads: a delivery (the message as base64 in JSON) or an answer (a
/// batch of acknowledgements with their receipts). Far above what one report or one batch of
/// [`MAX_WIRE_BATCH`] receipts needs; it only keeps a broken peer from filling the memory.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Most acknowledgements the client asks for in one call; the engine fetches again at once while
/// `more` is true, so a full inbox is read in several bounded answers.
pub const MAX_WIRE_BATCH: usize = 100;

/// The `200` answer to `POST /deliveries`: without `outcome`, the authority took the message and
/// acknowledges it later through its inbox (`transport_ref` required); with `outcome`, it decided
/// at once and the report ends so. Members the service does not know are ignored, so that a mock
/// can answer with one or two members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireAnswer {
    /// The authority's reference; its acknowledgement names it. Optional with an `outcome`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_ref: Option<String>,
    /// When the authority first accepted this idempotency key (RFC 3339); when absent, the time
    /// the answer arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<DateTime<Utc>>,
    /// Whether this was a repeat of an accepted key (nothing delivered again). Default `false`.
    #[serde(default)]
    pub duplicate: bool,
    /// The authority's decision, when it decided at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<WireOutcome>,
}

impl From<Answer> for WireAnswer {
    fn from(answer: Answer) -> Self {
        match answer {
            Answer::AwaitingAck(a) => WireAnswer {
                transport_ref: Some(a.transport_ref),
                accepted_at: Some(a.accepted_at),
                duplicate: a.duplicate,
                outcome: None,
            },
            Answer::Finished(f) => WireAnswer {
                transport_ref: f.transport_ref,
                accepted_at: None,
                duplicate: f.duplicate,
                outcome: Some(WireOutcome::from(f.outcome)),
            },
        }
    }
}

impl WireAnswer {
    /// The answer, or why it cannot be one.
    pub fn into_answer(self, arrived_at: DateTime<Utc>) -> Result<Answer, String> {
        if self.transport_ref.as_deref() == Some("") {
            return Err("transport_ref must not be empty".to_owned());
        }
        match self.outcome {
            None => Ok(Answer::AwaitingAck(Accepted {
                transport_ref: self.transport_ref.ok_or(
                    "an answer without an outcome must carry the transport_ref its \
                     acknowledgement will name",
                )?,
                accepted_at: self.accepted_at.unwrap_or(arrived_at),
                duplicate: self.duplicate,
            })),
            Some(outcome) => Ok(Answer::Finished(Finished {
                outcome: outcome.into_outcome(self.transport_ref.as_deref().unwrap_or("answer"))?,
                transport_ref: self.transport_ref,
                duplicate: self.duplicate,
            })),
        }
    }
}

/// An authority's decision on the wire, told apart by `status`: in an acknowledgement, or in the
/// answer to a delivery when the authority decided at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WireOutcome {
    /// The authority confirmed receipt: the report ends `SUCCESS` with this receipt.
    Acknowledged {
        /// The receipt, standard base64 (`receipt_pdf` is read as well, the name of earlier
        /// versions).
        #[serde(with = "base64_bytes", alias = "receipt_pdf")]
        #[schema(value_type = String, content_encoding = "base64")]
        receipt: Vec<u8>,
        /// Media type of the receipt; `application/pdf` when absent.
        #[serde(default = "pdf")]
        receipt_media_type: String,
        /// Identifier of the delivery portal, shown to integrators; may be absent.
        #[serde(default)]
        portal: Option<String>,
    },
    /// The authority refused the message for good: the report ends `FAILURE` with this reason.
    Rejected {
        /// Reason shown to integrators.
        reason: String,
    },
}

fn pdf() -> String {
    Receipt::PDF.to_owned()
}

impl From<Outcome> for WireOutcome {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Success { receipt, portal } => WireOutcome::Acknowledged {
                receipt: receipt.bytes,
                receipt_media_type: receipt.media_type,
                portal,
            },
            Outcome::Failure { reason } => WireOutcome::Rejected { reason },
        }
    }
}

impl WireOutcome {
    /// The outcome, or why it cannot be one (`what` names it in the reason).
    fn into_outcome(self, what: &str) -> Result<Outcome, String> {
        match self {
            WireOutcome::Acknowledged {
                receipt,
                receipt_media_type,
                portal,
            } => {
                let receipt = Receipt {
                    media_type: receipt_media_type,
                    bytes: receipt,
                };
                check_receipt(&receipt).map_err(|e| format!("the receipt of {what:?} {e}"))?;
                Ok(Outcome::Success { receipt, portal })
            }
            WireOutcome::Rejected { reason } => {
                if reason.is_empty() {
                    return Err(format!("the reason of {what:?} must not be empty"));
                }
                Ok(Outcome::Failure { reason })
            }
        }
    }
}

/// A receipt is what it says it is: integrators open it in a viewer for its media type, so a
/// mismatch is better seen at once, as the peer's mistake.
fn check_receipt(receipt: &Receipt) -> Result<(), String> {
    let media_type = receipt.media_type.as_str();
    let (kind, sub) = media_type.split_once('/').unwrap_or_default();
    if kind.is_empty() || sub.is_empty() || media_type.chars().any(char::is_whitespace) {
        return Err(format!("has no media type (type/subtype): {media_type:?}"));
    }
    if media_type == Receipt::PDF && !receipt.bytes.starts_with(b"%PDF-") {
        return Err("is not a PDF (it must start with %PDF-)".to_owned());
    }
    if receipt.bytes.is_empty() {
        return Err("is empty".to_owned());
    }
    Ok(())
}

/// One acknowledgement in a [`WireAckBatch`]: the message it answers and the decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireAck {
    /// The `message_uuid` of the delivery it answers.
    pub message_uuid: String,
    /// The reference handed out when the delivery was accepted.
    pub transport_ref: String,
    /// What the authority decided (`status` and its members, beside the two above).
    #[serde(flatten)]
    pub outcome: WireOutcome,
}

impl From<Acknowledgement> for WireAck {
    fn from(ack: Acknowledgement) -> Self {
        WireAck {
            message_uuid: ack.message_uuid,
            transport_ref: ack.transport_ref,
            outcome: WireOutcome::from(ack.outcome),
        }
    }
}

impl WireAck {
    /// The acknowledgement, or why it cannot be one.
    fn into_acknowledgement(self) -> Result<Acknowledgement, String> {
        if self.message_uuid.is_empty() || self.transport_ref.is_empty() {
            return Err("message_uuid and transport_ref must not be empty".to_owned());
        }
        Ok(Acknowledgement {
            outcome: self.outcome.into_outcome(&self.transport_ref)?,
            message_uuid: self.message_uuid,
            transport_ref: self.transport_ref,
        })
    }
}

/// The `200` answer to `GET /acknowledgements`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireAckBatch {
    /// Acknowledgements after the cursor, oldest first.
    pub acknowledgements: Vec<WireAck>,
    /// Where the next call starts (a string, opaque to the service); `null` only while the inbox
    /// has never handed anything out.
    #[schema(required = true)]
    pub cursor: Option<String>,
    /// Whether more acknowledgements wait after this batch. Default `false`.
    #[serde(default)]
    pub more: bool,
}

impl From<AckBatch> for WireAckBatch {
    fn from(batch: AckBatch) -> Self {
        WireAckBatch {
            acknowledgements: batch
                .acknowledgements
                .into_iter()
                .map(WireAck::from)
                .collect(),
            cursor: batch.cursor,
            more: batch.more,
        }
    }
}

impl WireAckBatch {
    /// The batch, or the first reason one of its acknowledgements cannot be used.
    pub fn into_batch(self) -> Result<AckBatch, String> {
        Ok(AckBatch {
            acknowledgements: self
                .acknowledgements
                .into_iter()
                .map(WireAck::into_acknowledgement)
                .collect::<Result<_, _>>()?,
            cursor: self.cursor,
            more: self.more,
        })
    }
}

/// The body of every refusal (`422`, `410`) and, where the peer gives one, of other errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireError {
    /// What went wrong; for a `422` the reason the report fails with.
    pub error: String,
}

/// Checks a configured authority url: absolute `http` or `https` with a host, no query or
/// fragment (the protocol's paths are appended to it).
pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not an absolute url ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{url:?} must start with http:// or https://"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("{url:?} names no host"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(format!("{url:?} must not carry a query or fragment"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!(
            "{url:?} must not carry credentials: the protocol has none"
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_travels_with_base64_bytes() {
        use crate::Delivery;
        let delivery = Delivery {
            idempotency_key: "k".into(),
            module: "birthnotice".into(),
            report_id: "r".into(),
            message_uuid: "u".into(),
            content_type: "application/xml".into(),
            body: b"<x/>".to_vec(),
            signature: None,
            sender: None,
        };
        let json = serde_json::to_value(&delivery).unwrap();
        assert_eq!(json["body"], "PHgvPg==");
        let back: Delivery = serde_json::from_value(json).unwrap();
        assert_eq!(back, delivery);
    }

    #[test]
    fn a_minimal_acceptance_is_enough() {
        let accepted: WireAnswer = serde_json::from_str(r#"{"transport_ref": "t-1"}"#).unwrap();
        let now = Utc::now();
        let Answer::AwaitingAck(accepted) = accepted.into_answer(now).unwrap() else {
            panic!("an answer without an outcome awaits its acknowledgement");
        };
        assert_eq!(accepted.transport_ref, "t-1");
        assert_eq!(accepted.accepted_at, now);
        assert!(!accepted.duplicate);
        let empty: WireAnswer = serde_json::from_str(r#"{"transport_ref": ""}"#).unwrap();
        assert!(empty.into_answer(now).is_err());
        let none: WireAnswer = serde_json::from_str(r#"{"duplicate": true}"#).unwrap();
        assert!(none.into_answer(now).unwrap_err().contains("transport_ref"));
    }

    #[test]
    fn an_answer_with_an_outcome_finishes_the_report() {
        let now = Utc::now();
        let answer: WireAnswer = serde_json::from_str(
            r#"{"transport_ref": "n-1", "outcome": {"status": "acknowledged",
                "receipt": "JVBERi0xLjQ=", "portal": "p"}}"#,
        )
        .unwrap();
        assert_eq!(
            answer.into_answer(now).unwrap(),
            Answer::Finished(Finished {
                transport_ref: Some("n-1".into()),
                outcome: Outcome::Success {
                    receipt: Receipt::pdf(b"%PDF-1.4".to_vec()),
                    portal: Some("p".into())
                },
                duplicate: false,
            })
        );
        let refused: WireAnswer =
            serde_json::from_str(r#"{"outcome": {"status": "rejected", "reason": "unbekannt"}}"#)
                .unwrap();
        assert_eq!(
            refused.into_answer(now).unwrap(),
            Answer::Finished(Finished::refused("unbekannt"))
        );
        let written = serde_json::to_value(WireAnswer::from(Answer::Finished(Finished::refused(
            "nein",
        ))))
        .unwrap();
        assert_eq!(
            written,
            serde_json::json!({"duplicate": false,
                               "outcome": {"status": "rejected", "reason": "nein"}})
        );
    }

    #[test]
    fn acknowledgements_are_told_apart_by_status() {
        let batch: WireAckBatch = serde_json::from_str(
            r#"{"acknowledgements": [
                {"status": "acknowledged", "message_uuid": "u-a", "transport_ref": "a",
                 "receipt_pdf": "JVBERi0xLjQ="},
                {"status": "rejected", "message_uuid": "u-b", "transport_ref": "b",
                 "reason": "nein", "extra": 1}],
               "cursor": "2"}"#,
        )
        .unwrap();
        let batch = batch.into_batch().unwrap();
        assert_eq!(batch.cursor.as_deref(), Some("2"));
        assert!(!batch.more);
        assert_eq!(batch.acknowledgements[1].message_uuid, "u-b");
        assert_eq!(
            batch.acknowledgements[0].outcome,
            Outcome::Success {
                receipt: Receipt::pdf(b"%PDF-1.4".to_vec()),
                portal: None
            }
        );
        assert_eq!(
            batch.acknowledgements[1].outcome,
            Outcome::Failure {
                reason: "nein".into()
            }
        );
    }

    #[test]
    fn a_receipt_that_is_no_pdf_is_refused() {
        let batch: WireAckBatch = serde_json::from_str(
            r#"{"acknowledgements": [{"status": "acknowledged", "message_uuid": "u-a",
                "transport_ref": "a", "receipt_pdf": "aGVsbG8="}], "cursor": "1", "more": false}"#,
        )
        .unwrap();
        assert!(batch.into_batch().unwrap_err().contains("not a PDF"));
    }

    #[test]
    fn a_receipt_carries_its_media_type() {
        let batch: WireAckBatch = serde_json::from_str(
            r#"{"acknowledgements": [{"status": "acknowledged", "message_uuid": "u-a",
                "transport_ref": "a", "receipt": "PHgvPg==", "receipt_media_type": "application/xml"}],
                "cursor": "1"}"#,
        )
        .unwrap();
        let batch = batch.into_batch().unwrap();
        let Outcome::Success { receipt, .. } = &batch.acknowledgements[0].outcome else {
            panic!("acknowledged");
        };
        assert_eq!(receipt.media_type, "application/xml");
        assert_eq!(receipt.bytes, b"<x/>");
        let untyped: WireAckBatch = serde_json::from_str(
            r#"{"acknowledgements": [{"status": "acknowledged", "message_uuid": "u-a",
                "transport_ref": "a", "receipt": "PHgvPg==", "receipt_media_type": "xml"}],
                "cursor": "1"}"#,
        )
        .unwrap();
        assert!(untyped.into_batch().unwrap_err().contains("no media type"));
    }

    #[test]
    fn an_acknowledgement_must_name_its_message() {
        let missing = serde_json::from_str::<WireAckBatch>(
            r#"{"acknowledgements": [{"status": "rejected", "transport_ref": "a",
                "reason": "nein"}], "cursor": "1"}"#,
        );
        assert!(missing.is_err());
        let empty: WireAckBatch = serde_json::from_str(
            r#"{"acknowledgements": [{"status": "rejected", "message_uuid": "",
                "transport_ref": "a", "reason": "nein"}], "cursor": "1"}"#,
        )
        .unwrap();
        assert!(empty
            .into_batch()
            .unwrap_err()
            .contains("must not be empty"));
    }

    #[test]
    fn urls_are_checked() {
        assert!(check_url("http://127.0.0.1:9001").is_ok());
        assert!(check_url("https://mock.example/authority/").is_ok());
        for bad in [
            "127.0.0.1:9001",
            "ftp://host",
            "http://",
            "http://host/?a=1",
            "http://u:p@host",
            "not a url",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}
