//! The sled engine: one embedded database in the data directory, for a single node.
//!
//! Layout (one sled tree each; records are JSON, readable when debugging and stable across
//! versions of the record types as long as serde can read them; payload parts are packed, see
//! `packed.rs`):
//!
//! | tree            | key                          | value                 |
//! |-----------------|------------------------------|-----------------------|
//! | `users`         | name                         | [`crate::UserRecord`] |
//! | `user_key_ids`  | memento key id               | name                  |
//! | `reports`       | `owner\0module\0id`          | [`crate::Report`]     |
//! | `pending`       | `owner\0module\0id`          | the id of its job (BE; empty in reports stored before 2026-11-28) |
//! | `reports_by_id` | `module\0id\0owner`          | empty                 |
//! | `outbox`        | lane ++ `module\0` ++ due millis (BE) ++ job id | [`crate::Job`] |
//! | `outbox_by_id`  | job id (BE)                  | its `outbox` key      |
//! | `audit`         | entry number (BE)            | [`crate::AuditEntry`] |
//! | `awaiting`      | message UUID                 | job id (BE); for modules whose reports are acknowledged later |
//! | `inbox_cursors` | transport name               | cursor (UTF-8)        |
//! | `finished`      | `module\0` ++ finished millis (BE) ++ `owner\0module\0id` | empty |
//! | `submissions`   | `owner\0module\0id`          | the submission (JSON), packed |
//! | `messages`      | `owner\0module\0id`          | the message body, packed |
//! | `receipts`      | `owner\0module\0id`          | the receipt PDF, packed |
//! | `facilities`    | BSNR                         | [`crate::Facility`]   |
//! | `customer_scopes` | customer id                | [`crate::CustomerScope`] |
//! | `certificates`  | `bsnr\0environment`          | [`crate::FacilityCertificate`] |
//! | `mailbox_accounts`, `mailbox_safe_ids`, `mailbox_account_users`, `mailbox_user_accounts` | see `mailbox_accounts.rs` | court-mailbox accounts and grants |
//! | `court_messages`, `court_message_ids`, `court_messages_by_account`, `court_messages_live`, `court_messages_by_job`, `court_messages_waiting`, `mailbox_sync_cursors`, `case_references` | see `court_messages.rs` | the court-message index |
//!
//! `finished` lists the final reports that still have their payload, in the order they finished,
//! for the retention sweep (see `finished.rs`); its entry `\0complete` marks it as covering every
//! report.
//!
//! A report's state and its payload (submission, message body, receipt) live apart: the state
//! changes several times, the payload is written once (see `payload.rs`).
//!
//! Every change is one multi-tree transaction followed by a flush, which is what the
//! [`crate::Store`] contract asks for. sled calls are synchronous but short (memory plus the
//! page cache); only the flush waits for the disk, on the database's committing thread, where
//! one flush serves every change committed before it started (see `group_commit/`); callers
//! await it without holding a thread. The changes every report makes (it is submitted with its
//! message, an attempt counted, its delivery recorded) are queued to that thread
//! instead of run by the caller, which runs concurrent ones as one transaction: sled writes
//! two log buffers per transaction, so that is what keeps the disk writes per report down.

mod certificates;
mod court_message_scans;
mod court_messages;
mod delivery;
mod export;
mod facilities;
mod finished;
mod keys;
mod mailbox_accounts;
mod module_ways;
mod payload;
mod queue;
mod read_cache;
mod reading;
mod recovering;
mod store_impl;
#[cfg(test)]
mod test_reports;
mod users;
mod withdraw;

pub use export::Export;
pub use recovering::SledStore;

use std::path::Path;

use chrono::Utc;

use serde::{de::DeserializeOwned, Serialize};
use sled::transaction::{
    ConflictableTransactionError, ConflictableTransactionResult, TransactionError,
    TransactionalTree,
};
use sled::{IVec, Tree};

use crate::group_commit::GroupCommit;
use crate::{Job, StoreError, StoreResult};

/// One open sled database and everything kept beside it; [`SledStore`] holds one at a time and
/// opens a new one after a failed write (see `reopen.rs`). Every handle of the database lives
/// in here, so that dropping the last `Arc` of it closes the database.
pub(crate) struct Engine {
    db: sled::Db,
    /// Every flush goes through here, so concurrent changes share disk syncs; so do the
    /// changes queued with [`Engine::commit`].
    committer: std::sync::Arc<GroupCommit<StoreError>>,
    /// Users, facilities and customers' scopes recently read, decoded (see `read_cache.rs`).
    user_cache: read_cache::ReadCache<crate::UserRecord>,
    facility_cache: read_cache::ReadCache<crate::Facility>,
    scope_cache: read_cache::ReadCache<crate::CustomerScope>,
    /// Receipts recently read, decoded (see `receipt_cache.rs`).
    receipt_cache: std::sync::Arc<crate::receipt_cache::ReceiptCache>,
    users: Tree,
    user_key_ids: Tree,
    /// Names of removed users, never given out again (their reports keep the name).
    retired_users: Tree,
    reports: Tree,
    pending: Tree,
    reports_by_id: Tree,
    outbox: Tree,
    outbox_by_id: Tree,
    audit: Tree,
    /// Jobs whose message is stored, by message UUID (acknowledgements name it).
    awaiting: Tree,
    /// Where the engine stands in each transport's acknowledgement inbox.
    inbox_cursors: Tree,
    /// Final, unexpired reports by module and finishing time (retention).
    finished: Tree,
    /// The parts of reports' payload, each written once (see `payload.rs`).
    submissions: Tree,
    messages: Tree,
    receipts: Tree,
    /// The facility registry and the customers' scopes (see `facilities.rs`).
    facilities: Tree,
    customer_scopes: Tree,
    /// Facilities' certificates by site and environment (see `certificates.rs`).
    certificates: Tree,
    /// Court-mailbox accounts, their SAFE-IDs and grants (see `mailbox_accounts.rs`).
    mailbox_accounts: Tree,
    mailbox_safe_ids: Tree,
    mailbox_account_users: Tree,
    mailbox_user_accounts: Tree,
    /// The court-message index: entries, their transport ids, per account (all, live), per
    /// job, the hydration queue, each account's sync cursor and the case references mapped to
    /// jobs (see `court_messages.rs`).
    court_messages: Tree,
    court_message_ids: Tree,
    court_messages_by_account: Tree,
    court_messages_live: Tree,
    court_messages_by_job: Tree,
    court_messages_waiting: Tree,
    mailbox_sync_cursors: Tree,
    case_references: Tree,
    /// Jobs in the outbox. sled's `len()` walks the whole tree and health asks on every tick, so
    /// the count is taken once at open and kept in step by the two methods that add or remove a
    /// job, after their transaction commits.
    outbox_jobs: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// How each module's payload is packed.
    module_ways: module_ways::ModuleWays,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl crate::reopen::WriteFailure for Engine {
    fn write_failure(&self) -> Option<String> {
        self.committer.write_failure().map(str::to_owned)
    }
}

/// Key of [`Engine::probe`]'s write, in sled's default tree (which holds nothing else).
const PROBE_KEY: &[u8] = b"writable";

/// Caches of [`SledStore::open`]: what the server's `store.cache_capacity_mb` defaults to.
pub const DEFAULT_CACHE_CAPACITY: u64 = 64 * 1024 * 1024;

/// The receipt cache gets this fraction of the caches' capacity (4 MiB, some 1,000 receipts, of
/// the default), sled's page cache the rest.
const RECEIPT_CACHE_SHARE: u64 = 16;

impl Engine {
    /// Opens the database in `dir` with caches of `cache_capacity` bytes (see
    /// [`SledStore::open_with_cache`]), keeping each module's reports as `module_ways` says.
    fn open(
        dir: &Path,
        cache_capacity: u64,
        module_ways: module_ways::ModuleWays,
    ) -> StoreResult<Engine> {
        let receipt_share = cache_capacity / RECEIPT_CACHE_SHARE;
        let db = crate::sled_gate::open(dir, cache_capacity - receipt_share)
            .map_err(|e| open_error(dir, e))?;
        let tree = |name: &str| db.open_tree(name).map_err(backend);
        let outbox_by_id = tree("outbox_by_id")?;
        let outbox_jobs = std::sync::Arc::new(outbox_by_id.len().into());
        let store = Engine {
            users: tree("users")?,
            user_key_ids: tree("user_key_ids")?,
            retired_users: tree("retired_users")?,
            reports: tree("reports")?,
            pending: tree("pending")?,
            reports_by_id: tree("reports_by_id")?,
            outbox: tree("outbox")?,
            outbox_by_id,
            audit: tree("audit")?,
            awaiting: tree("awaiting")?,
            inbox_cursors: tree("inbox_cursors")?,
            finished: tree("finished")?,
            submissions: tree("submissions")?,
            messages: tree("messages")?,
            receipts: tree("receipts")?,
            facilities: tree("facilities")?,
            customer_scopes: tree("customer_scopes")?,
            certificates: tree("certificates")?,
            mailbox_accounts: tree("mailbox_accounts")?,
            mailbox_safe_ids: tree("mailbox_safe_ids")?,
            mailbox_account_users: tree("mailbox_account_users")?,
            mailbox_user_accounts: tree("mailbox_user_accounts")?,
            court_messages: tree("court_messages")?,
            court_message_ids: tree("court_message_ids")?,
            court_messages_by_account: tree("court_messages_by_account")?,
            court_messages_live: tree("court_messages_live")?,
            court_messages_by_job: tree("court_messages_by_job")?,
            court_messages_waiting: tree("court_messages_waiting")?,
            mailbox_sync_cursors: tree("mailbox_sync_cursors")?,
            case_references: tree("case_references")?,
            outbox_jobs,
            module_ways,
            user_cache: Default::default(),
            facility_cache: Default::default(),
            scope_cache: Default::default(),
            receipt_cache: std::sync::Arc::new(crate::receipt_cache::ReceiptCache::new(
                usize::try_from(receipt_share).unwrap_or(usize::MAX),
            )),
            committer: std::sync::Arc::new(
                GroupCommit::start(db.clone(), Staged::trees(tree)?, "store-commit")
                    .map_err(|e| StoreError::Backend(format!("cannot start committing: {e}")))?,
            ),
            db,
        };
        store.complete_finished_index()?;
        store.rekey_outbox()?;
        Ok(store)
    }

    /// Bytes the database takes on disk, for health output and metrics.
    fn size_on_disk(&self) -> StoreResult<u64> {
        self.db.size_on_disk().map_err(backend)
    }

    /// Writes and flushes a few bytes: whether the disk takes writes. A database opened again
    /// after a failure is used only once this went through.
    fn probe(&self) -> StoreResult<()> {
        {
            let _gate = crate::sled_gate::exclusive();
            self.db
                .insert(
                    PROBE_KEY,
                    Utc::now().timestamp_millis().to_be_bytes().as_slice(),
                )
                .map_err(backend)?;
        }
        self.committer.flush_blocking().map_err(backend)
    }

    /// Makes every committed transaction durable; state-changing methods await it before they
    /// answer. sled flushes its single log, so this covers all trees.
    async fn flush(&self) -> StoreResult<()> {
        self.committer.flush().await.map_err(backend)?;
        Ok(())
    }

    /// Runs `change` on the [`Staged`] trees in the committing thread's next round, together
    /// with other callers' changes; durable on return.
    async fn commit<A, F>(&self, change: F) -> StoreResult<A>
    where
        A: Send + 'static,
        F: Fn(&Staged<'_>) -> TxResult<A> + Send + 'static,
    {
        self.commit_then(change, || {}).await
    }

    /// [`Engine::commit`] for a change that adds a job to the outbox: counted as soon as it
    /// is committed, even if its caller stops waiting for the flush.
    async fn commit_new_job<A, F>(&self, change: F) -> StoreResult<A>
    where
        A: Send + 'static,
        F: Fn(&Staged<'_>) -> TxResult<A> + Send + 'static,
    {
        let count = std::sync::Arc::clone(&self.outbox_jobs);
        self.commit_then(change, move || {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .await
    }

    /// [`Engine::commit`] with `committed` run on the committing thread once it committed.
    async fn commit_then<A, F>(
        &self,
        change: F,
        committed: impl FnOnce() + Send + 'static,
    ) -> StoreResult<A>
    where
        A: Send + 'static,
        F: Fn(&Staged<'_>) -> TxResult<A> + Send + 'static,
    {
        self.committer
            .commit(move |trees| change(&Staged::of(trees)?), committed)
            .await
            .map_err(tx_error)
    }
}

/// The trees a queued change ([`Engine::commit`]) works on, by name.
struct Staged<'a> {
    reports: &'a TransactionalTree,
    pending: &'a TransactionalTree,
    reports_by_id: &'a TransactionalTree,
    outbox: &'a TransactionalTree,
    outbox_by_id: &'a TransactionalTree,
    submissions: &'a TransactionalTree,
    awaiting: &'a TransactionalTree,
    messages: &'a TransactionalTree,
    finished: &'a TransactionalTree,
    receipts: &'a TransactionalTree,
}

impl<'a> Staged<'a> {
    /// The trees' names, in the order the committing thread hands them over.
    const NAMES: [&'static str; 10] = [
        "reports",
        "pending",
        "reports_by_id",
        "outbox",
        "outbox_by_id",
        "submissions",
        "awaiting",
        "messages",
        "finished",
        "receipts",
    ];

    fn trees(open: impl Fn(&str) -> StoreResult<Tree>) -> StoreResult<Vec<Tree>> {
        Staged::NAMES.iter().map(|name| open(name)).collect()
    }

    fn of(trees: &'a [TransactionalTree]) -> TxResult<Staged<'a>> {
        let [reports, pending, reports_by_id, outbox, outbox_by_id, submissions, awaiting, messages, finished, receipts] =
            trees
        else {
            return abort(StoreError::Backend(format!(
                "a queued change got {} trees, not {}",
                trees.len(),
                Staged::NAMES.len()
            )));
        };
        Ok(Staged {
            reports,
            pending,
            reports_by_id,
            outbox,
            outbox_by_id,
            submissions,
            awaiting,
            messages,
            finished,
            receipts,
        })
    }
}

fn open_error(dir: &Path, e: sled::Error) -> StoreError {
    if crate::sled_gate::is_locked(&e) {
        return StoreError::Locked(dir.display().to_string());
    }
    backend(e)
}

fn backend(e: sled::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// Result inside a transaction closure: sled's own errors convert with `?`, ours travel as
/// `Abort`.
pub(super) type TxResult<T> = ConflictableTransactionResult<T, StoreError>;

/// Unwraps the result of a whole transaction.
fn tx_error(e: TransactionError<StoreError>) -> StoreError {
    match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => backend(e),
    }
}

/// Lifts a store error into a transaction closure so that `?` aborts the transaction with it.
fn in_tx<T>(r: StoreResult<T>) -> TxResult<T> {
    r.map_err(ConflictableTransactionError::Abort)
}

fn abort<T>(e: StoreError) -> TxResult<T> {
    Err(ConflictableTransactionError::Abort(e))
}

fn encode<T: Serialize>(value: &T) -> StoreResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| StoreError::Backend(format!("encoding a record: {e}")))
}

fn decode<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> StoreResult<T> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

fn utf8(what: &str, bytes: &[u8]) -> StoreResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// Finds a job by id inside a transaction: its current outbox key and the job as stored.
/// `NotFound` once the job has left the outbox.
fn stored_job(
    outbox: &TransactionalTree,
    by_id: &TransactionalTree,
    id: u64,
) -> TxResult<(IVec, Job)> {
    let Some(outbox_key) = by_id.get(keys::job_id(id))? else {
        return abort(StoreError::NotFound(format!("job {id}")));
    };
    let Some(bytes) = outbox.get(&outbox_key)? else {
        return abort(StoreError::Corrupt(format!(
            "job {id} is indexed but missing from the outbox"
        )));
    };
    let job = in_tx(decode(&format!("job {id}"), &bytes))?;
    Ok((outbox_key, job))
}

/// [`stored_job`], refused as `NotFound` unless it is still the turn of `read`
/// ([`Job::same_turn`]): the job moved on since the caller read it.
fn stored_turn(
    outbox: &TransactionalTree,
    by_id: &TransactionalTree,
    read: &Job,
) -> TxResult<(IVec, Job)> {
    let (key, stored) = stored_job(outbox, by_id, read.id)?;
    if !stored.same_turn(read) {
        return abort(StoreError::NotFound(format!(
            "job {} as read (it moved on since)",
            read.id
        )));
    }
    Ok((key, stored))
}

/// Stores `job` under the key its kind and `not_before` call for, in place of the entry at
/// `old_key`. Used for every job change, since a changed due time or kind means a new position
/// in the outbox.
fn put_job(
    outbox: &TransactionalTree,
    by_id: &TransactionalTree,
    old_key: &IVec,
    job: &Job,
) -> TxResult<()> {
    let new_key = keys::outbox(job);
    if old_key.as_ref() != new_key.as_slice() {
        outbox.remove_blind(old_key)?;
        by_id.insert_blind(&keys::job_id(job.id)[..], &new_key[..])?;
    }
    outbox.insert_blind(&new_key[..], in_tx(encode(job))?)?;
    Ok(())
}
