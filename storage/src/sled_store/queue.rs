//! What operators read of the outbox (by job id) and the audit log of their actions.

use sled::Tree;

use super::{backend, decode, encode, keys, put_job, tx_error, Engine};
use crate::sled_gate::{self, GatedTransaction};
use crate::{AuditEntry, Job, StoreResult};

/// Reads the job whose outbox key `outbox_key` names.
fn job_at(outbox: &Tree, outbox_key: &[u8]) -> StoreResult<Option<Job>> {
    outbox
        .get(outbox_key)
        .map_err(backend)?
        .map(|bytes| decode("outbox job", &bytes))
        .transpose()
}

impl Engine {
    pub(super) fn job_by_id(&self, id: u64) -> StoreResult<Option<Job>> {
        match self.outbox_by_id.get(id.to_be_bytes()).map_err(backend)? {
            Some(key) => job_at(&self.outbox, &key),
            None => Ok(None),
        }
    }

    pub(super) fn jobs_by_id(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
        let start = after.map_or(0, |id| id.saturating_add(1));
        let mut jobs = Vec::new();
        for entry in self.outbox_by_id.range(start.to_be_bytes()..) {
            if jobs.len() >= limit {
                break;
            }
            let (_, key) = entry.map_err(backend)?;
            // A job finished between the two reads is simply not listed.
            if let Some(job) = job_at(&self.outbox, &key)? {
                jobs.push(job);
            }
        }
        Ok(jobs)
    }

    pub(super) async fn audit_append(&self, entry: &AuditEntry) -> StoreResult<u64> {
        let value = encode(entry)?;
        let number = {
            // One writer at a time picks the next number; the gate also keeps sled's flush
            // deadlock away (see `sled_gate`).
            let _gate = sled_gate::exclusive();
            let next = match self.audit.last().map_err(backend)? {
                Some((key, _)) => u64::from_be_bytes(key.as_ref().try_into().unwrap_or([0; 8])) + 1,
                None => 1,
            };
            self.audit
                .insert(next.to_be_bytes(), value)
                .map_err(backend)?;
            next
        };
        self.flush().await?;
        Ok(number)
    }

    pub(super) fn audit_range(
        &self,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<(u64, AuditEntry)>> {
        let start = after.map_or(0, |n| n.saturating_add(1));
        self.audit
            .range(start.to_be_bytes()..)
            .take(limit)
            .map(|entry| {
                let (key, bytes) = entry.map_err(backend)?;
                let number = u64::from_be_bytes(key.as_ref().try_into().unwrap_or([0; 8]));
                Ok((number, decode("audit entry", &bytes)?))
            })
            .collect()
    }
}

impl Engine {
    /// Rewrites outbox keys of an earlier layout (before they named the module, or before
    /// lanes existed) into the current one, in one transaction. The outbox holds only unfinished
    /// jobs; the walk reads the job index, whose values are the outbox keys (some 30 bytes each
    /// instead of the jobs' 160), and finds nothing to do on every start after the first. A key's
    /// length tells its layout, whatever bytes a module name holds.
    pub(super) fn rekey_outbox(&self) -> StoreResult<()> {
        let mut old = Vec::new();
        for entry in self.outbox_by_id.iter() {
            let (_, key) = entry.map_err(backend)?;
            if keys::OLD_OUTBOX_KEY_LENS.contains(&key.len()) {
                let job = job_at(&self.outbox, &key).and_then(|job| {
                    job.ok_or_else(|| {
                        crate::StoreError::Corrupt("indexed job missing from the outbox".into())
                    })
                });
                old.push((key, job));
            }
        }
        if old.is_empty() {
            return Ok(());
        }
        (&self.outbox, &self.outbox_by_id)
            .gated_transaction(|(outbox, by_id)| {
                for (key, job) in &old {
                    match job {
                        Ok(job) => put_job(outbox, by_id, key, job)?,
                        // Unreadable, so its module is unknown: its lane (the first for a key
                        // from before the lanes) under the empty module name, where the scans
                        // name it in the log and pass over it.
                        Err(_) => {
                            let due_and_id = &key[key.len() - 16..];
                            let lane = if key.len() == 17 { key[0] } else { 0 };
                            let rekeyed = [&[lane, 0][..], due_and_id].concat();
                            let value = outbox.remove(key)?.unwrap_or_default();
                            outbox.insert_blind(rekeyed.as_slice(), value)?;
                            by_id.insert_blind(&due_and_id[8..], rekeyed.as_slice())?;
                        }
                    }
                }
                Ok(())
            })
            .map_err(tx_error)?;
        self.committer.flush_blocking().map_err(backend)?;
        tracing::info!(
            jobs = old.len(),
            "rewrote the outbox's keys into the current layout"
        );
        Ok(())
    }
}
