//! Tuning knobs of the engine, read from the server's configuration.

use std::time::Duration;

use serde::Deserialize;

/// How the engine paces, retries, bounds and cleans up its work.
///
/// Every field has a default (see [`EngineSettings::default`]), so a configuration only names what
/// it changes.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct EngineSettings {
    /// How often the outbox is scanned for due jobs, in milliseconds, when nobody calls
    /// [`crate::Engine::wake`]. Also the heartbeat interval of every actor.
    pub scan_interval_ms: u64,
    /// How often each transport's acknowledgement inbox is fetched, in milliseconds. One fetch
    /// collects every acknowledgement since the last one, however many reports wait.
    pub inbox_interval_ms: u64,
    /// How long a delivered message waits for its acknowledgement before it is delivered again
    /// (same bytes, same idempotency key: the transport answers with the original acceptance, or
    /// takes the message if it had lost it), in seconds.
    pub ack_timeout_secs: u64,
    /// Delivery attempts before a report ends in FAILURE. Only a message the transport has not
    /// accepted yet can fail so; one waiting for its acknowledgement stays PENDING.
    pub max_attempts: u32,
    /// Base of the exponential backoff after a transient error, in milliseconds.
    pub backoff_base_ms: u64,
    /// Upper bound of one backoff delay, in milliseconds.
    pub backoff_max_ms: u64,
    /// Jobs one module works on at the same time; more wait in the durable outbox.
    pub max_in_flight: usize,
    /// Restarts within `restart_window_secs` an actor may have before it is marked degraded and
    /// restarted only after a pause.
    pub max_restarts: u32,
    /// Window, in seconds, over which restarts are counted for `max_restarts`.
    pub restart_window_secs: u64,
    /// How often the retention sweep runs, in seconds.
    pub retention_sweep_interval_secs: u64,
    /// Transient faults in a row after which a transport's circuit breaker opens.
    pub breaker_failures: u32,
    /// How long an open breaker leaves its transport alone before one probe, in seconds
    /// (1 second to 1 day).
    pub breaker_open_secs: u64,
    /// Longest a single transport call (delivery or inbox fetch) may take, in seconds;
    /// then it counts as a transient fault.
    pub transport_timeout_secs: u64,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            scan_interval_ms: 200,
            inbox_interval_ms: 500,
            ack_timeout_secs: 3600,
            max_attempts: 8,
            backoff_base_ms: 500,
            backoff_max_ms: 60_000,
            max_in_flight: 64,
            max_restarts: 5,
            restart_window_secs: 60,
            retention_sweep_interval_secs: 3600,
            breaker_failures: 5,
            breaker_open_secs: 30,
            transport_timeout_secs: 30,
        }
    }
}

impl EngineSettings {
    // Zero durations would make interval timers spin, so every interval is at least 1 ms.
    pub(crate) fn scan_interval(&self) -> Duration {
        Duration::from_millis(self.scan_interval_ms.max(1))
    }

    pub(crate) fn inbox_interval(&self) -> Duration {
        Duration::from_millis(self.inbox_interval_ms.max(1))
    }

    /// At least a second (a zero timeout would deliver every message again at once) and at most
    /// a year (so that `now +` it cannot overflow).
    pub(crate) fn ack_timeout(&self) -> Duration {
        Duration::from_secs(self.ack_timeout_secs.clamp(1, 365 * 86_400))
    }

    pub(crate) fn retention_sweep_interval(&self) -> Duration {
        Duration::from_secs(self.retention_sweep_interval_secs).max(Duration::from_millis(1))
    }

    /// Never zero (refused jobs would come back at once) and at most a day (so that `now +`
    /// it cannot overflow).
    pub(crate) fn breaker_open(&self) -> Duration {
        Duration::from_secs(self.breaker_open_secs.clamp(1, 86_400))
    }

    pub(crate) fn transport_timeout(&self) -> Duration {
        Duration::from_secs(self.transport_timeout_secs.max(1))
    }

    pub(crate) fn restart_window(&self) -> Duration {
        Duration::from_secs(self.restart_window_secs)
    }

    /// A job never waits for capacity behind zero slots.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.max(1)
    }

    /// Delay before the next try after `attempts` attempts: "equal jitter", i.e. uniformly
    /// random between half of `base * 2^attempts` (capped) and all of it. The random half keeps
    /// many jobs failing together from retrying in step; the fixed half keeps a retry from
    /// coming at once (full jitter let one come after a millisecond now and then, however long
    /// the operator set the backoff).
    pub(crate) fn backoff(&self, attempts: u32) -> Duration {
        let exp = attempts.min(32);
        let cap = self
            .backoff_base_ms
            .saturating_mul(1u64 << exp)
            .min(self.backoff_max_ms);
        let ms = rand::Rng::gen_range(&mut rand::thread_rng(), cap / 2..=cap);
        Duration::from_millis(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_to_missing_fields() {
        let s: EngineSettings = serde_json::from_str(r#"{"max_attempts": 3}"#).unwrap();
        assert_eq!(s.max_attempts, 3);
        assert_eq!(s.scan_interval_ms, 200);
        assert_eq!(s.max_in_flight, 64);
    }

    #[test]
    fn backoff_stays_between_half_the_cap_and_the_cap() {
        let s = EngineSettings {
            backoff_base_ms: 100,
            backoff_max_ms: 1_000,
            ..EngineSettings::default()
        };
        for attempts in 0..40 {
            let d = s.backoff(attempts);
            let cap = (100u64 << attempts.min(32)).min(1_000);
            assert!(d <= Duration::from_millis(cap), "{attempts}: {d:?}");
            assert!(d >= Duration::from_millis(cap / 2), "{attempts}: {d:?}");
        }
    }
}
