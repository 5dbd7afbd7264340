//! The section `[transports.demis]`: how the simulated reporting system behaves, which notifier
//! facilities it knows, and the certificates of both ends of the TLS connection (the simulator
//! as its own process, and the service's client in `url` mode).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How the simulated reporting system behaves and which certificates the two ends use. Every
/// field is optional in configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DemisConfig {
    /// Extra time every submit takes, in milliseconds, to imitate a slow reporting system.
    /// Default 0.
    pub latency_ms: u64,
    /// Betriebsstättennummern (BSNR) of the facilities that may send notifications (laboratory
    /// and disease notifications name their notifier by it). Default: those of the tests and of
    /// the DEMIS examples, `123456789` and `98765430`.
    pub known_bsnr: Vec<String>,
    /// Location ids of the hospital locations that may send bed occupancy reports. Default:
    /// `987654` (tests and the DEMIS example).
    pub known_location_ids: Vec<String>,
    /// Institution codes (IK) a bed occupancy report may name beside its location. A report
    /// without an IK is not refused for it. Default: `261101015`.
    pub known_ik: Vec<String>,
    /// Name printed on receipts as the confirming authority.
    pub authority_name: String,
    /// `meldewerk simulate demis`: the server's certificate chain (PEM, own certificate first).
    pub server_certificate: Option<PathBuf>,
    /// `meldewerk simulate demis`: the server's private key (PEM).
    pub server_key: Option<PathBuf>,
    /// The CA (PEM) both ends trust: the simulator process takes only client certificates that
    /// chain to it, and the service's client (`url` mode) takes only a server certificate that
    /// chains to it. Required in `url` mode and by the simulator's process.
    pub ca: Option<PathBuf>,
    /// `url` mode: a certificate chain (PEM) presented for deliveries that name no sending
    /// facility; one that names a facility always presents the certificate deposited for it.
    pub client_certificate: Option<PathBuf>,
    /// `url` mode: the private key (PEM) of `client_certificate`; both or neither.
    pub client_key: Option<PathBuf>,
}

impl Default for DemisConfig {
    fn default() -> Self {
        DemisConfig {
            latency_ms: 0,
            known_bsnr: vec!["123456789".to_owned(), "98765430".to_owned()],
            known_location_ids: vec!["987654".to_owned()],
            known_ik: vec!["261101015".to_owned()],
            authority_name: "Robert Koch-Institut, DEMIS (simuliert)".to_owned(),
            server_certificate: None,
            server_key: None,
            ca: None,
            client_certificate: None,
            client_key: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_keys_take_defaults_and_unknown_keys_are_refused() {
        let config: DemisConfig =
            serde_json::from_value(serde_json::json!({"known_bsnr": ["111111111"]})).unwrap();
        assert_eq!(config.known_bsnr, ["111111111"]);
        assert_eq!(config.known_location_ids, ["987654"]);
        assert!(
            serde_json::from_value::<DemisConfig>(serde_json::json!({"ack_delay_ms": 1})).is_err()
        );
    }
}
