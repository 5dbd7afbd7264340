//! The wire protocol's mailbox face, for an authority that keeps mailboxes the service reads
//! from ([`crate::Mailbox`], such as the court mailbox `egvp`). Below `{url}/mailboxes`:
//!
//! - `GET /mailboxes/{safeId}/messages?cursor=…&limit=…`: `200` [`WireMailboxPage`], the
//!   account's messages after the cursor, oldest first; `410` [`super::WireError`] for a cursor
//!   the server does not know ([`crate::TransportError::UnknownCursor`]: the service lists from
//!   the start again); `403` for an account the server does not keep
//!   ([`crate::TransportError::Refused`]).
//! - `GET /mailboxes/{safeId}/messages/{messageId}`: `200` [`WireMailboxMessage`], the whole
//!   message (the server records the first fetch of an incoming message as its `received_at`);
//!   `404` when it is gone (`Ok(None)`); `403` as above.
//! - `DELETE /mailboxes/{safeId}/messages/{messageId}`: `200` [`WireDeleted`], `deleted` false
//!   when it was gone already; `403` as above.
//!
//! Anything else (another status, a connection error, a timeout, an unreadable answer) is
//! transient. Sending stays `POST /deliveries` with the message package as the delivery's body.
//! Path segments are percent-encoded; times are RFC 3339, byte fields standard base64.

use serde::{Deserialize, Serialize};

use crate::mailbox::{MailboxEntry, MailboxFile, MailboxMessage, MailboxPage};

/// Path of the mailbox face, below the authority's url.
pub const MAILBOXES_PATH: &str = "/mailboxes";

/// The `200` answer to a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireMailboxPage {
    /// The messages after the cursor, oldest first: `message_id`, `direction` (`INCOMING`,
    /// `OUTGOING`), `created_at`, `received_at` (null while nobody fetched it), `size` (the sum
    /// of its files' byte lengths).
    pub messages: Vec<MailboxEntry>,
    /// Where the next listing starts (a string, opaque to the service); the given cursor again
    /// when the page is empty, `null` only for an empty first page.
    #[schema(required = true)]
    pub cursor: Option<String>,
    /// Whether more messages follow. Default `false`.
    #[serde(default)]
    pub more: bool,
}

impl From<MailboxPage> for WireMailboxPage {
    fn from(page: MailboxPage) -> Self {
        WireMailboxPage {
            messages: page.entries,
            cursor: page.cursor,
            more: page.more,
        }
    }
}

impl From<WireMailboxPage> for MailboxPage {
    fn from(page: WireMailboxPage) -> Self {
        MailboxPage {
            entries: page.messages,
            cursor: page.cursor,
            more: page.more,
        }
    }
}

/// The `200` answer to a fetch: the listing entry's members, sender, recipient and the files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireMailboxMessage {
    /// The entry's members, as in a listing.
    #[serde(flatten)]
    pub entry: MailboxEntry,
    /// The sender's SAFE-ID.
    pub sender: String,
    /// The recipient's SAFE-ID.
    pub recipient: String,
    /// `[{"name": …, "content": base64}, …]`: the XJustiz message `xjustiz_nachricht.xml` and
    /// the attachments.
    pub files: Vec<MailboxFile>,
}

impl From<MailboxMessage> for WireMailboxMessage {
    fn from(message: MailboxMessage) -> Self {
        WireMailboxMessage {
            entry: message.entry,
            sender: message.sender,
            recipient: message.recipient,
            files: message.files,
        }
    }
}

impl From<WireMailboxMessage> for MailboxMessage {
    fn from(message: WireMailboxMessage) -> Self {
        MailboxMessage {
            entry: message.entry,
            sender: message.sender,
            recipient: message.recipient,
            files: message.files,
        }
    }
}

/// The `200` answer to a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WireDeleted {
    /// `true` when this call deleted it, `false` when it was gone already.
    pub deleted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mailbox::Direction;

    #[test]
    fn a_fetched_message_is_flat_json() {
        let message: WireMailboxMessage = serde_json::from_value(serde_json::json!({
            "message_id": "m-1", "direction": "INCOMING", "created_at": "2026-11-20T10:15:00Z",
            "size": 4, "sender": "DE.Justiz.ag", "recipient": "DE.Justiz.wir",
            "files": [{"name": "xjustiz_nachricht.xml", "content": "PHgvPg=="}], "extra": 1
        }))
        .unwrap();
        assert_eq!(message.entry.direction, Direction::Incoming);
        assert_eq!(message.entry.received_at, None);
        assert_eq!(message.files[0].content, b"<x/>");
        let written = serde_json::to_value(&message).unwrap();
        assert_eq!(written["message_id"], "m-1");
        assert_eq!(written["received_at"], serde_json::Value::Null);
    }
}
