//! The court-message index in sled: what a sync listed, each message's hydration and deletion,
//! and the case references mapped to jobs, in eight trees:
//!
//! | tree                        | key                                        | value                     |
//! |-----------------------------|--------------------------------------------|---------------------------|
//! | `court_messages`            | index id (8 bytes BE)                      | [`CourtMessage`]          |
//! | `court_message_ids`         | account id (8 bytes BE) ++ transport message id | index id (8 bytes BE) |
//! | `court_messages_by_account` | account id (8 bytes BE) ++ index id (8 bytes BE) | empty               |
//! | `court_messages_live`       | account id (8 bytes BE) ++ index id (8 bytes BE) | empty               |
//! | `court_messages_by_job`     | job id's length (4 bytes BE) ++ job id ++ index id (8 bytes BE) | empty |
//! | `court_messages_waiting`    | due millis (8 bytes, offset) ++ index id (8 bytes BE) | empty          |
//! | `mailbox_sync_cursors`      | account id (8 bytes BE)                    | cursor (UTF-8)            |
//! | `case_references`           | account id (8 bytes BE) ++ Aktenzeichen    | job id (UTF-8)            |
//!
//! `court_messages_by_account` holds every entry of an account, deleted ones too (a sync
//! comparing the index with a full listing); `court_messages_live` only those not deleted, and
//! `court_messages_by_job` those not deleted that a job's case reference maps to: the API's
//! listings read these two, so that an account's acknowledged history, which only grows, is
//! not read again at every poll. The job id's length before it keeps one job's keys from
//! starting another's.
//!
//! `court_message_ids` also holds, under [`LAST_ID`] (shorter than any account key), the last
//! index id given out: it moves in the transaction that inserts the entries, so an id is never
//! given out twice, not even after a crash, and never reused after a deletion (entries are only
//! soft-deleted and keep their id mapping, so a message is indexed once).
//!
//! `court_messages_waiting` is the hydration queue: it holds exactly the live entries whose
//! hydration is [`Hydration::Waiting`], under their due time. The due time's milliseconds are
//! stored with the sign bit flipped, so that times before 1970 sort before those after.
//!
//! Ids (account and index) are positive, so their big-endian bytes sort as the numbers do and
//! scans in id order are range reads. Each change is one transaction, then a flush. Listings
//! and scans are read outside transactions (sled's transactions read single keys only); an
//! entry changing meanwhile is read as it is when its key is reached.

use chrono::{DateTime, Utc};
use sled::transaction::TransactionalTree;

use super::{abort, backend, decode, encode, in_tx, tx_error, Engine, TxResult};
pub(super) use crate::court_messages::message_what;
use crate::sled_gate::GatedTransaction;
use crate::{
    CourtMessage, CourtMessageDeleted, Deletion, DeletionCause, Hydration, HydrationOutcome,
    ListedCourtMessage, MailboxAccountId, StoreError, StoreResult,
};

/// Key of the last index id given out, in `court_message_ids` (whose other keys are at least
/// the 8 bytes of an account id long).
pub(super) const LAST_ID: &[u8] = b"last_id";

/// Key of index id `id`: in `court_messages`, and the value of `court_message_ids`.
pub(super) fn id_key(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Key of `account` in `mailbox_sync_cursors`, and the prefix of its keys elsewhere.
pub(super) fn account_key(account: MailboxAccountId) -> [u8; 8] {
    account.get().to_be_bytes()
}

/// `account ++ id`: key of `court_messages_by_account` and `court_messages_live`.
pub(super) fn by_account_key(account: MailboxAccountId, id: u64) -> [u8; 16] {
    let mut key = [0; 16];
    key[..8].copy_from_slice(&account_key(account));
    key[8..].copy_from_slice(&id_key(id));
    key
}

/// `len(job) ++ job`: the prefix of `job`'s keys in `court_messages_by_job`.
pub(super) fn job_prefix(job: &str) -> Vec<u8> {
    // Longer job ids than 4 GiB are not stored: requests are bounded far below.
    let len = u32::try_from(job.len()).unwrap_or(u32::MAX);
    let mut key = len.to_be_bytes().to_vec();
    key.extend_from_slice(job.as_bytes());
    key
}

/// `len(job) ++ job ++ id`: key of `court_messages_by_job`.
pub(super) fn by_job_key(job: &str, id: u64) -> Vec<u8> {
    let mut key = job_prefix(job);
    key.extend_from_slice(&id_key(id));
    key
}

/// `account ++ text`: keys of `court_message_ids` (a transport message id) and
/// `case_references` (an Aktenzeichen).
fn account_text_key(account: MailboxAccountId, text: &str) -> Vec<u8> {
    let mut key = account_key(account).to_vec();
    key.extend_from_slice(text.as_bytes());
    key
}

/// `due ++ id`: key of `court_messages_waiting`.
pub(super) fn waiting_key(due_at: DateTime<Utc>, id: u64) -> [u8; 16] {
    let mut key = [0; 16];
    key[..8].copy_from_slice(&due_key(due_at));
    key[8..].copy_from_slice(&id_key(id));
    key
}

/// `due_at`'s milliseconds with the sign bit flipped: big-endian bytes that sort as the times
/// do, negative ones included.
pub(super) fn due_key(due_at: DateTime<Utc>) -> [u8; 8] {
    // The cast keeps the bits; flipping the sign bit moves negatives below positives.
    ((due_at.timestamp_millis() as u64) ^ (1 << 63)).to_be_bytes()
}

/// The index id in `bytes` (8 bytes BE), or `Corrupt` naming `what`.
pub(super) fn id_of(what: &str, bytes: &[u8]) -> StoreResult<u64> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt(format!("{what}: not an index id")))?;
    Ok(u64::from_be_bytes(bytes))
}

/// The index id in the last 8 bytes of `key` (every key of the trees indexing entries).
pub(super) fn trailing_id(what: &str, key: &[u8]) -> StoreResult<u64> {
    match key.len().checked_sub(8) {
        Some(start) => id_of(what, &key[start..]),
        None => Err(StoreError::Corrupt(format!(
            "{what}: a key of {} bytes",
            key.len()
        ))),
    }
}

/// Entry `id` as stored, inside a transaction.
fn stored(messages: &TransactionalTree, id: u64) -> TxResult<Option<CourtMessage>> {
    match messages.get(id_key(id))? {
        Some(bytes) => Ok(Some(in_tx(decode(&message_what(id), &bytes))?)),
        None => Ok(None),
    }
}

fn put(messages: &TransactionalTree, message: &CourtMessage) -> TxResult<()> {
    messages.insert_blind(&id_key(message.id), in_tx(encode(message))?)?;
    Ok(())
}

/// Takes `message` out of the hydration queue if it is in it (waiting).
fn leave_queue(waiting: &TransactionalTree, message: &CourtMessage) -> TxResult<()> {
    if let Hydration::Waiting { due_at, .. } = &message.hydration {
        waiting.remove_blind(&waiting_key(*due_at, message.id))?;
    }
    Ok(())
}

impl Engine {
    pub(super) async fn court_index(
        &self,
        account: MailboxAccountId,
        safe_id: &str,
        listed: Vec<ListedCourtMessage>,
        cursor: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<CourtMessage>> {
        // An idle mailbox is the common case of a sync: no transaction, no flush.
        if listed.is_empty() && (cursor.is_none() || cursor == self.court_cursor(account)?) {
            return Ok(Vec::new());
        }
        let id_keys: Vec<Vec<u8>> = listed
            .iter()
            .map(|listed| account_text_key(account, &listed.message_id))
            .collect();
        let (new, changed) = (
            &self.court_messages,
            &self.court_message_ids,
            &self.court_messages_by_account,
            &self.court_messages_live,
            &self.court_messages_waiting,
            &self.mailbox_sync_cursors,
        )
            .gated_transaction(|(messages, ids, by_account, live, waiting, cursors)| {
                let mut last = match ids.get(LAST_ID)? {
                    Some(bytes) => in_tx(id_of("last court-message index id", &bytes))?,
                    None => 0,
                };
                let mut new = Vec::new();
                let mut changed = false;
                for (listed, id_key_bytes) in listed.iter().zip(&id_keys) {
                    // Known (deleted or not, or listed twice in this page): indexed once.
                    if let Some(known) = ids.get(id_key_bytes)? {
                        let id = in_tx(id_of("court-message id mapping", &known))?;
                        let Some(mut message) = stored(messages, id)? else {
                            return abort(StoreError::Corrupt(format!(
                                "{} is mapped but missing",
                                message_what(id)
                            )));
                        };
                        if message.deleted.is_none()
                            && message.received_at.is_none()
                            && listed.received_at.is_some()
                        {
                            message.received_at = listed.received_at;
                            put(messages, &message)?;
                            changed = true;
                        }
                        continue;
                    }
                    let Some(id) = last.checked_add(1) else {
                        return abort(StoreError::Backend(
                            "court-message index ids are used up".into(),
                        ));
                    };
                    last = id;
                    let message = CourtMessage::indexed(id, account, safe_id, listed, now);
                    put(messages, &message)?;
                    ids.insert_blind(id_key_bytes.as_slice(), &id_key(id))?;
                    by_account.insert_blind(&by_account_key(account, id), &[])?;
                    live.insert_blind(&by_account_key(account, id), &[])?;
                    waiting.insert_blind(&waiting_key(now, id), &[])?;
                    new.push(message);
                }
                if !new.is_empty() {
                    ids.insert_blind(LAST_ID, &id_key(last))?;
                    changed = true;
                }
                if let Some(cursor) = &cursor {
                    let key = account_key(account);
                    if cursors.get(key)?.as_deref() != Some(cursor.as_bytes()) {
                        cursors.insert_blind(&key, cursor.as_bytes())?;
                        changed = true;
                    }
                }
                Ok((new, changed))
            })
            .map_err(tx_error)?;
        if changed {
            self.flush().await?;
        }
        Ok(new)
    }

    pub(super) fn court_cursor(&self, account: MailboxAccountId) -> StoreResult<Option<String>> {
        self.mailbox_sync_cursors
            .get(account_key(account))
            .map_err(backend)?
            .map(|bytes| super::utf8("mailbox sync cursor", &bytes))
            .transpose()
    }

    pub(super) fn court_message_get(&self, id: u64) -> StoreResult<Option<CourtMessage>> {
        self.court_messages
            .get(id_key(id))
            .map_err(backend)?
            .map(|bytes| decode(&message_what(id), &bytes))
            .transpose()
    }

    pub(super) async fn court_hydration(
        &self,
        id: u64,
        outcome: HydrationOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<CourtMessage>> {
        let recorded = (
            &self.court_messages,
            &self.court_messages_waiting,
            &self.case_references,
            &self.court_messages_by_job,
        )
            .gated_transaction(|(messages, waiting, case_references, by_job)| {
                let Some(mut message) = stored(messages, id)? else {
                    return Ok(None);
                };
                if !message.awaits_hydration() {
                    return Ok(None);
                }
                let job_id = match outcome.aktenzeichen() {
                    Some(aktenzeichen) => case_references
                        .get(account_text_key(message.account, aktenzeichen))?
                        .map(|job| in_tx(super::utf8("job of a case reference", &job)))
                        .transpose()?,
                    None => None,
                };
                leave_queue(waiting, &message)?;
                message.apply_hydration(&outcome, job_id, now);
                if let Hydration::Waiting { due_at, .. } = &message.hydration {
                    waiting.insert_blind(&waiting_key(*due_at, id), &[])?;
                }
                if let Some(job) = &message.job_id {
                    by_job.insert_blind(by_job_key(job, id), &[])?;
                }
                put(messages, &message)?;
                Ok(Some(message))
            })
            .map_err(tx_error)?;
        if recorded.is_some() {
            self.flush().await?;
        }
        Ok(recorded)
    }

    pub(super) async fn court_delete(
        &self,
        id: u64,
        cause: DeletionCause,
        now: DateTime<Utc>,
    ) -> StoreResult<CourtMessageDeleted> {
        let deleted = (
            &self.court_messages,
            &self.court_messages_waiting,
            &self.court_messages_live,
            &self.court_messages_by_job,
        )
            .gated_transaction(|(messages, waiting, live, by_job)| {
                let Some(mut message) = stored(messages, id)? else {
                    return Ok(CourtMessageDeleted::NotFound);
                };
                if message.deleted.is_some() {
                    return Ok(CourtMessageDeleted::AlreadyDeleted(message));
                }
                leave_queue(waiting, &message)?;
                live.remove_blind(&by_account_key(message.account, id))?;
                if let Some(job) = &message.job_id {
                    by_job.remove_blind(by_job_key(job, id))?;
                }
                message.deleted = Some(Deletion {
                    at: now,
                    cause: cause.clone(),
                });
                put(messages, &message)?;
                Ok(CourtMessageDeleted::Deleted(message))
            })
            .map_err(tx_error)?;
        if matches!(deleted, CourtMessageDeleted::Deleted(_)) {
            self.flush().await?;
        }
        Ok(deleted)
    }

    pub(super) async fn case_reference_map(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
        job_id: &str,
    ) -> StoreResult<bool> {
        let key = account_text_key(account, aktenzeichen);
        let mapped = self
            .case_references
            .gated_transaction(|references| {
                if references.get(&key)?.is_some() {
                    return Ok(false);
                }
                references.insert_blind(key.as_slice(), job_id.as_bytes())?;
                Ok(true)
            })
            .map_err(tx_error)?;
        if mapped {
            self.flush().await?;
        }
        Ok(mapped)
    }

    pub(super) fn case_reference_job(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
    ) -> StoreResult<Option<String>> {
        self.case_references
            .get(account_text_key(account, aktenzeichen))
            .map_err(backend)?
            .map(|bytes| super::utf8("job of a case reference", &bytes))
            .transpose()
    }
}
