//! The `finished` index: when each report of a module became final, so that the retention sweep
//! reads the reports whose time has come and nothing else. Without it every sweep decoded every
//! report the store had ever kept.
//!
//! `record_outcome` adds a report's entry in the transaction that sets `finished_at`; the sweep
//! removes it in the transaction that expires the report. A database written before the index
//! existed gets it built once, when it is opened; the marker entry [`COMPLETE`] says that this
//! happened.

use std::ops::Bound;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use sled::transaction::TransactionalTree;

use super::{backend, decode, in_tx, keys, payload, tx_error, Engine, TxResult};
use crate::sled_gate::{self, GatedTransaction};
use crate::{Report, ReportKey, ReportStatus, StoreResult};

/// Present once the index covers every report. Sorts before every module's entries and lies in
/// none of their ranges, since module names are never empty.
const COMPLETE: &[u8] = b"\0complete";

/// Reports expired per transaction. A sweep may find a whole day's reports due at once; in
/// batches, the memory it holds stays bounded and a crash keeps what was done.
const EXPIRY_BATCH: usize = 256;

/// Index entries written per batch while the index is built.
const BUILD_BATCH: usize = 4096;

/// What the index needs of a stored report; serde skips the payload without building it.
#[derive(Deserialize)]
struct Finish {
    key: ReportKey,
    status: ReportStatus,
    finished_at: Option<DateTime<Utc>>,
    expired_at: Option<DateTime<Utc>>,
}

/// What the sweep did with one indexed report.
enum Expiry {
    /// Its payload was removed.
    Expired,
    /// Nothing is left to expire (already expired, or gone): the entry only needs removing.
    Stale,
    /// It finished in the cutoff's millisecond, but not before the cutoff.
    NotYet,
}

impl Engine {
    /// Builds the index from the `reports` tree unless it is complete already: one pass over
    /// every report, once in the life of a database written before the index existed.
    pub(super) fn complete_finished_index(&self) -> StoreResult<()> {
        if self.finished.contains_key(COMPLETE).map_err(backend)? {
            return Ok(());
        }
        let (mut indexed, mut unreadable) = (0usize, 0usize);
        let mut batch = sled::Batch::default();
        let mut in_batch = 0;
        for entry in self.reports.iter() {
            let (key, bytes) = entry.map_err(backend)?;
            // One unreadable record must not keep the server from starting; it only stays
            // unexpired, as it would have before (the old sweep failed on it every time).
            let Ok(report) = serde_json::from_slice::<Finish>(&bytes) else {
                tracing::warn!(
                    report = %String::from_utf8_lossy(&key),
                    "unreadable report left out of the retention index"
                );
                unreadable += 1;
                continue;
            };
            if report.expired_at.is_some() || !report.status.is_final() {
                continue;
            }
            let Some(at) = report.finished_at else {
                continue;
            };
            batch.insert(keys::finished(&report.key, at), &[][..]);
            indexed += 1;
            in_batch += 1;
            if in_batch == BUILD_BATCH {
                self.apply_to_finished(std::mem::take(&mut batch))?;
                in_batch = 0;
            }
        }
        // Last, so that a crash while building leaves the marker out and the next open builds
        // again (entries written twice are the same entries).
        batch.insert(COMPLETE, &[][..]);
        self.apply_to_finished(batch)?;
        self.committer.flush_blocking().map_err(backend)?;
        if indexed > 0 || unreadable > 0 {
            tracing::info!(
                indexed,
                unreadable,
                "indexed the final reports for the retention sweep"
            );
        }
        Ok(())
    }

    fn apply_to_finished(&self, batch: sled::Batch) -> StoreResult<()> {
        let _gate = sled_gate::exclusive();
        self.finished.apply_batch(batch).map_err(backend)
    }

    /// [`crate::Store::expire_finished_before`]: reads the module's index entries up to the
    /// cutoff's millisecond and the reports they name, in batches of [`EXPIRY_BATCH`], each one
    /// transaction; flushes once at the end.
    pub(super) async fn expire_before(
        &self,
        module: &str,
        cutoff: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let prefix = keys::finished_prefix(module);
        let last_time = keys::finished_time(cutoff);
        let now = Utc::now();
        let mut from = Bound::Included(prefix.clone());
        let (mut expired, mut changed) = (0, false);
        loop {
            // A transaction cannot scan, so entries are read first and checked again inside.
            let mut entries = Vec::new();
            for entry in self.finished.range((from.clone(), Bound::Unbounded)) {
                let (key, _) = entry.map_err(backend)?;
                let time = key
                    .strip_prefix(prefix.as_slice())
                    .and_then(|rest| rest.get(..last_time.len()));
                match time {
                    Some(time) if time <= &last_time[..] => entries.push(key),
                    // Past the cutoff, or past the module's entries.
                    _ => break,
                }
                if entries.len() == EXPIRY_BATCH {
                    break;
                }
            }
            let Some(last_entry) = entries.last().cloned() else {
                break;
            };
            let report_at = prefix.len() + last_time.len();
            let trees = (
                &self.reports,
                &self.pending,
                &self.finished,
                &self.submissions,
                &self.messages,
                &self.receipts,
            );
            let (count, removed) = trees
                .gated_transaction(
                    |(reports, pending, finished, submissions, messages, receipts)| {
                        let (mut count, mut removed) = (0, 0);
                        for entry in &entries {
                            let key = &entry[report_at..];
                            match expire_one(reports, pending, key, cutoff, now)? {
                                Expiry::Expired => {
                                    payload::remove_parts([submissions, messages, receipts], key)?;
                                    count += 1;
                                }
                                Expiry::Stale => removed += 1,
                                Expiry::NotYet => continue,
                            }
                            finished.remove_blind(entry)?;
                        }
                        Ok((count, removed))
                    },
                )
                .map_err(tx_error)?;
            for entry in &entries {
                self.receipt_cache.remove(&entry[report_at..]);
            }
            expired += count;
            changed |= count + removed > 0;
            if entries.len() < EXPIRY_BATCH {
                break;
            }
            from = Bound::Excluded(last_entry.to_vec());
        }
        if changed {
            self.flush().await?;
        }
        Ok(expired)
    }
}

/// Inside the sweep's transaction: removes the payload of the report stored under `key` if it
/// finished before `cutoff` and is not expired yet.
fn expire_one(
    reports: &TransactionalTree,
    pending: &TransactionalTree,
    key: &[u8],
    cutoff: DateTime<Utc>,
    now: DateTime<Utc>,
) -> TxResult<Expiry> {
    let Some(bytes) = reports.get(key)? else {
        return Ok(Expiry::Stale);
    };
    let mut report: Report = in_tx(decode(&String::from_utf8_lossy(key), &bytes))?;
    if report.expired_at.is_some() || !report.status.is_final() {
        return Ok(Expiry::Stale);
    }
    match report.finished_at {
        Some(at) if at < cutoff => {}
        Some(_) => return Ok(Expiry::NotYet),
        None => return Ok(Expiry::Stale),
    }
    report.submission = None;
    report.message = None;
    report.receipt = None;
    report.expired_at = Some(now);
    reports.insert_blind(key, in_tx(super::encode(&report))?)?;
    pending.remove_blind(key)?;
    Ok(Expiry::Expired)
}
