//! Test doubles of the store, the transport, the builder and the signer, and helpers to wait for
//! states without timed assertions.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use meldewerk_actors::{
    BuildError, BuiltMessage, Engine, EngineSettings, MessageBuilder, MessageSigner, ModuleSpec,
};
use meldewerk_storage::{
    AfterDelivery, AuditEntry, Consumed, FinishedReport, Job, JobKind, MessageSignature, Outcome,
    PreparedMessage, Report, ReportKey, ReportStatus, Store, StoreCondition, StoreError,
    StoreResult, UserRecord,
};
use meldewerk_transports::{
    Accepted, AckBatch, Acknowledgement, Answer, Delivery, Finished, Inbox, Receipt, Transport,
    TransportError,
};

pub const MODULE: &str = "birthnotice";

/// Settings that make tests fast: short intervals, tiny backoff, generous restart intensity.
pub fn fast_settings() -> EngineSettings {
    EngineSettings {
        scan_interval_ms: 20,
        inbox_interval_ms: 5,
        ack_timeout_secs: 3600,
        max_attempts: 3,
        backoff_base_ms: 1,
        backoff_max_ms: 20,
        max_in_flight: 64,
        max_restarts: 1_000,
        restart_window_secs: 60,
        retention_sweep_interval_secs: 3600,
        // Tests of retries and give-ups must not meet an open breaker; its own tests set it.
        breaker_failures: 1_000,
        breaker_open_secs: 1,
        transport_timeout_secs: 30,
    }
}

pub fn key(id: &str) -> ReportKey {
    ReportKey {
        owner: "klinik".to_string(),
        module: MODULE.to_string(),
        id: id.to_string(),
    }
}

pub fn pending_report(id: &str) -> Report {
    Report::new_pending(
        key(id),
        serde_json::json!({ "child": { "name": "Erika" }, "id": id }),
        Some(format!("ref-{id}")),
        format!("idem-{id}"),
        Utc::now(),
    )
}

/// Starts an engine over `store` with the one test module: the default test builder and signer,
/// and `transport`.
pub fn start_engine(
    store: Arc<dyn Store>,
    transport: Arc<dyn Transport>,
    settings: EngineSettings,
) -> Engine {
    Engine::start(
        store,
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(TestSigner),
            transport,
        )],
        settings,
    )
}

pub fn spec(
    builder: Arc<dyn MessageBuilder>,
    signer: Arc<dyn MessageSigner>,
    transport: Arc<dyn Transport>,
) -> ModuleSpec {
    ModuleSpec {
        module: MODULE.to_string(),
        builder,
        signer,
        transport,
        retention: None,
        reading: None,
    }
}

/// Polls `check` until it returns `Some`, for up to 20 s (a deadline, not a timed assertion).
pub async fn wait_for<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        actix_rt::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the report is final and returns it.
/// Dispatches the report `id` and wakes `engine` to deliver it.
pub async fn dispatch(store: &MemStore, engine: &Engine, id: &str) {
    store.dispatch_report(pending_report(id)).await.unwrap();
    engine.wake();
}

pub async fn wait_final(store: &dyn Store, key: &ReportKey) -> Report {
    wait_for(&format!("report {key} to be final"), || async {
        store
            .report(key)
            .await
            .unwrap()
            .filter(|r| r.status.is_final())
    })
    .await
}

// ---------------------------------------------------------------- store

#[derive(Default)]
struct MemState {
    reports: HashMap<ReportKey, Report>,
    jobs: BTreeMap<u64, Job>,
    next_job: u64,
    audit: Vec<AuditEntry>,
    /// Jobs whose message is stored, by message UUID.
    awaiting: HashMap<String, u64>,
    cursors: HashMap<String, String>,
}

impl MemState {
    fn finish(
        &mut self,
        job_id: u64,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport> {
        let Some(job) = self.jobs.remove(&job_id) else {
            return Err(StoreError::NotFound(format!("job {job_id}")));
        };
        let report = self
            .reports
            .get_mut(&job.report)
            .ok_or_else(|| StoreError::NotFound(job.report.to_string()))?;
        report.finished_at = Some(at);
        match outcome {
            Outcome::Success { receipt, portal } => {
                report.status = ReportStatus::Success;
                report.receipt = Some(receipt.bytes);
                report.receipt_media_type = Some(receipt.media_type);
                report.portal = portal;
            }
            Outcome::Failure { reason } => {
                report.status = ReportStatus::Failure;
                report.failure_reason = Some(reason);
            }
        }
        let report = report.clone();
        if let Some(message) = &report.message {
            self.awaiting.remove(&message.message_uuid);
        }
        Ok(FinishedReport {
            key: report.key,
            job: job_id,
            submitted_at: report.submitted_at,
            failure: report.failure_reason,
        })
    }
}

/// In-memory store keeping the outbox contract of the trait.
#[derive(Default)]
pub struct MemStore {
    state: Mutex<MemState>,
    pub prepared_calls: AtomicUsize,
    /// Attempts counted by `begin_attempt`, the writes a delivery makes before it calls the
    /// transport.
    pub begun_attempts: AtomicUsize,
    /// What `condition` says: `None` is available. Only the condition: the methods keep
    /// working, so a test sees what the engine does with the word alone.
    pub unavailable: Mutex<Option<StoreCondition>>,
}

impl MemStore {
    pub fn jobs(&self) -> Vec<Job> {
        self.state.lock().unwrap().jobs.values().cloned().collect()
    }
}

#[async_trait]
impl Store for MemStore {
    fn condition(&self) -> StoreCondition {
        self.unavailable
            .lock()
            .unwrap()
            .clone()
            .unwrap_or(StoreCondition::Available)
    }

    async fn create_user(&self, _: UserRecord) -> StoreResult<()> {
        unimplemented!("not used by the engine")
    }
    async fn update_user(&self, _: UserRecord) -> StoreResult<()> {
        unimplemented!("not used by the engine")
    }
    async fn remove_user(&self, _: &str) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn user(&self, _: &str) -> StoreResult<Option<UserRecord>> {
        unimplemented!("not used by the engine")
    }
    async fn user_by_key_id(&self, _: &str) -> StoreResult<Option<UserRecord>> {
        unimplemented!("not used by the engine")
    }
    async fn users(&self) -> StoreResult<Vec<UserRecord>> {
        unimplemented!("not used by the engine")
    }

    async fn dispatch_report(&self, report: Report) -> StoreResult<Job> {
        let mut s = self.state.lock().unwrap();
        if s.reports.contains_key(&report.key) {
            return Err(StoreError::Conflict(report.key.to_string()));
        }
        s.next_job += 1;
        let job = Job {
            id: s.next_job,
            report: report.key.clone(),
            kind: JobKind::Deliver,
            attempts: 0,
            not_before: report.submitted_at,
            last_error: None,
        };
        if let Some(message) = &report.message {
            s.awaiting.insert(message.message_uuid.clone(), job.id);
        }
        s.reports.insert(report.key.clone(), report);
        s.jobs.insert(job.id, job.clone());
        Ok(job)
    }
    async fn forget_refused(&self, _: &ReportKey) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn report(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        Ok(self.state.lock().unwrap().reports.get(key).cloned())
    }
    async fn report_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
        Ok(self
            .state
            .lock()
            .unwrap()
            .reports
            .get(key)
            .map(|r| r.status))
    }
    async fn report_to_deliver(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        let mut report = self.report(key).await?;
        // As the sled store: the submission is left out once a message is stored.
        if let Some(report) = report.as_mut().filter(|r| r.message.is_some()) {
            report.submission = None;
        }
        Ok(report)
    }
    async fn consume_report(&self, _: &ReportKey) -> StoreResult<Consumed> {
        unimplemented!("not used by the engine")
    }
    async fn pending_ids(&self, _: &str, _: &str) -> StoreResult<Vec<String>> {
        unimplemented!("not used by the engine")
    }
    async fn reports_with_id(&self, _: &str, _: &str) -> StoreResult<Vec<ReportKey>> {
        unimplemented!("not used by the engine")
    }
    async fn expire_finished_before(
        &self,
        module: &str,
        cutoff: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let mut s = self.state.lock().unwrap();
        let mut n = 0;
        for r in s.reports.values_mut().filter(|r| r.key.module == module) {
            let finished_early = r.finished_at.is_some_and(|at| at < cutoff);
            if r.status.is_final() && finished_early && r.expired_at.is_none() {
                r.submission = None;
                r.message = None;
                r.receipt = None;
                r.expired_at = Some(Utc::now());
                n += 1;
            }
        }
        Ok(n)
    }

    async fn due_jobs(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: &(dyn Fn(u64) -> bool + Send + Sync),
    ) -> StoreResult<Vec<Job>> {
        let s = self.state.lock().unwrap();
        let mut due: Vec<Job> = s
            .jobs
            .values()
            .filter(|j| j.not_before <= now && !skip(j.id))
            .cloned()
            .collect();
        // First deliveries before overdue acknowledgements, module by module, at most `limit`
        // of each module in each, as the contract asks.
        due.sort_by(|a, b| {
            let order = |j: &Job| (j.kind == JobKind::AwaitAck, j.report.module.clone());
            (order(a), a.not_before, a.id).cmp(&(order(b), b.not_before, b.id))
        });
        let mut taken: std::collections::HashMap<(bool, String), usize> = Default::default();
        Ok(due
            .into_iter()
            .filter(|j| {
                let count = taken
                    .entry((j.kind == JobKind::AwaitAck, j.report.module.clone()))
                    .or_default();
                *count += 1;
                *count <= limit
            })
            .collect())
    }
    async fn outbox_len(&self) -> StoreResult<usize> {
        Ok(self.state.lock().unwrap().jobs.len())
    }
    async fn job(&self, id: u64) -> StoreResult<Option<Job>> {
        Ok(self.state.lock().unwrap().jobs.get(&id).cloned())
    }
    async fn jobs(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
        let s = self.state.lock().unwrap();
        let start = after.map_or(0, |id| id + 1);
        Ok(s.jobs
            .range(start..)
            .take(limit)
            .map(|(_, j)| j.clone())
            .collect())
    }
    async fn append_audit(&self, entry: AuditEntry) -> StoreResult<u64> {
        let mut s = self.state.lock().unwrap();
        s.audit.push(entry);
        Ok(s.audit.len() as u64)
    }
    async fn audit(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<(u64, AuditEntry)>> {
        let s = self.state.lock().unwrap();
        let start = after.unwrap_or(0) as usize;
        Ok(s.audit
            .iter()
            .enumerate()
            .skip(start)
            .take(limit)
            .map(|(i, e)| (i as u64 + 1, e.clone()))
            .collect())
    }
    async fn begin_attempt(&self, job: &Job) -> StoreResult<Job> {
        let mut s = self.state.lock().unwrap();
        let stored = s
            .jobs
            .get_mut(&job.id)
            .ok_or_else(|| StoreError::NotFound(format!("job {}", job.id)))?;
        if !stored.same_turn(job) {
            return Err(StoreError::NotFound(format!("job {} as read", job.id)));
        }
        stored.attempts += 1;
        self.begun_attempts.fetch_add(1, Ordering::SeqCst);
        Ok(stored.clone())
    }
    async fn reschedule(
        &self,
        job: &Job,
        not_before: DateTime<Utc>,
        last_error: Option<String>,
    ) -> StoreResult<()> {
        let mut s = self.state.lock().unwrap();
        let stored = s
            .jobs
            .get_mut(&job.id)
            .ok_or_else(|| StoreError::NotFound(format!("job {}", job.id)))?;
        stored.not_before = not_before;
        stored.last_error = last_error;
        Ok(())
    }
    async fn record_prepared(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<PreparedMessage> {
        self.prepared_calls.fetch_add(1, Ordering::SeqCst);
        let mut s = self.state.lock().unwrap();
        let report = s
            .reports
            .get_mut(&job.report)
            .ok_or_else(|| StoreError::NotFound(job.report.to_string()))?;
        let stored = report.message.get_or_insert(message).clone();
        s.awaiting.insert(stored.message_uuid.clone(), job.id);
        Ok(stored)
    }
    async fn record_delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery,
    ) -> StoreResult<Option<FinishedReport>> {
        let mut s = self.state.lock().unwrap();
        if !s.jobs.contains_key(&job.id) {
            return Err(StoreError::NotFound(format!("job {}", job.id)));
        }
        let report = s
            .reports
            .get_mut(&job.report)
            .ok_or_else(|| StoreError::NotFound(job.report.to_string()))?;
        report.transport = Some(transport.to_string());
        report.transport_ref = transport_ref;
        report.delivered_at = Some(delivered_at);
        let resend_at = match after {
            AfterDelivery::AwaitAck { resend_at } => resend_at,
            AfterDelivery::Finished(outcome) => {
                return s.finish(job.id, outcome, delivered_at).map(Some);
            }
        };
        let stored = s.jobs.get_mut(&job.id).unwrap();
        stored.kind = JobKind::AwaitAck;
        stored.attempts = 0;
        stored.not_before = resend_at;
        stored.last_error = None;
        Ok(None)
    }
    async fn inbox_cursor(&self, transport: &str) -> StoreResult<Option<String>> {
        Ok(self.state.lock().unwrap().cursors.get(transport).cloned())
    }
    async fn record_acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<FinishedReport>> {
        let mut s = self.state.lock().unwrap();
        let mut finished = Vec::new();
        for (message_uuid, outcome) in acknowledgements {
            let Some(&job) = s.awaiting.get(&message_uuid) else {
                continue;
            };
            finished.push(s.finish(job, outcome, at)?);
        }
        if let Some(cursor) = cursor {
            s.cursors.insert(transport.to_string(), cursor);
        }
        Ok(finished)
    }
    async fn record_outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport> {
        self.state.lock().unwrap().finish(job.id, outcome, at)
    }

    async fn put_certificate(
        &self,
        _: meldewerk_storage::FacilityCertificate,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn certificate(
        &self,
        _: &meldewerk_storage::Bsnr,
        _: meldewerk_storage::Environment,
    ) -> StoreResult<Option<meldewerk_storage::FacilityCertificate>> {
        unimplemented!("not used by the engine")
    }
    async fn certificates(&self) -> StoreResult<Vec<meldewerk_storage::FacilityCertificate>> {
        unimplemented!("not used by the engine")
    }
    async fn remove_certificate(
        &self,
        _: &meldewerk_storage::Bsnr,
        _: meldewerk_storage::Environment,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    // The facility registry is not the engine's business.
    async fn put_facility(
        &self,
        _: meldewerk_storage::Facility,
    ) -> StoreResult<meldewerk_storage::FacilityPut> {
        unimplemented!("not used by the engine")
    }
    async fn facility(
        &self,
        _: &meldewerk_storage::Bsnr,
    ) -> StoreResult<Option<meldewerk_storage::Facility>> {
        unimplemented!("not used by the engine")
    }
    async fn facilities(
        &self,
        _: Option<&meldewerk_storage::Bsnr>,
        _: usize,
    ) -> StoreResult<Vec<meldewerk_storage::Facility>> {
        unimplemented!("not used by the engine")
    }
    async fn remove_facility(&self, _: &meldewerk_storage::Bsnr) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn set_customer_scope(&self, _: meldewerk_storage::CustomerScope) -> StoreResult<()> {
        unimplemented!("not used by the engine")
    }
    async fn customer_scope(
        &self,
        _: &str,
    ) -> StoreResult<Option<meldewerk_storage::CustomerScope>> {
        unimplemented!("not used by the engine")
    }
    // Nor are the court-mailbox accounts.
    async fn put_mailbox_account(
        &self,
        _: meldewerk_storage::MailboxAccount,
    ) -> StoreResult<meldewerk_storage::MailboxAccountPut> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_account(
        &self,
        _: meldewerk_storage::MailboxAccountId,
    ) -> StoreResult<Option<meldewerk_storage::MailboxAccount>> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_account_by_safe_id(
        &self,
        _: &meldewerk_storage::SafeId,
    ) -> StoreResult<Option<meldewerk_storage::MailboxAccount>> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_accounts(
        &self,
        _: Option<meldewerk_storage::MailboxAccountId>,
        _: usize,
    ) -> StoreResult<Vec<meldewerk_storage::MailboxAccount>> {
        unimplemented!("not used by the engine")
    }
    async fn remove_mailbox_account(
        &self,
        _: meldewerk_storage::MailboxAccountId,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn grant_mailbox_account(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: &str,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn revoke_mailbox_account(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: &str,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_account_users(
        &self,
        _: meldewerk_storage::MailboxAccountId,
    ) -> StoreResult<Vec<String>> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_account_ids_of(
        &self,
        _: &str,
    ) -> StoreResult<Vec<meldewerk_storage::MailboxAccountId>> {
        unimplemented!("not used by the engine")
    }
    // Nor is the court-message index: its actors are tested against the real store.
    async fn index_court_messages(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: &str,
        _: Vec<meldewerk_storage::ListedCourtMessage>,
        _: Option<String>,
        _: DateTime<Utc>,
    ) -> StoreResult<Vec<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn mailbox_sync_cursor(
        &self,
        _: meldewerk_storage::MailboxAccountId,
    ) -> StoreResult<Option<String>> {
        unimplemented!("not used by the engine")
    }
    async fn court_message(&self, _: u64) -> StoreResult<Option<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn court_messages(
        &self,
        _: &meldewerk_storage::CourtMessageFilter,
        _: Option<u64>,
        _: usize,
    ) -> StoreResult<Vec<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn court_messages_of(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: Option<u64>,
        _: usize,
        _: bool,
    ) -> StoreResult<Vec<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn court_messages_to_hydrate(
        &self,
        _: DateTime<Utc>,
        _: usize,
    ) -> StoreResult<Vec<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn court_messages_created_before(
        &self,
        _: DateTime<Utc>,
        _: Option<u64>,
        _: usize,
    ) -> StoreResult<Vec<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn record_hydration(
        &self,
        _: u64,
        _: meldewerk_storage::HydrationOutcome,
        _: DateTime<Utc>,
    ) -> StoreResult<Option<meldewerk_storage::CourtMessage>> {
        unimplemented!("not used by the engine")
    }
    async fn delete_court_message(
        &self,
        _: u64,
        _: meldewerk_storage::DeletionCause,
        _: DateTime<Utc>,
    ) -> StoreResult<meldewerk_storage::CourtMessageDeleted> {
        unimplemented!("not used by the engine")
    }
    async fn map_case_reference(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: &str,
        _: &str,
    ) -> StoreResult<bool> {
        unimplemented!("not used by the engine")
    }
    async fn job_of_case_reference(
        &self,
        _: meldewerk_storage::MailboxAccountId,
        _: &str,
    ) -> StoreResult<Option<String>> {
        unimplemented!("not used by the engine")
    }
}

// ---------------------------------------------------------------- transport

/// What the next `submit` does.
#[derive(Clone, Debug)]
pub enum SubmitStep {
    /// Accepted for a later acknowledgement.
    Accept,
    Transient(&'static str),
    /// Refused at once.
    Reject(&'static str),
    /// Registered at once, with a receipt in the answer.
    Succeed,
    Panic,
}

/// What the next inbox fetch does while messages wait for their acknowledgement (a fetch with
/// nothing waiting consults no step).
#[derive(Clone, Debug)]
pub enum AckStep {
    /// The authority has not decided yet: nothing new in the inbox.
    Pending,
    /// Every waiting message is acknowledged.
    Ack,
    /// Every waiting message is refused with this reason.
    Reject(&'static str),
    /// The fetch fails transiently.
    Transient(&'static str),
    /// The fetch panics.
    Panic,
}

#[derive(Default)]
struct Office {
    /// Reference per accepted idempotency key.
    accepted: HashMap<String, String>,
    /// Accepted messages without a decision yet, in order: (message UUID, reference).
    waiting: Vec<(String, String)>,
    /// Decisions in the order they were made; the cursor is an index into it.
    inbox: Vec<Acknowledgement>,
}

/// Transport double: follows its scripts, then accepts and acknowledges; records every delivery.
#[derive(Default)]
pub struct ScriptedTransport {
    submit_script: Mutex<VecDeque<SubmitStep>>,
    ack_script: Mutex<VecDeque<AckStep>>,
    pub deliveries: Mutex<Vec<Delivery>>,
    office: Mutex<Office>,
    /// Inbox fetches made while a message waited.
    pub ack_calls: AtomicUsize,
    /// Every inbox fetch made, answered or not.
    pub fetches: AtomicUsize,
    /// While set, every inbox fetch fails with this error (an outage, however long).
    pub inbox_down: Mutex<Option<TransportError>>,
    /// An authority that decides every delivery at once: it has no inbox.
    pub without_inbox: bool,
}

impl ScriptedTransport {
    pub fn new(submit: Vec<SubmitStep>, ack: Vec<AckStep>) -> Arc<Self> {
        Arc::new(ScriptedTransport {
            submit_script: Mutex::new(submit.into()),
            ack_script: Mutex::new(ack.into()),
            ..Default::default()
        })
    }

    /// A transport whose authority decides every delivery at once (no inbox), following
    /// `submit`.
    pub fn deciding_at_once(submit: Vec<SubmitStep>) -> Arc<Self> {
        Arc::new(ScriptedTransport {
            submit_script: Mutex::new(submit.into()),
            without_inbox: true,
            ..Default::default()
        })
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.deliveries.lock().unwrap().clone()
    }

    /// The office accepted `idempotency_key` under `transport_ref` before this run (an earlier
    /// run of the engine delivered it) and has not decided on it yet.
    pub fn accepted_earlier(&self, idempotency_key: &str, message_uuid: &str, transport_ref: &str) {
        let mut office = self.office.lock().unwrap();
        office
            .accepted
            .insert(idempotency_key.to_string(), transport_ref.to_string());
        office
            .waiting
            .push((message_uuid.to_string(), transport_ref.to_string()));
    }
}

#[async_trait]
impl Transport for ScriptedTransport {
    fn name(&self) -> &str {
        "scripted"
    }

    async fn submit(&self, delivery: Delivery) -> Result<Answer, TransportError> {
        let step = self.submit_script.lock().unwrap().pop_front();
        self.deliveries.lock().unwrap().push(delivery.clone());
        match step.unwrap_or(SubmitStep::Accept) {
            SubmitStep::Accept => {}
            SubmitStep::Transient(e) => return Err(TransportError::Transient(e.to_string())),
            SubmitStep::Reject(e) => return Ok(Answer::Finished(Finished::refused(e))),
            SubmitStep::Succeed => {
                return Ok(Answer::Finished(Finished {
                    transport_ref: Some(format!("now-{}", delivery.idempotency_key)),
                    outcome: Outcome::Success {
                        receipt: Receipt::pdf(b"%PDF receipt at once".to_vec()),
                        portal: None,
                    },
                    duplicate: false,
                }))
            }
            SubmitStep::Panic => panic!("scripted transport panics on submit"),
        }
        let mut office = self.office.lock().unwrap();
        if let Some(transport_ref) = office.accepted.get(&delivery.idempotency_key) {
            return Ok(Answer::AwaitingAck(Accepted {
                transport_ref: transport_ref.clone(),
                accepted_at: Utc::now(),
                duplicate: true,
            }));
        }
        let transport_ref = format!("ref-{}", delivery.idempotency_key);
        office
            .accepted
            .insert(delivery.idempotency_key.clone(), transport_ref.clone());
        office
            .waiting
            .push((delivery.message_uuid.clone(), transport_ref.clone()));
        Ok(Answer::AwaitingAck(Accepted {
            transport_ref,
            accepted_at: Utc::now(),
            duplicate: false,
        }))
    }

    fn inbox(&self) -> Option<&dyn Inbox> {
        (!self.without_inbox).then_some(self as &dyn Inbox)
    }
}

#[async_trait]
impl Inbox for ScriptedTransport {
    async fn acknowledgements(
        &self,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<AckBatch, TransportError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        if let Some(down) = self.inbox_down.lock().unwrap().clone() {
            return Err(down);
        }
        let unknown = |c: &str| TransportError::UnknownCursor(format!("{c:?}"));
        let from: usize = match cursor {
            None => 0,
            Some(c) => c.parse().map_err(|_| unknown(c))?,
        };
        let mut office = self.office.lock().unwrap();
        // A cursor past the feed is one this office never handed out.
        if from > office.inbox.len() {
            return Err(unknown(cursor.unwrap_or_default()));
        }
        if !office.waiting.is_empty() {
            self.ack_calls.fetch_add(1, Ordering::SeqCst);
            let step = self.ack_script.lock().unwrap().pop_front();
            let outcome = |transport_ref: &str| match &step {
                Some(AckStep::Reject(r)) => Outcome::Failure {
                    reason: r.to_string(),
                },
                _ => Outcome::Success {
                    receipt: Receipt::pdf(format!("%PDF receipt for {transport_ref}").into_bytes()),
                    portal: Some("sim-portal".to_string()),
                },
            };
            match &step {
                Some(AckStep::Pending) => {}
                Some(AckStep::Transient(e)) => {
                    return Err(TransportError::Transient(e.to_string()))
                }
                Some(AckStep::Panic) => {
                    // Released first, or the poisoned lock would fail every later call.
                    drop(office);
                    panic!("scripted transport panics on acknowledgements")
                }
                None | Some(AckStep::Ack) | Some(AckStep::Reject(_)) => {
                    let decided: Vec<Acknowledgement> = office
                        .waiting
                        .drain(..)
                        .map(|(message_uuid, transport_ref)| Acknowledgement {
                            outcome: outcome(&transport_ref),
                            message_uuid,
                            transport_ref,
                        })
                        .collect();
                    office.inbox.extend(decided);
                }
            }
        }
        let acknowledgements: Vec<Acknowledgement> = office
            .inbox
            .iter()
            .skip(from)
            .take(limit)
            .cloned()
            .collect();
        let next = from + acknowledgements.len();
        Ok(AckBatch {
            acknowledgements,
            cursor: Some(next.to_string()),
            more: next < office.inbox.len(),
        })
    }
}

// ---------------------------------------------------------------- builder and signer

/// Builds a fresh message (new UUID) on every call, so a rebuilt retry would be visible.
#[derive(Default)]
pub struct TestBuilder {
    pub calls: AtomicUsize,
}

impl MessageBuilder for TestBuilder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if report.key.id.starts_with("boom") {
            panic!("builder exploded for {}", report.key.id);
        }
        if report.key.id.starts_with("invalid") {
            return Err(BuildError("submission is missing the child's name".into()));
        }
        let uuid = uuid::Uuid::new_v4().to_string();
        Ok(BuiltMessage {
            body: format!("<msg id=\"{}\" uuid=\"{uuid}\"/>", report.key.id).into_bytes(),
            message_uuid: uuid,
            content_type: "application/xml".to_string(),
            sender: None,
        })
    }
}

/// Signs with a fixed fake seal.
pub struct TestSigner;

#[async_trait]
impl MessageSigner for TestSigner {
    async fn sign(
        &self,
        report: &Report,
        body: &[u8],
    ) -> Result<Option<MessageSignature>, BuildError> {
        Ok(Some(MessageSignature {
            kind: "seal".to_string(),
            algorithm: "Test".to_string(),
            value: body.iter().rev().take(8).copied().collect(),
            public_key: vec![1, 2, 3],
            signer: report.key.owner.clone(),
        }))
    }
}

/// Leaves messages unsigned.
pub struct NoSigner;

#[async_trait]
impl MessageSigner for NoSigner {
    async fn sign(&self, _: &Report, _: &[u8]) -> Result<Option<MessageSignature>, BuildError> {
        Ok(None)
    }
}

// ---------------------------------------------------------------- watchdog

/// Ends the whole test process if a test is still running after `limit`: a deadlock blocks the
/// runtime thread itself, so no async timeout could fire, and a hung `cargo test` says nothing.
pub struct Watchdog(Arc<std::sync::atomic::AtomicBool>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

pub fn watchdog(what: &'static str, limit: Duration) -> Watchdog {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = Arc::clone(&done);
    std::thread::spawn(move || {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if seen.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // Straight to stderr: the test harness captures eprintln!, even from this thread.
        let _ = writeln!(
            std::io::stderr(),
            "{what}: still running after {limit:?}, the process is deadlocked \
             (sled 0.34: a flush holds the global concurrency-control read lock while a \
             transaction waits for the write lock); aborting the test process"
        );
        std::process::exit(101);
    });
    Watchdog(done)
}
