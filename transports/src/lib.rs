//! Transports: how a built message reaches an authority, and what comes back.
//!
//! [`Transport`] is the interface the engine delivers through. The simulated authorities in this
//! crate implement it the way the real ones behave (deliveries one by one, acknowledgements
//! collected in batches from the portal's inbox), keep a durable journal of what they received
//! (so that a tester can assert on the exact payload and on exactly-once delivery), and hand back
//! receipt PDFs ([`receipt`], laid out by [`pdf`], which writes other plain-text documents too).
//! [`wire`] is the HTTP protocol to an authority running as its own process (a simulator or a
//! tester's mock) and the transport that speaks it. [`mailbox`] is the third kind of authority:
//! one the service reads from (a court mailbox).

mod claims;
pub mod mailbox;
pub mod pdf;
pub mod receipt;
pub mod received;
pub mod script;
pub mod simulated;
pub mod tls;
pub mod wire;

pub use mailbox::{Mailbox, MailboxServer};
pub use simulated::{kind, Protocol, Simulated, SimulatorError, TransportKind};

/// Declares each transport's folder and lists its [`TransportKind`] in [`TRANSPORTS`].
macro_rules! transports {
    ($($transport:ident),* $(,)?) => {
        $(pub mod $transport;)*

        /// Every transport the service knows. Adding a transport is its folder plus one line in
        /// the list below.
        pub static TRANSPORTS: &[TransportKind] = &[$($transport::KIND),*];
    };
}

transports! {
    xpersonenstand,
    demis,
    egvp,
}

pub use meldewerk_storage::{MessageSignature, Outcome, Receipt, Sender};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One message handed to a transport. As JSON it is the body of the wire protocol's
/// `POST /deliveries` ([`wire`]), with the bytes as standard base64.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
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
    #[schema(value_type = String, content_encoding = "base64")]
    pub body: Vec<u8>,
    /// Detached signature over `body`, when the message is signed or sealed.
    pub signature: Option<MessageSignature>,
    /// The facility the message is sent as, when its module sends as one: a transport whose
    /// authority knows senders by their certificate presents the one deposited for it; others
    /// ignore it. Left out of the JSON when absent, so that the wire protocol stays as it was
    /// for every other delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<Sender>,
}

/// The authority took the delivery and will acknowledge it later, through its inbox.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Accepted {
    /// The transport's reference; the acknowledgement names it.
    pub transport_ref: String,
    /// When the transport first accepted this idempotency key.
    pub accepted_at: DateTime<Utc>,
    /// `true` when this call was a repeat of an earlier accepted delivery (nothing delivered again).
    pub duplicate: bool,
}

/// The authority decided on the delivery at once, in its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The authority's reference for the report, when it gave one (a refusal may have none).
    pub transport_ref: Option<String>,
    /// What it decided.
    pub outcome: Outcome,
    /// `true` when this call was a repeat of a delivery the authority had decided on already
    /// (answered with the original decision, nothing registered again).
    pub duplicate: bool,
}

impl Finished {
    /// A refusal at once, without a reference: the report fails with `reason`.
    pub fn refused(reason: impl Into<String>) -> Self {
        Finished {
            transport_ref: None,
            outcome: Outcome::Failure {
                reason: reason.into(),
            },
            duplicate: false,
        }
    }
}

/// What the authority answered to one delivery ([`Transport::submit`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It took the message; its verdict comes later through the inbox ([`Inbox`]).
    AwaitingAck(Accepted),
    /// It decided at once: the report ends with this outcome.
    Finished(Finished),
}

impl Answer {
    /// The acceptance, when the authority took the message for a later acknowledgement.
    pub fn awaiting_ack(&self) -> Option<&Accepted> {
        match self {
            Answer::AwaitingAck(accepted) => Some(accepted),
            Answer::Finished(_) => None,
        }
    }

    /// The decision, when the authority decided at once.
    pub fn finished(&self) -> Option<&Finished> {
        match self {
            Answer::AwaitingAck(_) => None,
            Answer::Finished(finished) => Some(finished),
        }
    }
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
    pub outcome: Outcome,
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

/// Why a transport call failed. A verdict on a report is no error: an authority's refusal is an
/// [`Answer::Finished`] with [`Outcome::Failure`].
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum TransportError {
    /// Worth retrying later (timeout, unavailable, overloaded).
    #[error("transient transport error: {0}")]
    Transient(String),
    /// From [`Inbox::acknowledgements`]: the inbox refused the fetch itself, which waiting
    /// will not mend (it refuses the portal's credentials, say). From [`Transport::submit`]:
    /// the transport sent nothing because the sender's credentials are missing or unusable
    /// here (no certificate deposited for the facility). Neither is a verdict on any report
    /// nor a fault of the authority: the engine retries the delivery later without counting
    /// it against the transport's circuit breaker.
    #[error("refused: {0}")]
    Refused(String),
    /// Only from [`Inbox::acknowledgements`] and [`Mailbox::list`]: the inbox or mailbox does not
    /// know the cursor it was given (the office restarted with a fresh journal, or the cursor
    /// came from another office). Not a verdict on any report: the caller starts again from the
    /// oldest entry.
    #[error("unknown inbox cursor: {0}")]
    UnknownCursor(String),
}

/// A way to deliver messages to an authority and learn their fate.
///
/// Authorities are of two kinds: one answers every delivery at once with its decision (a
/// reporting system that registers a notification and hands back the receipt in the same call),
/// the other takes the message and drops its decision into the portal's inbox later (a
/// civil-registry office). [`Transport::submit`] says which happened; a transport of the second
/// kind also provides an [`Inbox`] through [`Transport::inbox`], and the engine collects from it.
/// A third kind is read from: a court mailbox holds messages nobody asked for, which the service
/// lists, fetches and deletes through [`Transport::mailbox`] ([`mailbox`]); sending to it decides
/// at once.
#[async_trait]
pub trait Transport: Send + Sync + 'static {
    /// Short name for logs, metrics and configuration, e.g. `xpersonenstand`.
    fn name(&self) -> &str;
    /// Hands a message to the authority and answers what it said. Must be idempotent per
    /// [`Delivery::idempotency_key`]: a repeat is answered with the original acceptance or
    /// decision, and registers nothing again.
    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError>;
    /// The portal's inbox, for an authority that acknowledges later; `None` (the default) for
    /// one that always decides at once.
    fn inbox(&self) -> Option<&dyn Inbox> {
        None
    }
    /// The court mailbox the service reads from, for an authority that keeps mailboxes
    /// ([`mailbox`]); `None` (the default) for every other.
    fn mailbox(&self) -> Option<&dyn Mailbox> {
        None
    }
}

/// The inbox of an authority that acknowledges deliveries later.
#[async_trait]
pub trait Inbox: Send + Sync {
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
