//! Reading the court-message index (see `court_messages.rs` for its trees): listings over
//! several accounts or jobs, one account's entries, the hydration queue and the retention scan.
//! Every answer is at most [`MAX_COURT_MESSAGE_PAGE`] entries, whatever the caller asks.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Bound;

use chrono::{DateTime, Utc};

use super::court_messages::{
    account_key, due_key, id_key, id_of, job_prefix, message_what, trailing_id,
};
use super::{backend, decode, Engine};
use crate::{
    CourtMessage, CourtMessageFilter, MailboxAccountId, StoreError, StoreResult,
    MAX_COURT_MESSAGE_PAGE,
};

/// Where a page starts (the first index id after `after`) and how long it may be; `None` when
/// it is empty (`after` is the largest id, or `limit` 0).
fn page(after: Option<u64>, limit: usize) -> Option<(u64, usize)> {
    let first = match after {
        Some(after) => after.checked_add(1)?,
        None => 0,
    };
    (limit > 0).then_some((first, limit.min(MAX_COURT_MESSAGE_PAGE)))
}

/// The index ids under `prefix` in `tree` from `first` on, in order: the entries of one
/// account (`court_messages_by_account`, `court_messages_live`) or job
/// (`court_messages_by_job`).
fn ids_under(
    tree: &sled::Tree,
    prefix: &[u8],
    first: u64,
) -> impl Iterator<Item = StoreResult<u64>> {
    let key = |id: u64| [prefix, &id_key(id)].concat();
    tree.range(key(first)..=key(u64::MAX)).map(|entry| {
        let (key, _) = entry.map_err(backend)?;
        trailing_id("court-message index", &key)
    })
}

/// Merges `scans`, each in id order, into one in id order.
fn merged(
    mut scans: Vec<impl Iterator<Item = StoreResult<u64>>>,
) -> impl Iterator<Item = StoreResult<u64>> {
    // The heap holds the next id of each scan, so the smallest of all comes out first.
    let mut heads = BinaryHeap::new();
    let mut failed = None;
    for (scan, ids) in scans.iter_mut().enumerate() {
        match ids.next() {
            Some(Ok(id)) => heads.push(Reverse((id, scan))),
            Some(Err(e)) => failed = failed.or(Some(e)),
            None => {}
        }
    }
    let mut failed = failed.map(Err);
    std::iter::from_fn(move || {
        if let Some(failed) = failed.take() {
            return Some(failed);
        }
        let Reverse((id, scan)) = heads.pop()?;
        match scans[scan].next() {
            Some(Ok(next)) => heads.push(Reverse((next, scan))),
            Some(Err(e)) => failed = Some(Err(e)),
            None => {}
        }
        Some(Ok(id))
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
        let Some((first, limit)) = page(after, limit) else {
            return Ok(Vec::new());
        };
        if filter.accounts.is_empty() {
            return Ok(Vec::new());
        }
        // A job's messages are few; an account's live ones are what its mailbox holds. Either
        // way `admits` decides: the scans only narrow what is read.
        let (tree, prefixes): (_, BTreeSet<Vec<u8>>) = match &filter.job_ids {
            Some(jobs) => (
                &self.court_messages_by_job,
                jobs.iter().map(|job| job_prefix(job)).collect(),
            ),
            None => (
                &self.court_messages_live,
                filter
                    .accounts
                    .iter()
                    .map(|&account| account_key(account).to_vec())
                    .collect(),
            ),
        };
        let scans = prefixes
            .iter()
            .map(|prefix| ids_under(tree, prefix, first))
            .collect();
        let mut found = Vec::new();
        for id in merged(scans) {
            if found.len() >= limit {
                break;
            }
            let message = self.indexed(id?, "listing index")?;
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
        let Some((first, limit)) = page(after, limit) else {
            return Ok(Vec::new());
        };
        let tree = if deleted {
            &self.court_messages_by_account
        } else {
            &self.court_messages_live
        };
        let mut found = Vec::new();
        for id in ids_under(tree, &account_key(account), first) {
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
            if message.due_for_hydration(now) {
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
        let Some((first, limit)) = page(after, limit) else {
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
