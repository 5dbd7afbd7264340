//! The delivery phases of a job in sled: delivered (waiting for its acknowledgement), finished
//! one by one (a failure, an operator's discard), and finished in batches from a transport's
//! acknowledgement inbox.
//!
//! A job waiting for its acknowledgement is found by `(transport, transport_ref)` through the
//! `awaiting` tree, written in the transaction that records the delivery and removed in the one
//! that finishes the job; the inbox's cursor per transport lives in `inbox_cursors` and moves in
//! the same transaction as the batch it ends, so a batch is applied whole or fetched again.

use std::sync::atomic::Ordering;

use chrono::{DateTime, Utc};
use sled::transaction::{ConflictableTransactionError, TransactionalTree};

use super::{abort, backend, decode, encode, in_tx, keys, put_job, stored_job, tx_error};
use super::{SledStore, TxResult};
use crate::sled_gate::GatedTransaction;
use crate::{FinishedReport, Job, JobKind, Outcome, Report, ReportStatus, StoreError, StoreResult};

/// The trees a job's delivery phases change.
struct Trees<'a> {
    reports: &'a TransactionalTree,
    outbox: &'a TransactionalTree,
    by_id: &'a TransactionalTree,
    awaiting: &'a TransactionalTree,
    finished: &'a TransactionalTree,
}

impl Trees<'_> {
    /// The job as stored (with its outbox key) and its report (with its key). `NotFound` if the
    /// job left the outbox or its report is gone.
    fn job_with_report(&self, job_id: u64) -> TxResult<(sled::IVec, Job, Vec<u8>, Report)> {
        let (key, stored) = stored_job(self.outbox, self.by_id, job_id)?;
        let report_key = keys::report(&stored.report);
        let what = format!("report {}", stored.report);
        let Some(bytes) = self.reports.get(&report_key)? else {
            return abort(StoreError::NotFound(what));
        };
        let report: Report = in_tx(decode(&what, &bytes))?;
        Ok((key, stored, report_key, report))
    }

    /// Records the report's final state and removes its job (and the job's `awaiting` entry).
    fn finish(&self, job_id: u64, outcome: &Outcome, at: DateTime<Utc>) -> TxResult<Report> {
        let (key, stored, report_key, mut report) = self.job_with_report(job_id)?;
        match outcome {
            Outcome::Acknowledged {
                receipt_pdf,
                portal,
            } => {
                report.status = ReportStatus::Success;
                report.receipt_pdf = Some(receipt_pdf.clone());
                if portal.is_some() {
                    report.portal.clone_from(portal);
                }
            }
            Outcome::Failed { reason } => {
                report.status = ReportStatus::Failure;
                report.failure_reason = Some(reason.clone());
            }
        }
        report.finished_at = Some(at);
        self.reports
            .insert(report_key.as_slice(), in_tx(encode(&report))?)?;
        // The retention sweep finds the report through this entry.
        self.finished
            .insert(keys::finished(&report.key, at), &[][..])?;
        self.outbox.remove(&key)?;
        self.by_id.remove(&keys::job_id(stored.id)[..])?;
        if let (Some(transport), Some(transport_ref)) = (&report.transport, &report.transport_ref) {
            self.awaiting
                .remove(keys::awaiting(transport, transport_ref))?;
        }
        Ok(report)
    }
}

impl SledStore {
    pub(super) async fn delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: String,
        delivered_at: DateTime<Utc>,
        resend_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        (
            &self.reports,
            &self.outbox,
            &self.outbox_by_id,
            &self.awaiting,
            &self.finished,
        )
            .gated_transaction(|(reports, outbox, by_id, awaiting, finished)| {
                let trees = Trees {
                    reports,
                    outbox,
                    by_id,
                    awaiting,
                    finished,
                };
                let (key, stored, report_key, mut report) = trees.job_with_report(job.id)?;
                // A delivered-again message the transport had lost comes back with a new
                // reference: the old one will never be acknowledged.
                if let (Some(old_transport), Some(old_ref)) =
                    (&report.transport, &report.transport_ref)
                {
                    awaiting.remove(keys::awaiting(old_transport, old_ref))?;
                }
                report.transport = Some(transport.to_owned());
                report.transport_ref = Some(transport_ref.clone());
                report.delivered_at.get_or_insert(delivered_at);
                reports.insert(report_key.as_slice(), in_tx(encode(&report))?)?;
                awaiting.insert(
                    keys::awaiting(transport, &transport_ref),
                    &keys::job_id(stored.id)[..],
                )?;
                // Same id, new kind: the job keeps its identity across the two phases.
                let waiting = Job {
                    kind: JobKind::AwaitAck,
                    attempts: 0,
                    not_before: resend_at,
                    last_error: None,
                    ..stored
                };
                put_job(outbox, by_id, &key, &waiting)
            })
            .map_err(tx_error)?;
        self.flush().await
    }

    pub(super) async fn outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        (
            &self.reports,
            &self.outbox,
            &self.outbox_by_id,
            &self.awaiting,
            &self.finished,
        )
            .gated_transaction(|(reports, outbox, by_id, awaiting, finished)| {
                let trees = Trees {
                    reports,
                    outbox,
                    by_id,
                    awaiting,
                    finished,
                };
                trees.finish(job.id, &outcome, at).map(|_| ())
            })
            .map_err(tx_error)?;
        self.outbox_jobs.fetch_sub(1, Ordering::SeqCst);
        self.flush().await
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
        for (transport_ref, _) in &acknowledgements {
            let key = keys::awaiting(transport, transport_ref);
            if self.awaiting.contains_key(key).map_err(backend)? {
                ours = true;
                break;
            }
        }
        if !moves && !ours {
            return Ok(Vec::new());
        }
        let finished = (
            &self.reports,
            &self.outbox,
            &self.outbox_by_id,
            &self.awaiting,
            &self.finished,
            &self.inbox_cursors,
        )
            .gated_transaction(|(reports, outbox, by_id, awaiting, finished, cursors)| {
                let trees = Trees {
                    reports,
                    outbox,
                    by_id,
                    awaiting,
                    finished,
                };
                let mut finished = Vec::new();
                for (transport_ref, outcome) in &acknowledgements {
                    let Some(id) = awaiting.get(keys::awaiting(transport, transport_ref))? else {
                        continue;
                    };
                    let id = in_tx(keys::decode_job_id(&id))?;
                    let report = match trees.finish(id, outcome, at) {
                        Ok(report) => report,
                        // The job left the outbox meanwhile (discarded): nothing to record.
                        Err(ConflictableTransactionError::Abort(StoreError::NotFound(_))) => {
                            continue
                        }
                        Err(e) => return Err(e),
                    };
                    finished.push(FinishedReport {
                        key: report.key,
                        job: id,
                        submitted_at: report.submitted_at,
                        failure: report.failure_reason,
                    });
                }
                if let Some(cursor) = &cursor {
                    cursors.insert(transport.as_bytes(), cursor.as_bytes())?;
                }
                Ok(finished)
            })
            .map_err(tx_error)?;
        self.outbox_jobs.fetch_sub(finished.len(), Ordering::SeqCst);
        self.flush().await?;
        Ok(finished)
    }
}
