//! The hydration pool of one mailbox transport: fetches each indexed message, hands it to the
//! [`super::Hydrator`], records the outcome.
//!
//! One actor works up to `hydration_workers` messages at a time, each as a future (the reading
//! and archive writing on the blocking pool). What it works on is only in memory: the queue is
//! the store's, so a restart (or a crash) takes up every message still waiting.
//!
//! A fetch that fails in passing (the server's fault, a timeout, a body shorter than the
//! listing said) is tried again after the engine's backoff, until `hydration_attempts`; then the
//! message stays listed with the reason, without an archive. A message the server no longer
//! has is deleted. Content that cannot be read is no failure of the fetch: it is archived as it
//! came and listed with the reason ([`super::Hydrated::Unreadable`]).

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{
    CourtMessage, CourtMessageDirection, DeletionCause, Hydration, HydrationOutcome,
    StoreCondition, StoreResult,
};
use meldewerk_transports::TransportError;

use super::{Hydrated, Reader};
use crate::breaker::timed;
use crate::lead::lead;
use crate::supervise::{panic_message, Supervision};

/// Something may be due now (the sync indexed new messages).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Wake;

/// The hydration pool's actor.
pub(crate) struct HydrationActor {
    reader: Arc<Reader>,
    /// Index ids being worked on.
    working: HashSet<u64>,
    /// A look at the queue is under way.
    looking: bool,
    sup: Supervision,
}

/// How one message's hydration ended, for the actor's counts.
enum Ended {
    /// Recorded as hydrated or archived unread.
    Archived,
    /// To be tried again.
    Retried,
    /// Failed for good.
    Failed,
    /// Gone from the server, or deleted meanwhile.
    Gone,
}

impl HydrationActor {
    pub(crate) fn new(reader: Arc<Reader>, sup: Supervision) -> Self {
        HydrationActor {
            reader,
            working: HashSet::new(),
            looking: false,
            sup,
        }
    }

    /// Starts work on messages due now, as far as the pool has room.
    fn look(&mut self, ctx: &mut Context<Self>) {
        let room = self
            .reader
            .settings
            .hydration_workers
            .max(1)
            .saturating_sub(self.working.len());
        if self.looking || room == 0 {
            return;
        }
        if self.reader.store.condition() != StoreCondition::Available {
            return;
        }
        self.looking = true;
        let reader = Arc::clone(&self.reader);
        // Ask for more than the room: some may be in work already.
        let limit = room + self.working.len();
        let health = self.sup.health.clone();
        let due = async move {
            // One node at a time hydrates a mailbox's messages: two would fetch each twice.
            let task = format!("hydration:{}", reader.transport.name());
            let interval = reader.engine.scan_interval();
            match lead(&*reader.store, &health, &task, interval).await? {
                true => {
                    reader
                        .store
                        .court_messages_to_hydrate(Utc::now(), limit)
                        .await
                }
                false => Ok(Vec::new()),
            }
        };
        ctx.spawn(due.into_actor(self).map(move |due, act, ctx| {
            act.looking = false;
            match due {
                Ok(due) => {
                    for message in due {
                        if act.working.len() >= act.reader.settings.hydration_workers.max(1) {
                            break;
                        }
                        if act.working.insert(message.id) {
                            act.work(message, ctx);
                        }
                    }
                    act.sup.health.heartbeat(Some(act.working.len()));
                }
                Err(e) => act
                    .sup
                    .health
                    .set_error(format!("store failed while reading the queue: {e}")),
            }
        }));
    }

    fn work(&mut self, message: CourtMessage, ctx: &mut Context<Self>) {
        let id = message.id;
        let reader = Arc::clone(&self.reader);
        let work = AssertUnwindSafe(hydrate(reader, message)).catch_unwind();
        ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
            act.working.remove(&id);
            match result {
                Ok(Ok(ended)) => {
                    act.sup.health.update(|h| match ended {
                        Ended::Archived | Ended::Gone => h.processed += 1,
                        Ended::Failed => {
                            h.processed += 1;
                            h.failed += 1;
                        }
                        Ended::Retried => {}
                    });
                    act.look(ctx);
                }
                Ok(Err(e)) => act.sup.health.set_error(format!(
                    "store failed while recording a hydration (message {id}): {e}"
                )),
                Err(payload) => {
                    act.sup.on_panic(panic_message(&*payload));
                    ctx.stop();
                }
            }
        }));
    }
}

/// Fetches, archives and records one message.
async fn hydrate(reader: Arc<Reader>, message: CourtMessage) -> StoreResult<Ended> {
    let attempts = match message.hydration {
        Hydration::Waiting { attempts, .. } => attempts,
        _ => return Ok(Ended::Gone),
    };
    let fetched = timed(
        reader.engine.transport_timeout(),
        reader
            .mailbox()
            .fetch(&message.safe_id, &message.message_id),
    )
    .await;
    let now = Utc::now();
    let failed = |error: String, lasting: bool| {
        if lasting || attempts + 1 >= reader.settings.hydration_attempts.max(1) {
            HydrationOutcome::Failed { error }
        } else {
            HydrationOutcome::Retry {
                error,
                due_at: crate::after(now, reader.engine.backoff(attempts + 1)),
            }
        }
    };
    let (outcome, archived) = match fetched {
        Ok(None) => {
            reader
                .delete(message.id, DeletionCause::GoneFromServer)
                .await?;
            tracing::info!(
                id = message.id,
                "a court message is gone from the mailbox server before it was fetched; deleted"
            );
            return Ok(Ended::Gone);
        }
        Ok(Some(fetched)) => {
            let got: u64 = fetched.files.iter().map(|f| f.content.len() as u64).sum();
            if got < fetched.entry.size {
                let error = format!(
                    "the mailbox server's answer was cut short: {got} of {} bytes",
                    fetched.entry.size
                );
                (failed(error, false), false)
            } else {
                let hydrator = Arc::clone(&reader.hydrator);
                let entry = message.clone();
                let received_at = fetched.entry.received_at;
                let written =
                    tokio::task::spawn_blocking(move || hydrator.hydrate(&entry, &fetched, now))
                        .await
                        .unwrap_or_else(|e| Err(format!("the archive writer stopped: {e}")));
                match written {
                    Ok(Hydrated::Read { aktenzeichen }) => (
                        HydrationOutcome::Hydrated {
                            aktenzeichen,
                            received_at,
                        },
                        true,
                    ),
                    Ok(Hydrated::Unreadable { error }) => {
                        (HydrationOutcome::Unreadable { error, received_at }, true)
                    }
                    Err(error) => (
                        failed(format!("archive not written: {error}"), false),
                        false,
                    ),
                }
            }
        }
        Err(TransportError::Refused(reason)) => (
            failed(
                format!("the mailbox server refused the fetch: {reason}"),
                true,
            ),
            false,
        ),
        Err(e) => (failed(format!("fetch failed: {e}"), false), false),
    };
    let ended = match &outcome {
        HydrationOutcome::Hydrated { .. } | HydrationOutcome::Unreadable { .. } => Ended::Archived,
        HydrationOutcome::Retry { .. } => Ended::Retried,
        HydrationOutcome::Failed { .. } => Ended::Failed,
    };
    if let HydrationOutcome::Retry { error, .. } | HydrationOutcome::Failed { error } = &outcome {
        tracing::warn!(id = message.id, attempt = attempts + 1, %error, "court message not hydrated");
    }
    match reader
        .store
        .record_hydration(message.id, outcome, now)
        .await?
    {
        Some(recorded) => {
            if archived && recorded.direction == CourtMessageDirection::Incoming {
                let users = reader.store.mailbox_account_users(recorded.account).await?;
                reader.events.court_message_arrived(&users, &recorded);
            }
            Ok(ended)
        }
        None => {
            // Deleted while it was fetched (acknowledged, say): the archive just written is
            // nobody's.
            let current = reader.store.court_message(message.id).await?;
            if archived && current.is_none_or(|m| m.deleted.is_some()) {
                reader.remove_archive(message.id);
            }
            Ok(Ended::Gone)
        }
    }
}

impl Actor for HydrationActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        self.look(ctx);
        ctx.run_interval(self.reader.engine.scan_interval(), |act, ctx| {
            act.sup.on_tick(Some(act.working.len()));
            act.look(ctx);
        });
    }
}

impl Handler<Wake> for HydrationActor {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Self::Context) {
        self.look(ctx);
    }
}

impl Supervised for HydrationActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        // The work futures were dropped with the context; their messages wait in the store.
        self.working.clear();
        self.looking = false;
        self.sup.on_restart();
    }
}
