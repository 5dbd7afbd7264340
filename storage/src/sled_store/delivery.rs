//! The delivery phases of a job in sled: its message stored, delivered (waiting for its
//! acknowledgement), finished one by one (a failure, an operator's discard), and finished in
//! batches from a transport's acknowledgement inbox.
//!
//! An acknowledgement names the message it answers by its UUID, so the `awaiting` tree maps
//! message UUIDs to jobs. It is written in the transaction that stores the message, before the
//! first delivery, so that an acknowledgement fetched before the acceptance is recorded still
//! finds its job; it is removed in the transaction that finishes the job. A module whose
//! authority decides every report at once ([`crate::Store::decided_at_once`]) has no entries:
//! no acknowledgement will look for them, and writing and removing one cost a few per cent of
//! such a report's time on the server. The inbox's cursor per transport lives in
//! `inbox_cursors` and moves in the same transaction as the batch it ends, so a batch is applied
//! whole or fetched again.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use sled::transaction::{ConflictableTransactionError, TransactionalTree};

use super::{
    abort, backend, decode, encode, in_tx, keys, payload, put_job, stored_job, stored_turn,
    tx_error,
};
use super::{Engine, TxResult};
use crate::sled_gate::GatedTransaction;
use crate::{
    AfterDelivery, FinishedReport, Job, Outcome, Packing, PreparedMessage, Report, StoreError,
    StoreResult,
};

/// The trees a job's delivery phases change.
struct Trees<'a> {
    reports: &'a TransactionalTree,
    outbox: &'a TransactionalTree,
    by_id: &'a TransactionalTree,
    awaiting: &'a TransactionalTree,
    finished: &'a TransactionalTree,
    receipts: &'a TransactionalTree,
}

/// The job as stored (with its outbox key) and its report (with its key). `NotFound` if the job
/// left the outbox or its report is gone.
fn job_with_report(
    reports: &TransactionalTree,
    outbox: &TransactionalTree,
    by_id: &TransactionalTree,
    job_id: u64,
) -> TxResult<(sled::IVec, Job, Vec<u8>, Report)> {
    let (key, stored) = stored_job(outbox, by_id, job_id)?;
    let report_key = keys::report(&stored.report);
    let what = format!("report {}", stored.report);
    let Some(bytes) = reports.get(&report_key)? else {
        return abort(StoreError::NotFound(what));
    };
    let report: Report = in_tx(decode(&what, &bytes))?;
    Ok((key, stored, report_key, report))
}

/// An outcome as [`Trees::finish`] records it, its receipt made ready beforehand
/// ([`packed_receipt`]).
struct Decided<'a> {
    outcome: &'a Outcome,
    packed_receipt: &'a [u8],
}

/// The receipt of `outcome` as the `receipts` tree keeps it, packed `packing`'s way
/// ([`Packing::pack_receipt`]); empty for a failure.
fn packed_receipt(outcome: &Outcome, packing: Packing) -> Vec<u8> {
    match outcome {
        Outcome::Success { receipt, .. } => packing.pack_receipt(&receipt.bytes),
        Outcome::Failure { .. } => Vec::new(),
    }
}

impl Trees<'_> {
    /// Records the report's final state and removes its job (and the job's `awaiting` entry).
    /// With `from`, only if no other transport took the message (an acknowledgement from
    /// another transport is not one): `None` then, and nothing changes.
    fn finish(
        &self,
        job_id: u64,
        decided: &Decided<'_>,
        at: DateTime<Utc>,
        from: Option<&str>,
    ) -> TxResult<Option<FinishedReport>> {
        let (key, stored, report_key, report) =
            job_with_report(self.reports, self.outbox, self.by_id, job_id)?;
        if let (Some(from), Some(took)) = (from, report.transport.as_deref()) {
            if from != took {
                return Ok(None);
            }
        }
        self.end(key, stored, report_key, report, decided, at)
            .map(Some)
    }

    /// [`Trees::finish`] once the job and its report are read (and changed, for a delivery
    /// recorded in the same transaction).
    fn end(
        &self,
        key: sled::IVec,
        stored: Job,
        report_key: Vec<u8>,
        mut report: Report,
        decided: &Decided<'_>,
        at: DateTime<Utc>,
    ) -> TxResult<FinishedReport> {
        if let Outcome::Success { .. } = decided.outcome {
            self.receipts
                .insert_blind(report_key.as_slice(), decided.packed_receipt)?;
        }
        report.finish(decided.outcome, at);
        self.reports
            .insert_blind(report_key.as_slice(), in_tx(encode(&report))?)?;
        // The retention sweep finds the report through this entry.
        self.finished
            .insert_blind(keys::finished(&report.key, at), &[][..])?;
        self.outbox.remove_blind(&key)?;
        self.by_id.remove_blind(&keys::job_id(stored.id)[..])?;
        if let Some(message) = &report.message {
            self.awaiting
                .remove_blind(keys::awaiting(&message.message_uuid))?;
        }
        Ok(FinishedReport::of(report, stored.id))
    }
}

/// Stores `message` on the report under `report_key` (its body in `messages`) and maps its UUID
/// to `job` in `awaiting` (given for a report acknowledged later), unless the report has a
/// message already: then that one comes back. `true` with the message if something was written.
fn store_message(
    [reports, messages]: [&TransactionalTree; 2],
    awaiting: Option<&TransactionalTree>,
    report_key: &[u8],
    job: &Job,
    (message, packed_body): (&PreparedMessage, &[u8]),
) -> TxResult<(PreparedMessage, bool)> {
    let what = format!("report {}", job.report);
    let Some(bytes) = reports.get(report_key)? else {
        return abort(StoreError::NotFound(what));
    };
    let mut report: Report = in_tx(decode(&what, &bytes))?;
    if let Some(existing) = report.message {
        return Ok((
            payload::whole_message(messages, report_key, existing)?,
            false,
        ));
    }
    report.message = Some(payload::message_state(message));
    reports.insert_blind(report_key, in_tx(encode(&report))?)?;
    messages.insert_blind(report_key, packed_body)?;
    if let Some(awaiting) = awaiting {
        awaiting.insert_blind(
            keys::awaiting(&message.message_uuid),
            &keys::job_id(job.id)[..],
        )?;
    }
    Ok((message.clone(), true))
}

impl Engine {
    pub(super) async fn prepared(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<PreparedMessage> {
        let report_key = keys::report(&job.report);
        let ways = self.module_ways.of(&job.report);
        let packed = ways.packing.pack(&message.body);
        let (stored, changed) = (&self.reports, &self.awaiting, &self.messages)
            .gated_transaction(|(reports, awaiting, messages)| {
                let message = (&message, packed.as_slice());
                let awaiting = ways.acknowledged_later.then_some(awaiting);
                store_message([reports, messages], awaiting, &report_key, job, message)
            })
            .map_err(tx_error)?;
        if changed {
            self.flush().await?;
        }
        Ok(stored)
    }

    /// `NotFound` if the job has left the outbox or its report is gone.
    pub(super) async fn prepared_attempt(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<(Job, PreparedMessage)> {
        let report_key = keys::report(&job.report);
        let ways = self.module_ways.of(&job.report);
        let packed = ways.packing.pack(&message.body);
        let read = job.clone();
        self.commit(move |t| {
            let (key, mut stored) = stored_turn(t.outbox, t.outbox_by_id, &read)?;
            stored.attempts = stored.attempts.saturating_add(1);
            put_job(t.outbox, t.outbox_by_id, &key, &stored)?;
            let (message, _) = store_message(
                [t.reports, t.messages],
                ways.acknowledged_later.then_some(t.awaiting),
                &report_key,
                &stored,
                (&message, &packed),
            )?;
            Ok((stored, message))
        })
        .await
    }

    pub(super) async fn delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery,
    ) -> StoreResult<Option<FinishedReport>> {
        let resend_at = match after {
            AfterDelivery::AwaitAck { resend_at } => resend_at,
            AfterDelivery::Finished(outcome) => {
                let delivery = (transport, transport_ref, delivered_at);
                return self
                    .finish_job(job, outcome, delivered_at, Some(delivery))
                    .await
                    .map(Some);
            }
        };
        let (id, transport) = (job.id, transport.to_owned());
        self.commit(move |t| {
            let (key, stored, report_key, mut report) =
                job_with_report(t.reports, t.outbox, t.outbox_by_id, id)?;
            // A message delivered again that the transport had lost may come back under a new
            // reference; the acknowledgement finds it by its UUID either way.
            report.note_delivery((&transport, transport_ref.clone(), delivered_at));
            t.reports
                .insert_blind(report_key.as_slice(), in_tx(encode(&report))?)?;
            // Its acknowledgement will look for it: written here too for a report stored while
            // its module delivered through a transport without an inbox (sled writes nothing
            // when the entry is there already).
            if let Some(message) = &report.message {
                t.awaiting
                    .insert_blind(keys::awaiting(&message.message_uuid), &keys::job_id(id)[..])?;
            }
            // Same id, new kind: the job keeps its identity across the two phases.
            let waiting = stored.awaiting_ack(resend_at);
            put_job(t.outbox, t.outbox_by_id, &key, &waiting)
        })
        .await
        .map(|()| None)
    }

    pub(super) async fn outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport> {
        self.finish_job(job, outcome, at, None).await
    }

    /// Ends the job's report with `outcome` and removes the job, in one transaction; with
    /// `delivery`, records first which transport took the message under which reference. Goes
    /// through the group commit, like a delivery that waits for its acknowledgement: for an
    /// authority that answers at once this is every report's last write.
    async fn finish_job(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
        delivery: Option<(&str, Option<String>, DateTime<Utc>)>,
    ) -> StoreResult<FinishedReport> {
        let packed = packed_receipt(&outcome, self.module_ways.of(&job.report).packing);
        let read = job.clone();
        let delivery = delivery.map(|(transport, r, at)| (transport.to_owned(), r, at));
        let count = std::sync::Arc::clone(&self.outbox_jobs);
        self.commit_then(
            move |t| {
                let trees = Trees {
                    reports: t.reports,
                    outbox: t.outbox,
                    by_id: t.outbox_by_id,
                    awaiting: t.awaiting,
                    finished: t.finished,
                    receipts: t.receipts,
                };
                let (key, stored, report_key, mut report) =
                    job_with_report(t.reports, t.outbox, t.outbox_by_id, read.id)?;
                // Only the turn it was read at: a job another run has moved on meanwhile (an
                // attempt counted, a delivery recorded) is not this caller's to end.
                if !stored.same_turn(&read) {
                    return abort(StoreError::NotFound(format!("job {} as read", read.id)));
                }
                if let Some((transport, transport_ref, delivered_at)) = &delivery {
                    report.note_delivery((transport, transport_ref.clone(), *delivered_at));
                }
                let decided = Decided {
                    outcome: &outcome,
                    packed_receipt: &packed,
                };
                trees.end(key, stored, report_key, report, &decided, at)
            },
            move || {
                count.fetch_sub(1, Ordering::SeqCst);
            },
        )
        .await
    }

    pub(super) fn cursor(&self, transport: &str) -> StoreResult<Option<String>> {
        self.inbox_cursors
            .get(transport.as_bytes())
            .map_err(backend)?
            .map(|bytes| super::utf8("inbox cursor", &bytes))
            .transpose()
    }

    pub(super) async fn acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<FinishedReport>> {
        // Nothing to change is the common case of an idle inbox: no transaction, no flush.
        let moves = cursor.is_some() && cursor != self.cursor(transport)?;
        let mut ours = false;
        for (message_uuid, _) in &acknowledgements {
            if self
                .awaiting
                .contains_key(keys::awaiting(message_uuid))
                .map_err(backend)?
            {
                ours = true;
                break;
            }
        }
        if !moves && !ours {
            return Ok(Vec::new());
        }
        let packed: Vec<Vec<u8>> = acknowledgements
            .iter()
            // Acknowledged through an inbox, which names the message, not its module: packed
            // small, as every inbox transport's modules are (the health modules' authority
            // answers at once).
            .map(|(_, outcome)| packed_receipt(outcome, Packing::Small))
            .collect();
        let decided: Vec<(&str, Decided<'_>)> = acknowledgements
            .iter()
            .zip(&packed)
            .map(|((message_uuid, outcome), packed_receipt)| {
                let decided = Decided {
                    outcome,
                    packed_receipt,
                };
                (message_uuid.as_str(), decided)
            })
            .collect();
        let finished = (
            &self.reports,
            &self.outbox,
            &self.outbox_by_id,
            &self.awaiting,
            &self.finished,
            &self.inbox_cursors,
            &self.receipts,
        )
            .gated_transaction(
                |(reports, outbox, by_id, awaiting, finished, cursors, receipts)| {
                    let trees = Trees {
                        reports,
                        outbox,
                        by_id,
                        awaiting,
                        finished,
                        receipts,
                    };
                    let mut finished = Vec::new();
                    for (message_uuid, decided) in &decided {
                        let Some(id) = awaiting.get(keys::awaiting(message_uuid))? else {
                            continue;
                        };
                        let id = in_tx(keys::decode_job_id(&id))?;
                        let report = match trees.finish(id, decided, at, Some(transport)) {
                            Ok(Some(report)) => report,
                            // Another transport took the message: not its acknowledgement.
                            Ok(None) => continue,
                            // The job left the outbox meanwhile (discarded): nothing to record.
                            Err(ConflictableTransactionError::Abort(StoreError::NotFound(_))) => {
                                continue
                            }
                            Err(e) => return Err(e),
                        };
                        finished.push(report);
                    }
                    if let Some(cursor) = &cursor {
                        cursors.insert_blind(transport.as_bytes(), cursor.as_bytes())?;
                    }
                    Ok(finished)
                },
            )
            .map_err(tx_error)?;
        self.outbox_jobs.fetch_sub(finished.len(), Ordering::SeqCst);
        self.flush().await?;
        Ok(finished)
    }
}
