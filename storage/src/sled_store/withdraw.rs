//! Withdrawing a submission the store refused but the disk kept, and forgetting a report the
//! authority refused at once (see [`crate::Store::forget_refused`]).
//!
//! A submission is refused (503) when the flush of its round fails. One flush can write several
//! log buffers, so the submission's own transaction may have reached the disk while a later
//! buffer (another request's change) failed: after the database is opened again the refused
//! report would be there, and its retry answered "already sent". The store remembers which
//! submissions it refused (by their idempotency key, unique per attempt) and withdraws each one
//! at the reopen, before anyone is served, as long as it is exactly what the refused attempt
//! wrote and nothing has happened to it since: never delivered, its job untouched.

use sled::transaction::TransactionalTree;

use super::{abort, backend, decode, keys, tx_error, Engine, TxResult};
use crate::sled_gate::GatedTransaction;
use crate::{Job, JobKind, Report, ReportKey, ReportStatus, StoreError, StoreResult};

impl Engine {
    /// Removes the report under `key` if the refused attempt `idempotency_key` left it, whole:
    /// the report, its listing, its payload and its job. Whether one was removed.
    pub(super) fn withdraw_refused(
        &self,
        key: &ReportKey,
        idempotency_key: &str,
    ) -> StoreResult<bool> {
        let report_key = keys::report(key);
        let by_id_key = keys::by_id(key);
        let trees = (
            &self.reports,
            &self.pending,
            &self.reports_by_id,
            &self.submissions,
            &self.messages,
            &self.awaiting,
            &self.outbox,
            &self.outbox_by_id,
        );
        let removed = trees
            .gated_transaction(
                |(reports, pending, by_id, submissions, messages, awaiting, outbox, jobs)| {
                    let Some(job) = refused_job(
                        [reports, pending, awaiting, outbox, jobs],
                        &report_key,
                        idempotency_key,
                    )?
                    else {
                        return Ok(false);
                    };
                    let RefusedJob {
                        message_uuid,
                        job_id,
                        outbox_key,
                    } = job;
                    for tree in [reports, pending, submissions, messages] {
                        tree.remove_blind(report_key.as_slice())?;
                    }
                    by_id.remove_blind(by_id_key.as_slice())?;
                    awaiting.remove_blind(keys::awaiting(&message_uuid))?;
                    outbox.remove_blind(outbox_key)?;
                    jobs.remove_blind(job_id)?;
                    Ok(true)
                },
            )
            .map_err(tx_error)?;
        if removed {
            self.committer.flush_blocking().map_err(backend)?;
            self.outbox_jobs
                .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(removed)
    }
}

impl Engine {
    /// Removes the report under `key` if the authority refused it at once
    /// ([`Report::refused_on_delivery`]): the report, its listing, its
    /// payload and its retention entry, in one transaction, flushed. Its job left the outbox
    /// when it ended. Whether one was removed.
    pub(super) async fn forget_failed(&self, key: &ReportKey) -> StoreResult<bool> {
        let report_key = keys::report(key);
        let by_id_key = keys::by_id(key);
        let trees = (
            &self.reports,
            &self.pending,
            &self.reports_by_id,
            &self.submissions,
            &self.messages,
            &self.receipts,
            &self.finished,
        );
        let removed = trees
            .gated_transaction(
                |(reports, pending, by_id, submissions, messages, receipts, finished)| {
                    let Some(report) = stored_report(reports, &report_key)? else {
                        return Ok(false);
                    };
                    // Checked in the transaction: only the authority's own refusal frees the id.
                    if !report.refused_on_delivery() {
                        return Ok(false);
                    }
                    for tree in [reports, pending, submissions, messages, receipts] {
                        tree.remove_blind(report_key.as_slice())?;
                    }
                    by_id.remove_blind(by_id_key.as_slice())?;
                    if let Some(at) = report.finished_at {
                        finished.remove_blind(keys::finished(key, at))?;
                    }
                    Ok(true)
                },
            )
            .map_err(tx_error)?;
        if removed {
            self.receipt_cache.remove(&report_key);
            self.flush().await?;
        }
        Ok(removed)
    }
}

/// The report stored under `report_key`, read inside a transaction.
fn stored_report(reports: &TransactionalTree, report_key: &[u8]) -> TxResult<Option<Report>> {
    let Some(bytes) = reports.get(report_key)? else {
        return Ok(None);
    };
    match decode("report", &bytes) {
        Ok(report) => Ok(Some(report)),
        Err(e) => abort(e),
    }
}

/// Where a refused submission's job is filed.
struct RefusedJob {
    message_uuid: String,
    job_id: sled::IVec,
    outbox_key: sled::IVec,
}

/// The report's job, if the report is exactly what the refused attempt wrote: pending, never
/// delivered, its first delivery not attempted. The job is found by the id its `pending` entry
/// holds, or, for a report stored before the entries held it, by its message's `awaiting`
/// entry.
fn refused_job(
    [reports, pending, awaiting, outbox, jobs]: [&TransactionalTree; 5],
    report_key: &[u8],
    idempotency_key: &str,
) -> TxResult<Option<RefusedJob>> {
    let Some(report) = stored_report(reports, report_key)? else {
        return Ok(None);
    };
    let untouched = report.idempotency_key == idempotency_key
        && report.status == ReportStatus::Pending
        && report.transport.is_none();
    if !untouched {
        return Ok(None);
    }
    // A report without a stored message (signing failed at dispatch) stays, and is delivered
    // like any other (as before its pending entry named its job).
    let Some(message) = report.message else {
        return Ok(None);
    };
    let job_id = match pending.get(report_key)? {
        Some(job_id) if !job_id.is_empty() => job_id,
        _ => match awaiting.get(keys::awaiting(&message.message_uuid))? {
            Some(job_id) => job_id,
            None => return Ok(None),
        },
    };
    let Some(outbox_key) = jobs.get(&job_id)? else {
        return Ok(None);
    };
    let Some(job_bytes) = outbox.get(&outbox_key)? else {
        return abort(StoreError::Corrupt(
            "a job is indexed but missing from the outbox".into(),
        ));
    };
    let job: Job = match decode("job", &job_bytes) {
        Ok(job) => job,
        Err(e) => return abort(e),
    };
    if job.kind != JobKind::Deliver || job.attempts > 0 {
        return Ok(None);
    }
    Ok(Some(RefusedJob {
        message_uuid: message.message_uuid,
        job_id,
        outbox_key,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use chrono::Utc;

    fn key(id: &str) -> ReportKey {
        super::super::test_reports::key("birthnotice", id)
    }

    /// A birth notice as the form dispatches it ([`super::super::test_reports::dispatched`]).
    fn dispatched(id: &str) -> Report {
        super::super::test_reports::dispatched("birthnotice", id)
    }

    #[tokio::test]
    async fn only_the_refused_attempt_untouched_is_withdrawn_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), 1 << 20, Default::default()).unwrap();
        let kept = engine.dispatch_report(dispatched("kept")).await.unwrap();
        let refused = engine.dispatch_report(dispatched("refused")).await.unwrap();
        let attempted = engine
            .dispatch_report(dispatched("attempted"))
            .await
            .unwrap();
        engine.begin_attempt(&attempted).await.unwrap();

        // Another attempt's key (an earlier, accepted submission of the same id) is never
        // withdrawn, nor a report whose delivery began.
        assert!(!engine.withdraw_refused(&key("kept"), "idem-other").unwrap());
        assert!(!engine
            .withdraw_refused(&key("attempted"), "idem-attempted")
            .unwrap());
        assert!(!engine
            .withdraw_refused(&key("absent"), "idem-absent")
            .unwrap());

        assert!(engine
            .withdraw_refused(&key("refused"), "idem-refused")
            .unwrap());
        assert!(engine.report(&key("refused")).await.unwrap().is_none());
        assert!(engine.job(refused.id).await.unwrap().is_none());
        assert!(engine
            .reports_with_id("birthnotice", "refused")
            .await
            .unwrap()
            .is_empty());
        assert_eq!(
            engine.pending_ids("alice", "birthnotice").await.unwrap(),
            ["attempted", "kept"]
        );
        assert_eq!(engine.outbox_len().await.unwrap(), 2);
        assert!(engine.job(kept.id).await.unwrap().is_some());
        // The id can be sent again.
        engine.dispatch_report(dispatched("refused")).await.unwrap();
    }

    #[tokio::test]
    async fn a_refused_report_is_found_by_its_pending_entry_without_an_awaiting_one() {
        let dir = tempfile::tempdir().unwrap();
        let ways = super::super::module_ways::ModuleWays::default();
        ways.set_decided_at_once("birthnotice");
        let engine = Engine::open(dir.path(), 1 << 20, ways).unwrap();
        let refused = engine.dispatch_report(dispatched("refused")).await.unwrap();
        assert!(engine.awaiting.is_empty(), "decided at once: no entry");
        assert!(engine
            .withdraw_refused(&key("refused"), "idem-refused")
            .unwrap());
        assert!(engine.report(&key("refused")).await.unwrap().is_none());
        assert!(engine.job(refused.id).await.unwrap().is_none());
        assert_eq!(engine.outbox_len().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn a_report_stored_without_an_awaiting_entry_gets_one_when_it_awaits_an_acknowledgement()
    {
        // Stored while its module's transport decided at once; delivered after the module
        // moved to a transport with an inbox.
        let dir = tempfile::tempdir().unwrap();
        let ways = super::super::module_ways::ModuleWays::default();
        ways.set_decided_at_once("birthnotice");
        let engine = Engine::open(dir.path(), 1 << 20, ways).unwrap();
        let job = engine.dispatch_report(dispatched("moved")).await.unwrap();
        assert!(engine.awaiting.is_empty());
        let job = engine.begin_attempt(&job).await.unwrap();
        let later = crate::AfterDelivery::AwaitAck {
            resend_at: Utc::now(),
        };
        engine
            .record_delivered(&job, "xpersonenstand", None, Utc::now(), later)
            .await
            .unwrap();
        assert_eq!(
            engine.awaiting.get("uuid-moved").unwrap().as_deref(),
            Some(&keys::job_id(job.id)[..])
        );
    }

    #[tokio::test]
    async fn a_refused_report_stored_before_pending_entries_held_its_job_is_still_withdrawn() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), 1 << 20, Default::default()).unwrap();
        let refused = engine.dispatch_report(dispatched("refused")).await.unwrap();
        assert_eq!(engine.awaiting.len(), 1, "acknowledged later: indexed");
        // As an earlier version wrote it: an empty pending entry.
        let report_key = keys::report(&key("refused"));
        engine.pending.insert(&report_key, &[][..]).unwrap();
        assert!(engine
            .withdraw_refused(&key("refused"), "idem-refused")
            .unwrap());
        assert!(engine.job(refused.id).await.unwrap().is_none());
        assert!(engine.awaiting.is_empty());
    }

    #[tokio::test]
    async fn only_a_report_refused_on_delivery_is_forgotten_and_whole() {
        use crate::{AfterDelivery, Outcome, Receipt};
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path(), 1 << 20, Default::default()).unwrap();
        let failed = engine.dispatch_report(dispatched("failed")).await.unwrap();
        let failed = engine.begin_attempt(&failed).await.unwrap();
        let refusal = AfterDelivery::Finished(Outcome::Failure {
            reason: "refused".into(),
        });
        engine
            .record_delivered(&failed, "demis", None, Utc::now(), refusal)
            .await
            .unwrap();
        // Ended in FAILURE without the authority's answer: attempts run out, or discarded.
        let given_up = engine
            .dispatch_report(dispatched("given-up"))
            .await
            .unwrap();
        let given_up = engine.begin_attempt(&given_up).await.unwrap();
        let failure = Outcome::Failure {
            reason: "delivery failed after 1 attempts: HTTP 503".into(),
        };
        engine
            .record_outcome(&given_up, failure, Utc::now())
            .await
            .unwrap();
        let succeeded = engine.dispatch_report(dispatched("ok")).await.unwrap();
        let success = Outcome::Success {
            receipt: Receipt {
                media_type: Receipt::PDF.into(),
                bytes: b"%PDF-1.7".to_vec(),
            },
            portal: None,
        };
        engine
            .record_outcome(&succeeded, success, Utc::now())
            .await
            .unwrap();
        engine.dispatch_report(dispatched("open")).await.unwrap();

        // A report that succeeded or is still in delivery is never forgotten.
        assert!(!engine.forget_failed(&key("ok")).await.unwrap());
        assert!(!engine.forget_failed(&key("open")).await.unwrap());
        assert!(!engine.forget_failed(&key("absent")).await.unwrap());
        // Nor one the authority may have registered.
        assert!(!engine.forget_failed(&key("given-up")).await.unwrap());
        assert!(engine.report(&key("given-up")).await.unwrap().is_some());

        assert!(engine.forget_failed(&key("failed")).await.unwrap());
        assert!(engine.report(&key("failed")).await.unwrap().is_none());
        assert!(engine
            .reports_with_id("birthnotice", "failed")
            .await
            .unwrap()
            .is_empty());
        assert_eq!(
            engine.pending_ids("alice", "birthnotice").await.unwrap(),
            ["given-up", "ok", "open"]
        );
        // Its retention entry went with it: the sweep finds only the reports that ended
        // otherwise.
        let later = Utc::now() + chrono::Duration::days(1);
        assert_eq!(
            engine
                .expire_finished_before("birthnotice", later)
                .await
                .unwrap(),
            2
        );
        // The id can be sent again.
        engine.dispatch_report(dispatched("failed")).await.unwrap();
    }
}
