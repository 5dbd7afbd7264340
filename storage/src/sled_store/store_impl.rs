//! [`Store`] for [`Engine`].
//!
//! Transaction closures may run more than once when sled detects a conflict, so they only read
//! and write through the transactional trees; ids, clocks and encoded inputs are prepared before.

use std::sync::atomic::Ordering;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::reading::report_what;
use super::users::user_what;
use super::{
    abort, backend, decode, encode, in_tx, keys, payload, put_job, stored_job, stored_turn,
    tx_error, utf8, Engine,
};
use crate::sled_gate::GatedTransaction;
use crate::{
    AfterDelivery, AuditEntry, Bsnr, Consumed, CourtMessage, CourtMessageDeleted,
    CourtMessageFilter, CustomerScope, DeletionCause, Environment, Facility, FacilityCertificate,
    FacilityPut, FinishedReport, HydrationOutcome, Job, JobKind, ListedCourtMessage,
    MailboxAccount, MailboxAccountId, MailboxAccountPut, Outcome, PreparedMessage, Report,
    ReportKey, ReportResult, ReportStatus, SafeId, Store, StoreError, StoreResult, UserRecord,
};

#[async_trait]
impl Store for Engine {
    async fn create_user(&self, user: UserRecord) -> StoreResult<()> {
        self.user_create(user).await
    }

    async fn update_user(&self, user: UserRecord) -> StoreResult<()> {
        self.user_update(user).await
    }

    async fn remove_user(&self, name: &str) -> StoreResult<bool> {
        self.user_remove(name).await
    }

    async fn user(&self, name: &str) -> StoreResult<Option<UserRecord>> {
        self.user_cache.get_or_read(name, || {
            match self.users.get(name.as_bytes()).map_err(backend)? {
                // Every authenticated request reads its user: the error context is built only
                // on error.
                Some(bytes) => serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| StoreError::Corrupt(format!("{}: {e}", user_what(name)))),
                None => Ok(None),
            }
        })
    }

    async fn user_by_key_id(&self, key_id: &str) -> StoreResult<Option<UserRecord>> {
        let Some(name) = self.user_key_ids.get(key_id.as_bytes()).map_err(backend)? else {
            return Ok(None);
        };
        let name = utf8("user name in the key-id index", &name)?;
        // Both trees change in one transaction, but these two reads are not one: a password
        // change in between could pair the old id with the new record. Checking the id keeps
        // the answer to "whose current key is this".
        Ok(self
            .user(&name)
            .await?
            .filter(|user| user.memento_key.key_id == key_id))
    }

    async fn users(&self) -> StoreResult<Vec<UserRecord>> {
        self.users
            .iter()
            .map(|entry| {
                let (name, bytes) = entry.map_err(backend)?;
                decode(&user_what(&String::from_utf8_lossy(&name)), &bytes)
            })
            .collect()
    }

    async fn dispatch_report(&self, mut report: Report) -> StoreResult<Job> {
        let id = self.db.generate_id().map_err(backend)?;
        // A message built at dispatch is stored with the report.
        let prepared = report.message.take();
        let job = Job {
            id,
            report: report.key.clone(),
            kind: JobKind::Deliver,
            attempts: 0,
            not_before: Utc::now(),
            last_error: None,
        };
        let report_key = keys::report(&report.key);
        let by_id_key = keys::by_id(&report.key);
        let outbox_key = keys::outbox(&job);
        let job_id_key = keys::job_id(id);
        let ways = self.module_ways.of(&report.key);
        let message = prepared.map(|message| {
            let awaiting = ways
                .acknowledged_later
                .then(|| keys::awaiting(&message.message_uuid).to_vec());
            let body = ways.packing.pack(&message.body);
            report.message = Some(payload::message_state(&message));
            (awaiting, body)
        });
        let submission = payload::take_submission(&mut report, ways.packing)?;
        let report_value = encode(&report)?;
        let job_value = encode(&job)?;
        let what = report_what(&report.key);
        self.commit_new_job(move |t| {
            // Any stored report counts, expired or consumed: an id is used once per owner and
            // module, so a late duplicate never overwrites the audit trail.
            if t.reports.get(&report_key)?.is_some() {
                return abort(StoreError::Conflict(what.clone()));
            }
            t.reports
                .insert_blind(report_key.as_slice(), report_value.as_slice())?;
            if let Some(submission) = &submission {
                t.submissions
                    .insert_blind(report_key.as_slice(), submission.as_slice())?;
            }
            if let Some((awaiting, body)) = &message {
                t.messages
                    .insert_blind(report_key.as_slice(), body.as_slice())?;
                if let Some(awaiting) = awaiting {
                    t.awaiting
                        .insert_blind(awaiting.as_slice(), &job_id_key[..])?;
                }
            }
            // The job's id, by which a refused submission's job is found (`withdraw.rs`).
            t.pending
                .insert_blind(report_key.as_slice(), &job_id_key[..])?;
            t.reports_by_id
                .insert_blind(by_id_key.as_slice(), &[][..])?;
            t.outbox
                .insert_blind(&outbox_key[..], job_value.as_slice())?;
            t.outbox_by_id
                .insert_blind(&job_id_key[..], &outbox_key[..])?;
            Ok(())
        })
        .await?;
        Ok(job)
    }

    async fn report(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        self.read_report(key, true)
    }

    async fn report_to_deliver(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        self.read_report(key, false)
    }

    async fn report_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
        self.read_status(key)
    }

    async fn report_result(&self, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
        self.read_result(key)
    }

    /// A consumed report answers as stored after consuming, i.e. with `polled` set.
    async fn consume_report(&self, key: &ReportKey) -> StoreResult<Consumed> {
        let report_key = keys::report(key);
        let (consumed, changed) = (&self.reports, &self.pending, &self.receipts)
            .gated_transaction(|(reports, pending, receipts)| {
                let Some(bytes) = reports.get(&report_key)? else {
                    return Ok((Consumed::NotFound, false));
                };
                let mut report: Report = in_tx(decode(&report_what(key), &bytes))?;
                if report.expired_at.is_some() {
                    return Ok((Consumed::Expired, false));
                }
                if report.polled {
                    return Ok((Consumed::AlreadyRetrieved, false));
                }
                if !report.status.is_final() {
                    return Ok((Consumed::Result(ReportResult::from(&report)), false));
                }
                report.polled = true;
                reports.insert_blind(report_key.as_slice(), in_tx(encode(&report))?)?;
                pending.remove_blind(report_key.as_slice())?;
                // The answer carries the receipt; the state written above does not.
                let result = payload::result(receipts, &self.receipt_cache, &report_key, &report)?;
                Ok((Consumed::Result(result), true))
            })
            .map_err(tx_error)?;
        if changed {
            // Later reads answer 410: the receipt is not read again.
            self.receipt_cache.remove(&report_key);
            self.flush().await?;
        }
        Ok(consumed)
    }

    async fn pending_ids(&self, owner: &str, module: &str) -> StoreResult<Vec<String>> {
        let prefix = keys::report_prefix(owner, module);
        self.pending
            .scan_prefix(&prefix)
            .map(|entry| {
                let (key, _) = entry.map_err(backend)?;
                utf8("report id in the pending list", &key[prefix.len()..])
            })
            .collect()
    }

    async fn reports_with_id(&self, module: &str, id: &str) -> StoreResult<Vec<ReportKey>> {
        let prefix = keys::by_id_prefix(module, id);
        let mut found = Vec::new();
        for entry in self.reports_by_id.scan_prefix(&prefix) {
            let (key, _) = entry.map_err(backend)?;
            let rest = &key[prefix.len()..];
            // A NUL in the rest means the prefix matched a longer id (`id\0more`): owner names
            // hold no NUL, so that entry is another report.
            if rest.contains(&0) {
                continue;
            }
            found.push(ReportKey {
                owner: utf8("owner in the report id index", rest)?,
                module: module.to_owned(),
                id: id.to_owned(),
            });
        }
        Ok(found)
    }

    async fn forget_refused(&self, key: &ReportKey) -> StoreResult<bool> {
        self.forget_failed(key).await
    }

    async fn expire_finished_before(
        &self,
        module: &str,
        cutoff: DateTime<Utc>,
    ) -> StoreResult<usize> {
        self.expire_before(module, cutoff).await
    }

    /// New deliveries first, then acknowledgements gone overdue, each lane oldest due first and
    /// at most `limit` of each.
    async fn due_jobs(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: &(dyn Fn(u64) -> bool + Send + Sync),
    ) -> StoreResult<Vec<Job>> {
        let mut due = Vec::new();
        for lane in &keys::LANES {
            // Module by module, each with the whole limit in each lane: one module's backlog
            // (of new deliveries it cannot take right now, of overdue acknowledgements) hides
            // neither the other lane nor another module's jobs.
            let lane_keys = keys::outbox_lane(lane);
            let mut from = lane_keys.start.clone();
            while let Some(entry) = self.outbox.range(from..lane_keys.end.clone()).next() {
                let (first, _) = entry.map_err(backend)?;
                let module = keys::outbox_module(&first);
                let module_limit = due.len().saturating_add(limit);
                for entry in self.outbox.range(keys::outbox_due(lane, module, now)) {
                    if due.len() >= module_limit {
                        break;
                    }
                    let (key, bytes) = entry.map_err(backend)?;
                    let id = keys::outbox_job_id(&key);
                    if skip(id) {
                        continue;
                    }
                    // One job that cannot be read must not stop every module's deliveries: it
                    // is named in the log and left where it is.
                    let job: Job = match decode("outbox job", &bytes) {
                        Ok(job) => job,
                        Err(e) => {
                            tracing::error!(job = id, error = %e, "an outbox job cannot be read; passed over");
                            continue;
                        }
                    };
                    // Keys hold whole milliseconds; a job due later within `now`'s millisecond
                    // is not due yet.
                    if job.not_before <= now {
                        due.push(job);
                    }
                }
                let after = keys::outbox_after_module(lane, module);
                if after.as_slice() <= first.as_ref() {
                    // Only a key of no layout this store writes can end here (see `rekey_outbox`).
                    return Err(StoreError::Corrupt(format!(
                        "outbox key of an unknown layout ({} bytes)",
                        first.len()
                    )));
                }
                from = after;
            }
        }
        Ok(due)
    }

    async fn job(&self, id: u64) -> StoreResult<Option<Job>> {
        self.job_by_id(id)
    }

    async fn jobs(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
        self.jobs_by_id(after, limit)
    }

    async fn append_audit(&self, entry: AuditEntry) -> StoreResult<u64> {
        self.audit_append(&entry).await
    }

    async fn audit(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<(u64, AuditEntry)>> {
        self.audit_range(after, limit)
    }

    async fn outbox_len(&self) -> StoreResult<usize> {
        Ok(self.outbox_jobs.load(Ordering::SeqCst))
    }

    async fn begin_attempt(&self, job: &Job) -> StoreResult<Job> {
        // Every first delivery counts here (its message was stored at dispatch), so concurrent
        // ones share the committing thread's transaction and flush.
        let read = job.clone();
        self.commit(move |t| {
            let (key, mut stored) = stored_turn(t.outbox, t.outbox_by_id, &read)?;
            stored.attempts = stored.attempts.saturating_add(1);
            put_job(t.outbox, t.outbox_by_id, &key, &stored)?;
            Ok(stored)
        })
        .await
    }

    /// `NotFound` if the job has left the outbox.
    async fn reschedule(
        &self,
        job: &Job,
        not_before: DateTime<Utc>,
        last_error: Option<String>,
    ) -> StoreResult<()> {
        (&self.outbox, &self.outbox_by_id)
            .gated_transaction(|(outbox, by_id)| {
                // The stored job, not the caller's copy, keeps the attempt count authoritative.
                let (key, mut stored) = stored_job(outbox, by_id, job.id)?;
                stored.not_before = not_before;
                stored.last_error.clone_from(&last_error);
                put_job(outbox, by_id, &key, &stored)
            })
            .map_err(tx_error)?;
        self.flush().await
    }

    /// `NotFound` if the report does not exist.
    async fn record_prepared(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<PreparedMessage> {
        self.prepared(job, message).await
    }

    /// `NotFound` if the job has left the outbox or its report is gone.
    async fn begin_attempt_with_message(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<(Job, PreparedMessage)> {
        self.prepared_attempt(job, message).await
    }

    /// `NotFound` if the job has left the outbox or its report is gone.
    async fn record_delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery,
    ) -> StoreResult<Option<FinishedReport>> {
        self.delivered(job, transport, transport_ref, delivered_at, after)
            .await
    }

    async fn inbox_cursor(&self, transport: &str) -> StoreResult<Option<String>> {
        self.cursor(transport)
    }

    async fn record_acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<FinishedReport>> {
        self.acknowledgements(transport, acknowledgements, cursor, at)
            .await
    }

    /// `NotFound` if the job has left the outbox (its outcome is recorded already) or its report
    /// is gone.
    async fn record_outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport> {
        self.outcome(job, outcome, at).await
    }

    async fn put_facility(&self, facility: Facility) -> StoreResult<FacilityPut> {
        self.facility_put(facility).await
    }

    async fn facility(&self, bsnr: &Bsnr) -> StoreResult<Option<Facility>> {
        self.facility_get(bsnr)
    }

    async fn facilities(&self, after: Option<&Bsnr>, limit: usize) -> StoreResult<Vec<Facility>> {
        self.facility_page(after, limit)
    }

    async fn remove_facility(&self, bsnr: &Bsnr) -> StoreResult<bool> {
        self.facility_remove(bsnr).await
    }

    async fn set_customer_scope(&self, scope: CustomerScope) -> StoreResult<()> {
        self.scope_set(scope).await
    }

    async fn customer_scope(&self, customer: &str) -> StoreResult<Option<CustomerScope>> {
        self.scope_get(customer)
    }

    // ---- certificates (certificates.rs) ----

    async fn put_certificate(&self, certificate: FacilityCertificate) -> StoreResult<bool> {
        self.certificate_put(certificate).await
    }

    async fn certificate(
        &self,
        bsnr: &Bsnr,
        environment: Environment,
    ) -> StoreResult<Option<FacilityCertificate>> {
        self.certificate_get(bsnr, environment)
    }

    async fn certificates(&self) -> StoreResult<Vec<FacilityCertificate>> {
        self.certificate_list()
    }

    async fn remove_certificate(&self, bsnr: &Bsnr, environment: Environment) -> StoreResult<bool> {
        self.certificate_remove(bsnr, environment).await
    }

    // ---- court-mailbox accounts (mailbox_accounts.rs) ----

    async fn put_mailbox_account(&self, account: MailboxAccount) -> StoreResult<MailboxAccountPut> {
        self.mailbox_put(account).await
    }

    async fn mailbox_account(&self, id: MailboxAccountId) -> StoreResult<Option<MailboxAccount>> {
        self.mailbox_get(id)
    }

    async fn mailbox_account_by_safe_id(
        &self,
        safe_id: &SafeId,
    ) -> StoreResult<Option<MailboxAccount>> {
        self.mailbox_by_safe_id(safe_id)
    }

    async fn mailbox_accounts(
        &self,
        after: Option<MailboxAccountId>,
        limit: usize,
    ) -> StoreResult<Vec<MailboxAccount>> {
        self.mailbox_page(after, limit)
    }

    async fn remove_mailbox_account(&self, id: MailboxAccountId) -> StoreResult<bool> {
        self.mailbox_remove(id).await
    }

    async fn grant_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool> {
        self.mailbox_grant(id, user, true).await
    }

    async fn revoke_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool> {
        self.mailbox_grant(id, user, false).await
    }

    async fn mailbox_account_users(&self, id: MailboxAccountId) -> StoreResult<Vec<String>> {
        self.mailbox_users(id)
    }

    async fn mailbox_account_ids_of(&self, user: &str) -> StoreResult<Vec<MailboxAccountId>> {
        self.mailbox_ids_of(user)
    }

    // ---- the court-message index (court_messages.rs, court_message_scans.rs) ----

    async fn index_court_messages(
        &self,
        account: MailboxAccountId,
        safe_id: &str,
        listed: Vec<ListedCourtMessage>,
        cursor: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<CourtMessage>> {
        self.court_index(account, safe_id, listed, cursor, now)
            .await
    }

    async fn mailbox_sync_cursor(&self, account: MailboxAccountId) -> StoreResult<Option<String>> {
        self.court_cursor(account)
    }

    async fn court_message(&self, id: u64) -> StoreResult<Option<CourtMessage>> {
        self.court_message_get(id)
    }

    async fn court_messages(
        &self,
        filter: &CourtMessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        self.court_listing(filter, after, limit)
    }

    async fn court_messages_of(
        &self,
        account: MailboxAccountId,
        after: Option<u64>,
        limit: usize,
        deleted: bool,
    ) -> StoreResult<Vec<CourtMessage>> {
        self.court_messages_of_account(account, after, limit, deleted)
    }

    async fn court_messages_to_hydrate(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        self.court_due(now, limit)
    }

    async fn court_messages_created_before(
        &self,
        cutoff: DateTime<Utc>,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>> {
        self.court_created_before(cutoff, after, limit)
    }

    async fn record_hydration(
        &self,
        id: u64,
        outcome: HydrationOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<CourtMessage>> {
        self.court_hydration(id, outcome, now).await
    }

    async fn delete_court_message(
        &self,
        id: u64,
        cause: DeletionCause,
        now: DateTime<Utc>,
    ) -> StoreResult<CourtMessageDeleted> {
        self.court_delete(id, cause, now).await
    }

    async fn map_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
        job_id: &str,
    ) -> StoreResult<bool> {
        self.case_reference_map(account, aktenzeichen, job_id).await
    }

    async fn job_of_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
    ) -> StoreResult<Option<String>> {
        self.case_reference_job(account, aktenzeichen)
    }
}
