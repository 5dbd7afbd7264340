//! meldewerk's engine: supervised actors that take reports from the durable outbox, build and
//! sign their messages, deliver them to a transport, record what the authority answered (its
//! decision at once, or its acknowledgement collected later from the transport's inbox), and
//! expire old payloads — and report their health to operators.
//!
//! The engine knows nothing about HTTP or about any one module: a module plugs in as a
//! [`ModuleSpec`] (how to build a message, how to sign it, where to deliver it). All state lives in
//! the [`Store`]; actors only hold what is in flight, so a crash or a restarted actor loses nothing.
//!
//! Actors:
//! - `outbox`: scans the outbox and routes due jobs to module actors, bounded per module;
//! - `module:<module>`: one per module, works jobs concurrently as futures (no thread per job);
//! - `inbox:<transport>`: one per transport that has an inbox, fetches acknowledgements in
//!   batches since a cursor;
//! - `retention`: removes the payload of final reports after the retention time;
//! - for a transport whose mailbox a module reads: `mailbox:<transport>`, a
//!   `sync:<transport>:<account>` per mailbox account and `hydration:<transport>` (see
//!   [`mailbox`](crate::MailboxReading)).
//!
//! Every actor runs under an actix `Supervisor`, isolates its work with `catch_unwind` (a panic
//! becomes a counted restart instead of a dead actor) and is marked degraded when it restarts more
//! often than the restart intensity allows.

mod breaker;
mod events;
mod finished;
mod health;
mod inbox;
mod inflight;
mod lead;
mod mailbox;
mod module_actor;
mod outbox;
mod paused;
mod publish;
mod retention;
mod settings;
mod store_watch;
mod supervise;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Addr, Arbiter, Supervisor};
use actix_rt::ArbiterHandle;
use chrono::{DateTime, Utc};
use meldewerk_storage::{
    FinishedReport, Job, MessageSignature, Outcome, PreparedMessage, Report, ReportKey, Store,
    StoreResult,
};
use meldewerk_transports::Transport;

pub use breaker::{BreakerState, TransportHealth};
pub use events::{EngineEvents, Fanout, NoEvents};
pub use finished::Watch;
pub use health::{ActorHealth, ActorState};
pub use mailbox::{Hydrated, Hydrator, MailboxReading, ReadingSettings};
pub use settings::EngineSettings;

use breaker::Breaker;
use finished::Endings;
use health::{HealthHandle, HealthRegistry};
use inbox::{Collector, InboxActor};
use inflight::InFlight;
use module_actor::{ModuleActor, Worker};
use outbox::{OutboxActor, Queued, Resumed, Wake};
use paused::Paused;
use retention::RetentionActor;
use supervise::Supervision;

/// Threads the engine's runtime may use for blocking work (flushes wait for the disk, so a few
/// more than cores keep the disk busy without a thread per job).
const ENGINE_BLOCKING_THREADS: usize = 4;

/// Builds the wire message for one report of a module (module knowledge lives outside the engine).
pub trait MessageBuilder: Send + Sync + 'static {
    /// Builds the message from the report's submission. Called once per report: the result is
    /// stored and every retry delivers the stored bytes.
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError>;
}

/// A message built for delivery, before signing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltMessage {
    /// Message UUID written into the message header; the transport sees it too.
    pub message_uuid: String,
    /// Media type of `body`, e.g. `application/xml`.
    pub content_type: String,
    /// The exact bytes to deliver.
    pub body: Vec<u8>,
    /// The facility whose certificate the message goes out with, when the module's authority
    /// knows senders by one; stored with the message (`PreparedMessage::sender`).
    pub sender: Option<meldewerk_storage::Sender>,
}

impl BuiltMessage {
    /// The message as it is stored and delivered: with `signature`, prepared now.
    pub fn signed(self, signature: Option<MessageSignature>) -> PreparedMessage {
        PreparedMessage {
            message_uuid: self.message_uuid,
            content_type: self.content_type,
            body: self.body,
            signature,
            prepared_at: Utc::now(),
            sender: self.sender,
        }
    }
}

/// Applies the seal or end-user signature to a built message.
#[async_trait::async_trait]
pub trait MessageSigner: Send + Sync + 'static {
    /// Signs `body` (the built message) for `report`; `None` when the message goes unsigned.
    async fn sign(
        &self,
        report: &Report,
        body: &[u8],
    ) -> Result<Option<MessageSignature>, BuildError>;
}

/// A message could not be built or signed. Permanent: the report ends in FAILURE with this reason.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

/// One module as the engine sees it: how to build and sign its messages and where to deliver them.
pub struct ModuleSpec {
    /// Module path segment, e.g. `birthnotice`; jobs are routed by `job.report.module`.
    pub module: String,
    /// Builds the module's messages.
    pub builder: Arc<dyn MessageBuilder>,
    /// Signs (or seals) the module's messages.
    pub signer: Arc<dyn MessageSigner>,
    /// Delivers the module's messages (and, if it has an inbox, hands out their
    /// acknowledgements).
    pub transport: Arc<dyn Transport>,
    /// How long the module's final reports keep their payload; `None` keeps them forever.
    pub retention: Option<Duration>,
    /// How the module reads its transport's mailbox, when it does (and the transport has one,
    /// [`Transport::mailbox`]): the engine then syncs every mailbox account in the store and
    /// hydrates their messages.
    pub reading: Option<MailboxReading>,
}

/// Handle to a running engine. Cheap to clone; every clone controls the same engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<EngineInner>,
}

/// A handle that does not keep the engine alive, for those the engine itself holds on to (its
/// events observer reading its health): a strong handle there would be a reference cycle.
#[derive(Clone)]
pub struct WeakEngine(std::sync::Weak<EngineInner>);

impl WeakEngine {
    /// The engine, unless every [`Engine`] handle is gone.
    pub fn upgrade(&self) -> Option<Engine> {
        self.0.upgrade().map(|inner| Engine { inner })
    }
}

struct EngineInner {
    outbox: Addr<OutboxActor>,
    // Held although nobody sends to them: an actix supervisor restarts a stopped actor only
    // while some address of it is alive.
    _inboxes: Vec<Addr<InboxActor>>,
    _retention: Addr<RetentionActor>,
    _readers: Vec<mailbox::Running>,
    breakers: Vec<Arc<Breaker>>,
    /// Module segments the engine serves.
    modules: Vec<Arc<str>>,
    paused: Arc<Paused>,
    arbiter: ArbiterHandle,
    registry: Arc<HealthRegistry>,
    in_flight: Arc<InFlight>,
    shutting_down: Arc<AtomicBool>,
    store: Arc<dyn Store>,
    endings: Arc<Endings>,
}

impl Engine {
    /// Starts the engine on its own actix Arbiter (must be called inside a running actix System,
    /// e.g. under `#[actix_web::main]` / `actix_rt::System`). Resumes every job left in the outbox.
    pub fn start(
        store: Arc<dyn Store>,
        modules: Vec<ModuleSpec>,
        settings: EngineSettings,
    ) -> Engine {
        Engine::start_with_events(store, modules, settings, events::no_events())
    }

    /// [`Engine::start`], telling `events` when an actor becomes degraded, a report ends in
    /// FAILURE or a breaker opens.
    pub fn start_with_events(
        store: Arc<dyn Store>,
        modules: Vec<ModuleSpec>,
        settings: EngineSettings,
        events: Arc<dyn EngineEvents>,
    ) -> Engine {
        // A thread of its own keeps message building and store calls off the HTTP workers. Its
        // blocking pool (store flushes, simulator journal work) is bounded: tokio's default of
        // 512 threads let a burst of deliveries start a hundred threads, each keeping allocator
        // memory long after the burst.
        let arbiter = Arbiter::with_tokio_rt(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .max_blocking_threads(ENGINE_BLOCKING_THREADS)
                .build()
                .expect("the engine's runtime starts")
        })
        .handle();
        let registry = Arc::new(HealthRegistry::default());
        let in_flight = Arc::new(InFlight::default());
        let shutting_down = Arc::new(AtomicBool::new(false));
        let supervised = |health: HealthHandle, name: String| {
            Supervision::new(
                health,
                name,
                settings.max_restarts,
                settings.restart_window(),
            )
            .with_events(Arc::clone(&events))
        };
        let supervision = |name: String| supervised(registry.register(name.clone()), name);

        let outbox_sup = supervision("outbox".to_string());
        let store_watch = store_watch::StoreWatch::new(
            Arc::clone(&store),
            registry.register("store"),
            Arc::clone(&events),
        );
        let mut routes = HashMap::new();
        let mut retention = Vec::new();
        // Every module actor's health entry first: a report may end in any of them, and the
        // one path that tells of it counts it in its module's entry.
        let modules: Vec<(ModuleSpec, Arc<str>, HealthHandle)> = modules
            .into_iter()
            .map(|spec| {
                let module: Arc<str> = Arc::from(spec.module.as_str());
                let health = registry.register(format!("module:{module}"));
                (spec, module, health)
            })
            .collect();
        let endings = Arc::new(Endings::new(
            Arc::clone(&events),
            modules
                .iter()
                .map(|(_, module, health)| (Arc::clone(module), health.clone()))
                .collect(),
        ));
        // One breaker per transport, shared by every module delivering through it, and one
        // acknowledgement collector per transport that has an inbox.
        let mut breakers: Vec<Arc<Breaker>> = Vec::new();
        let mut inboxes: Vec<Collector> = Vec::new();
        let mut readers = Vec::new();
        for (spec, module, health) in modules {
            if let Some(reading) = &spec.reading {
                readers.push(mailbox::Reader {
                    transport: Arc::clone(&spec.transport),
                    store: Arc::clone(&store),
                    hydrator: Arc::clone(&reading.hydrator),
                    settings: reading.settings.clone(),
                    engine: settings.clone(),
                    events: Arc::clone(&events),
                });
            }
            // No acknowledgement will ever look for a report its transport decides at once.
            if spec.transport.inbox().is_none() {
                store.decided_at_once(&module);
            }
            let name = spec.transport.name().to_owned();
            let breaker = match breakers.iter().find(|b| b.health().name == name) {
                Some(breaker) => Arc::clone(breaker),
                None => {
                    let breaker = Arc::new(Breaker::new(
                        &name,
                        settings.breaker_failures,
                        settings.breaker_open(),
                    ));
                    breakers.push(Arc::clone(&breaker));
                    if spec.transport.inbox().is_some() {
                        inboxes.push(Collector::new(
                            Arc::clone(&spec.transport),
                            Arc::clone(&store),
                            settings.clone(),
                            Arc::clone(&endings),
                        ));
                    }
                    breaker
                }
            };
            if routes.contains_key(&module) {
                tracing::warn!(%module, "module configured twice; the last one wins");
            }
            let keep = spec.retention;
            let worker = Arc::new(Worker::new(
                Arc::clone(&module),
                spec,
                Arc::clone(&store),
                settings.clone(),
                breaker,
                (Arc::clone(&events), Arc::clone(&endings)),
            ));
            let actor_name = format!("module:{module}");
            let actor = ModuleActor::new(
                worker,
                Arc::clone(&in_flight),
                supervised(health, actor_name),
            );
            let addr = Supervisor::start_in_arbiter(&arbiter, move |_| actor);
            if let Some(keep) = keep {
                retention.push((Arc::clone(&module), keep));
            }
            routes.insert(module, addr);
        }

        let inboxes = inboxes
            .into_iter()
            .map(|collector| {
                let sup = supervision(format!("inbox:{}", collector.transport.name()));
                let actor = InboxActor::new(Arc::new(collector), Arc::clone(&shutting_down), sup);
                Supervisor::start_in_arbiter(&arbiter, move |_| actor)
            })
            .collect();

        let supervise_named: mailbox::Supervise = {
            let (registry, events, settings) =
                (Arc::clone(&registry), Arc::clone(&events), settings.clone());
            Arc::new(move |name: &str| {
                Supervision::new(
                    registry.register_or_reuse(name),
                    name,
                    settings.max_restarts,
                    settings.restart_window(),
                )
                .with_events(Arc::clone(&events))
            })
        };
        let readers = readers
            .into_iter()
            .filter_map(|reader| {
                let name = reader.transport.name().to_owned();
                if reader.transport.mailbox().is_none() {
                    tracing::error!(
                        transport = %name,
                        "a module reads the mailbox of a transport that has none; nothing is read"
                    );
                    return None;
                }
                let reader = Arc::new(reader);
                let hydration = mailbox::HydrationActor::new(
                    Arc::clone(&reader),
                    supervise_named(&format!("hydration:{name}")),
                );
                let hydration = Supervisor::start_in_arbiter(&arbiter, move |_| hydration);
                let accounts = mailbox::AccountsActor::new(
                    reader,
                    hydration.clone(),
                    arbiter.clone(),
                    Arc::clone(&supervise_named),
                    supervise_named(&format!("mailbox:{name}")),
                );
                let accounts = Supervisor::start_in_arbiter(&arbiter, move |_| accounts);
                Some(mailbox::Running::new(accounts, hydration))
            })
            .collect();

        let retention = RetentionActor::new(
            Arc::clone(&store),
            retention,
            settings.clone(),
            supervision("retention".to_string()),
        );
        let retention = Supervisor::start_in_arbiter(&arbiter, move |_| retention);

        let modules: Vec<Arc<str>> = routes.keys().cloned().collect();
        let paused = Arc::new(Paused::new(store.shared()));
        let outbox = OutboxActor::new(
            store_watch,
            settings,
            routes,
            Arc::clone(&paused),
            Arc::clone(&in_flight),
            Arc::clone(&shutting_down),
            outbox_sup,
        );
        let outbox = Supervisor::start_in_arbiter(&arbiter, move |_| outbox);

        let engine = Engine {
            inner: Arc::new(EngineInner {
                outbox,
                _inboxes: inboxes,
                _retention: retention,
                _readers: readers,
                breakers,
                modules,
                paused,
                arbiter,
                registry,
                in_flight,
                shutting_down,
                store,
                endings,
            }),
        };
        let arbiter = &engine.inner.arbiter;
        arbiter.spawn(publish::publish_health(engine.downgrade()));
        if engine.inner.store.shared() {
            arbiter.spawn(paused::follow(engine.downgrade()));
        }
        engine
    }

    /// A handle that does not keep the engine alive.
    pub fn downgrade(&self) -> WeakEngine {
        WeakEngine(Arc::downgrade(&self.inner))
    }

    /// Jobs may have become due (an operator's retry, say): scan now instead of at the next
    /// tick (cheap, never blocks, never fails).
    pub fn wake(&self) {
        self.inner.outbox.do_send(Wake);
    }

    /// `job` was just stored: route it now if its module has room, without reading the outbox
    /// (cheap, never blocks, never fails; the scans find it otherwise).
    pub fn queued(&self, job: Job) {
        self.inner.outbox.do_send(Queued(job));
    }

    /// Jobs the engine works on right now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.total()
    }

    /// Health of every actor, for operators: `outbox`, one `module:<module>` per module, one
    /// `inbox:<transport>` per transport, `retention`.
    pub fn health(&self) -> Vec<ActorHealth> {
        let mut health = self.inner.registry.snapshot();
        for entry in &mut health {
            if let Some(module) = entry.name.strip_prefix("module:") {
                entry.paused = self.inner.paused.contains(module);
            }
        }
        health
    }

    /// Whether the engine is working on the job right now (an operator action on it would race
    /// with the delivery).
    pub fn working_on(&self, job_id: u64) -> bool {
        self.inner.in_flight.contains(job_id)
    }

    /// Watches the report `key`: [`Watch::ended`] answers its end once the engine has stored it,
    /// however it ends (for an authority that decides at once, with the answer to its
    /// delivery). Start watching before the report is dispatched, so that no end can come
    /// first. Dropping the watch stops it; the report's delivery goes on either way.
    pub fn watch(&self, key: ReportKey) -> Watch {
        self.inner.endings.watch(key)
    }

    /// Ends the report of `job` in FAILURE with `reason` (an operator's discard) and removes the
    /// job, the way the engine ends reports: its observers hear of it like of any other FAILURE,
    /// so it is counted in the metrics and alerted. `NotFound` if the job has left the outbox.
    pub async fn discard(&self, job: &Job, reason: &str) -> StoreResult<FinishedReport> {
        let outcome = Outcome::Failure {
            reason: reason.to_owned(),
        };
        let report = self
            .inner
            .store
            .record_outcome(job, outcome, Utc::now())
            .await?;
        self.inner.endings.report_finished(&report);
        Ok(report)
    }

    /// Every transport's breaker and call statistics, for operators.
    pub fn transports(&self) -> Vec<TransportHealth> {
        self.inner.breakers.iter().map(|b| b.health()).collect()
    }

    /// Pauses the deliveries of `module`: its jobs stay in the outbox until [`Engine::resume`];
    /// jobs already running finish. On a store several nodes share, the pause is every node's
    /// (each follows it within a second). `None` when the engine serves no such module, else
    /// whether this call changed anything on this node.
    pub async fn pause(&self, module: &str) -> StoreResult<Option<bool>> {
        self.set_paused(module, true).await
    }

    /// Resumes the deliveries of `module` at once (on a shared store: on every node). `None`
    /// for a module the engine does not serve, else whether this call changed anything on this
    /// node.
    pub async fn resume(&self, module: &str) -> StoreResult<Option<bool>> {
        self.set_paused(module, false).await
    }

    async fn set_paused(&self, module: &str, paused: bool) -> StoreResult<Option<bool>> {
        if !self.serves(module) {
            return Ok(None);
        }
        let inner = &self.inner;
        let _one_change = inner.paused.changing.lock().await;
        // The store first: a pause this node holds but the others do not know of is none.
        inner.store.set_paused(module, paused).await?;
        if paused {
            return Ok(Some(inner.paused.pause(module)));
        }
        let changed = inner.paused.resume(module);
        inner.outbox.do_send(Resumed(module.to_string()));
        Ok(Some(changed))
    }

    fn serves(&self, module: &str) -> bool {
        self.inner.modules.iter().any(|m| &**m == module)
    }

    /// Stop starting new work, wait up to `grace` for in-flight jobs, stop the actors. Jobs not
    /// finished stay in the durable outbox.
    pub async fn shutdown(&self, grace: Duration) {
        let inner = &self.inner;
        inner.shutting_down.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + grace;
        while inner.in_flight.total() > 0 && Instant::now() < deadline {
            actix_rt::time::sleep(Duration::from_millis(10)).await;
        }
        let unfinished = inner.in_flight.total();
        if unfinished > 0 {
            tracing::warn!(
                unfinished,
                "engine stopped with jobs in flight; they stay in the outbox"
            );
        }
        inner.arbiter.stop();
        inner.registry.mark_all_stopped();
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("in_flight", &self.inner.in_flight.total())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for WeakEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakEngine")
            .field("running", &(self.0.strong_count() > 0))
            .finish()
    }
}

/// `at + delay`, saturating instead of overflowing for absurd delays.
pub(crate) fn after(at: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|d| at.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// `at - delay`, saturating at the earliest time instead of overflowing for absurd periods.
pub(crate) fn before(at: DateTime<Utc>, delay: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(delay)
        .ok()
        .and_then(|d| at.checked_sub_signed(d))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn engine_handle_can_be_shared_across_threads() {
        assert_send_sync::<Engine>();
    }

    #[test]
    fn after_saturates() {
        let now = Utc::now();
        assert_eq!(
            after(now, Duration::from_secs(u64::MAX)),
            DateTime::<Utc>::MAX_UTC
        );
        assert!(after(now, Duration::from_millis(5)) > now);
        assert_eq!(
            before(now, Duration::from_secs(u64::MAX)),
            DateTime::<Utc>::MIN_UTC
        );
        assert!(before(now, Duration::from_millis(5)) < now);
    }
}
