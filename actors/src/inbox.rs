//! The actor that collects a transport's acknowledgements: one per transport, whatever the
//! number of modules delivering through it or of reports waiting.
//!
//! Authorities do not answer per report: they drop acknowledgements into the portal's inbox as
//! they decide, and the portal fetches them in batches since a cursor. So waiting reports cost
//! nothing while nothing arrives — no poll per report, no store write — and a new delivery never
//! queues behind acknowledgement work. Each batch is recorded with the cursor it ends at in one
//! store transaction: after a crash the batch is fetched again, and acknowledgements already
//! recorded are skipped, so none is lost and none counts twice.
//!
//! A cursor the inbox does not know (the office restarted with a fresh journal, or the service
//! now talks to another office) would strand every waiting report. Since recording is idempotent,
//! the collector then starts again from the inbox's oldest entry, says so in the log, and records
//! the new cursor with that batch.
//!
//! Fetches do not go through the transport's circuit breaker: they are one call per interval
//! whatever the backlog, so there is no storm to stop, and an inbox that answers must not close a
//! breaker that failing deliveries opened. A failed fetch is simply made again at the next tick;
//! it is logged when the inbox starts failing and when it answers again. After
//! [`FAILURES_BEFORE_DEGRADED`](crate::supervise::FAILURES_BEFORE_DEGRADED) failures in a row, or at once for a failure that will not pass by
//! itself (the inbox refuses the fetch), the actor reads as degraded and operators are alerted.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{Store, StoreError};
use meldewerk_transports::{AckBatch, Transport, TransportError};

use crate::breaker::timed;
use crate::finished::Endings;
use crate::health::HealthHandle;
use crate::lead::lead;
use crate::settings::EngineSettings;
use crate::supervise::{panic_message, Supervision};

/// Acknowledgements asked for per fetch; a fuller inbox is read in several fetches in a row.
pub(crate) const BATCH: usize = 500;

/// Everything a fetch needs; shared by the fetch futures, so it outlives actor restarts.
pub(crate) struct Collector {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) settings: EngineSettings,
    /// Told about every report an acknowledgement ended.
    pub(crate) endings: Arc<Endings>,
    /// The inbox did not know the stored cursor: fetch from its start until a batch brings a
    /// cursor to record (an empty inbox may answer without one).
    pub(crate) from_start: AtomicBool,
}

/// How one fetch went: how many reports the batch finished, and whether the inbox holds more.
struct Fetched {
    finished: usize,
    more: bool,
}

/// Why a fetch failed, and whether waiting may mend it.
struct FetchFailed {
    error: String,
    /// Retrying the same fetch cannot help (the inbox refused it): degraded at once.
    lasting: bool,
}

impl Collector {
    /// A collector for `transport`'s inbox (a transport that has one, [`Transport::inbox`]).
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        store: Arc<dyn Store>,
        settings: EngineSettings,
        endings: Arc<Endings>,
    ) -> Self {
        Collector {
            transport,
            store,
            settings,
            endings,
            from_start: AtomicBool::new(false),
        }
    }

    /// One fetch, if this node leads the inbox (one node at a time reads it).
    async fn fetch(&self, health: &HealthHandle) -> Result<Fetched, FetchFailed> {
        let name = self.transport.name();
        let task = format!("inbox:{name}");
        let interval = self.settings.inbox_interval();
        if !lead(&*self.store, health, &task, interval)
            .await
            .map_err(store_error)?
        {
            return Ok(Fetched {
                finished: 0,
                more: false,
            });
        }
        let stored = self.store.inbox_cursor(name).await.map_err(store_error)?;
        let cursor = match self.from_start.load(Ordering::SeqCst) {
            true => None,
            false => stored.clone(),
        };
        let batch = match self.ask(cursor.as_deref()).await {
            Err(TransportError::UnknownCursor(why)) if cursor.is_some() => {
                tracing::warn!(
                    transport = %name,
                    cursor = ?cursor.as_deref().unwrap_or_default(),
                    %why,
                    "the inbox does not know the stored cursor; collecting again from its oldest \
                     entry (acknowledgements are idempotent: reports already final are skipped)"
                );
                self.from_start.store(true, Ordering::SeqCst);
                self.ask(None).await
            }
            asked => asked,
        }
        .map_err(|e| match e {
            TransportError::Transient(e) => FetchFailed {
                error: format!("inbox fetch failed: {e}"),
                lasting: false,
            },
            // Not a verdict on any report: the inbox refused the fetch itself (even from its
            // start). Operators must look; reports wait.
            TransportError::Refused(reason) => FetchFailed {
                error: format!("the inbox refused the fetch: {reason}"),
                lasting: true,
            },
            unknown @ TransportError::UnknownCursor(_) => FetchFailed {
                error: format!("the inbox refused the fetch: {unknown}"),
                lasting: true,
            },
        })?;
        if batch.acknowledgements.is_empty() && batch.cursor == stored {
            return Ok(Fetched {
                finished: 0,
                more: false,
            });
        }
        let acknowledgements = batch
            .acknowledgements
            .into_iter()
            .map(|ack| (ack.message_uuid, ack.outcome))
            .collect();
        let finished = self
            .store
            .record_acknowledgements(name, acknowledgements, batch.cursor.clone(), Utc::now())
            .await
            .map_err(store_error)?;
        if batch.cursor.is_some() {
            // Recorded: the stored cursor is the office's own again.
            self.from_start.store(false, Ordering::SeqCst);
        }
        for report in &finished {
            self.endings.report_finished(report);
        }
        Ok(Fetched {
            finished: finished.len(),
            more: batch.more,
        })
    }

    /// One call to the inbox, bounded by the transport timeout.
    async fn ask(&self, cursor: Option<&str>) -> Result<AckBatch, TransportError> {
        let Some(inbox) = self.transport.inbox() else {
            return Err(TransportError::Refused(format!(
                "{} has no inbox",
                self.transport.name()
            )));
        };
        timed(
            self.settings.transport_timeout(),
            inbox.acknowledgements(cursor, BATCH),
        )
        .await
    }
}

fn store_error(e: StoreError) -> FetchFailed {
    FetchFailed {
        error: format!("store failed while recording acknowledgements: {e}"),
        lasting: false,
    }
}

/// Supervised actor fetching one transport's inbox every `inbox_interval_ms`, and at once again
/// while the inbox holds more than one batch.
pub(crate) struct InboxActor {
    collector: Arc<Collector>,
    shutting_down: Arc<AtomicBool>,
    fetching: bool,
    sup: Supervision,
}

impl InboxActor {
    pub(crate) fn new(
        collector: Arc<Collector>,
        shutting_down: Arc<AtomicBool>,
        sup: Supervision,
    ) -> Self {
        InboxActor {
            collector,
            shutting_down,
            fetching: false,
            sup,
        }
    }

    fn fetch(&mut self, ctx: &mut Context<Self>) {
        if self.fetching || self.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        // Nothing fetched could be recorded; the store's own health entry tells operators, so
        // the collector neither fails nor degrades meanwhile, and its cursor waits on disk.
        if self.collector.store.condition() != meldewerk_storage::StoreCondition::Available {
            return;
        }
        self.fetching = true;
        let collector = Arc::clone(&self.collector);
        let health = self.sup.health.clone();
        let work = AssertUnwindSafe(async move { collector.fetch(&health).await }).catch_unwind();
        ctx.spawn(work.into_actor(self).map(|result, act, ctx| {
            act.fetching = false;
            let transport = act.collector.transport.name();
            match result {
                Ok(Ok(Fetched { finished, more })) => {
                    if act.sup.periodic_work_succeeded() {
                        tracing::info!(%transport, "acknowledgement inbox answers again");
                    }
                    act.sup.health.update(|h| h.processed += finished as u64);
                    if more {
                        act.fetch(ctx);
                    }
                }
                Ok(Err(FetchFailed { error, lasting })) => {
                    match act.sup.periodic_work_failed(error.clone(), lasting) {
                        true => tracing::warn!(%transport, %error, "acknowledgement inbox fails"),
                        false => tracing::debug!(%transport, %error, "acknowledgement inbox fails"),
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

impl Actor for InboxActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        // The first fetch collects whatever arrived while the service was down.
        self.fetch(ctx);
        ctx.run_interval(self.collector.settings.inbox_interval(), |act, ctx| {
            act.sup.on_tick(None);
            act.fetch(ctx);
        });
    }
}

impl Supervised for InboxActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        // The fetch future was dropped with the context; the next tick fetches from the stored
        // cursor again.
        self.fetching = false;
        self.sup.on_restart();
    }
}
