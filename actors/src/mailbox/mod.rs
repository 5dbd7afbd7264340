//! Reading a court mailbox: the third kind of authority, one the service reads from.
//!
//! A module that reads its transport's mailbox (the guardianship module) hands the engine a
//! [`MailboxReading`]: what to do with a fetched message (its [`Hydrator`]) and how often and
//! how long to work. The engine then runs, per such transport:
//! - `mailbox:<transport>`: watches the store's mailbox accounts, starts a sync actor per
//!   account and stops the one of an account removed; sweeps the retention backstop; at start,
//!   removes what a crash left in the archive folder ([`accounts`]);
//! - `sync:<transport>:<account id>`: lists the account's mailbox since the stored cursor every
//!   `sync_interval` and indexes what is new (Indexed); every `full_sync_interval` it lists the
//!   whole mailbox and deletes what the server no longer holds ([`sync`]);
//! - `hydration:<transport>`: a bounded pool that fetches each indexed message, hands it to the
//!   hydrator (read, archive) and records the outcome (Hydrated), retrying transient faults with
//!   backoff ([`hydration`]).
//!
//! All state is in the store; an archive is written before its hydration is recorded, so a
//! crash between the two hydrates the message again (the archive is written again, whole, under
//! the same name) and never leaves a record without its file.

mod accounts;
mod hydration;
mod sync;

use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use chrono::{DateTime, Utc};
use meldewerk_storage::{CourtMessage, DeletionCause, Store, StoreResult};
use meldewerk_transports::mailbox::MailboxMessage;
use meldewerk_transports::{Mailbox, Transport};

use crate::events::SharedEvents;
use crate::settings::EngineSettings;

pub(crate) use accounts::{AccountsActor, Supervise};
pub(crate) use hydration::HydrationActor;

/// What the engine does with a fetched court message: module knowledge (reading XJustiz,
/// writing an archive), so it lives outside the engine. Called on the blocking pool.
pub trait Hydrator: Send + Sync + 'static {
    /// Reads `message`, fetched for the index entry `entry`, and writes its archive
    /// atomically (a crash leaves no half archive under its name). `Ok` says whether its
    /// content could be read; `Err` is a fault of this side (the disk), worth a retry.
    fn hydrate(
        &self,
        entry: &CourtMessage,
        message: &MailboxMessage,
        hydrated_at: DateTime<Utc>,
    ) -> Result<Hydrated, String>;
    /// Removes the archive of index id `id`; `Ok` also when there is none.
    fn remove_archive(&self, id: u64) -> std::io::Result<()>;
    /// The index ids that have an archive on disk.
    fn archived_ids(&self) -> std::io::Result<Vec<u64>>;
    /// Removes what an interrupted archive write left behind; answers how many files.
    fn remove_leftovers(&self) -> std::io::Result<usize>;
}

/// What [`Hydrator::hydrate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hydrated {
    /// Read and archived; its case reference, if it names one.
    Read {
        /// The case reference.
        aktenzeichen: Option<String>,
    },
    /// Archived as it came, but its content could not be read (malformed or hostile).
    Unreadable {
        /// Why, for operators.
        error: String,
    },
}

/// How a module reads its transport's mailbox.
#[derive(Clone)]
pub struct MailboxReading {
    /// What to do with each fetched message.
    pub hydrator: Arc<dyn Hydrator>,
    /// How often and how long.
    pub settings: ReadingSettings,
}

/// The pace and bounds of reading a mailbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadingSettings {
    /// How often each account's mailbox is listed since the last cursor.
    pub sync_interval: Duration,
    /// How often each account's mailbox is listed whole, to find messages gone from the server.
    pub full_sync_interval: Duration,
    /// Messages hydrated at the same time.
    pub hydration_workers: usize,
    /// Fetches of one message before its hydration fails for good.
    pub hydration_attempts: u32,
    /// How long a message stays after it was created at the mailbox server, acknowledged or
    /// not (the backstop).
    pub retention: Duration,
}

impl Default for ReadingSettings {
    fn default() -> Self {
        ReadingSettings {
            sync_interval: Duration::from_secs(10),
            full_sync_interval: Duration::from_secs(300),
            hydration_workers: 4,
            hydration_attempts: 8,
            retention: Duration::from_secs(30 * 86_400),
        }
    }
}

/// Everything the reading actors of one transport share; outlives their restarts.
pub(crate) struct Reader {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) hydrator: Arc<dyn Hydrator>,
    pub(crate) settings: ReadingSettings,
    pub(crate) engine: EngineSettings,
    pub(crate) events: SharedEvents,
}

impl Reader {
    /// The transport's mailbox; the engine starts a reader only for a transport that has one.
    pub(crate) fn mailbox(&self) -> &dyn Mailbox {
        self.transport
            .mailbox()
            .expect("a reader is started only for a transport with a mailbox")
    }

    /// Deletes message `id` for `cause` and removes its archive. The store first: once the
    /// entry says deleted, no download finds the file, and a file left by a crash in between
    /// is removed by the next start's sweep.
    pub(crate) async fn delete(&self, id: u64, cause: DeletionCause) -> StoreResult<bool> {
        let deleted = self
            .store
            .delete_court_message(id, cause, Utc::now())
            .await?;
        let now_deleted = matches!(deleted, meldewerk_storage::CourtMessageDeleted::Deleted(_));
        if now_deleted {
            self.remove_archive(id);
        }
        Ok(now_deleted)
    }

    /// Removes the archive of `id`, logging a failure (the next start's sweep tries again).
    pub(crate) fn remove_archive(&self, id: u64) {
        if let Err(e) = self.hydrator.remove_archive(id) {
            tracing::warn!(id, error = %e, "could not remove a court message's archive");
        }
    }
}

/// The running reading actors of one transport. Held so that their supervisors keep them alive.
pub(crate) struct Running {
    _accounts: Addr<AccountsActor>,
    _hydration: Addr<HydrationActor>,
}

impl Running {
    pub(crate) fn new(accounts: Addr<AccountsActor>, hydration: Addr<HydrationActor>) -> Self {
        Running {
            _accounts: accounts,
            _hydration: hydration,
        }
    }
}
