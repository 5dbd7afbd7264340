//! What the simulated mailbox server keeps, in two journals ([`meldewerk_storage::Journal`]):
//! the mailboxes ([`StoredMessage`], one record per copy of a message in one account, its files
//! as the record's attachment) and the received log of sends ([`ReceivedSend`], as every
//! simulator keeps one, grouped by report and module for the operator API's filters).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::mailbox::{Direction, MailboxEntry};
use crate::received::{Delivered, Logged};

/// Mailbox journal index of a copy by `<SAFE-ID>/<message id>` ([`message_key`]).
pub(crate) const BY_MESSAGE: &str = "message";
/// Index of the sender's copy of a sent message, and of the received log's records, by the
/// delivery's idempotency key.
pub(crate) const BY_IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Mailbox journal group of the copies an account holds now (a deleted copy leaves it).
pub(crate) const ACCOUNT: &str = "account";
/// Mailbox journal group of every copy an account ever held: an account the server stored a
/// message for stays known after its messages are deleted.
pub(crate) const KNOWN_ACCOUNT: &str = "known-account";

/// The index key of the copy of `message_id` in the account `safe_id` (a SAFE-ID holds no `/`).
pub(crate) fn message_key(safe_id: &str, message_id: &str) -> String {
    format!("{safe_id}/{message_id}")
}

/// One copy of a message in one account. The sender's and the recipient's copy share the
/// message id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// The account holding this copy.
    pub safe_id: String,
    /// The transport message id.
    pub message_id: String,
    /// Into the account or out of it.
    pub direction: Direction,
    /// The sender's SAFE-ID.
    pub sender: String,
    /// The recipient's SAFE-ID.
    pub recipient: String,
    /// When the server stored it.
    pub created_at: DateTime<Utc>,
    /// First retrieval: the first fetch of the recipient's copy.
    pub received_at: Option<DateTime<Utc>>,
    /// When it was deleted from the account (the record stays, out of the account's listing).
    pub deleted_at: Option<DateTime<Utc>>,
    /// The sum of its files' byte lengths.
    pub size: u64,
}

impl StoredMessage {
    /// Its listing entry.
    pub(crate) fn entry(&self) -> MailboxEntry {
        MailboxEntry {
            message_id: self.message_id.clone(),
            direction: self.direction,
            created_at: self.created_at,
            received_at: self.received_at,
            size: self.size,
        }
    }
}

/// One send the server received, as testers read it in the received log. Serialises to JSON
/// with `body` (the message package as delivered) as standard base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceivedSend {
    /// What every simulator records of a delivery (the body: the message package as delivered).
    #[serde(flatten)]
    pub delivered: Delivered,
    /// The sender's SAFE-ID, when the package was readable.
    pub sender: Option<String>,
    /// The recipient's SAFE-ID, when the package was readable.
    pub recipient: Option<String>,
    /// What the server answered.
    pub decision: SendDecision,
}

/// The server's answer to one send, given at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SendDecision {
    /// Stored in the sender's account (OUTGOING) and the recipient's (INCOMING).
    Accepted {
        /// The transport message id of both copies.
        message_id: String,
    },
    /// Refused: nothing stored in any mailbox.
    Refused {
        /// Why.
        reason: String,
    },
}

impl Logged for ReceivedSend {
    fn delivered(&self) -> &Delivered {
        &self.delivered
    }
}
