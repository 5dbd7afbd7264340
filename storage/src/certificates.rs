//! The certificates facilities deposit, per site and per environment of the authority: the
//! records the store keeps of them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::WrappedKey;

/// Which of an authority's two environments a facility's certificate is for. The two are kept
/// apart: a certificate deposited for one is never presented to the other.
#[derive(
    Debug,
    Clone,
    Copy,
    Serialize,
    Deserialize,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    /// The authority's test system.
    Test,
    /// The authority's production system.
    Production,
}

impl Environment {
    /// The name as it appears in URLs, on the command line and in stored keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Test => "test",
            Environment::Production => "production",
        }
    }
}

impl std::fmt::Display for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A facility's client certificate for one site and environment, as deposited from a PKCS#12
/// file: the private key wrapped under the master key, the chain in the clear (it is public),
/// and what operators are shown of it. The file's passphrase is never kept.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FacilityCertificate {
    /// The site: the facility's BSNR.
    pub bsnr: crate::Bsnr,
    /// Test or production.
    pub environment: Environment,
    /// Subject of the facility's (first) certificate, e.g. `CN=Klinikum Süd, O=…`.
    pub subject: String,
    /// End of the certificate's validity.
    pub not_after: DateTime<Utc>,
    /// SHA-256 of the certificate's DER encoding, lowercase hex.
    pub fingerprint_sha256: String,
    /// The PKCS#8 (DER) private key, wrapped under the master key for this site and environment.
    pub key: WrappedKey,
    /// The chain as DER, the facility's certificate first, then its issuers as the file held
    /// them.
    #[serde(with = "base64_chain")]
    pub chain_der: Vec<Vec<u8>>,
    /// When it was deposited.
    pub deposited_at: DateTime<Utc>,
}

/// A list of byte strings as a list of base64 texts (see [`crate::base64_bytes`]).
mod base64_chain {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Der(#[serde(with = "crate::base64_bytes")] Vec<u8>);

    pub fn serialize<S: Serializer>(chain: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(chain.iter().map(|der| Der(der.clone())))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        Ok(Vec::<Der>::deserialize(d)?
            .into_iter()
            .map(|Der(der)| der)
            .collect())
    }
}
