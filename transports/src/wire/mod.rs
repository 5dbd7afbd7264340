//! The wire protocol between the service and an authority that runs as its own process: a
//! simulator started with `meldewerk simulate <name>`, or a tester's own mock in any language.
//! JSON over HTTP, two calls:
//!
//! - `POST {url}/deliveries` with a [`crate::Delivery`]: `200` [`WireAccepted`]; `422`
//!   [`WireError`] is a final rejection; anything else (another status, a connection error, a
//!   timeout, an unreadable answer) is transient.
//! - `GET {url}/acknowledgements?cursor=…&limit=…`: `200` [`WireAckBatch`]; `410` [`WireError`]
//!   for a cursor the inbox does not know ([`crate::TransportError::UnknownCursor`]: the service
//!   starts again from the inbox's oldest entry);
//!   anything else is transient.
//!
//! The types here are the one definition of the format: the client ([`HttpTransport`]) and the
//! simulator's server (in the service crate) both use them, and `docs/testing-integrations.md`
//! describes them for mock authors. Byte fields travel as standard base64.

mod client;

pub use client::{HttpTransport, HttpTransportSettings};

use chrono::{DateTime, Utc};
use meldewerk_storage::base64_bytes;
use serde::{Deserialize, Serialize};

use crate::{Accepted, AckBatch, AckOutcome, Acknowledgement};

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

/// The `200` answer to `POST /deliveries`. Only `transport_ref` is required, so that a mock can
/// answer with one member; members the service does not know are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireAccepted {
    /// The authority's reference; its acknowledgement names it.
    pub transport_ref: String,
    /// When the authority first accepted this idempotency key (RFC 3339); when absent, the time
    /// the answer arrived.
    #[serde(default)]
    pub accepted_at: Option<DateTime<Utc>>,
    /// Whether this was a repeat of an accepted key (nothing delivered again). Default `false`.
    #[serde(default)]
    pub duplicate: bool,
}

impl From<Accepted> for WireAccepted {
    fn from(a: Accepted) -> Self {
        WireAccepted {
            transport_ref: a.transport_ref,
            accepted_at: Some(a.accepted_at),
            duplicate: a.duplicate,
        }
    }
}

impl WireAccepted {
    /// The acceptance, or why the answer cannot be one.
    pub fn into_accepted(self, arrived_at: DateTime<Utc>) -> Result<Accepted, String> {
        if self.transport_ref.is_empty() {
            return Err("transport_ref must not be empty".to_owned());
        }
        Ok(Accepted {
            transport_ref: self.transport_ref,
            accepted_at: self.accepted_at.unwrap_or(arrived_at),
            duplicate: self.duplicate,
        })
    }
}

/// One acknowledgement in a [`WireAckBatch`], told apart by `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WireAck {
    /// The authority confirmed receipt: the report ends `SUCCESS` with this receipt.
    Acknowledged {
        /// The `message_uuid` of the delivery it answers.
        message_uuid: String,
        /// The reference handed out when the delivery was accepted.
        transport_ref: String,
        /// The receipt, a PDF, standard base64.
        #[serde(with = "base64_bytes")]
        receipt_pdf: Vec<u8>,
        /// Identifier of the delivery portal, shown to integrators; may be absent.
        #[serde(default)]
        portal: Option<String>,
    },
    /// The authority refused the message for good: the report ends `FAILURE` with this reason.
    Rejected {
        /// The `message_uuid` of the delivery it answers.
        message_uuid: String,
        /// The reference handed out when the delivery was accepted.
        transport_ref: String,
        /// Reason shown to integrators.
        reason: String,
    },
}

impl From<Acknowledgement> for WireAck {
    fn from(ack: Acknowledgement) -> Self {
        match ack.outcome {
            AckOutcome::Acknowledged {
                receipt_pdf,
                portal,
            } => WireAck::Acknowledged {
                message_uuid: ack.message_uuid,
                transport_ref: ack.transport_ref,
                receipt_pdf,
                portal,
            },
            AckOutcome::Rejected { reason } => WireAck::Rejected {
                message_uuid: ack.message_uuid,
                transport_ref: ack.transport_ref,
                reason,
            },
        }
    }
}

impl WireAck {
    /// The acknowledgement, or why it cannot be one.
    fn into_acknowledgement(self) -> Result<Acknowledgement, String> {
        let (message_uuid, transport_ref, outcome) = match self {
            WireAck::Acknowledged {
                message_uuid,
                transport_ref,
                receipt_pdf,
                portal,
            } => {
                // The receipt goes to integrators as a PDF; anything else is the peer's mistake
                // and is better seen at once than in an integrator's viewer.
                if !receipt_pdf.starts_with(b"%PDF-") {
                    return Err(format!(
                        "the receipt_pdf of {transport_ref:?} is not a PDF (it must start with %PDF-)"
                    ));
                }
                let outcome = AckOutcome::Acknowledged {
                    receipt_pdf,
                    portal,
                };
                (message_uuid, transport_ref, outcome)
            }
            WireAck::Rejected {
                message_uuid,
                transport_ref,
                reason,
            } => {
                if reason.is_empty() {
                    return Err(format!("the reason of {transport_ref:?} must not be empty"));
                }
                (message_uuid, transport_ref, AckOutcome::Rejected { reason })
            }
        };
        if message_uuid.is_empty() || transport_ref.is_empty() {
            return Err("message_uuid and transport_ref must not be empty".to_owned());
        }
        Ok(Acknowledgement {
            message_uuid,
            transport_ref,
            outcome,
        })
    }
}

/// The `200` answer to `GET /acknowledgements`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireAckBatch {
    /// Acknowledgements after the cursor, oldest first.
    pub acknowledgements: Vec<WireAck>,
    /// Where the next call starts (a string, opaque to the service); `null` only while the inbox
    /// has never handed anything out.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        };
        let json = serde_json::to_value(&delivery).unwrap();
        assert_eq!(json["body"], "PHgvPg==");
        let back: Delivery = serde_json::from_value(json).unwrap();
        assert_eq!(back, delivery);
    }

    #[test]
    fn a_minimal_acceptance_is_enough() {
        let accepted: WireAccepted = serde_json::from_str(r#"{"transport_ref": "t-1"}"#).unwrap();
        let now = Utc::now();
        let accepted = accepted.into_accepted(now).unwrap();
        assert_eq!(accepted.transport_ref, "t-1");
        assert_eq!(accepted.accepted_at, now);
        assert!(!accepted.duplicate);
        let empty: WireAccepted = serde_json::from_str(r#"{"transport_ref": ""}"#).unwrap();
        assert!(empty.into_accepted(now).is_err());
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
            AckOutcome::Acknowledged {
                receipt_pdf: b"%PDF-1.4".to_vec(),
                portal: None
            }
        );
        assert_eq!(
            batch.acknowledgements[1].outcome,
            AckOutcome::Rejected {
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
