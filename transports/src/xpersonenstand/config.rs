//! Behaviour knobs of the simulated Standesamt.

use serde::{Deserialize, Serialize};

/// How the simulated Standesamt behaves. Read from configuration (every field is optional there)
/// and changeable at runtime through [`Simulator::set_config`](super::Simulator::set_config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimulatorConfig {
    /// How long after receipt the office takes to decide on a message, in milliseconds; polls
    /// before that answer `Pending`. Default 2000.
    pub ack_delay_ms: u64,
    /// Share of messages the office rejects, from 0.0 (none, the default) to 1.0 (all). Which
    /// messages fail is derived from the idempotency key, so a run is reproducible. Values outside
    /// the range are clamped; NaN counts as 0.0.
    pub failure_rate: f64,
    /// Extra time every submit takes, in milliseconds, to imitate a slow portal. Default 0.
    pub latency_ms: u64,
    /// Whether unsigned messages are refused. Default `true`, like the real office.
    pub require_signature: bool,
    /// Name printed on receipts as the confirming authority.
    pub authority_name: String,
    /// Portal identifier reported with every acknowledgement.
    pub portal: String,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        Self {
            ack_delay_ms: 2000,
            failure_rate: 0.0,
            latency_ms: 0,
            require_signature: true,
            authority_name: "Standesamt Berlin-Mitte (simuliert)".to_owned(),
            portal: "meldewerk-sim-xpersonenstand".to_owned(),
        }
    }
}

impl SimulatorConfig {
    /// `failure_rate` forced into 0.0..=1.0, so that a typo in configuration cannot make the
    /// decision meaningless.
    pub(crate) fn effective_failure_rate(&self) -> f64 {
        if self.failure_rate.is_nan() {
            0.0
        } else {
            self.failure_rate.clamp(0.0, 1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_take_defaults() {
        let config: SimulatorConfig =
            serde_json::from_str(r#"{"failure_rate": 0.25, "ack_delay_ms": 10}"#).unwrap();
        assert_eq!(config.failure_rate, 0.25);
        assert_eq!(config.ack_delay_ms, 10);
        assert!(config.require_signature);
        assert_eq!(config.portal, "meldewerk-sim-xpersonenstand");
    }

    #[test]
    fn failure_rate_is_clamped() {
        let mut config = SimulatorConfig {
            failure_rate: 3.0,
            ..SimulatorConfig::default()
        };
        assert_eq!(config.effective_failure_rate(), 1.0);
        config.failure_rate = -1.0;
        assert_eq!(config.effective_failure_rate(), 0.0);
        config.failure_rate = f64::NAN;
        assert_eq!(config.effective_failure_rate(), 0.0);
    }
}
