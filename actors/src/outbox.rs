//! The actor that reads the durable outbox and routes due jobs to module actors.
//!
//! The outbox in the store is the truth; mailboxes only carry work for the moment. So this actor
//! rescans the store on every tick (and when woken), routes what is due, and never needs to
//! remember a job across a restart: anything not finished is simply due again.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{Job, JobKind, Store};

use crate::inflight::{ClaimRefused, InFlight};
use crate::module_actor::{JobDone, ModuleActor, RunJob};
use crate::paused::Paused;
use crate::settings::EngineSettings;
use crate::store_watch::StoreWatch;
use crate::supervise::{panic_message, Supervision};

/// How long a job for a module nobody serves is left alone before it is looked at again.
const UNROUTABLE_HOLD: Duration = Duration::from_secs(60);
/// How long a job of a paused module is left alone before it is looked at again (a resume lets
/// its jobs go at once).
const PAUSED_HOLD: Duration = Duration::from_millis(500);
/// How long a job is left alone after its module actor could not take it (mailbox closed).
const MAILBOX_FAILURE_HOLD: Duration = Duration::from_secs(1);
/// Extra jobs of a module fetched per scan and lane beyond what it can take, so that "read up to
/// the limit" means "has more waiting than it can take" (and the module is refilled later).
const SCAN_SLACK: usize = 16;
/// A module left full by a scan is refilled once this share of its places (1/4) is free again,
/// not at every job's end: each scan walks past the jobs in flight, so refilling one place at a
/// time cost a scan per report.
const REFILL_SHARE: usize = 4;

/// Scan now (a job was just queued, or capacity freed up).
pub(crate) struct Wake;

impl Message for Wake {
    type Result = ();
}

/// A job was just stored: route it at once if its module has room, without reading the store
/// (a scan finds it otherwise).
pub(crate) struct Queued(pub(crate) Job);

impl Message for Queued {
    type Result = ();
}

/// A module's deliveries were resumed: its held jobs are due at once.
pub(crate) struct Resumed(pub(crate) String);

impl Message for Resumed {
    type Result = ();
}

/// Until when a job is held, and the paused module it waits for, if that is the reason.
type Hold = (Instant, Option<Arc<str>>);

/// Jobs held back from routing, each until an instant; a paused module's jobs also name it, so
/// that its resume lets them go.
#[derive(Default)]
pub(crate) struct Held(Mutex<HashMap<u64, Hold>>);

impl Held {
    fn insert(&self, job_id: u64, pause: Duration) {
        self.lock().insert(job_id, (Instant::now() + pause, None));
    }

    fn insert_paused(&self, job_id: u64, module: &Arc<str>) {
        let until = Instant::now() + PAUSED_HOLD;
        self.lock()
            .insert(job_id, (until, Some(Arc::clone(module))));
    }

    fn contains(&self, job_id: u64) -> bool {
        self.lock().contains_key(&job_id)
    }

    /// Lets go of the jobs whose time has come.
    fn expire(&self, now: Instant) {
        self.lock().retain(|_, (until, _)| *until > now);
    }

    /// Lets go of the jobs held because `module` was paused.
    fn release_module(&self, module: &str) {
        self.lock()
            .retain(|_, (_, paused)| paused.as_deref() != Some(module));
    }

    // Holds must stay usable even if a thread panicked while holding the lock.
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Hold>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Supervised actor scanning the outbox and routing jobs by module.
pub(crate) struct OutboxActor {
    store: Arc<dyn Store>,
    settings: EngineSettings,
    routes: HashMap<Arc<str>, Addr<ModuleActor>>,
    paused: Arc<Paused>,
    in_flight: Arc<InFlight>,
    shutting_down: Arc<AtomicBool>,
    /// Jobs not to route before the given instant (store trouble, unknown module, paused
    /// module). Shared with the scan, which passes over them unread: a paused module's backlog
    /// would otherwise be decoded again by every scan.
    hold: Arc<Held>,
    scanning: bool,
    rescan: Option<bool>,
    /// Modules that have due jobs waiting for a free place (a scan or a new job found them
    /// full, or older new deliveries wait): scanned for when enough of their jobs have ended,
    /// and their new jobs are left to those scans, which take the oldest first.
    saturated: HashSet<Arc<str>>,
    /// Modules with overdue acknowledgements waiting for their share of places: scanned for
    /// like the saturated ones, but a new job of theirs is still routed at once (new
    /// deliveries come before redeliveries).
    backlogged: HashSet<Arc<str>>,
    /// Whether the store serves requests: while it does not, the tick does not scan.
    store_watch: StoreWatch,
    sup: Supervision,
}

impl OutboxActor {
    /// The outbox actor over the store `store_watch` watches.
    pub(crate) fn new(
        store_watch: StoreWatch,
        settings: EngineSettings,
        routes: HashMap<Arc<str>, Addr<ModuleActor>>,
        paused: Arc<Paused>,
        in_flight: Arc<InFlight>,
        shutting_down: Arc<AtomicBool>,
        sup: Supervision,
    ) -> Self {
        OutboxActor {
            store: store_watch.store(),
            settings,
            routes,
            paused,
            in_flight,
            shutting_down,
            hold: Arc::default(),
            scanning: false,
            rescan: None,
            saturated: HashSet::new(),
            backlogged: HashSet::new(),
            store_watch,
            sup,
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        self.sup.on_tick(None);
        // A scan of an unavailable store only fails; its jobs wait on disk.
        if self.store_watch.available() {
            self.scan(ctx, true);
        }
    }

    /// Reads due jobs and routes them; `with_len` also refreshes the backlog shown in health.
    /// Scans never overlap: a request during a scan runs once the scan is done.
    fn scan(&mut self, ctx: &mut Context<Self>, with_len: bool) {
        if self.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        if self.scanning {
            self.rescan = Some(self.rescan.unwrap_or(false) || with_len);
            return;
        }
        if self.free_places() == 0 && !with_len {
            // Nothing could be routed: the modules' next ending jobs scan (and the tick does).
            self.saturated.extend(self.routes.keys().cloned());
            return;
        }
        self.scanning = true;
        // What this scan finds decides; a new job refused meanwhile adds its module again.
        self.saturated.clear();
        self.backlogged.clear();
        self.hold.expire(Instant::now());
        // Per module and lane (the store reads each module's jobs on its own): a full module's
        // worth and some; scans are rare enough (refills by the quarter, ticks) for the decoding.
        let limit = self.settings.max_in_flight().saturating_add(SCAN_SLACK);
        let store = Arc::clone(&self.store);
        let in_flight = Arc::clone(&self.in_flight);
        let hold = Arc::clone(&self.hold);
        let read = async move {
            // Jobs being worked on or held are passed over unread: they are the oldest due, and
            // every scan would decode them again.
            let skip = move |id| in_flight.contains(id) || hold.contains(id);
            let jobs = store.due_jobs(Utc::now(), limit, &skip).await;
            let len = match with_len {
                true => Some(store.outbox_len().await),
                false => None,
            };
            (jobs, len)
        };
        let work = AssertUnwindSafe(read).catch_unwind().into_actor(self);
        ctx.spawn(work.map(move |result, act, ctx| {
            act.scanning = false;
            match result {
                Err(payload) => {
                    act.sup.on_panic(panic_message(&*payload));
                    ctx.stop();
                    return;
                }
                Ok((jobs, len)) => {
                    match len {
                        Some(Ok(len)) => act.sup.health.update(|h| h.backlog = len),
                        Some(Err(e)) => act.sup.health.set_error(e.to_string()),
                        None => {}
                    }
                    match jobs {
                        Ok(jobs) => {
                            act.mark_cut(&jobs, limit);
                            act.route(jobs, ctx);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "could not read the outbox");
                            act.sup.health.set_error(e.to_string());
                        }
                    }
                }
            }
            if let Some(with_len) = act.rescan.take() {
                act.scan(ctx, with_len);
            }
        }));
    }

    /// Marks each module a scan read up to `limit` jobs of in a lane, since it may have more
    /// waiting: saturated for new deliveries, backlogged for overdue acknowledgements.
    fn mark_cut(&mut self, jobs: &[Job], limit: usize) {
        let mut read: HashMap<(&str, bool), usize> = HashMap::new();
        for job in jobs {
            let acknowledgement = job.kind == JobKind::AwaitAck;
            *read
                .entry((job.report.module.as_str(), acknowledgement))
                .or_default() += 1;
        }
        for ((module, acknowledgement), count) in read {
            let Some((module, _)) = self.routes.get_key_value(module) else {
                continue;
            };
            if count >= limit {
                let marks = match acknowledgement {
                    true => &mut self.backlogged,
                    false => &mut self.saturated,
                };
                marks.insert(Arc::clone(module));
            }
        }
    }

    /// Claims and sends each job to its module actor; a module found full is marked saturated,
    /// one whose redeliveries have their share backlogged.
    fn route(&mut self, jobs: Vec<Job>, ctx: &mut Context<Self>) {
        let max = self.settings.max_in_flight();
        for job in jobs {
            if self.hold.contains(job.id) {
                continue;
            }
            let Some((module, addr)) = self.routes.get_key_value(job.report.module.as_str()) else {
                let error = format!(
                    "job {} is for module {:?}, which this engine does not serve",
                    job.id, job.report.module
                );
                tracing::warn!(job = job.id, report = %job.report, "{error}");
                self.sup.health.set_error(error);
                self.hold.insert(job.id, UNROUTABLE_HOLD);
                continue;
            };
            if self.paused.contains(module) {
                self.hold.insert_paused(job.id, module);
                continue;
            }
            let redelivery = job.kind == JobKind::AwaitAck;
            let claim = match self.in_flight.try_claim(job.id, module, max, redelivery) {
                Ok(claim) => claim,
                Err(ClaimRefused::AlreadyClaimed) => continue,
                Err(ClaimRefused::ModuleFull) => {
                    self.saturated.insert(Arc::clone(module));
                    continue;
                }
                Err(ClaimRefused::RedeliveriesFull) => {
                    self.backlogged.insert(Arc::clone(module));
                    continue;
                }
            };
            let id = job.id;
            let module = Arc::clone(module);
            self.sup.health.update(|h| h.processed += 1);
            let answer = addr.send(RunJob { job, claim }).into_actor(self);
            ctx.spawn(answer.map(move |answer, act, ctx| {
                match answer {
                    Ok(JobDone::Hold(pause)) => {
                        act.hold.insert(id, pause);
                    }
                    Ok(_) => {}
                    Err(e) => {
                        // The module actor died with the job; it is still in the outbox.
                        tracing::warn!(job = id, error = %e, "module actor did not answer");
                        act.hold.insert(id, MAILBOX_FAILURE_HOLD);
                    }
                }
                let waiting = act.saturated.contains(&module) || act.backlogged.contains(&module);
                if waiting && act.refill_due(&module) {
                    act.saturated.remove(&module);
                    act.backlogged.remove(&module);
                    act.scan(ctx, false);
                }
            }));
        }
    }

    /// Places free across the modules served and not paused: how many jobs a scan could route
    /// now.
    fn free_places(&self) -> usize {
        let max = self.settings.max_in_flight();
        let busy = |module: &Arc<str>| self.in_flight.module_count(module);
        let serving = self.routes.keys().filter(|m| !self.paused.contains(m));
        serving.map(|m| max.saturating_sub(busy(m))).sum()
    }

    /// Whether `module`, whose job just ended, has room enough to be worth a scan.
    fn refill_due(&self, module: &str) -> bool {
        let max = self.settings.max_in_flight();
        let refill = (max / REFILL_SHARE).max(1);
        self.in_flight.module_count(module) + refill <= max
    }
}

impl Actor for OutboxActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        // The first scan resumes whatever an earlier run left in the outbox.
        self.tick(ctx);
        ctx.run_interval(self.settings.scan_interval(), |act, ctx| act.tick(ctx));
    }
}

impl Supervised for OutboxActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        // The scan future was dropped with the context; claims of routed jobs live on in their
        // messages, so nothing routed before the restart is routed twice.
        self.scanning = false;
        self.rescan = None;
        self.sup.on_restart();
    }
}

impl Handler<Wake> for OutboxActor {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Self::Context) {
        self.scan(ctx, false);
    }
}

impl Handler<Queued> for OutboxActor {
    type Result = ();

    /// Routes the new job straight away: at one scan per submission, walking past the jobs in
    /// flight cost more than building the message. Not while its module has older jobs waiting
    /// for a place: they go first, and the scan that refills the module finds this one too.
    fn handle(&mut self, Queued(job): Queued, ctx: &mut Self::Context) {
        if self.shutting_down.load(Ordering::SeqCst)
            || self.saturated.contains(job.report.module.as_str())
        {
            return;
        }
        self.route(vec![job], ctx);
    }
}

impl Handler<Resumed> for OutboxActor {
    type Result = ();

    fn handle(&mut self, Resumed(module): Resumed, ctx: &mut Self::Context) {
        self.hold.release_module(&module);
        self.scan(ctx, false);
    }
}
