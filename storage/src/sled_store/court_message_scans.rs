//! Reading the court-message index (see `court_messages.rs` for its trees): listings over
//! several accounts, one account's entries, the hydration queue and the retention scan. Every
//! answer is at most [`MAX_COURT_MESSAGE_PAGE`] entries, whatever the caller asks.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Bound;

use chrono::{DateTime, Utc};

use super::court_messages::{by_account_key, due_key, id_key, id_of, message_what, trailing_id};
use super::{backend, decode, Engine};
use crate::{
    CourtMessage, CourtMessageFilter, Hydration, MailboxAccountId, StoreError, StoreResult,
    MAX_COURT_MESSAGE_PAGE,
};

/// The first index id after `after`; `None` when there is none (`after` is the largest).
fn first_after(after: Option<u64>) -> Option<u64> {
    match after {
        Some(after) => after.checked_add(1),
        None => Some(0),
    }
}

/// The index ids of `account` from `first` on, in order, as `court_messages_by_account` holds
/// them.
fn ids_of(
    engine: &Engine,
    account: MailboxAccountId,
    first: u64,
) -> impl Iterator<Item = StoreResult<u64>> {
    engine
        .court_messages_by_account
        .range(by_account_key(account, first)..=by_account_key(account, u64::MAX))
        .map(|entry| {
            let (key, _) = entry.map_err(backend)?;
            trailing_id("court-message account index", &key)
        })
}

impl Engine {
    /// Entry `id`, which an index names: `Corrupt` when it is missing.
    fn indexed(&self, id: u64, index: &str) -> StoreResult<CourtMessage> {
        self.court_message_get(id)?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "{} is in the {index} but missing",
                message_what(id)
            ))
        })
    }

    pub(super) fn court_listing(
        &self,
        filter: &CourtMessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        let limit = limit.min(MAX_COURT_MESSAGE_PAGE);
        let Some(first) = first_after(after) else {
            return Ok(Vec::new());
        };
        let accounts: BTreeSet<MailboxAccountId> = filter.accounts.iter().copied().collect();
        let mut scans: Vec<_> = accounts
            .into_iter()
            .map(|account| ids_of(self, account, first))
            .collect();
        // Each account's ids come in order; the heap holds the next one of each, so the
        // smallest id of all comes out first.
        let mut heads = BinaryHeap::new();
        for (scan, ids) in scans.iter_mut().enumerate() {
            if let Some(id) = ids.next().transpose()? {
                heads.push(Reverse((id, scan)));
            }
        }
        let mut found = Vec::new();
        while found.len() < limit {
            let Some(Reverse((id, scan))) = heads.pop() else {
                break;
            };
            if let Some(next) = scans[scan].next().transpose()? {
                heads.push(Reverse((next, scan)));
            }
            let message = self.indexed(id, "account index")?;
            if filter.admits(&message) {
                found.push(message);
            }
        }
        Ok(found)
    }

    pub(super) fn court_messages_of_account(
        &self,
        account: MailboxAccountId,
        after: Option<u64>,
        limit: usize,
        deleted: bool,
    ) -> StoreResult<Vec<CourtMessage>> {
        let limit = limit.min(MAX_COURT_MESSAGE_PAGE);
        let Some(first) = first_after(after) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for id in ids_of(self, account, first) {
            if found.len() >= limit {
                break;
            }
            let message = self.indexed(id?, "account index")?;
            if deleted || message.deleted.is_none() {
                found.push(message);
            }
        }
        Ok(found)
    }

    pub(super) fn court_due(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        let limit = limit.min(MAX_COURT_MESSAGE_PAGE);
        // Every key of `now`'s millisecond and before.
        let mut end = due_key(now).to_vec();
        end.extend_from_slice(&id_key(u64::MAX));
        let mut due = Vec::new();
        for entry in self.court_messages_waiting.range(..=end) {
            if due.len() >= limit {
                break;
            }
            let (key, _) = entry.map_err(backend)?;
            let id = trailing_id("court-message hydration queue", &key)?;
            // One entry that cannot be read must not stop every message's hydration: it is
            // named in the log and left where it is.
            let message = match self.indexed(id, "hydration queue") {
                Ok(message) => message,
                Err(e) => {
                    tracing::error!(court_message = id, error = %e, "a court message in the hydration queue cannot be read; passed over");
                    continue;
                }
            };
            // Keys hold whole milliseconds; one due later within `now`'s millisecond is not due.
            let waiting_due =
                matches!(message.hydration, Hydration::Waiting { due_at, .. } if due_at <= now);
            if waiting_due && message.deleted.is_none() {
                due.push(message);
            }
        }
        Ok(due)
    }

    pub(super) fn court_created_before(
        &self,
        cutoff: DateTime<Utc>,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        let limit = limit.min(MAX_COURT_MESSAGE_PAGE);
        let Some(first) = first_after(after) else {
            return Ok(Vec::new());
        };
        let mut found = Vec::new();
        for entry in self
            .court_messages
            .range::<[u8; 8], _>((Bound::Included(id_key(first)), Bound::Unbounded))
        {
            if found.len() >= limit {
                break;
            }
            let (key, bytes) = entry.map_err(backend)?;
            let id = id_of("court-message index", &key)?;
            let message: CourtMessage = decode(&message_what(id), &bytes)?;
            if message.deleted.is_none() && message.created_at < cutoff {
                found.push(message);
            }
        }
        Ok(found)
    }
}
