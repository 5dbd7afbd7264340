//! The actor that removes the payload of final reports once their retention time has passed.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::Utc;
use futures::FutureExt;
use meldewerk_storage::Store;

use crate::lead::lead;
use crate::settings::EngineSettings;
use crate::supervise::{panic_message, Supervision};

/// Delay of the first sweep after start: soon, but after start-up work has settled.
const FIRST_SWEEP_DELAY: Duration = Duration::from_secs(1);

/// Supervised actor running the retention sweep of every module that has a retention period.
pub(crate) struct RetentionActor {
    store: Arc<dyn Store>,
    /// Each module with its retention period.
    modules: Vec<(Arc<str>, Duration)>,
    settings: EngineSettings,
    sweeping: bool,
    sup: Supervision,
}

impl RetentionActor {
    pub(crate) fn new(
        store: Arc<dyn Store>,
        modules: Vec<(Arc<str>, Duration)>,
        settings: EngineSettings,
        sup: Supervision,
    ) -> Self {
        RetentionActor {
            store,
            modules,
            settings,
            sweeping: false,
            sup,
        }
    }

    fn sweep(&mut self, ctx: &mut Context<Self>) {
        if self.sweeping || self.modules.is_empty() {
            return;
        }
        self.sweeping = true;
        let now = Utc::now();
        let sweeps: Vec<_> = self
            .modules
            .iter()
            .map(|(module, keep)| (Arc::clone(module), crate::before(now, *keep)))
            .collect();
        let store = Arc::clone(&self.store);
        let (health, interval) = (
            self.sup.health.clone(),
            self.settings.retention_sweep_interval(),
        );
        let work = async move {
            // One node at a time sweeps: the others would find nothing left.
            if !lead(&*store, &health, "retention", interval).await? {
                return Ok(0);
            }
            let mut expired = 0;
            for (module, cutoff) in sweeps {
                expired += store.expire_finished_before(&module, cutoff).await?;
            }
            Ok::<_, meldewerk_storage::StoreError>(expired)
        };
        let work = AssertUnwindSafe(work).catch_unwind().into_actor(self);
        ctx.spawn(work.map(|result, act, ctx| {
            act.sweeping = false;
            match result {
                Ok(Ok(expired)) => {
                    if expired > 0 {
                        tracing::info!(expired, "retention removed the payload of final reports");
                    }
                    act.sup.health.update(|h| h.processed += expired as u64);
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "retention sweep failed");
                    act.sup.health.update(|h| {
                        h.failed += 1;
                        h.last_error = Some(e.to_string());
                    });
                }
                Err(payload) => {
                    act.sup.on_panic(panic_message(&*payload));
                    ctx.stop();
                }
            }
        }));
    }
}

impl Actor for RetentionActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        if let Some(pause) = self.sup.on_started() {
            ctx.wait(actix::clock::sleep(pause).into_actor(self));
        }
        self.sup.on_tick(Some(0));
        ctx.run_interval(self.settings.scan_interval(), |act, _| {
            act.sup.on_tick(None)
        });
        if !self.modules.is_empty() {
            ctx.run_later(FIRST_SWEEP_DELAY, |act, ctx| act.sweep(ctx));
            ctx.run_interval(self.settings.retention_sweep_interval(), |act, ctx| {
                act.sweep(ctx)
            });
        }
    }
}

impl Supervised for RetentionActor {
    fn restarting(&mut self, _: &mut Self::Context) {
        self.sweeping = false;
        self.sup.on_restart();
    }
}
