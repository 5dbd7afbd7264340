//! [`SledStore`]: the sled engine behind the [`Store`] trait, opened again from disk after a
//! failed write (see `reopen.rs`).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::module_ways::ModuleWays;
use super::{Engine, DEFAULT_CACHE_CAPACITY};
use crate::reopen::{Failure, Reopening, WriteFailure};
use crate::{
    AfterDelivery, AuditEntry, Bsnr, Consumed, CourtMessage, CourtMessageDeleted,
    CourtMessageFilter, CustomerScope, DeletionCause, Environment, Facility, FacilityCertificate,
    FacilityPut, FinishedReport, HydrationOutcome, Job, ListedCourtMessage, MailboxAccount,
    MailboxAccountId, MailboxAccountPut, Outcome, Packing, PreparedMessage, Report, ReportKey,
    ReportResult, ReportStatus, SafeId, Store, StoreCondition, StoreError, StoreResult, UserRecord,
};

/// The sled engine of [`Store`]: one embedded database in the data directory, for a single node.
/// Cloning is cheap and every clone works on the same database, so one value can be handed to
/// every actor.
///
/// A write that fails (the disk full, the file system read-only) takes the database out: every
/// operation is then refused with [`StoreError::Unavailable`] until the database has been opened
/// again from disk and has taken a write, which happens by itself once the disk allows. What was
/// answered as stored is on disk; what was refused is not (see `reopen.rs`).
#[derive(Clone)]
pub struct SledStore {
    engine: Arc<Reopening<Engine>>,
    /// Submissions refused because their round's write failed, by report and idempotency key:
    /// withdrawn at the reopen should the disk have kept them (see `withdraw.rs`).
    refused: Refused,
    /// How each module's reports are kept (packing, acknowledgements), for this engine and those
    /// reopened after it.
    module_ways: ModuleWays,
}

type Refused = Arc<Mutex<Vec<(ReportKey, String)>>>;

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore").finish_non_exhaustive()
    }
}

impl SledStore {
    /// Opens the database in `dir` (created if missing), e.g. `<data_dir>/db`, with a page cache
    /// of [`DEFAULT_CACHE_CAPACITY`].
    ///
    /// `Locked` if another `SledStore` (in this or another process) has it open: sled takes an
    /// exclusive file lock, so a second server or an admin command cannot corrupt a running one.
    pub fn open(dir: &Path) -> StoreResult<SledStore> {
        SledStore::open_with_cache(dir, DEFAULT_CACHE_CAPACITY)
    }

    /// [`SledStore::open`] with caches of `cache_capacity` bytes in all: sled's page cache and,
    /// a sixteenth of it, the receipts of final reports recently read, decoded. The caches bound
    /// most of the memory the store holds whatever the number of reports; smaller ones cost disk
    /// reads once the reports being worked on no longer fit.
    pub fn open_with_cache(dir: &Path, cache_capacity: u64) -> StoreResult<SledStore> {
        let module_ways = ModuleWays::default();
        let first = Engine::open(dir, cache_capacity, module_ways.clone())?;
        let dir = dir.to_path_buf();
        let refused = Refused::default();
        let to_withdraw = Arc::clone(&refused);
        let ways = module_ways.clone();
        let again = move || {
            let engine =
                Engine::open(&dir, cache_capacity, ways.clone()).map_err(|e| e.to_string())?;
            engine.probe().map_err(|e| e.to_string())?;
            withdraw(&engine, &to_withdraw)?;
            Ok(engine)
        };
        Ok(SledStore {
            engine: Arc::new(Reopening::new("store", first, Box::new(again))),
            refused,
            module_ways,
        })
    }

    /// Bytes the database takes on disk, for health output and metrics.
    pub fn size_on_disk(&self) -> StoreResult<u64> {
        self.engine()?.size_on_disk()
    }

    pub(super) fn engine(&self) -> StoreResult<Arc<Engine>> {
        self.engine.current().map_err(unavailable)
    }

    /// Passes `result` on; a failure of the engine's storage takes the engine out (and answers
    /// as unavailable, like every call until it is back). Other errors (a bug, a record that
    /// cannot be read) pass as they are: the database still writes, and nobody else is refused.
    async fn checked<T>(&self, engine: &Arc<Engine>, result: StoreResult<T>) -> StoreResult<T> {
        if !matches!(result, Err(StoreError::Backend(_))) {
            return result;
        }
        // Whether the database still writes: sled keeps a failed write's error, so a flush
        // fails too once one did (and the committing thread then remembers it).
        if engine.write_failure().is_none() {
            let _ = engine.flush().await;
        }
        match engine.write_failure() {
            Some(failure) => {
                self.engine.failed(engine, &failure);
                Err(StoreError::Unavailable(failure))
            }
            None => result,
        }
    }
}

/// Withdraws every refused submission the disk kept, before the reopened engine serves anyone;
/// those done are forgotten, so that a failure halfway is taken up by the next attempt.
fn withdraw(engine: &Engine, refused: &Refused) -> Result<(), String> {
    let mut refused = refused.lock().unwrap_or_else(PoisonError::into_inner);
    while let Some((key, idempotency_key)) = refused.last() {
        if engine
            .withdraw_refused(key, idempotency_key)
            .map_err(|e| e.to_string())?
        {
            tracing::warn!(
                report = %key,
                "a submission refused while the disk failed had reached it all the same; withdrawn, \
                 as its answer said"
            );
        }
        refused.pop();
    }
    Ok(())
}

fn unavailable(failure: Failure) -> StoreError {
    StoreError::Unavailable(failure.reason)
}

/// Implements [`Store`] by running each method on the engine in use, through
/// [`SledStore::checked`].
macro_rules! on_the_engine {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        #[async_trait]
        impl Store for SledStore {
            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    let engine = self.engine()?;
                    let result = engine.$name($($arg),*).await;
                    self.checked(&engine, result).await
                }
            )*

            async fn dispatch_report(&self, report: Report) -> StoreResult<Job> {
                let engine = self.engine()?;
                let attempt = (report.key.clone(), report.idempotency_key.clone());
                let result = engine.dispatch_report(report).await;
                let result = self.checked(&engine, result).await;
                if let Err(StoreError::Unavailable(_)) = &result {
                    // Its transaction ran in the round that failed: the disk may have kept it.
                    self.refused
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(attempt);
                }
                result
            }

            fn pack_payloads(&self, module: &str, packing: Packing) {
                self.module_ways.set_packing(module, packing);
            }

            fn decided_at_once(&self, module: &str) {
                self.module_ways.set_decided_at_once(module);
            }

            fn condition(&self) -> StoreCondition {
                match self.engine.failure() {
                    None => StoreCondition::Available,
                    Some(Failure { since, reason }) => StoreCondition::Unavailable { since, reason },
                }
            }
        }
    };
}

on_the_engine! {
    fn create_user(&self, user: UserRecord) -> StoreResult<()>;
    fn update_user(&self, user: UserRecord) -> StoreResult<()>;
    fn remove_user(&self, name: &str) -> StoreResult<bool>;
    fn user(&self, name: &str) -> StoreResult<Option<UserRecord>>;
    fn user_by_key_id(&self, key_id: &str) -> StoreResult<Option<UserRecord>>;
    fn users(&self) -> StoreResult<Vec<UserRecord>>;
    fn report(&self, key: &ReportKey) -> StoreResult<Option<Report>>;
    fn report_to_deliver(&self, key: &ReportKey) -> StoreResult<Option<Report>>;
    fn report_result(&self, key: &ReportKey) -> StoreResult<Option<ReportResult>>;
    fn report_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>>;
    fn consume_report(&self, key: &ReportKey) -> StoreResult<Consumed>;
    fn pending_ids(&self, owner: &str, module: &str) -> StoreResult<Vec<String>>;
    fn reports_with_id(&self, module: &str, id: &str) -> StoreResult<Vec<ReportKey>>;
    fn forget_refused(&self, key: &ReportKey) -> StoreResult<bool>;
    fn expire_finished_before(&self, module: &str, cutoff: DateTime<Utc>) -> StoreResult<usize>;
    fn due_jobs(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: &(dyn Fn(u64) -> bool + Send + Sync)
    ) -> StoreResult<Vec<Job>>;
    fn outbox_len(&self) -> StoreResult<usize>;
    fn begin_attempt(&self, job: &Job) -> StoreResult<Job>;
    fn reschedule(
        &self,
        job: &Job,
        not_before: DateTime<Utc>,
        last_error: Option<String>
    ) -> StoreResult<()>;
    fn record_prepared(&self, job: &Job, message: PreparedMessage) -> StoreResult<PreparedMessage>;
    fn begin_attempt_with_message(
        &self,
        job: &Job,
        message: PreparedMessage
    ) -> StoreResult<(Job, PreparedMessage)>;
    fn record_delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery
    ) -> StoreResult<Option<FinishedReport>>;
    fn inbox_cursor(&self, transport: &str) -> StoreResult<Option<String>>;
    fn record_acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>
    ) -> StoreResult<Vec<FinishedReport>>;
    fn job(&self, id: u64) -> StoreResult<Option<Job>>;
    fn jobs(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>>;
    fn append_audit(&self, entry: AuditEntry) -> StoreResult<u64>;
    fn audit(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<(u64, AuditEntry)>>;
    fn record_outcome(&self, job: &Job, outcome: Outcome, at: DateTime<Utc>) -> StoreResult<FinishedReport>;
    fn put_facility(&self, facility: Facility) -> StoreResult<FacilityPut>;
    fn facility(&self, bsnr: &Bsnr) -> StoreResult<Option<Facility>>;
    fn facilities(&self, after: Option<&Bsnr>, limit: usize) -> StoreResult<Vec<Facility>>;
    fn remove_facility(&self, bsnr: &Bsnr) -> StoreResult<bool>;
    fn set_customer_scope(&self, scope: CustomerScope) -> StoreResult<()>;
    fn customer_scope(&self, customer: &str) -> StoreResult<Option<CustomerScope>>;
    fn put_certificate(&self, certificate: FacilityCertificate) -> StoreResult<bool>;
    fn certificate(
        &self,
        bsnr: &Bsnr,
        environment: Environment
    ) -> StoreResult<Option<FacilityCertificate>>;
    fn certificates(&self) -> StoreResult<Vec<FacilityCertificate>>;
    fn remove_certificate(&self, bsnr: &Bsnr, environment: Environment) -> StoreResult<bool>;
    fn put_mailbox_account(&self, account: MailboxAccount) -> StoreResult<MailboxAccountPut>;
    fn mailbox_account(&self, id: MailboxAccountId) -> StoreResult<Option<MailboxAccount>>;
    fn mailbox_account_by_safe_id(&self, safe_id: &SafeId) -> StoreResult<Option<MailboxAccount>>;
    fn mailbox_accounts(
        &self,
        after: Option<MailboxAccountId>,
        limit: usize
    ) -> StoreResult<Vec<MailboxAccount>>;
    fn remove_mailbox_account(&self, id: MailboxAccountId) -> StoreResult<bool>;
    fn grant_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool>;
    fn revoke_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool>;
    fn mailbox_account_users(&self, id: MailboxAccountId) -> StoreResult<Vec<String>>;
    fn mailbox_account_ids_of(&self, user: &str) -> StoreResult<Vec<MailboxAccountId>>;
    fn index_court_messages(
        &self,
        account: MailboxAccountId,
        safe_id: &str,
        listed: Vec<ListedCourtMessage>,
        cursor: Option<String>,
        now: DateTime<Utc>
    ) -> StoreResult<Vec<CourtMessage>>;
    fn mailbox_sync_cursor(&self, account: MailboxAccountId) -> StoreResult<Option<String>>;
    fn court_message(&self, id: u64) -> StoreResult<Option<CourtMessage>>;
    fn court_messages(
        &self,
        filter: &CourtMessageFilter,
        after: Option<u64>,
        limit: usize
    ) -> StoreResult<Vec<CourtMessage>>;
    fn court_messages_of(
        &self,
        account: MailboxAccountId,
        after: Option<u64>,
        limit: usize,
        deleted: bool
    ) -> StoreResult<Vec<CourtMessage>>;
    fn court_messages_to_hydrate(
        &self,
        now: DateTime<Utc>,
        limit: usize
    ) -> StoreResult<Vec<CourtMessage>>;
    fn court_messages_created_before(
        &self,
        cutoff: DateTime<Utc>,
        after: Option<u64>,
        limit: usize
    ) -> StoreResult<Vec<CourtMessage>>;
    fn record_hydration(
        &self,
        id: u64,
        outcome: HydrationOutcome,
        now: DateTime<Utc>
    ) -> StoreResult<Option<CourtMessage>>;
    fn delete_court_message(
        &self,
        id: u64,
        cause: DeletionCause,
        now: DateTime<Utc>
    ) -> StoreResult<CourtMessageDeleted>;
    fn map_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
        job_id: &str
    ) -> StoreResult<bool>;
    fn job_of_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str
    ) -> StoreResult<Option<String>>;
}

#[cfg(test)]
mod tests {
    use super::super::test_reports::{dispatched, prepared};
    use super::*;
    use std::time::Duration;

    /// A report of `module` as the form dispatches it, its message with it or not yet built.
    fn report(module: &str, id: &str, message: bool) -> Report {
        let mut report = dispatched(module, id);
        if !message {
            report.message = None;
        }
        report
    }

    /// The engine opened again after `store`'s failed.
    async fn reopened(store: &SledStore) -> Arc<Engine> {
        let failed = store.engine().unwrap();
        store.engine.failed(&failed, "a write failed (test)");
        drop(failed);
        for _ in 0..200 {
            if let Ok(engine) = store.engine() {
                return engine;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the store was not opened again");
    }

    /// Dispatches `module`'s reports three ways: its message with it, built at the first
    /// attempt (in one transaction with it), and recorded after the attempt began.
    async fn dispatch_three_ways(store: &SledStore, module: &str) {
        let dispatch = |id, message| store.dispatch_report(report(module, id, message));
        dispatch("with", true).await.unwrap();
        let job = dispatch("first", false).await.unwrap();
        let first = prepared(&format!("{module}-first"));
        store.begin_attempt_with_message(&job, first).await.unwrap();
        let job = dispatch("after", false).await.unwrap();
        let job = store.begin_attempt(&job).await.unwrap();
        let after = prepared(&format!("{module}-after"));
        store.record_prepared(&job, after).await.unwrap();
    }

    #[tokio::test]
    async fn modules_decided_at_once_stay_so_for_the_engine_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        store.decided_at_once("labreport");
        let engine = reopened(&store).await;
        // Told after the engine failed: the engine opened again knows it too.
        store.decided_at_once("bedreport");
        dispatch_three_ways(&store, "bedreport").await;
        assert!(engine.awaiting.is_empty());

        // Decided at once: no acknowledgement index, however the message was stored.
        dispatch_three_ways(&store, "labreport").await;
        assert!(engine.awaiting.is_empty());
        // A module never named is indexed, all three ways.
        dispatch_three_ways(&store, "birthnotice").await;
        assert_eq!(engine.awaiting.len(), 3);
    }
}
