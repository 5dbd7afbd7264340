//! The sync actor of one mailbox account: lists the account's mailbox and indexes what is new.
//!
//! Every `sync_interval` it lists from the stored cursor: cheap, whatever the mailbox holds.
//! Every `full_sync_interval` (and first after a start) it lists the whole mailbox instead,
//! indexing as it goes, and then deletes each live index entry the listing did not hold: the
//! server no longer has it (another system acknowledged it, or the server's own retention took
//! it). Only entries indexed before the listing began are judged, so a message indexed by a
//! listing running meanwhile is never taken for gone. Each page is indexed with its cursor in
//! one store transaction, and indexing is idempotent: a crash between pages lists again what
//! was not recorded, and nothing is indexed twice.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{
    CourtMessageDirection, DeletionCause, ListedCourtMessage, MailboxAccount, MailboxAccountId,
    StoreCondition, StoreError,
};
use meldewerk_transports::mailbox::{Direction, MAX_LIST_PAGE};
use meldewerk_transports::TransportError;

use super::hydration::{HydrationActor, Wake};
use super::Reader;
use crate::breaker::timed;
use crate::lead::lead;
use crate::supervise::{panic_message, Supervision};

/// Index entries read per store call while looking for messages gone from the server.
const GONE_PAGE: usize = 500;

/// Stop syncing: the account was removed.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Stop;

/// What one sync did.
struct Synced {
    indexed: usize,
    gone: usize,
}

/// Why a sync failed, and whether waiting may mend it.
struct SyncFailed {
    error: String,
    lasting: bool,
}

impl From<StoreError> for SyncFailed {
    fn from(e: StoreError) -> Self {
        SyncFailed {
            error: format!("store failed while indexing: {e}"),
            lasting: false,
        }
    }
}

/// Lists `account`'s mailbox (whole when `full`), indexes what is new and, after a whole
/// listing, deletes what the server no longer holds.
async fn sync(
    reader: &Reader,
    account: MailboxAccountId,
    full: bool,
) -> Result<Synced, SyncFailed> {
    let Some(MailboxAccount { safe_id, .. }) = reader.store.mailbox_account(account).await? else {
        return Ok(Synced {
            indexed: 0,
            gone: 0,
        });
    };
    let safe_id = safe_id.as_str();
    let started = Utc::now();
    let mut cursor = match full {
        true => None,
        false => reader.store.mailbox_sync_cursor(account).await?,
    };
    let mut seen = HashSet::new();
    let mut indexed = 0;
    let mut whole = full || cursor.is_none();
    loop {
        let listed = timed(
            reader.engine.transport_timeout(),
            reader
                .mailbox()
                .list(safe_id, cursor.as_deref(), MAX_LIST_PAGE),
        )
        .await;
        let page = match listed {
            Err(TransportError::UnknownCursor(why)) if cursor.is_some() => {
                tracing::warn!(
                    %account, %why,
                    "the mailbox server does not know the stored cursor; listing the mailbox \
                     from its start (indexing is idempotent)"
                );
                cursor = None;
                whole = true;
                continue;
            }
            Err(e @ (TransportError::Refused(_) | TransportError::UnknownCursor(_))) => {
                return Err(SyncFailed {
                    error: format!("the mailbox server refused the listing: {e}"),
                    lasting: true,
                })
            }
            Err(e) => {
                return Err(SyncFailed {
                    error: format!("listing failed: {e}"),
                    lasting: false,
                })
            }
            Ok(page) => page,
        };
        let entries: Vec<ListedCourtMessage> = page
            .entries
            .into_iter()
            .map(|entry| ListedCourtMessage {
                direction: match entry.direction {
                    Direction::Incoming => CourtMessageDirection::Incoming,
                    Direction::Outgoing => CourtMessageDirection::Outgoing,
                },
                message_id: entry.message_id,
                created_at: entry.created_at,
                received_at: entry.received_at,
                size: entry.size,
            })
            .collect();
        if whole {
            seen.extend(entries.iter().map(|e| e.message_id.clone()));
        }
        let changed = !entries.is_empty() || page.cursor != cursor;
        if changed {
            let new = reader
                .store
                .index_court_messages(account, safe_id, entries, page.cursor.clone(), Utc::now())
                .await?;
            indexed += new.len();
        }
        cursor = page.cursor;
        if !page.more {
            break;
        }
    }
    let gone = match whole {
        true => delete_gone(reader, account, &seen, started).await?,
        false => 0,
    };
    Ok(Synced { indexed, gone })
}

/// Deletes the live entries of `account` indexed before `listed_from` that a whole listing
/// (`seen`) did not hold.
async fn delete_gone(
    reader: &Reader,
    account: MailboxAccountId,
    seen: &HashSet<String>,
    listed_from: chrono::DateTime<Utc>,
) -> Result<usize, StoreError> {
    let mut gone = Vec::new();
    let mut after = None;
    loop {
        let page = reader
            .store
            .court_messages_of(account, after, GONE_PAGE, false)
            .await?;
        let Some(last) = page.last() else { break };
        after = Some(last.id);
        gone.extend(
            page.iter()
                .filter(|m| m.indexed_at < listed_from && !seen.contains(&m.message_id))
                .map(|m| m.id),
        );
        if page.len() < GONE_PAGE {
            break;
        }
    }
    let mut deleted = 0;
    for id in gone {
        if reader.delete(id, DeletionCause::GoneFromServer).await? {
            deleted += 1;
        }
    }
    if deleted > 0 {
        tracing::info!(%account, deleted, "court messages gone from the mailbox server; deleted");
    }
    Ok(deleted)
}

/// Supervised actor syncing one account.
pub(crate) struct SyncActor {
    reader: Arc<Reader>,
    account: MailboxAccountId,
    hydration: Addr<HydrationActor>,
    syncing: bool,
    /// When the last whole listing began; `None` until one ran since the start.
    last_full: Option<Instant>,
    sup: Supervision,
}

impl SyncActor {
    pub(crate) fn new(
        reader: Arc<Reader>,
        account: MailboxAccountId,
        hydration: Addr<HydrationActor>,
        sup: Supervision,
    ) -> Self {
        SyncActor {
            reader,
            account,
            hydration,
            syncing: false,
            last_full: None,
            sup,
        }
    }

    fn sync(&mut self, ctx: &mut Context<Self>) {
        if self.syncing || self.reader.store.condition() != StoreCondition::Available {
            return;
        }
        let full = self
            .last_full
            .is_none_or(|at| at.elapsed() >= self.reader.settings.full_sync_interval);
        if full {
            self.last_full = Some(Instant::now());
        }
        self.syncing = true;
        let (reader, account) = (Arc::clone(&self.reader), self.account);
        let health = self.sup.health.clone();
        let work = AssertUnwindSafe(async move {
            // One node at a time syncs an account.
            let task = format!("sync:{}:{account}", reader.transport.name());
            let interval = reader.settings.sync_interval;
            match lead(&*reader.store, &health, &task, interval).await? {
                true => sync(&reader, account, full).await.map(Some),
                false => Ok(None),
            }
        })
        .catch_unwind();
        ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
            act.syncing = false;
            match result {
                Ok(Ok(None)) => {
                    // Standing by: taking over, this node lists the whole mailbox first.
                    act.last_full = None;
                    act.sup.periodic_work_succeeded();
                }
                Ok(Ok(Some(Synced { indexed, gone }))) => {
                    if act.sup.periodic_work_succeeded() {
                        tracing::info!(account = %act.account, "mailbox answers again");
                    }
                    act.sup
                        .health
                        .update(|h| h.processed += (indexed + gone) as u64);
                    if indexed > 0 {
                        act.hydration.do_send(Wake);
                    }
                }
                Ok(Err(SyncFailed { error, lasting })) => {
                    if full {
                        // The whole listing is still owed.
                        act.last_full = None;
                    }
                    if act.sup.periodic_work_failed(error.clone(), lasting) {
                        tracing::warn!(account = %act.account, %error, "mailbox sync fails");
                    }
                }
                Err(payload) => {
                    act.sup.on_panic(panic_message(&*payload));
                    ctx.stop();
                }
            }
        }));
    }
}

impl Actor for SyncActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        self.sync(ctx);
        ctx.run_interval(self.reader.settings.sync_interval, |act, ctx| {
            act.sup.on_tick(None);
            act.sync(ctx);
        });
    }
}

impl Handler<Stop> for SyncActor {
    type Result = ();

    fn handle(&mut self, _: Stop, ctx: &mut Self::Context) {
        self.sup
            .health
            .update(|h| h.state = crate::ActorState::Stopped);
        ctx.stop();
    }
}

impl Supervised for SyncActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        self.syncing = false;
        self.sup.on_restart();
    }
}
