//! A circuit breaker per transport: after `failures` transient faults in a row the transport is
//! left alone for `open_for` (open), then one probe is let through (half-open); its success closes
//! the breaker, its failure opens it again. Jobs the breaker refuses wait in memory (no store
//! write, no attempt counted), and the probe counts as no attempt either, so a dead authority
//! costs neither a retry storm nor failed reports, and the backlog drains once it answers again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use meldewerk_transports::TransportError;
use serde::Serialize;

use crate::events::EngineEvents;

/// State of a breaker, as operators see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are held back until the open period ends.
    Open,
    /// One probe call is allowed; its outcome decides.
    HalfOpen,
}

/// What operators see of one transport: its breaker and how its calls went.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct TransportHealth {
    /// Transport name, e.g. `xpersonenstand`.
    pub name: String,
    /// Breaker state.
    pub breaker: BreakerState,
    /// Transient faults in a row since the last answer.
    pub consecutive_failures: u32,
    /// When the breaker last opened.
    #[schema(required = true)]
    pub opened_at: Option<DateTime<Utc>>,
    /// Calls made (deliveries and acknowledgement polls).
    pub calls: u64,
    /// Calls that ended in a transient fault.
    pub failures: u64,
    /// Mean duration of the last calls in milliseconds (exponentially weighted).
    pub latency_ms: f64,
    /// The last transient fault.
    #[schema(required = true)]
    pub last_error: Option<String>,
    /// When the last transient fault happened: with `consecutive_failures` at 0 the transport
    /// has answered since, so the error is history rather than the present.
    #[schema(required = true)]
    pub last_error_at: Option<DateTime<Utc>>,
}

struct State {
    health: TransportHealth,
    open_until: Option<Instant>,
    probe_in_flight: bool,
}

/// One transport's breaker. Shared by every module delivering through the transport.
pub(crate) struct Breaker {
    failures: u32,
    open_for: Duration,
    state: Mutex<State>,
}

/// A call may not go through now; try again at `retry_at`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) retry_at: Instant,
}

/// Weight of the newest call in the latency mean.
const LATENCY_WEIGHT: f64 = 0.2;

impl Breaker {
    pub(crate) fn new(name: &str, failures: u32, open_for: Duration) -> Self {
        Breaker {
            failures: failures.max(1),
            open_for,
            state: Mutex::new(State {
                health: TransportHealth {
                    name: name.to_owned(),
                    breaker: BreakerState::Closed,
                    consecutive_failures: 0,
                    opened_at: None,
                    calls: 0,
                    failures: 0,
                    latency_ms: 0.0,
                    last_error: None,
                    last_error_at: None,
                },
                open_until: None,
                probe_in_flight: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a call may go through now, and whether it is the probe of a half-open breaker.
    /// In half-open state only one call (the probe) at a time is let through.
    pub(crate) fn admit(&self, now: Instant) -> Result<bool, Refused> {
        let mut state = self.lock();
        match state.health.breaker {
            BreakerState::Closed => Ok(false),
            BreakerState::Open => match state.open_until {
                Some(until) if now < until => Err(Refused { retry_at: until }),
                _ => {
                    state.health.breaker = BreakerState::HalfOpen;
                    state.probe_in_flight = true;
                    Ok(true)
                }
            },
            BreakerState::HalfOpen if state.probe_in_flight => Err(Refused {
                // The probe's answer decides soon; look again after a short while.
                retry_at: now + self.open_for.min(Duration::from_secs(1)),
            }),
            BreakerState::HalfOpen => {
                state.probe_in_flight = true;
                Ok(true)
            }
        }
    }

    /// The transport answered (accepted, acknowledged, pending or refused for good).
    pub(crate) fn answered(&self, took: Duration) {
        let mut state = self.lock();
        Self::count(&mut state, took);
        state.health.consecutive_failures = 0;
        state.health.breaker = BreakerState::Closed;
        state.open_until = None;
        state.probe_in_flight = false;
    }

    /// The call ended in a transient fault; `probe` when the call was the half-open breaker's
    /// probe. Returns `true` when this opened the breaker.
    pub(crate) fn failed(&self, took: Duration, error: &str, now: Instant, probe: bool) -> bool {
        let mut state = self.lock();
        Self::count(&mut state, took);
        state.health.failures += 1;
        state.health.consecutive_failures = state.health.consecutive_failures.saturating_add(1);
        state.health.last_error = Some(error.to_owned());
        state.health.last_error_at = Some(Utc::now());
        let opens = match state.health.breaker {
            BreakerState::HalfOpen => probe,
            BreakerState::Closed => state.health.consecutive_failures >= self.failures,
            BreakerState::Open => false,
        };
        // Only the probe's own outcome frees the probe slot; a late answer to a call admitted
        // before the breaker opened says nothing about the probe.
        if probe {
            state.probe_in_flight = false;
        }
        if opens {
            state.health.breaker = BreakerState::Open;
            state.health.opened_at = Some(Utc::now());
            state.open_until = Some(now + self.open_for);
        }
        opens
    }

    fn count(state: &mut State, took: Duration) {
        state.health.calls += 1;
        let ms = took.as_secs_f64() * 1000.0;
        state.health.latency_ms = if state.health.calls == 1 {
            ms
        } else {
            LATENCY_WEIGHT * ms + (1.0 - LATENCY_WEIGHT) * state.health.latency_ms
        };
    }

    /// What operators see.
    pub(crate) fn health(&self) -> TransportHealth {
        self.lock().health.clone()
    }

    /// A job that was admitted but never called the transport (it failed before, or was done
    /// elsewhere) gives its probe back, so that a half-open breaker does not wait for it forever.
    fn release(&self) {
        self.lock().probe_in_flight = false;
    }
}

/// Leave to call the transport for one job. Dropped without an outcome, it gives back the probe
/// of a half-open breaker.
pub(crate) struct Ticket {
    breaker: Arc<Breaker>,
    settled: AtomicBool,
    /// The probe of a half-open breaker: it asks whether the transport is back, and is not
    /// counted as one of the job's attempts (or one job would use them all up probing).
    pub(crate) probe: bool,
}

impl Ticket {
    /// Asks `breaker` for leave to call now.
    pub(crate) fn admit(breaker: &Arc<Breaker>, now: Instant) -> Result<Ticket, Refused> {
        let probe = breaker.admit(now)?;
        Ok(Ticket {
            breaker: Arc::clone(breaker),
            settled: AtomicBool::new(false),
            probe,
        })
    }

    /// The transport answered.
    pub(crate) fn answered(&self, took: Duration) {
        self.settled.store(true, Ordering::SeqCst);
        self.breaker.answered(took);
    }

    /// The call ended in a transient fault; `true` when this opened the breaker.
    pub(crate) fn failed(&self, took: Duration, error: &str) -> bool {
        self.settled.store(true, Ordering::SeqCst);
        self.breaker.failed(took, error, Instant::now(), self.probe)
    }

    /// The breaker's transport name.
    pub(crate) fn transport(&self) -> String {
        self.breaker.lock().health.name.clone()
    }

    /// Makes the transport call this ticket admits: bounded by `limit` (a call that hangs is a
    /// transient fault like any other, so it neither blocks a half-open breaker's probe nor a job
    /// for good), timed, and reported to the breaker; a breaker that opens is an alert.
    pub(crate) async fn call<T>(
        &self,
        limit: Duration,
        call: impl std::future::Future<Output = Result<T, TransportError>>,
        events: &dyn EngineEvents,
    ) -> Result<T, TransportError> {
        let started = Instant::now();
        let result = timed(limit, call).await;
        let took = started.elapsed();
        match &result {
            Err(TransportError::Transient(error)) => {
                if self.failed(took, error) {
                    let transport = self.transport();
                    tracing::warn!(%transport, %error, "circuit breaker opened");
                    events.breaker_opened(&transport, error);
                }
            }
            _ => self.answered(took),
        }
        result
    }
}

/// A transport call bounded by `limit`: a call that hangs is a transient fault like any other.
pub(crate) async fn timed<T>(
    limit: Duration,
    call: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(TransportError::Transient(format!(
            "no answer within {} s",
            limit.as_secs()
        ))),
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.probe && !self.settled.load(Ordering::SeqCst) {
            self.breaker.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn opens_after_the_failures_in_a_row_and_an_answer_resets_the_count() {
        let breaker = Breaker::new("t", 3, Duration::from_secs(10));
        let now = Instant::now();
        assert!(!breaker.failed(MS, "down", now, false));
        assert!(!breaker.failed(MS, "down", now, false));
        breaker.answered(MS);
        assert!(!breaker.failed(MS, "down", now, false));
        assert!(!breaker.failed(MS, "down", now, false));
        assert!(
            breaker.failed(MS, "down", now, false),
            "third in a row opens"
        );
        let health = breaker.health();
        assert_eq!(health.breaker, BreakerState::Open);
        assert_eq!((health.calls, health.failures), (6, 5));
        assert_eq!(
            breaker.admit(now),
            Err(Refused {
                retry_at: now + Duration::from_secs(10)
            })
        );
    }

    #[test]
    fn only_the_probe_frees_the_probe_slot() {
        let breaker = Arc::new(Breaker::new("t", 1, Duration::from_secs(1)));
        let now = Instant::now();
        let stale = Ticket::admit(&breaker, now).unwrap();
        assert!(!stale.probe);
        breaker.failed(MS, "down", now, false);
        let later = now + Duration::from_secs(2);
        let probe = Ticket::admit(&breaker, later).unwrap();
        assert!(probe.probe);
        drop(stale);
        assert!(Ticket::admit(&breaker, later).is_err(), "still one probe");
        drop(probe);
        assert!(Ticket::admit(&breaker, later).is_ok());
    }

    #[test]
    fn a_ticket_dropped_without_a_call_gives_the_probe_back() {
        let breaker = Arc::new(Breaker::new("t", 1, Duration::from_secs(1)));
        let now = Instant::now();
        breaker.failed(MS, "down", now, false);
        let later = now + Duration::from_secs(2);
        let probe = Ticket::admit(&breaker, later).unwrap();
        assert!(Ticket::admit(&breaker, later).is_err());
        drop(probe);
        assert!(Ticket::admit(&breaker, later).is_ok());
    }

    #[test]
    fn half_open_lets_one_probe_through_which_decides() {
        let breaker = Breaker::new("t", 1, Duration::from_secs(10));
        let now = Instant::now();
        assert!(breaker.failed(MS, "down", now, false));
        let later = now + Duration::from_secs(11);
        assert_eq!(breaker.admit(later), Ok(true), "the probe");
        assert_eq!(breaker.health().breaker, BreakerState::HalfOpen);
        assert!(breaker.admit(later).is_err(), "only one probe at a time");
        assert!(
            breaker.failed(MS, "still down", later, true),
            "a failed probe opens again"
        );
        assert!(breaker.admit(later).is_err());
        let much_later = later + Duration::from_secs(11);
        assert_eq!(breaker.admit(much_later), Ok(true));
        breaker.answered(MS);
        assert_eq!(breaker.health().breaker, BreakerState::Closed);
        assert_eq!(breaker.admit(much_later), Ok(false));
        assert_eq!(breaker.admit(much_later), Ok(false));
    }
}
