//! Supervision helpers shared by every actor: panic isolation, restart intensity, health state.
//!
//! actix's `Supervisor` restarts an actor only when it stops itself; a panic inside a handler would
//! kill it for good. So each actor runs its work inside `catch_unwind`, turns a panic into
//! `ctx.stop()`, and lets [`Supervision`] count the restart the way OTP does: too many restarts in
//! a window mark the actor degraded and slow its restarts down, so that it never spins hot.

use std::any::Any;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::events::{no_events, SharedEvents};
use crate::health::{ActorState, HealthHandle};

/// Pause before a degraded actor starts working again.
pub(crate) const DEGRADED_RESTART_DELAY: Duration = Duration::from_secs(5);

/// Text of a panic payload, for health and logs.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    };
    format!("panic: {text}")
}

/// Restarts within a sliding window.
pub(crate) struct RestartIntensity {
    max_restarts: u32,
    window: Duration,
    recent: VecDeque<Instant>,
}

impl RestartIntensity {
    pub(crate) fn new(max_restarts: u32, window: Duration) -> Self {
        RestartIntensity {
            max_restarts,
            window,
            recent: VecDeque::new(),
        }
    }

    /// Counts a restart now; `true` when the intensity is exceeded.
    pub(crate) fn record(&mut self) -> bool {
        self.recent.push_back(Instant::now());
        self.exceeded()
    }

    /// Whether more than `max_restarts` happened within the window up to now.
    pub(crate) fn exceeded(&mut self) -> bool {
        let now = Instant::now();
        while let Some(first) = self.recent.front() {
            if now.duration_since(*first) > self.window {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        self.recent.len() > self.max_restarts as usize
    }
}

/// Failures in a row of an actor's periodic work after which it reads as degraded: one or two
/// are a blip that the next tick usually mends, more is an outage operators must hear about.
pub(crate) const FAILURES_BEFORE_DEGRADED: u32 = 3;

/// One actor's side of supervision: its health entry and its restart history. Lives in the actor
/// value, which actix keeps across supervised restarts.
pub(crate) struct Supervision {
    pub(crate) health: HealthHandle,
    name: String,
    intensity: RestartIntensity,
    pause_next_start: bool,
    events: SharedEvents,
    /// Whether `events` was told about the current degradation (told once per degradation).
    degraded_told: bool,
    /// Failures in a row of the actor's periodic work ([`Supervision::periodic_work_failed`]).
    failures_in_a_row: u32,
    /// The actor runs but its work keeps failing ([`Supervision::work_failing`]): degraded until
    /// the work succeeds again, whatever its restarts say.
    work_failing: bool,
}

impl Supervision {
    pub(crate) fn new(
        health: HealthHandle,
        name: impl Into<String>,
        max_restarts: u32,
        window: Duration,
    ) -> Self {
        Supervision {
            health,
            name: name.into(),
            intensity: RestartIntensity::new(max_restarts, window),
            pause_next_start: false,
            events: no_events(),
            degraded_told: false,
            work_failing: false,
            failures_in_a_row: 0,
        }
    }

    /// Tells `events` when this actor becomes degraded.
    pub(crate) fn with_events(mut self, events: SharedEvents) -> Self {
        self.events = events;
        self
    }

    /// A job or tick of this actor panicked; the caller stops the actor next.
    pub(crate) fn on_panic(&self, message: String) {
        tracing::error!(actor = %self.name, error = %message, "actor panicked; restarting it");
        self.health.update(|h| {
            h.last_error = Some(message);
            h.state = ActorState::Restarting;
        });
    }

    /// Called from `Supervised::restarting`.
    pub(crate) fn on_restart(&mut self) {
        let degraded = self.intensity.record();
        let mut last_error = None;
        self.health.update(|h| {
            last_error.clone_from(&h.last_error);
            h.restarts += 1;
            h.state = if degraded {
                ActorState::Degraded
            } else {
                ActorState::Restarting
            };
        });
        if degraded {
            tracing::error!(
                actor = %self.name,
                "actor restarted more often than the restart intensity allows; marked degraded, \
                 restarting after {:?}",
                DEGRADED_RESTART_DELAY
            );
            self.pause_next_start = true;
            if !std::mem::replace(&mut self.degraded_told, true) {
                self.events
                    .actor_degraded(&self.name, last_error.as_deref());
            }
        }
    }

    /// Called from `Actor::started`; returns how long to pause before working, if at all.
    pub(crate) fn on_started(&mut self) -> Option<Duration> {
        if std::mem::take(&mut self.pause_next_start) {
            return Some(DEGRADED_RESTART_DELAY);
        }
        self.health.update(|h| {
            if h.state != ActorState::Degraded {
                h.state = ActorState::Running;
            }
        });
        None
    }

    /// The actor runs, but cannot do what it is for (the acknowledgement collector whose inbox
    /// keeps failing): marks it degraded with `error`, and tells `events` once per episode.
    pub(crate) fn work_failing(&mut self, error: &str) {
        self.work_failing = true;
        self.health.update(|h| {
            h.last_error = Some(error.to_owned());
            h.state = ActorState::Degraded;
        });
        if !std::mem::replace(&mut self.degraded_told, true) {
            tracing::error!(actor = %self.name, %error, "actor cannot do its work; marked degraded");
            self.events.actor_degraded(&self.name, Some(error));
        }
    }

    /// The actor's work succeeds again after [`Supervision::work_failing`]: it runs normally
    /// again, unless its restarts still keep it degraded.
    pub(crate) fn work_recovered(&mut self) {
        if std::mem::take(&mut self.work_failing) {
            self.recover_if_clear();
        }
    }

    /// The actor's periodic work (an inbox fetch, a mailbox sync) failed with `error`: after
    /// [`FAILURES_BEFORE_DEGRADED`] failures in a row, or at once for one waiting will not mend
    /// (`lasting`), the actor is degraded ([`Supervision::work_failing`]); before, `error` is
    /// its last error. Answers whether this failure begins a run (the one worth a log line).
    pub(crate) fn periodic_work_failed(&mut self, error: String, lasting: bool) -> bool {
        self.failures_in_a_row = self.failures_in_a_row.saturating_add(1);
        if lasting || self.failures_in_a_row >= FAILURES_BEFORE_DEGRADED {
            self.work_failing(&error);
        } else {
            self.health.set_error(error);
        }
        self.failures_in_a_row == 1
    }

    /// The actor's periodic work succeeded: it recovers ([`Supervision::work_recovered`]).
    /// Answers whether this ends a run of failures (worth a log line).
    pub(crate) fn periodic_work_succeeded(&mut self) -> bool {
        self.work_recovered();
        std::mem::take(&mut self.failures_in_a_row) > 0
    }

    /// Called every tick: the actor is alive; a degraded actor recovers once its window is clear.
    pub(crate) fn on_tick(&mut self, backlog: Option<usize>) {
        self.recover_if_clear();
        self.health.heartbeat(backlog);
    }

    /// Back to running once neither restarts nor failing work keep the actor degraded.
    fn recover_if_clear(&mut self) {
        let recovered = !self.intensity.exceeded() && !self.work_failing;
        if recovered {
            self.degraded_told = false;
        }
        self.health.update(|h| {
            if h.state == ActorState::Degraded && recovered {
                h.state = ActorState::Running;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::HealthRegistry;
    use std::sync::Arc;

    #[test]
    fn intensity_counts_within_window() {
        let mut i = RestartIntensity::new(2, Duration::from_secs(60));
        assert!(!i.record());
        assert!(!i.record());
        assert!(i.record());
        let mut zero = RestartIntensity::new(1, Duration::ZERO);
        std::thread::sleep(Duration::from_millis(2));
        assert!(!zero.record());
        std::thread::sleep(Duration::from_millis(2));
        assert!(!zero.record());
    }

    #[test]
    fn exceeding_intensity_degrades_and_pauses() {
        let registry = Arc::new(HealthRegistry::default());
        let mut s = Supervision::new(registry.register("x"), "x", 1, Duration::from_secs(60));
        s.on_restart();
        assert_eq!(s.on_started(), None);
        assert_eq!(registry.snapshot()[0].state, ActorState::Running);
        s.on_restart();
        assert_eq!(registry.snapshot()[0].state, ActorState::Degraded);
        assert_eq!(s.on_started(), Some(DEGRADED_RESTART_DELAY));
        assert_eq!(s.on_started(), None);
        assert_eq!(registry.snapshot()[0].state, ActorState::Degraded);
        assert_eq!(registry.snapshot()[0].restarts, 2);
    }

    #[derive(Default)]
    struct Told(std::sync::Mutex<Vec<(String, Option<String>)>>);

    impl crate::EngineEvents for Told {
        fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
            let entry = (actor.to_string(), last_error.map(str::to_string));
            self.0.lock().unwrap().push(entry);
        }
    }

    #[test]
    fn degradation_is_told_once_with_the_last_error() {
        let registry = Arc::new(HealthRegistry::default());
        let told = Arc::new(Told::default());
        let mut s = Supervision::new(registry.register("x"), "x", 0, Duration::from_secs(60))
            .with_events(told.clone());
        s.on_panic("panic: boom".into());
        s.on_restart();
        s.on_restart();
        let expected = vec![("x".to_string(), Some("panic: boom".to_string()))];
        assert_eq!(*told.0.lock().unwrap(), expected);
    }

    #[test]
    fn failing_work_degrades_until_it_succeeds_and_is_told_once_per_episode() {
        let registry = Arc::new(HealthRegistry::default());
        let told = Arc::new(Told::default());
        let mut s = Supervision::new(registry.register("x"), "x", 5, Duration::from_secs(60))
            .with_events(told.clone());
        s.work_failing("down");
        s.on_tick(None);
        s.work_failing("still down");
        let entry = &registry.snapshot()[0];
        assert_eq!(entry.state, ActorState::Degraded);
        assert_eq!(entry.last_error.as_deref(), Some("still down"));
        assert_eq!(
            *told.0.lock().unwrap(),
            vec![("x".into(), Some("down".into()))]
        );

        s.work_recovered();
        assert_eq!(registry.snapshot()[0].state, ActorState::Running);
        s.work_failing("down again");
        assert_eq!(told.0.lock().unwrap().len(), 2, "a new episode is told");
    }

    #[test]
    fn panic_messages_are_readable() {
        let p = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
        assert_eq!(panic_message(&*p), "panic: boom 1");
        let p = std::panic::catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(&*p), "panic: static");
    }
}
