//! The section `[transports.egvp]`: how the simulated mailbox server behaves and which accounts
//! it keeps from the start.

use serde::{Deserialize, Serialize};

/// How the simulated mailbox server behaves. Every field is optional in configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EgvpConfig {
    /// Extra time every call (send, list, fetch, delete) takes, in milliseconds. Default 0.
    pub latency_ms: u64,
    /// SAFE-IDs of the accounts the server keeps from the start: senders and recipients of
    /// messages sent through it. An operator's drop into another account creates that one too.
    /// Default: `DE.Justiz.meldewerk-test` (the service's test account) and
    /// `DE.Justiz.ag-musterstadt` (a court).
    pub accounts: Vec<String>,
    /// Name printed on the receipt of a sent message as the confirming server.
    pub authority_name: String,
}

impl Default for EgvpConfig {
    fn default() -> Self {
        EgvpConfig {
            latency_ms: 0,
            accounts: vec![
                "DE.Justiz.meldewerk-test".to_owned(),
                "DE.Justiz.ag-musterstadt".to_owned(),
            ],
            authority_name: "EGVP-Intermediär (simuliert)".to_owned(),
        }
    }
}

impl EgvpConfig {
    /// Why the configuration cannot be used, if it cannot: an account that is no SAFE-ID.
    pub(crate) fn problem(&self) -> Option<String> {
        self.accounts.iter().find_map(|account| {
            crate::mailbox::safe_id_problem(account)
                .map(|problem| format!("transports.egvp.accounts: {account:?}: {problem}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_keys_take_defaults_and_unknown_keys_are_refused() {
        let config: EgvpConfig =
            serde_json::from_value(serde_json::json!({"latency_ms": 5})).unwrap();
        assert_eq!(config.accounts.len(), 2);
        assert_eq!(config.problem(), None);
        assert!(serde_json::from_value::<EgvpConfig>(serde_json::json!({"acounts": []})).is_err());
        let bad = EgvpConfig {
            accounts: vec!["nicht gültig".into()],
            ..EgvpConfig::default()
        };
        assert!(bad.problem().unwrap().contains("SAFE-ID"));
    }
}
