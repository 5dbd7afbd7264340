//! The actor watching one mailbox transport's accounts: a sync actor per account in the store,
//! started when the account appears and stopped when it is removed; the retention backstop;
//! and, once at start, the sweep of what a crash left in the archive folder.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use actix::prelude::*;
use actix_rt::ArbiterHandle;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{DeletionCause, MailboxAccountId, StoreCondition, StoreError};

use super::hydration::HydrationActor;
use super::sync::{Stop, SyncActor};
use super::Reader;
use crate::lead::lead;
use crate::supervise::{panic_message, Supervision};

/// Accounts read per store call.
const ACCOUNTS_PAGE: usize = 500;
/// Index entries read per store call of the retention sweep.
const RETENTION_PAGE: usize = 500;

/// Makes the supervision of a new actor named so.
pub(crate) type Supervise = Arc<dyn Fn(&str) -> Supervision + Send + Sync>;

/// The watcher of one transport's accounts.
pub(crate) struct AccountsActor {
    reader: Arc<Reader>,
    hydration: Addr<HydrationActor>,
    arbiter: ArbiterHandle,
    supervise: Supervise,
    /// The sync actor of each account.
    syncs: HashMap<MailboxAccountId, Addr<SyncActor>>,
    watching: bool,
    sweeping: bool,
    /// The start's sweep of the archive folder is done.
    swept_folder: bool,
    sup: Supervision,
}

impl AccountsActor {
    pub(crate) fn new(
        reader: Arc<Reader>,
        hydration: Addr<HydrationActor>,
        arbiter: ArbiterHandle,
        supervise: Supervise,
        sup: Supervision,
    ) -> Self {
        AccountsActor {
            reader,
            hydration,
            arbiter,
            supervise,
            syncs: HashMap::new(),
            watching: false,
            sweeping: false,
            swept_folder: false,
            sup,
        }
    }

    /// Reads the accounts and starts or stops sync actors to match.
    fn watch(&mut self, ctx: &mut Context<Self>) {
        if self.watching || self.reader.store.condition() != StoreCondition::Available {
            return;
        }
        self.watching = true;
        let reader = Arc::clone(&self.reader);
        let work = async move {
            let mut ids = Vec::new();
            let mut after = None;
            loop {
                let page = reader.store.mailbox_accounts(after, ACCOUNTS_PAGE).await?;
                after = page.last().map(|a| a.egvp_account_id);
                ids.extend(page.iter().map(|a| a.egvp_account_id));
                if page.len() < ACCOUNTS_PAGE {
                    break;
                }
            }
            Ok::<_, StoreError>(ids)
        };
        ctx.spawn(work.into_actor(self).map(|ids, act, _| {
            act.watching = false;
            match ids {
                Ok(ids) => act.match_syncs(ids),
                Err(e) => act
                    .sup
                    .health
                    .set_error(format!("store failed while reading the accounts: {e}")),
            }
        }));
    }

    fn match_syncs(&mut self, ids: Vec<MailboxAccountId>) {
        let transport = self.reader.transport.name().to_owned();
        self.syncs.retain(|id, addr| {
            let keep = ids.contains(id);
            if !keep {
                tracing::info!(%transport, account = %id, "mailbox account removed; its sync stops");
                addr.do_send(Stop);
            }
            keep
        });
        for id in ids {
            if self.syncs.contains_key(&id) {
                continue;
            }
            let sup = (self.supervise)(&format!("sync:{transport}:{id}"));
            let actor = SyncActor::new(Arc::clone(&self.reader), id, self.hydration.clone(), sup);
            let addr = Supervisor::start_in_arbiter(&self.arbiter, move |_| actor);
            self.syncs.insert(id, addr);
        }
        self.sup.health.heartbeat(Some(self.syncs.len()));
    }

    /// Deletes the messages past the retention backstop; first after a start, also removes
    /// what a crash left in the archive folder.
    fn sweep(&mut self, ctx: &mut Context<Self>) {
        if self.sweeping || self.reader.store.condition() != StoreCondition::Available {
            return;
        }
        self.sweeping = true;
        let reader = Arc::clone(&self.reader);
        let folder = !self.swept_folder;
        let health = self.sup.health.clone();
        let work = AssertUnwindSafe(async move {
            // One node at a time cleans up, the one that hydrates: the archive folder is shared
            // by every node, and only the hydrating node's half-written files are its own.
            let task = format!("hydration:{}", reader.transport.name());
            let interval = reader.engine.retention_sweep_interval();
            if !lead(&*reader.store, &health, &task, interval).await? {
                return Ok(None);
            }
            let mut removed = 0;
            if folder {
                removed += sweep_folder(&reader).await?;
            }
            removed += sweep_retention(&reader).await?;
            Ok::<_, StoreError>(Some(removed))
        })
        .catch_unwind();
        ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
            act.sweeping = false;
            match result {
                Ok(Ok(Some(removed))) => {
                    act.swept_folder |= folder;
                    act.sup.health.update(|h| h.processed += removed as u64);
                }
                // Another node cleans up; taking over, this one sweeps the folder first.
                Ok(Ok(None)) => act.swept_folder = false,
                Ok(Err(e)) => {
                    act.sup.health.update(|h| h.failed += 1);
                    act.sup
                        .health
                        .set_error(format!("court-message cleanup failed: {e}"));
                }
                Err(payload) => {
                    act.sup.on_panic(panic_message(&*payload));
                    ctx.stop();
                }
            }
        }));
    }
}

/// Removes leftover temporary files, and archives whose message is deleted, unknown, or failed
/// (a crash between the store's delete and the file's removal).
async fn sweep_folder(reader: &Reader) -> Result<usize, StoreError> {
    let hydrator = Arc::clone(&reader.hydrator);
    let found = tokio::task::spawn_blocking(move || {
        let leftovers = hydrator.remove_leftovers()?;
        Ok::<_, std::io::Error>((leftovers, hydrator.archived_ids()?))
    })
    .await
    .map_err(|e| StoreError::Backend(format!("archive sweep stopped: {e}")))?;
    let (leftovers, archived) = match found {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(error = %e, "could not sweep the court-message archive folder");
            return Ok(0);
        }
    };
    let mut removed = leftovers;
    for id in archived {
        let keep = reader.store.court_message(id).await?.is_some_and(|m| {
            m.deleted.is_none()
                && !matches!(m.hydration, meldewerk_storage::Hydration::Failed { .. })
        });
        if !keep {
            reader.remove_archive(id);
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::info!(
            removed,
            "removed files an interrupted run left in the archive folder"
        );
    }
    Ok(removed)
}

/// Deletes every live message created longer than the retention period ago.
async fn sweep_retention(reader: &Reader) -> Result<usize, StoreError> {
    let cutoff = crate::before(Utc::now(), reader.settings.retention);
    let mut deleted = 0;
    let mut after = None;
    loop {
        let page = reader
            .store
            .court_messages_created_before(cutoff, after, RETENTION_PAGE)
            .await?;
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        for message in &page {
            if reader.delete(message.id, DeletionCause::Retention).await? {
                deleted += 1;
            }
        }
        if page.len() < RETENTION_PAGE {
            break;
        }
    }
    if deleted > 0 {
        tracing::info!(deleted, "court messages past the retention period deleted");
    }
    Ok(deleted)
}

impl Actor for AccountsActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        self.watch(ctx);
        self.sweep(ctx);
        ctx.run_interval(self.reader.settings.sync_interval, |act, ctx| {
            act.sup.on_tick(None);
            act.watch(ctx);
        });
        ctx.run_interval(self.reader.engine.retention_sweep_interval(), |act, ctx| {
            act.sweep(ctx);
        });
    }
}

impl Supervised for AccountsActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        // The sync actors run on under their own supervisors; the map of them is kept.
        self.watching = false;
        self.sweeping = false;
        self.sup.on_restart();
    }
}
