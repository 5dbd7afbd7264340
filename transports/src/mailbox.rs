//! The mailbox capability: an authority the service **reads from**. Beside the authority that
//! decides at once and the one that acknowledges later through the portal's inbox, a court
//! mailbox (the electronic court and administration mailbox, [`crate::egvp`]) holds messages per
//! account that nobody asked for: courts drop them in, and the service lists, fetches and
//! deletes them. Sending stays [`crate::Transport::submit`].
//!
//! What a sync and a hydration may rely on, for every implementation (the simulator, the wire
//! protocol's client, a tester's mock behind it):
//! - **Order and cursor.** [`Mailbox::list`] hands out an account's messages in the order the
//!   server stored them, oldest first. A cursor names a position in that order, not a message:
//!   it stays valid when the message it came after is deleted, and listing from it again gives
//!   the same messages again (listing does not consume), plus any stored since. A cursor the
//!   server does not know is [`TransportError::UnknownCursor`]: list from the start again.
//! - **Full listing.** Listing without a cursor, page by page until `more` is false, gives every
//!   message the account holds now; a message the sync indexed earlier and that is absent from
//!   a full listing is gone from the server.
//! - **Fetching.** [`Mailbox::fetch`] answers the whole message; the server records the first
//!   fetch of an incoming message as its first retrieval (`received_at`), once. A message gone
//!   is `Ok(None)`, not an error.
//! - **Deleting.** [`Mailbox::delete`] is idempotent: `Ok(false)` when the message was gone
//!   already.
//! - **Faults.** Every fault worth retrying is [`TransportError::Transient`]; an account the
//!   server does not keep is [`TransportError::Refused`] (waiting will not mend it).
//! - **Size.** An entry's `size` is the sum of its files' byte lengths: a fetch whose files sum
//!   to less was cut short on the way.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use meldewerk_storage::base64_bytes;
use serde::{Deserialize, Serialize};

use crate::TransportError;

/// Name of the XJustiz message among a court message's files.
pub const XJUSTIZ_FILE: &str = "xjustiz_nachricht.xml";
/// Most files one message may carry.
pub const MAX_FILES: usize = 100;
/// Longest file name, in bytes.
pub const MAX_FILE_NAME_BYTES: usize = 255;
/// Most bytes of one message's files together (the size limit of an EGVP message is 200 MB in
/// production; the simulator keeps a message in memory, so it keeps to less).
pub const MAX_MESSAGE_BYTES: usize = 10 * 1024 * 1024;
/// Largest request or answer carrying one message's files as base64 in JSON: the files' limit
/// as base64, plus room for names and SAFE-IDs.
pub const MAX_REQUEST_BYTES: usize = MAX_MESSAGE_BYTES / 3 * 4 + 64 * 1024;
/// Most entries one [`Mailbox::list`] call answers.
pub const MAX_LIST_PAGE: usize = 1000;

/// Whether a message came into the account or was sent from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    /// Received from outside (a court's message).
    Incoming,
    /// Sent from the account.
    Outgoing,
}

/// One message of an account's listing (as JSON, the wire protocol's listing entry: members
/// it does not know are ignored, as everywhere in the wire protocol).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MailboxEntry {
    /// The transport message id; the same in the sender's and the recipient's copy.
    pub message_id: String,
    /// Into the account or out of it.
    pub direction: Direction,
    /// When the mailbox server stored it (`createdAt`).
    pub created_at: DateTime<Utc>,
    /// The first retrieval (`receivedAt`): of an incoming message, its first fetch from this
    /// account; of an outgoing one, the recipient's first fetch. `None` while nobody fetched it.
    #[serde(default)]
    #[schema(required = true)]
    pub received_at: Option<DateTime<Utc>>,
    /// The sum of its files' byte lengths.
    pub size: u64,
}

/// One page of an account's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailboxPage {
    /// Messages after the cursor, oldest first, at most the limit.
    pub entries: Vec<MailboxEntry>,
    /// Where the next call starts: the position after the last entry of this page, or the given
    /// cursor again when the page is empty. Opaque.
    pub cursor: Option<String>,
    /// Whether more messages follow this page (list again at once).
    pub more: bool,
}

/// One file of a message: the XJustiz XML ([`XJUSTIZ_FILE`]) or an attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MailboxFile {
    /// Its name as the sender gave it. A court's name is not to be trusted: it may hold `..`,
    /// slashes, control characters, or repeat another file's name.
    pub name: String,
    /// Its bytes; standard base64 in JSON.
    #[serde(with = "base64_bytes")]
    #[schema(value_type = String, content_encoding = "base64")]
    pub content: Vec<u8>,
}

/// A whole message, as [`Mailbox::fetch`] answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailboxMessage {
    /// Its listing entry (with `received_at` as it is after this fetch).
    pub entry: MailboxEntry,
    /// The sender's SAFE-ID.
    pub sender: String,
    /// The recipient's SAFE-ID.
    pub recipient: String,
    /// Its files in the order the sender gave them.
    pub files: Vec<MailboxFile>,
}

/// A court mailbox the service reads from, per account (SAFE-ID). See the module documentation
/// for what callers may rely on.
#[async_trait]
pub trait Mailbox: Send + Sync {
    /// The account's messages after `cursor` (`None`: from the oldest), at most `limit`
    /// (1 to [`MAX_LIST_PAGE`]).
    async fn list(
        &self,
        safe_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailboxPage, TransportError>;
    /// The whole message `message_id` of the account; `Ok(None)` if it is gone (or never was).
    /// The first fetch of an incoming message sets its `received_at`.
    async fn fetch(
        &self,
        safe_id: &str,
        message_id: &str,
    ) -> Result<Option<MailboxMessage>, TransportError>;
    /// Deletes the message from the account; `Ok(false)` if it was gone already.
    async fn delete(&self, safe_id: &str, message_id: &str) -> Result<bool, TransportError>;
}

/// What operators and testers do to a simulated mailbox server beyond reading it: drop a court's
/// message into an account ([`crate::Simulated::mailbox_server`]).
pub trait MailboxServer: Mailbox {
    /// Stores an incoming message from `sender` in the account `safe_id` (created if the server
    /// did not keep it yet) and answers its entry. The files are taken as given (hostile names
    /// included: the service must cope with what courts send); only their count and size are
    /// bounded. `Err` says why nothing was stored.
    fn drop_incoming(
        &self,
        safe_id: &str,
        sender: &str,
        files: Vec<MailboxFile>,
    ) -> Result<MailboxEntry, TransportError>;
}

/// Why `safe_id` is not a SAFE-ID, if it is not: the shapes the store's mailbox accounts take
/// ([`meldewerk_storage::SafeId`], one definition for both), such as `DE.Justiz.ag-musterstadt`
/// or `safe-1364893487236-012345678`. None of them holds a `/`, so a SAFE-ID is a path segment
/// as it is.
pub fn safe_id_problem(safe_id: &str) -> Option<String> {
    meldewerk_storage::SafeId::parse(safe_id)
        .err()
        .map(|problem| problem.to_string())
}

/// Problems with the files of one message (count, total size, empty or over-long names), each a
/// sentence; empty when they are fine. Names are not judged further here.
pub fn files_problems(files: &[MailboxFile]) -> Vec<String> {
    let mut problems = Vec::new();
    if files.is_empty() || files.len() > MAX_FILES {
        problems.push(format!("a message carries 1 to {MAX_FILES} files"));
    }
    let total: usize = files.iter().map(|f| f.content.len()).sum();
    if total > MAX_MESSAGE_BYTES {
        problems.push(format!(
            "the files carry {total} bytes together, more than the {MAX_MESSAGE_BYTES} a message \
             may carry"
        ));
    }
    for (i, file) in files.iter().enumerate() {
        if file.name.is_empty() || file.name.len() > MAX_FILE_NAME_BYTES {
            problems.push(format!(
                "files[{i}].name must have 1 to {MAX_FILE_NAME_BYTES} bytes"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_ids_are_checked() {
        for good in ["DE.Justiz.ag-musterstadt", "safe-1364893487236-012345678"] {
            assert_eq!(safe_id_problem(good), None, "{good}");
        }
        let long = format!("DE.Justiz.{}", "a".repeat(120));
        for bad in [
            "",
            "a",
            "DE.Justiz",
            "DE.Justiz.a/b",
            "DE.Justiz.Ä",
            long.as_str(),
        ] {
            assert!(safe_id_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn files_are_bounded() {
        let file = |name: &str, len| MailboxFile {
            name: name.into(),
            content: vec![b'x'; len],
        };
        assert!(files_problems(&[file("../a", 1)]).is_empty());
        assert_eq!(files_problems(&[]).len(), 1);
        assert_eq!(files_problems(&[file("", 1)]).len(), 1);
        let big = files_problems(&[file("a", MAX_MESSAGE_BYTES), file("b", 1)]);
        assert!(big[0].contains("more than"), "{big:?}");
    }
}
