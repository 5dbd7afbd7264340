//! Transports: how a built message reaches an authority, and what comes back.
//!
//! [`Transport`] is the interface the engine delivers through. The simulated authorities in this
//! crate implement it the way the real ones behave (deliveries one by one, acknowledgements
//! collected in batches from the portal's inbox), keep a durable journal of what they received
//! (so that a tester can assert on the exact payload and on exactly-once delivery), and hand back
//! receipt PDFs ([`receipt`]). [`wire`] is the HTTP protocol to an authority running as its own
//! process (a simulator or a tester's mock) and the transport that speaks it.

mod claims;
pub mod receipt;
pub mod script;
pub mod wire;
pub mod xpersonenstand;

pub use meldewerk_storage::MessageSignature;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One message handed to a transport. As JSON it is the body of the wire protocol's
/// `POST /deliveries` ([`wire`]), with the bytes as standard base64.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Delivery {
    /// Stable key of this report's delivery: a retry after a crash or timeout carries the same key,
    /// and the transport answers it with the original acceptance instead of delivering twice.
    pub idempotency_key: String,
    /// Module path segment, e.g. `birthnotice` (for receipts and logs).
    pub module: String,
    /// The integrator's report id (for receipts and logs).
    pub report_id: String,
    /// Message UUID from the message header.
    pub message_uuid: String,
    /// Media type of `body`.
    pub content_type: String,
    /// The exact bytes to deliver.
    #[serde(with = "meldewerk_storage::base64_bytes")]
    pub body: Vec<u8>,
    /// Detached signature over `body`, when the message is signed or sealed.
    pub signature: Option<MessageSignature>,
}

/// The transport took the delivery.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Accepted {
    /// The transport's reference; the acknowledgement names it.
    pub transport_ref: String,
    /// When the transport first accepted this idempotency key.
    pub accepted_at: DateTime<Utc>,
    /// `true` when this call was a repeat of an earlier accepted delivery (nothing delivered again).
    pub duplicate: bool,
}

/// The authority's verdict on an accepted delivery, as its acknowledgement carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckOutcome {
    /// The authority confirmed receipt.
    Acknowledged {
        /// Receipt PDF handed back by the authority.
        receipt_pdf: Vec<u8>,
        /// Identifier of the delivery portal, reported to integrators.
        portal: Option<String>,
    },
    /// The authority refused the message for good.
    Rejected {
        /// Reason reported to integrators.
        reason: String,
    },
}

/// One acknowledgement in the portal's inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledgement {
    /// The message UUID of the acknowledged delivery ([`Delivery::message_uuid`], from the
    /// message header), as the authority's acknowledgement names the message it answers. The
    /// engine finds the report by it, so an acknowledgement that arrives before the engine has
    /// recorded the acceptance still finds its report.
    pub message_uuid: String,
    /// The reference the transport handed out when it accepted the delivery.
    pub transport_ref: String,
    /// What the authority decided.
    pub outcome: AckOutcome,
}

/// One fetch from the inbox: the acknowledgements that arrived after the cursor the fetch was
/// given, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckBatch {
    /// Acknowledgements after the given cursor, in the order they arrived, at most the limit.
    pub acknowledgements: Vec<Acknowledgement>,
    /// Where the next fetch starts: the position after the last acknowledgement of this batch,
    /// or the given cursor again when the batch is empty. Opaque to the engine.
    pub cursor: Option<String>,
    /// Whether more acknowledgements wait after this batch (fetch again at once).
    pub more: bool,
}

/// Why a transport call failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TransportError {
    /// Worth retrying later (timeout, unavailable, overloaded).
    #[error("transient transport error: {0}")]
    Transient(String),
    /// Final: the message will never be accepted (invalid, unsigned, unknown reference).
    #[error("rejected by the transport: {0}")]
    Rejected(String),
    /// Only from [`Transport::acknowledgements`]: the inbox does not know the cursor it was given
    /// (the office restarted with a fresh journal, or the cursor came from another office). Not
    /// a verdict on any report: the caller starts again from the inbox's oldest entry.
    #[error("unknown inbox cursor: {0}")]
    UnknownCursor(String),
}

/// A way to deliver messages to an authority and learn their fate.
#[async_trait]
pub trait Transport: Send + Sync + 'static {
    /// Short name for logs and metrics, e.g. `xpersonenstand`.
    fn name(&self) -> &str;
    /// Hands a message over. Must be idempotent per [`Delivery::idempotency_key`].
    async fn submit(&self, delivery: Delivery) -> Result<Accepted, TransportError>;
    /// Fetches the acknowledgements that arrived in the portal's inbox after `cursor` (`None`:
    /// from the start), at most `limit`. Acknowledgements are not handed out per report: the
    /// authority drops them into the inbox as it decides, and one call collects every one since
    /// the cursor, however many reports wait. Fetching does not consume: the same cursor gives
    /// the same acknowledgements again, so a caller that crashed before saving the new cursor
    /// loses nothing. A cursor the inbox does not know is [`TransportError::UnknownCursor`].
    async fn acknowledgements(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AckBatch, TransportError>;
}
