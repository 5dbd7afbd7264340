//! meldewerk's store.
//!
//! Every layer reaches state through the [`Store`] trait, so that the engine does not care which
//! database holds it: [`SledStore`] today (one node, embedded), a PostgreSQL engine later (several
//! nodes sharing the work).
//!
//! The contract every engine keeps:
//! - each method that changes state is one transaction: it happens whole or not at all;
//! - a method that changes state returns only once the change is durable (flushed), so that an
//!   answer given after it never promises more than a crash would keep;
//! - outbox jobs are never lost: a job leaves the outbox only in the transaction that records
//!   its result.

pub mod base64_bytes;
mod certificates;
mod checkpoint;
pub mod copy;
mod court_messages;
mod facilities;
mod group_commit;
pub mod journal;
mod login_state;
mod mailbox_accounts;
mod model;
mod nodes;
mod packed;
pub mod postgres;
mod receipt_cache;
mod reopen;
mod schema;
mod sled_gate;
mod sled_store;

pub use certificates::*;
pub use checkpoint::checkpoint;
pub use court_messages::*;
pub use facilities::*;
pub use journal::{Journal, JournalError, PendingAppend};
pub use login_state::*;
pub use mailbox_accounts::*;
pub use model::*;
pub use nodes::{host_name, NodeStatus};
pub use packed::Packing;
pub use postgres::{PgSettings, PgStore};
pub use sled_store::{SledStore, DEFAULT_CACHE_CAPACITY};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The record exists already (a user name, a report id for this user and module).
    #[error("already exists: {0}")]
    Conflict(String),
    /// The record the operation needs does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// Another node sharing the store works on the record now (it holds the job's lease): the
    /// operation changed nothing, and may be made again once that node is done.
    #[error("in use: {0}")]
    Busy(String),
    /// Another process holds the data directory (the server is running on it).
    #[error("the data directory {0} is in use by another process (is the server running?)")]
    Locked(String),
    /// The stored bytes could not be decoded.
    #[error("corrupt record: {0}")]
    Corrupt(String),
    /// The database engine failed (I/O, disk full, ...).
    #[error("storage failure: {0}")]
    Backend(String),
    /// The store takes no requests now: a write failed (a full disk, a file system gone
    /// read-only) and the engine has not recovered yet. Nothing of the operation stays stored
    /// (a submission the disk kept all the same is withdrawn at the reopen); the same request
    /// can be made again later.
    #[error("the store is unavailable ({0})")]
    Unavailable(String),
}

impl StoreError {
    /// Whether the store as a whole cannot serve now (as opposed to a refusal of this one
    /// request): answered with 503 and a hint to try again later.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable(_))
    }
}

/// Whether the store serves requests, for readiness, health views and alerts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreCondition {
    /// Reads and writes go through.
    Available,
    /// A write failed at `since`; every request is refused until the engine recovers by itself
    /// (once the disk takes writes again). `reason` is the engine's last error.
    Unavailable {
        /// When the failing write happened.
        since: DateTime<Utc>,
        /// The engine's error, as it said it.
        reason: String,
    },
}

/// Result of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// The store behind every layer. See the crate docs for the transaction and durability contract.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Whether the store serves requests now. Cheap: asked on every readiness probe and tick.
    fn condition(&self) -> StoreCondition {
        StoreCondition::Available
    }

    /// Packs the payloads (submission, message, receipt) of `module`'s reports written from now
    /// on `packing`'s way; a module never named packs [`Packing::Small`]. What is stored reads
    /// whatever its packing. A store that keeps payloads as they are ignores it.
    fn pack_payloads(&self, module: &str, packing: Packing) {
        let _ = (module, packing);
    }

    /// `module`'s authority decides every report at once, so no acknowledgement will ever look
    /// its reports up by their messages' UUIDs ([`Store::record_acknowledgements`]): a store
    /// that keeps an index for that may keep none for them. Reports of a module never named
    /// are indexed. Told before the first report is dispatched.
    fn decided_at_once(&self, module: &str) {
        let _ = module;
    }

    // ---- nodes sharing the store ----

    /// Whether this node leads `task` (periodic work one node at a time must do: a transport's
    /// acknowledgement inbox, a mailbox account's sync, retention) for its next round, due in
    /// `interval`: asked at every round, which renews the lead. A lead outlives its holder's
    /// last round by the store's lease, after which another node takes the task over. One node
    /// alone (the default) always leads.
    async fn lead(&self, task: &str, interval: std::time::Duration) -> StoreResult<bool> {
        let _ = (task, interval);
        Ok(true)
    }
    /// Publishes this node's health (its actors) for the other nodes' dashboards; a store that
    /// serves one node keeps nothing.
    async fn publish_health(&self, health: serde_json::Value) -> StoreResult<()> {
        let _ = health;
        Ok(())
    }
    /// Every node that has used the store, by name; empty for a store that serves one node.
    async fn nodes(&self) -> StoreResult<Vec<NodeStatus>> {
        Ok(Vec::new())
    }
    /// Whether several nodes may share this store: what an operator sets for the whole service
    /// (a paused module) then lives in the store, not in one node's memory.
    fn shared(&self) -> bool {
        false
    }
    /// The modules an operator paused for every node on this store, by name; empty for a store
    /// that serves one node.
    async fn paused_modules(&self) -> StoreResult<Vec<String>> {
        Ok(Vec::new())
    }
    /// Records `module` as paused (or resumed) for every node on this store; a store that
    /// serves one node keeps nothing.
    async fn set_paused(&self, module: &str, paused: bool) -> StoreResult<()> {
        let _ = (module, paused);
        Ok(())
    }

    // ---- users and keys ----

    /// Adds a user. `Conflict` if the name is taken, or belonged to a removed user: reports keep
    /// their owner's name, so a new account under it would read them.
    async fn create_user(&self, user: UserRecord) -> StoreResult<()>;
    /// Replaces a user's record (password change, seal deposit). `NotFound` if absent.
    /// Keeps the key-id index in step: the old memento key id stops resolving.
    async fn update_user(&self, user: UserRecord) -> StoreResult<()>;
    /// Removes a user; `false` if there was none. Reports stay (they belong to the audit trail),
    /// and the name is never given to another user. The user's mailbox grants go in the same
    /// transaction: no account lists a user that no longer exists.
    async fn remove_user(&self, name: &str) -> StoreResult<bool>;
    /// Reads a user by name.
    async fn user(&self, name: &str) -> StoreResult<Option<UserRecord>>;
    /// Reads the user whose *current* memento key has this id.
    async fn user_by_key_id(&self, key_id: &str) -> StoreResult<Option<UserRecord>>;
    /// All users, by name.
    async fn users(&self) -> StoreResult<Vec<UserRecord>>;

    // ---- reports ----

    /// Stores a freshly dispatched report, lists it as pending and queues a `Deliver` job, in one
    /// transaction. `Conflict` if the owner already has a report with this module and id.
    ///
    /// A report dispatched with its message (`report.message`, built and signed at dispatch) has
    /// it stored in the same transaction, as [`Store::record_prepared`] would store it; its
    /// attempts are counted as every delivery's are, before each call to the transport.
    async fn dispatch_report(&self, report: Report) -> StoreResult<Job>;
    /// Reads a report without changing it (`peek`).
    async fn report(&self, key: &ReportKey) -> StoreResult<Option<Report>>;
    /// [`Store::report`] as a delivery needs it: once a message is stored, an engine may leave
    /// the submission out (it is not read again); the default reads the whole report.
    async fn report_to_deliver(&self, key: &ReportKey) -> StoreResult<Option<Report>> {
        self.report(key).await
    }
    /// [`Store::report`] reduced to what a poll answers. An engine may read it without decoding
    /// the payload; the default reads the whole report.
    async fn report_result(&self, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
        Ok(self
            .report(key)
            .await?
            .map(|report| ReportResult::from(&report)))
    }
    /// The state of the report under `key` alone, without its result (a receipt is neither
    /// read nor encoded): for a check on many reports, such as which of a pending list are
    /// results. `None` if there is no report under the key.
    async fn report_status(&self, key: &ReportKey) -> StoreResult<Option<ReportStatus>>;
    /// Reads a report the way a poll without `peek` does: a final, unpolled report is marked polled
    /// and leaves the pending list atomically, so two concurrent consumers never both get it.
    async fn consume_report(&self, key: &ReportKey) -> StoreResult<Consumed>;
    /// Ids of the owner's reports in this module that were dispatched and not yet consumed.
    async fn pending_ids(&self, owner: &str, module: &str) -> StoreResult<Vec<String>>;
    /// Every report with this module and id, whatever its owner (operator look-ups).
    async fn reports_with_id(&self, module: &str, id: &str) -> StoreResult<Vec<ReportKey>>;
    /// Removes the report under `key` whole if the authority refused it at once
    /// ([`Report::refused_on_delivery`]), so that its id is free for a new dispatch: for a
    /// module whose authority answers at once, a refused submission is no report (the end user
    /// corrects the form and sends again). `false` if there was no report under the key, or it
    /// did not fail, or it failed otherwise (attempts run out, discarded: the authority may
    /// have registered it, so its id stays used); nothing else is touched.
    async fn forget_refused(&self, key: &ReportKey) -> StoreResult<bool>;
    /// Removes the payload (submission, message, receipt) of the module's final reports that
    /// finished before `cutoff` and marks them expired; returns how many. Later reads answer as
    /// the module's retention rule says (410 report-expired for the civil-registry modules).
    /// An engine reads only the reports that are due, and may expire them in several
    /// transactions (memory stays bounded however many are due); a crash between them leaves
    /// the rest to the next sweep.
    async fn expire_finished_before(
        &self,
        module: &str,
        cutoff: DateTime<Utc>,
    ) -> StoreResult<usize>;

    // ---- outbox ----

    /// Jobs whose `not_before` has passed: first-time deliveries (`Deliver`), then overdue
    /// acknowledgements (`AwaitAck`); in each of the two, module by module, at most `limit` of
    /// each module, oldest due first. So new reports are found at once however many
    /// acknowledgements are late, late ones are found however many new reports wait, and one
    /// module's backlog never hides another module's jobs.
    /// Jobs for which `skip` says true (those being worked on) are passed over without being
    /// read and do not count towards `limit`.
    async fn due_jobs(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: &(dyn Fn(u64) -> bool + Send + Sync),
    ) -> StoreResult<Vec<Job>>;
    /// Number of jobs in the outbox (backlog, for health and metrics).
    async fn outbox_len(&self) -> StoreResult<usize>;
    /// Counts an attempt before it is made (so that a crash or panic during it counts too) and
    /// returns the job as stored. `NotFound` if the job is gone (done by someone else) or the
    /// stored job is no longer the turn `job` was read at ([`Job::same_turn`]).
    async fn begin_attempt(&self, job: &Job) -> StoreResult<Job>;
    /// Puts a job back for later: after a transient error (backoff) or while an acknowledgement
    /// is outstanding (polling interval).
    async fn reschedule(
        &self,
        job: &Job,
        not_before: DateTime<Utc>,
        last_error: Option<String>,
    ) -> StoreResult<()>;
    /// Stores the built message on the job's report, unless one is stored already; returns the
    /// message that is stored now (so that a retry delivers exactly the same bytes). From then on
    /// an acknowledgement naming the message's UUID finds the job (see
    /// [`Store::record_acknowledgements`]), even one that arrives before the delivery's
    /// acceptance is recorded. `NotFound` if the job's report does not exist.
    async fn record_prepared(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<PreparedMessage>;
    /// [`Store::begin_attempt`] and [`Store::record_prepared`] at once, for a first delivery:
    /// counts an attempt and stores the built message; if a message is stored already, that one
    /// stays and comes back (the attempt is counted all the same). Returns the job as stored and
    /// the message stored now; `NotFound` if the job has left the outbox, is no longer the turn
    /// `job` was read at, or its report is gone.
    /// An engine does both in one transaction (one flush instead of two); the default makes the
    /// two calls.
    async fn begin_attempt_with_message(
        &self,
        job: &Job,
        message: PreparedMessage,
    ) -> StoreResult<(Job, PreparedMessage)> {
        let job = self.begin_attempt(job).await?;
        let message = self.record_prepared(&job, message).await?;
        Ok((job, message))
    }
    /// The transport answered the delivery: remember which transport took it (under its
    /// reference, when it gave one) and then, in the same transaction, either turn the job into an
    /// `AwaitAck` job due at `resend_at` (when it is delivered again unless its acknowledgement
    /// came), or, when the authority decided at once, end the report with the outcome as
    /// [`Store::record_outcome`] does. Returns the report that ended, if it did.
    async fn record_delivered(
        &self,
        job: &Job,
        transport: &str,
        transport_ref: Option<String>,
        delivered_at: DateTime<Utc>,
        after: AfterDelivery,
    ) -> StoreResult<Option<FinishedReport>>;
    /// Where the engine stands in `transport`'s acknowledgement inbox: the cursor the last
    /// recorded batch ended at; `None` before the first.
    async fn inbox_cursor(&self, transport: &str) -> StoreResult<Option<String>>;
    /// Records one batch fetched from `transport`'s inbox and moves its cursor to `cursor`, in
    /// one transaction. Acknowledgements are `(message_uuid, outcome)`: each whose message a job
    /// in the outbox carries sets its report's final state and removes the job, whether or not
    /// the delivery's acceptance was recorded yet (the worker delivering it then finds its job
    /// gone); the others (recorded before a crash, or not ours) are skipped. Returns the reports
    /// that reached their final state. Writes nothing when nothing changes (no report finished
    /// and the cursor stays).
    async fn record_acknowledgements(
        &self,
        transport: &str,
        acknowledgements: Vec<(String, Outcome)>,
        cursor: Option<String>,
        at: DateTime<Utc>,
    ) -> StoreResult<Vec<FinishedReport>>;
    /// The job with this id, if it is still in the outbox.
    async fn job(&self, id: u64) -> StoreResult<Option<Job>>;
    /// Jobs in the outbox in id order, after `after` (exclusive), at most `limit` (operators'
    /// queue views, paged without reading the whole outbox).
    async fn jobs(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>>;

    // ---- audit ----

    /// Appends an entry to the audit log and returns its number; durable on return.
    async fn append_audit(&self, entry: AuditEntry) -> StoreResult<u64>;
    /// Audit entries after `after` (exclusive), oldest first, at most `limit`.
    async fn audit(&self, after: Option<u64>, limit: usize) -> StoreResult<Vec<(u64, AuditEntry)>>;

    /// Records the final state of the report and removes its job, in one transaction; returns
    /// the report that ended. `NotFound` if the job has left the outbox (its outcome is recorded
    /// already), is no longer the turn `job` was read at ([`Job::same_turn`]: an operator's
    /// discard does not end a job the engine has moved on meanwhile), or its report is gone.
    async fn record_outcome(
        &self,
        job: &Job,
        outcome: Outcome,
        at: DateTime<Utc>,
    ) -> StoreResult<FinishedReport>;

    // ---- facilities ----

    /// Stores a facility under its BSNR, creating or replacing it, in one transaction. A
    /// replaced record's `created_at` stays; the answer says which happened and holds the record
    /// as stored.
    async fn put_facility(&self, facility: Facility) -> StoreResult<FacilityPut>;
    /// The facility with this BSNR.
    async fn facility(&self, bsnr: &Bsnr) -> StoreResult<Option<Facility>>;
    /// Facilities in BSNR order after `after` (exclusive), at most `limit` (paged listings).
    async fn facilities(&self, after: Option<&Bsnr>, limit: usize) -> StoreResult<Vec<Facility>>;
    /// Removes the facility; `false` if there was none. Customer scopes are left alone: they
    /// list institution codes, not facilities.
    async fn remove_facility(&self, bsnr: &Bsnr) -> StoreResult<bool>;
    /// Sets the institution codes a customer may use, replacing what was set; an empty set
    /// removes the customer's scope.
    async fn set_customer_scope(&self, scope: CustomerScope) -> StoreResult<()>;
    /// The customer's scope; `None` if none was set (the customer may report for nothing).
    async fn customer_scope(&self, customer: &str) -> StoreResult<Option<CustomerScope>>;
    /// Whether a user of `customer` (`None`: a user without one) may name `bsnr` as the
    /// reporting facility of a submission: the facility, or why not ([`check_facility`]).
    /// Two reads, no transaction: an operator's change made meanwhile counts from the next call.
    async fn resolve_facility(
        &self,
        customer: Option<&str>,
        bsnr: &Bsnr,
    ) -> StoreResult<Result<Facility, FacilityRefusal>> {
        let facility = self.facility(bsnr).await?;
        let scope = match customer {
            Some(customer) if facility.is_some() => self.customer_scope(customer).await?,
            _ => None,
        };
        Ok(check_facility(bsnr, facility, customer, scope.as_ref()))
    }

    // ---- certificates ----

    /// Stores a facility's certificate for its site and environment, in place of the one there
    /// was; returns whether there was one.
    async fn put_certificate(&self, certificate: FacilityCertificate) -> StoreResult<bool>;
    /// The certificate of site `bsnr` for `environment`, if one is deposited.
    async fn certificate(
        &self,
        bsnr: &Bsnr,
        environment: Environment,
    ) -> StoreResult<Option<FacilityCertificate>>;
    /// Every deposited certificate, by site, test before production.
    async fn certificates(&self) -> StoreResult<Vec<FacilityCertificate>>;
    /// Removes the certificate of site `bsnr` for `environment`; `false` if there was none.
    async fn remove_certificate(&self, bsnr: &Bsnr, environment: Environment) -> StoreResult<bool>;

    // ---- court-mailbox accounts and grants ----

    /// Stores a mailbox account under its id, creating or replacing it, in one transaction. A
    /// replaced record's `created_at` stays; the answer says which happened and holds the record
    /// as stored. `Conflict` if another account has the SAFE-ID (compared as
    /// [`SafeId::folded`]): two accounts of one mailbox would list its messages twice.
    async fn put_mailbox_account(&self, account: MailboxAccount) -> StoreResult<MailboxAccountPut>;
    /// The account with this id.
    async fn mailbox_account(&self, id: MailboxAccountId) -> StoreResult<Option<MailboxAccount>>;
    /// The account whose SAFE-ID is `safe_id` (compared as [`SafeId::folded`]).
    async fn mailbox_account_by_safe_id(
        &self,
        safe_id: &SafeId,
    ) -> StoreResult<Option<MailboxAccount>>;
    /// Accounts in id order after `after` (exclusive), at most `limit` (paged listings).
    async fn mailbox_accounts(
        &self,
        after: Option<MailboxAccountId>,
        limit: usize,
    ) -> StoreResult<Vec<MailboxAccount>>;
    /// Removes the account; `false` if there was none. `Conflict` while any user is granted it:
    /// who may read a court's mail is decided one grant at a time, never dropped in passing.
    async fn remove_mailbox_account(&self, id: MailboxAccountId) -> StoreResult<bool>;
    /// Lets `user` see account `id`'s messages and send through it; `true` if the grant is new,
    /// `false` if the user held it already. `NotFound` if the account or the user does not exist.
    async fn grant_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool>;
    /// Takes the grant back; `false` if the user held none for the account.
    async fn revoke_mailbox_account(&self, id: MailboxAccountId, user: &str) -> StoreResult<bool>;
    /// The users granted account `id`, by name (none for an unknown account).
    async fn mailbox_account_users(&self, id: MailboxAccountId) -> StoreResult<Vec<String>>;
    /// Ids of the accounts `user` is granted, in order (none for an unknown user). Removing a
    /// user ([`Store::remove_user`]) drops their grants in the same transaction.
    async fn mailbox_account_ids_of(&self, user: &str) -> StoreResult<Vec<MailboxAccountId>>;
    /// The accounts `user` may see, in id order, active or not. Reads the grants, then each
    /// account: one revoked and removed in between is left out.
    async fn mailbox_accounts_of(&self, user: &str) -> StoreResult<Vec<MailboxAccount>> {
        let mut accounts = Vec::new();
        for id in self.mailbox_account_ids_of(user).await? {
            if let Some(account) = self.mailbox_account(id).await? {
                accounts.push(account);
            }
        }
        Ok(accounts)
    }
    /// Whether `user` may see account `id`'s messages (listing, download, acknowledgement):
    /// whether they hold a grant, whatever the account's active flag.
    async fn may_access_mailbox_account(
        &self,
        user: &str,
        id: MailboxAccountId,
    ) -> StoreResult<bool> {
        Ok(self.mailbox_account_ids_of(user).await?.contains(&id))
    }
    /// Whether `user` may send through account `id` (a court form's `absender.egvp_account_id`):
    /// the account, or why not ([`check_sending_account`]). Two reads, no transaction: an
    /// operator's change made meanwhile counts from the next call.
    async fn resolve_sending_account(
        &self,
        user: &str,
        id: MailboxAccountId,
    ) -> StoreResult<Result<MailboxAccount, MailboxRefusal>> {
        let granted = self.may_access_mailbox_account(user, id).await?;
        let account = if granted {
            self.mailbox_account(id).await?
        } else {
            None
        };
        Ok(check_sending_account(id, granted, account))
    }

    // ---- the court-message index ----

    /// Indexes the messages of `account` (SAFE-ID `safe_id`) a sync listed, in one transaction
    /// with the sync's next `cursor`: each message not indexed yet (by account and transport
    /// message id, deleted ones included, so that a message is indexed once) gets the next
    /// index id and waits for its hydration, due at once; a known live one takes the listed
    /// `received_at` if it had none. Answers the newly indexed entries, in listing order.
    async fn index_court_messages(
        &self,
        account: MailboxAccountId,
        safe_id: &str,
        listed: Vec<ListedCourtMessage>,
        cursor: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<CourtMessage>>;
    /// The cursor the last [`Store::index_court_messages`] of `account` stored.
    async fn mailbox_sync_cursor(&self, account: MailboxAccountId) -> StoreResult<Option<String>>;
    /// The message with index id `id`, deleted or not.
    async fn court_message(&self, id: u64) -> StoreResult<Option<CourtMessage>>;
    /// Messages `filter` admits, in index-id order after `after` (exclusive), at most `limit`
    /// (capped at [`MAX_COURT_MESSAGE_PAGE`]).
    async fn court_messages(
        &self,
        filter: &CourtMessageFilter,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>>;
    /// Messages of `account` in index-id order after `after`, at most `limit`, deleted ones only
    /// when `deleted` is set (a sync comparing the index with a full listing).
    async fn court_messages_of(
        &self,
        account: MailboxAccountId,
        after: Option<u64>,
        limit: usize,
        deleted: bool,
    ) -> StoreResult<Vec<CourtMessage>>;
    /// Live messages waiting for a hydration due at `now` or before, earliest due first, at most
    /// `limit`.
    async fn court_messages_to_hydrate(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>>;
    /// Live messages created before `cutoff`, in index-id order after `after`, at most `limit`
    /// (the retention backstop).
    async fn court_messages_created_before(
        &self,
        cutoff: DateTime<Utc>,
        after: Option<u64>,
        limit: usize,
    ) -> StoreResult<Vec<CourtMessage>>;
    /// Records what a hydration of message `id` came to, at `now`, in one transaction: hydrated
    /// (`hydrated_at` now, its case reference, and the job that case reference maps to in its
    /// account), archived unread, to retry, or failed. Answers the entry as it is after; `None`
    /// when nothing was recorded because the message is gone or deleted meanwhile (its archive,
    /// if one was written, is the caller's to remove) or was hydrated already.
    async fn record_hydration(
        &self,
        id: u64,
        outcome: HydrationOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<CourtMessage>>;
    /// Soft-deletes message `id` for `cause` at `now`: the entry stays with its [`Deletion`]
    /// and leaves the hydration queue; removing its archive is the caller's. Idempotent.
    async fn delete_court_message(
        &self,
        id: u64,
        cause: DeletionCause,
        now: DateTime<Utc>,
    ) -> StoreResult<CourtMessageDeleted>;
    /// Maps the case reference `aktenzeichen` in `account` to `job_id`, so that messages
    /// hydrated from then on naming it are listed under that job; `false` when it mapped to a
    /// job already (the first mapping stays).
    async fn map_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
        job_id: &str,
    ) -> StoreResult<bool>;
    /// The job `aktenzeichen` maps to in `account`.
    async fn job_of_case_reference(
        &self,
        account: MailboxAccountId,
        aktenzeichen: &str,
    ) -> StoreResult<Option<String>>;
}
