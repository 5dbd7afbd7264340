//! The mailbox server's side of reading: listing, fetching, deleting an account's messages, and
//! storing them (a send's two copies, an operator's drop), on the mailbox journal
//! ([`StoredMessage`]).
//!
//! The listing is the account's group in the journal: copies in the order they were stored,
//! the cursor a journal sequence number (so it stays valid when its message is deleted, and a
//! number the journal never handed out is unknown). A deleted copy leaves the group; its record
//! stays as the server's history (the journal never removes, so the bytes stay in the journal's
//! file too, unreachable through any call).

use async_trait::async_trait;
use chrono::Utc;

use super::records::{message_key, ACCOUNT, BY_IDEMPOTENCY_KEY, BY_MESSAGE, KNOWN_ACCOUNT};
use super::{Inner, MessagePackage, Simulator, StoredMessage};
use crate::claims::Claim;
use crate::mailbox::{
    files_problems, safe_id_problem, Direction, MailboxEntry, MailboxFile, MailboxMessage,
    MailboxPage, MAX_LIST_PAGE,
};
use crate::script::{Call, Reply, Target};
use crate::{Mailbox, MailboxServer, TransportError};

impl Inner {
    /// Whether the server keeps the account `safe_id`: configured, or once stored into.
    pub(super) fn known(&self, safe_id: &str) -> Result<bool, TransportError> {
        if self.config().accounts.iter().any(|a| a == safe_id) {
            return Ok(true);
        }
        Ok(!self
            .messages
            .range_in(KNOWN_ACCOUNT, safe_id, 0, 1)?
            .is_empty())
    }

    /// An account to read: a SAFE-ID the server keeps, else a refusal.
    fn account(&self, safe_id: &str) -> Result<(), TransportError> {
        if safe_id_problem(safe_id).is_some() || !self.known(safe_id)? {
            return Err(TransportError::Refused(format!(
                "{safe_id:?} is no account of this mailbox server"
            )));
        }
        Ok(())
    }

    /// Stores one copy with its files as the attachment.
    fn store(
        &self,
        copy: &StoredMessage,
        files: &[MailboxFile],
        idempotency_key: Option<&str>,
    ) -> Result<(), TransportError> {
        let files = serde_json::to_vec(files)
            .map_err(|e| TransportError::Transient(format!("simulated EGVP: {e}")))?;
        let key = message_key(&copy.safe_id, &copy.message_id);
        let mut indexes = vec![(BY_MESSAGE, key.as_str())];
        if let Some(idempotency_key) = idempotency_key {
            indexes.push((BY_IDEMPOTENCY_KEY, idempotency_key));
        }
        self.messages.append_attached(
            copy,
            &files,
            &indexes,
            &[(ACCOUNT, &copy.safe_id), (KNOWN_ACCOUNT, &copy.safe_id)],
        )?;
        Ok(())
    }

    /// Stores a sent message's copies that are not there yet: OUTGOING in the sender's account
    /// (under the idempotency key), INCOMING in the recipient's.
    pub(super) fn store_sent(
        &self,
        package: &MessagePackage,
        message_id: &str,
        idempotency_key: &str,
    ) -> Result<(), TransportError> {
        let size = package.files.iter().map(|f| f.content.len() as u64).sum();
        let copy = |safe_id: &str, direction| StoredMessage {
            safe_id: safe_id.to_owned(),
            message_id: message_id.to_owned(),
            direction,
            sender: package.from.clone(),
            recipient: package.to.clone(),
            created_at: Utc::now(),
            received_at: None,
            deleted_at: None,
            size,
        };
        for (safe_id, direction, key) in [
            (&package.from, Direction::Outgoing, Some(idempotency_key)),
            (&package.to, Direction::Incoming, None),
        ] {
            let stored = self
                .messages
                .find(BY_MESSAGE, &message_key(safe_id, message_id))?;
            if stored.is_none() {
                self.store(&copy(safe_id, direction), &package.files, key)?;
            }
        }
        Ok(())
    }

    fn list(
        &self,
        safe_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailboxPage, TransportError> {
        self.account(safe_id)?;
        let after = match cursor {
            None => None,
            Some(cursor) => match cursor.parse::<u64>() {
                Ok(after) if after < self.messages.next_seq()? => Some(after),
                _ => {
                    return Err(TransportError::UnknownCursor(format!(
                        "the mailbox server handed out no cursor {:?}",
                        cursor.chars().take(40).collect::<String>()
                    )))
                }
            },
        };
        let limit = limit.clamp(1, MAX_LIST_PAGE);
        let from = after.map_or(0, |after| after + 1);
        let mut copies = self.messages.range_in(ACCOUNT, safe_id, from, limit + 1)?;
        let more = copies.len() > limit;
        copies.truncate(limit);
        Ok(MailboxPage {
            cursor: copies
                .last()
                .map(|(seq, _)| seq.to_string())
                .or_else(|| cursor.map(str::to_owned)),
            entries: copies.iter().map(|(_, copy)| copy.entry()).collect(),
            more,
        })
    }

    /// The copy of `message_id` in the account, with its claim held for a change, unless it is
    /// gone (deleted, or never there).
    fn present(
        &self,
        safe_id: &str,
        message_id: &str,
    ) -> Result<Option<(Claim, u64, StoredMessage)>, TransportError> {
        self.account(safe_id)?;
        let key = message_key(safe_id, message_id);
        let claim = self.claims.claim(&key);
        Ok(self
            .messages
            .find(BY_MESSAGE, &key)?
            .filter(|(_, copy)| copy.deleted_at.is_none())
            .map(|(seq, copy)| (claim, seq, copy)))
    }

    fn fetch(
        &self,
        safe_id: &str,
        message_id: &str,
        truncated: bool,
    ) -> Result<Option<MailboxMessage>, TransportError> {
        let Some((_claim, seq, mut copy)) = self.present(safe_id, message_id)? else {
            return Ok(None);
        };
        if copy.direction == Direction::Incoming && copy.received_at.is_none() {
            let now = Utc::now();
            copy.received_at = Some(now);
            self.messages.replace(seq, &copy)?;
            // The sender's copy learns of its first retrieval by the recipient.
            self.retrieved_by_recipient(&copy, now)?;
        }
        let files = self.messages.attachment(seq)?.ok_or_else(|| {
            TransportError::Transient(format!("simulated EGVP: the files of #{seq} are missing"))
        })?;
        let mut files: Vec<MailboxFile> = serde_json::from_slice(&files)
            .map_err(|e| TransportError::Transient(format!("simulated EGVP: #{seq}: {e}")))?;
        if truncated {
            for file in &mut files {
                file.content.truncate(file.content.len() / 2);
            }
        }
        Ok(Some(MailboxMessage {
            entry: copy.entry(),
            sender: copy.sender,
            recipient: copy.recipient,
            files,
        }))
    }

    /// Sets the first retrieval of the sender's OUTGOING copy of `incoming`, if the server keeps
    /// one and it has none yet.
    fn retrieved_by_recipient(
        &self,
        incoming: &StoredMessage,
        at: chrono::DateTime<Utc>,
    ) -> Result<(), TransportError> {
        let key = message_key(&incoming.sender, &incoming.message_id);
        if key == message_key(&incoming.safe_id, &incoming.message_id) {
            return Ok(());
        }
        let _claim = self.claims.claim(&key);
        if let Some((seq, mut outgoing)) = self.messages.find(BY_MESSAGE, &key)? {
            if outgoing.direction == Direction::Outgoing && outgoing.received_at.is_none() {
                outgoing.received_at = Some(at);
                self.messages.replace(seq, &outgoing)?;
            }
        }
        Ok(())
    }

    fn delete(&self, safe_id: &str, message_id: &str) -> Result<bool, TransportError> {
        let Some((_claim, seq, mut copy)) = self.present(safe_id, message_id)? else {
            return Ok(false);
        };
        copy.deleted_at = Some(Utc::now());
        // One transaction: the record marked and out of the account's listing.
        self.messages
            .settle(&[(seq, copy)], &[(ACCOUNT, safe_id)])?;
        Ok(true)
    }

    fn drop_incoming(
        &self,
        safe_id: &str,
        sender: &str,
        files: Vec<MailboxFile>,
    ) -> Result<MailboxEntry, TransportError> {
        let mut problems: Vec<String> = [("safeId", safe_id), ("sender", sender)]
            .iter()
            .filter_map(|(name, id)| safe_id_problem(id).map(|p| format!("{name}: {p}")))
            .collect();
        problems.extend(files_problems(&files));
        if !problems.is_empty() {
            return Err(TransportError::Refused(problems.join("; ")));
        }
        let copy = StoredMessage {
            safe_id: safe_id.to_owned(),
            message_id: uuid::Uuid::new_v4().to_string(),
            direction: Direction::Incoming,
            sender: sender.to_owned(),
            recipient: safe_id.to_owned(),
            created_at: Utc::now(),
            received_at: None,
            deleted_at: None,
            size: files.iter().map(|f| f.content.len() as u64).sum(),
        };
        self.store(&copy, &files, None)?;
        tracing::info!("simulated EGVP: court message dropped into a mailbox");
        Ok(copy.entry())
    }
}

impl Simulator {
    /// Consults the script for a mailbox call and carries its plan out (latency, faults);
    /// `Ok(true)` when the fetch is to be answered cut short.
    async fn scripted(
        &self,
        call: Call,
        safe_id: &str,
        message_id: &str,
    ) -> Result<bool, TransportError> {
        let key = format!("{}\0{safe_id}\0{message_id}", call.name());
        let plan = self.inner.script.plan_call(
            &Target::mailbox(call, message_id),
            &key,
            self.config().latency_ms,
        );
        let truncated = plan.reply == Reply::Truncated;
        match plan.carry_out("simulated EGVP", message_id).await {
            Ok(()) => Ok(truncated),
            Err(Err(fault)) => Err(fault),
            // A refusal is about deliveries only; the script never plans one here.
            Err(Ok(_)) => Err(TransportError::Transient("refused (scripted)".to_owned())),
        }
    }
}

#[async_trait]
impl Mailbox for Simulator {
    async fn list(
        &self,
        safe_id: &str,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<MailboxPage, TransportError> {
        self.scripted(Call::List, safe_id, "").await?;
        let (safe_id, cursor) = (safe_id.to_owned(), cursor.map(str::to_owned));
        self.blocking(move |inner| inner.list(&safe_id, cursor.as_deref(), limit))
            .await
    }

    async fn fetch(
        &self,
        safe_id: &str,
        message_id: &str,
    ) -> Result<Option<MailboxMessage>, TransportError> {
        let truncated = self.scripted(Call::Fetch, safe_id, message_id).await?;
        let (safe_id, message_id) = (safe_id.to_owned(), message_id.to_owned());
        self.blocking(move |inner| inner.fetch(&safe_id, &message_id, truncated))
            .await
    }

    async fn delete(&self, safe_id: &str, message_id: &str) -> Result<bool, TransportError> {
        self.scripted(Call::Delete, safe_id, message_id).await?;
        let (safe_id, message_id) = (safe_id.to_owned(), message_id.to_owned());
        self.blocking(move |inner| inner.delete(&safe_id, &message_id))
            .await
    }
}

impl MailboxServer for Simulator {
    fn drop_incoming(
        &self,
        safe_id: &str,
        sender: &str,
        files: Vec<MailboxFile>,
    ) -> Result<MailboxEntry, TransportError> {
        self.inner.drop_incoming(safe_id, sender, files)
    }
}
