//! The actor that works one module's jobs: deliver the message stored at dispatch (or build and
//! sign it once, for a report stored without), and record what the authority answered: its
//! decision, which ends the report at once, or its acceptance, after which the report waits for
//! its acknowledgement (collected from the transport's inbox, see [`crate::inbox`]) and is
//! delivered again if none came in time.
//!
//! Each job runs as a future spawned in the actor's context, so many deliveries can wait on the
//! network at once without a thread each. Each future runs
//! inside `catch_unwind`: a panic stops the actor so that its supervisor restarts it, instead of
//! killing it for good.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::{
    AfterDelivery, Job, JobKind, Outcome, PreparedMessage, Report, Store, StoreError, StoreResult,
};
use meldewerk_transports::{Answer, Delivery, Transport, TransportError};

use crate::breaker::{Breaker, Ticket};
use crate::events::SharedEvents;
use crate::finished::Endings;
use crate::inflight::{InFlight, InFlightGuard};
use crate::settings::EngineSettings;
use crate::supervise::{panic_message, Supervision};
use crate::{after, BuildError, MessageBuilder, MessageSigner, ModuleSpec};

/// How long the outbox leaves a job alone after the store failed while working on it, so that a
/// failing store is not hammered in a loop.
pub(crate) const STORE_TROUBLE_HOLD: Duration = Duration::from_secs(1);

/// Work one outbox job. The claim travels with the job and is released when the job's work ends
/// or is dropped.
pub(crate) struct RunJob {
    pub(crate) job: Job,
    pub(crate) claim: InFlightGuard,
}

impl Message for RunJob {
    type Result = JobDone;
}

/// How a job's run ended, as far as the outbox cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobDone {
    /// The report reached its final state; the job left the outbox.
    Finished { failed: bool },
    /// The job moved on (delivered, or put back for a later try) and stays in the outbox.
    Progressed,
    /// The job was no longer in the outbox (finished elsewhere).
    Gone,
    /// The store failed; do not route this job again for this long.
    Hold(Duration),
    /// The work panicked; the actor restarts.
    Panicked,
}

/// Everything a job run needs; shared by the job futures, so it outlives actor restarts.
pub(crate) struct Worker {
    pub(crate) module: Arc<str>,
    pub(crate) builder: Arc<dyn MessageBuilder>,
    pub(crate) signer: Arc<dyn MessageSigner>,
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) settings: EngineSettings,
    /// Told about retries and every breaker that opens.
    events: SharedEvents,
    /// Told about every report that ends.
    endings: Arc<Endings>,
    /// The transport's breaker, shared with every module delivering through it.
    breaker: Arc<Breaker>,
}

impl Worker {
    /// The worker of the module `spec` describes (named `module`).
    pub(crate) fn new(
        module: Arc<str>,
        spec: ModuleSpec,
        store: Arc<dyn Store>,
        settings: EngineSettings,
        breaker: Arc<Breaker>,
        (events, endings): (SharedEvents, Arc<Endings>),
    ) -> Self {
        Worker {
            module,
            builder: spec.builder,
            signer: spec.signer,
            transport: spec.transport,
            store,
            settings,
            events,
            endings,
            breaker,
        }
    }

    /// Works one job. `counted` turns true once the store has counted this run's attempt (or at
    /// once for a probe, which is none), so that a panic before that point is counted afterwards
    /// (see [`Worker::after_panic`]).
    async fn run(self: Arc<Self>, job: Job, counted: Arc<AtomicBool>) -> JobDone {
        let id = job.id;
        let result = match Ticket::admit(&self.breaker, std::time::Instant::now()) {
            // The transport is left alone: the job waits in memory, without a store write and
            // without an attempt being counted.
            Err(refused) => {
                let wait = refused
                    .retry_at
                    .saturating_duration_since(std::time::Instant::now());
                return JobDone::Hold(wait.max(Duration::from_millis(1)));
            }
            Ok(ticket) => {
                // A probe is no attempt, so a panic during one has nothing to count either.
                if ticket.probe {
                    counted.store(true, Ordering::SeqCst);
                }
                self.deliver(&job, &ticket, &counted).await
            }
        };
        match result {
            Ok(done) => done,
            Err(StoreError::NotFound(_)) => JobDone::Gone,
            // This node hung past its lease, and another node works on the job now.
            Err(e @ StoreError::Busy(_)) => {
                tracing::warn!(job = id, error = %e, "the job went to another node meanwhile");
                JobDone::Gone
            }
            Err(e) => {
                tracing::warn!(job = id, error = %e, "store failed while working a job; it stays in the outbox");
                JobDone::Hold(STORE_TROUBLE_HOLD)
            }
        }
    }

    /// Delivers the job's message: the first time (`Deliver`), or again because its
    /// acknowledgement did not come in time (`AwaitAck`). A message delivered again was accepted
    /// before, so it never fails for want of attempts: it waits on with backoff.
    ///
    /// Every call to the transport is counted as an attempt before it is made, so that a crash
    /// during it counts too. A report dispatched with its message (the common case) only has
    /// its attempt counted; one stored without (by an older version, or when signing failed at
    /// dispatch) gets its message built here, stored in the transaction that counts the first
    /// attempt. A probe is not one of the job's attempts (it only asks whether the transport is
    /// back), but the job must still be there.
    #[tracing::instrument(skip_all, fields(report = %job.report, job = job.id))]
    async fn deliver(
        &self,
        job: &Job,
        ticket: &Ticket,
        counted: &AtomicBool,
    ) -> StoreResult<JobDone> {
        let again = job.kind == JobKind::AwaitAck;
        let Some(mut report) = self.store.report_to_deliver(&job.report).await? else {
            return self.fail(job, "report not found".to_string()).await;
        };
        // Taken, not cloned: the body moves on into the delivery.
        let (job, message) = match report.message.take() {
            Some(message) => (self.count(job, ticket.probe, counted).await?, message),
            None => {
                // The attempt about to be counted would be one too many.
                if !ticket.probe && job.attempts >= self.settings.max_attempts {
                    return self.give_up(job, job.attempts).await;
                }
                let prepared = match self.prepare(job, &report).await {
                    Ok(prepared) => prepared,
                    Err(BuildError(reason)) => return self.fail(job, reason).await,
                };
                // From here on the stored message counts, so a retry delivers the same bytes.
                match ticket.probe {
                    true => {
                        // The job first: a message is never stored for a job discarded meanwhile.
                        let job = self.count(job, true, counted).await?;
                        let message = self.store.record_prepared(&job, prepared).await?;
                        (job, message)
                    }
                    false => {
                        let stored = self.store.begin_attempt_with_message(job, prepared).await?;
                        counted.store(true, Ordering::SeqCst);
                        stored
                    }
                }
            }
        };
        if !again && job.attempts > self.settings.max_attempts {
            return self.give_up(&job, job.attempts - 1).await;
        }
        let job = &job;
        let delivery = Delivery {
            idempotency_key: report.idempotency_key.clone(),
            module: self.module.to_string(),
            report_id: report.key.id.clone(),
            message_uuid: message.message_uuid,
            content_type: message.content_type,
            body: message.body,
            signature: message.signature,
            sender: message.sender,
        };
        let submitted = ticket
            .call(
                self.settings.transport_timeout(),
                self.transport.submit(delivery),
                &*self.events,
            )
            .await;
        let now = Utc::now();
        let (transport_ref, next) = match submitted {
            // An acceptance from an authority without an inbox would wait for an acknowledgement
            // nobody collects: the transport is confused, and delivering again harms nothing.
            Ok(Answer::AwaitingAck(_)) if self.transport.inbox().is_none() => {
                let confused = TransportError::Transient(format!(
                    "{} accepted the delivery for a later acknowledgement, but has no inbox",
                    self.transport.name()
                ));
                return self.retry_later(job, job.attempts, confused).await;
            }
            Ok(Answer::AwaitingAck(accepted)) => {
                tracing::debug!(duplicate = accepted.duplicate, again, "delivery accepted");
                let resend_at = after(now, self.settings.ack_timeout());
                (
                    Some(accepted.transport_ref),
                    AfterDelivery::AwaitAck { resend_at },
                )
            }
            Ok(Answer::Finished(finished)) => {
                tracing::debug!(duplicate = finished.duplicate, again, "delivery decided");
                (
                    finished.transport_ref,
                    AfterDelivery::Finished(finished.outcome),
                )
            }
            // Transient: the authority may take it later. Refused: nothing was sent for want of
            // the sender's credentials, which an operator may deposit meanwhile. An unknown
            // cursor is no answer to a delivery; a transport that gives one anyway is confused.
            // Retrying fails no report wrongly in any case.
            Err(e) => return self.retry_later(job, job.attempts, e).await,
        };
        let ended = self
            .store
            .record_delivered(job, self.transport.name(), transport_ref, now, next)
            .await?;
        Ok(match ended {
            Some(report) => {
                self.endings.report_finished(&report);
                JobDone::Finished {
                    failed: report.failure.is_some(),
                }
            }
            None => JobDone::Progressed,
        })
    }

    /// Counts an attempt (or, for a probe, only checks that the job is still there) and returns
    /// the job as stored.
    async fn count(&self, job: &Job, probe: bool, counted: &AtomicBool) -> StoreResult<Job> {
        if probe {
            return match self.store.job(job.id).await? {
                Some(stored) if stored.same_turn(job) => Ok(stored),
                _ => Err(StoreError::NotFound(format!("job {} as read", job.id))),
            };
        }
        let job = self.store.begin_attempt(job).await?;
        counted.store(true, Ordering::SeqCst);
        Ok(job)
    }

    #[tracing::instrument(skip_all, fields(report = %job.report, job = job.id))]
    async fn prepare(&self, job: &Job, report: &Report) -> Result<PreparedMessage, BuildError> {
        let built = self.builder.build(report)?;
        let signature = self.signer.sign(report, &built.body).await?;
        Ok(built.signed(signature))
    }

    async fn give_up(&self, job: &Job, attempts: u32) -> StoreResult<JobDone> {
        let last = job.last_error.as_deref().unwrap_or("no error recorded");
        let reason = format!("delivery failed after {attempts} attempts: {last}");
        self.fail(job, reason).await
    }

    async fn fail(&self, job: &Job, reason: String) -> StoreResult<JobDone> {
        let outcome = Outcome::Failure { reason };
        let report = self.store.record_outcome(job, outcome, Utc::now()).await?;
        // Only once the FAILURE is stored: a job finished elsewhere returned above.
        self.endings.report_finished(&report);
        Ok(JobDone::Finished { failed: true })
    }

    async fn retry_later(
        &self,
        job: &Job,
        attempts: u32,
        error: TransportError,
    ) -> StoreResult<JobDone> {
        self.events.delivery_retried(&self.module);
        let delay = self.settings.backoff(attempts);
        tracing::info!(report = %job.report, job = job.id, %error, ?delay, "transient error; retrying later");
        let next = after(Utc::now(), delay);
        self.store
            .reschedule(job, next, Some(error.to_string()))
            .await?;
        Ok(JobDone::Progressed)
    }

    /// After a panic the job is still in the outbox; put it back with a backoff and the panic as
    /// its last error, so it neither spins nor fails without a reason. A panic before the store
    /// counted the attempt (in the builder, say) is counted now, so that a message that can never
    /// be built still runs out of attempts. Holds the claim until then, so that nobody works the
    /// job meanwhile.
    async fn after_panic(
        self: Arc<Self>,
        job: Job,
        message: String,
        claim: InFlightGuard,
        counted: bool,
    ) {
        let attempts = job.attempts.saturating_add(1);
        let next = after(Utc::now(), self.settings.backoff(attempts));
        let recorded = match counted {
            true => Ok(()),
            false => self.store.begin_attempt(&job).await.map(drop),
        };
        let recorded = match recorded {
            Ok(()) => self.store.reschedule(&job, next, Some(message)).await,
            Err(e) => Err(e),
        };
        if let Err(e) = recorded {
            tracing::warn!(job = job.id, error = %e, "could not reschedule a job after a panic");
        }
        drop(claim);
    }
}

/// Supervised actor working one module's jobs.
pub(crate) struct ModuleActor {
    worker: Arc<Worker>,
    in_flight: Arc<InFlight>,
    sup: Supervision,
    heartbeat: Duration,
}

impl ModuleActor {
    pub(crate) fn new(worker: Arc<Worker>, in_flight: Arc<InFlight>, sup: Supervision) -> Self {
        let heartbeat = worker.settings.scan_interval();
        ModuleActor {
            worker,
            in_flight,
            sup,
            heartbeat,
        }
    }

    fn tick(&mut self) {
        let backlog = self.in_flight.module_count(&self.worker.module);
        self.sup.on_tick(Some(backlog));
    }
}

impl Actor for ModuleActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            // ctx.wait holds the mailbox: jobs queue up (they are in the outbox anyway).
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        self.tick();
        ctx.run_interval(self.heartbeat, |act, _| act.tick());
    }
}

impl Supervised for ModuleActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        // The context dropped every job future; their claims are released with them.
        self.sup.on_restart();
    }
}

impl Handler<RunJob> for ModuleActor {
    type Result = ResponseActFuture<Self, JobDone>;

    fn handle(&mut self, msg: RunJob, _: &mut Self::Context) -> Self::Result {
        let RunJob { job, claim } = msg;
        let worker = Arc::clone(&self.worker);
        let counted = Arc::new(AtomicBool::new(false));
        let work = Arc::clone(&worker).run(job.clone(), Arc::clone(&counted));
        let work = AssertUnwindSafe(work).catch_unwind();
        Box::pin(
            work.into_actor(self)
                .map(move |result, act, ctx| match result {
                    // An ended report was counted in the health entry where it ended.
                    Ok(done) => {
                        drop(claim);
                        done
                    }
                    Err(payload) => {
                        let message = panic_message(&*payload);
                        act.sup.on_panic(message.clone());
                        // Outside the context: the restart below drops everything spawned in it.
                        let counted = counted.load(Ordering::SeqCst);
                        actix_rt::spawn(worker.after_panic(job, message, claim, counted));
                        ctx.stop();
                        JobDone::Panicked
                    }
                }),
        )
    }
}
