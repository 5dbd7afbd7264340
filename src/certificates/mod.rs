//! Facilities' client certificates: deposited per site (the facility's BSNR) and environment
//! (test or production) from a PKCS#12 file and its passphrase, kept with the private key
//! wrapped under the master key, and handed to a transport as a rustls client configuration
//! that presents the certificate ([`client_tls`]).
//!
//! The passphrase opens the file once, at the deposit, and is not kept; nothing of the key is
//! ever logged. The command line (`meldewerk certificate …`, [`CertificateCommand`]) and the
//! operator API (`routes/admin/certificates.rs`) run the same functions here. Transports
//! present them per delivery through [`DepositedCertificates`].

mod command;
mod identity;
mod pkcs12;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use meldewerk_storage::{Bsnr, Environment, FacilityCertificate, NotNineDigits, Store, StoreError};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

pub use command::CertificateCommand;
pub(crate) use identity::DepositedCertificates;

use crate::crypto::{MasterKey, CERTIFICATE_KEY};

/// Largest PKCS#12 file taken: a key and a chain of a few certificates take some kilobytes.
pub(crate) const MAX_PKCS12_BYTES: usize = 64 * 1024;
/// Longest passphrase taken, in characters.
pub(crate) const MAX_PASSPHRASE_CHARS: usize = 1024;

/// Parses `test` or `production`, as URLs and the command line name the environments.
pub(crate) fn parse_environment(text: &str) -> Result<Environment, CertificateError> {
    match text {
        "test" => Ok(Environment::Test),
        "production" => Ok(Environment::Production),
        _ => Err(CertificateError::InvalidEnvironment),
    }
}

/// The site and environment as a URL or the command line names them; every problem of the two.
pub(crate) fn parse_site(
    bsnr: &str,
    environment: &str,
) -> Result<(Bsnr, Environment), Vec<CertificateError>> {
    match (Bsnr::parse(bsnr), parse_environment(environment)) {
        (Ok(bsnr), Ok(environment)) => Ok((bsnr, environment)),
        (bsnr, environment) => Err([bsnr.err().map(CertificateError::from), environment.err()]
            .into_iter()
            .flatten()
            .collect()),
    }
}

/// No certificate is deposited for a site and environment: a transport sends nothing without
/// one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no certificate is deposited for BSNR {bsnr} in the {environment} environment")]
pub struct CertificateMissing {
    /// The site.
    pub bsnr: Bsnr,
    /// The environment asked for.
    pub environment: Environment,
}

/// Why a certificate was not deposited or removed. The messages are what operators read, on the
/// command line and in the operator API's `errors`; none quotes the passphrase or key material.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CertificateError {
    /// The site is not 9 digits.
    #[error("bsnr {0}")]
    InvalidBsnr(#[from] NotNineDigits),
    /// The environment is neither `test` nor `production`.
    #[error("environment must be test or production")]
    InvalidEnvironment,
    /// The file is over [`MAX_PKCS12_BYTES`].
    #[error("the PKCS#12 file must be at most {MAX_PKCS12_BYTES} bytes")]
    TooLarge,
    /// The passphrase is over [`MAX_PASSPHRASE_CHARS`].
    #[error("the passphrase must be at most {MAX_PASSPHRASE_CHARS} characters")]
    PassphraseTooLong,
    /// The bytes are no PKCS#12 file.
    #[error("the file is not a PKCS#12 file")]
    NotPkcs12,
    /// The passphrase does not open the file.
    #[error("the passphrase does not open the PKCS#12 file")]
    WrongPassphrase,
    /// The file is encrypted with a scheme that is not supported (MD5-based ones).
    #[error("the PKCS#12 file is encrypted with a scheme that is not supported; export it with AES (PBES2) or 3DES")]
    UnsupportedEncryption,
    /// The file holds no private key together with its certificate.
    #[error("the PKCS#12 file holds no private key with its certificate")]
    NoKeyAndCertificate,
    /// The file holds more than one key with a certificate: which one is the facility's?
    #[error("the PKCS#12 file holds more than one private key with a certificate; deposit a file with one")]
    SeveralKeys,
    /// The certificate's validity has ended.
    #[error("the certificate expired at {}", .0.to_rfc3339())]
    Expired(DateTime<Utc>),
    /// The key is not the one of the (first) certificate.
    #[error("the private key is not the key of the certificate")]
    KeyMismatch,
    /// rustls (ring) cannot sign with the key's algorithm.
    #[error("the private key's algorithm cannot be used for TLS (RSA, ECDSA P-256 or P-384, or Ed25519 can)")]
    UnsupportedKey,
    /// Nothing to remove.
    #[error(transparent)]
    Missing(#[from] CertificateMissing),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What operators are shown of a deposited certificate: never the key, nor the chain.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CertificateSummary {
    /// The site.
    pub bsnr: Bsnr,
    /// `test` or `production`.
    pub environment: Environment,
    /// The certificate's subject.
    pub subject: String,
    /// End of its validity.
    pub not_after: DateTime<Utc>,
    /// SHA-256 of the certificate (DER), lowercase hex.
    #[schema(pattern = "^[0-9a-f]{64}$")]
    pub fingerprint_sha256: String,
    /// When it was deposited.
    pub deposited_at: DateTime<Utc>,
}

impl From<&FacilityCertificate> for CertificateSummary {
    fn from(c: &FacilityCertificate) -> Self {
        CertificateSummary {
            bsnr: c.bsnr.clone(),
            environment: c.environment,
            subject: c.subject.clone(),
            not_after: c.not_after,
            fingerprint_sha256: c.fingerprint_sha256.clone(),
            deposited_at: c.deposited_at,
        }
    }
}

/// A certificate as deposited: what operators are shown, and whether it took the place of one.
#[derive(Debug)]
pub(crate) struct Deposited {
    pub(crate) summary: CertificateSummary,
    pub(crate) replaced: bool,
}

/// The purpose the key of `bsnr` in `environment` is wrapped for: bound to both, so that a
/// stored key opens only where it was deposited.
fn key_purpose(bsnr: &Bsnr, environment: Environment) -> String {
    format!("{CERTIFICATE_KEY}/{bsnr}/{environment}")
}

/// Deposits the certificate in `file` (PKCS#12, opened with `passphrase`) for `bsnr` in
/// `environment`, in place of the one there was. The passphrase is dropped once the file is
/// read.
#[tracing::instrument(skip_all, fields(bsnr = %bsnr, environment = %environment))]
pub(crate) async fn deposit(
    store: &dyn Store,
    master: &MasterKey,
    bsnr: &Bsnr,
    environment: Environment,
    file: Vec<u8>,
    passphrase: String,
) -> Result<Deposited, CertificateError> {
    if file.len() > MAX_PKCS12_BYTES {
        return Err(CertificateError::TooLarge);
    }
    if passphrase.chars().count() > MAX_PASSPHRASE_CHARS {
        return Err(CertificateError::PassphraseTooLong);
    }
    let now = Utc::now();
    // The file's key derivation takes its own iteration count of CPU: off the async workers.
    // Should a parser panic on some malformed file, that file is refused like any unreadable one.
    let contents = tokio::task::spawn_blocking(move || pkcs12::read(&file, &passphrase, now))
        .await
        .map_err(|_| CertificateError::NotPkcs12)??;
    let certificate = FacilityCertificate {
        bsnr: bsnr.clone(),
        environment,
        subject: contents.subject,
        not_after: contents.not_after,
        fingerprint_sha256: contents.fingerprint_sha256,
        key: master.wrap(&key_purpose(bsnr, environment), &contents.key_der),
        chain_der: contents.chain_der,
        deposited_at: now,
    };
    let summary = CertificateSummary::from(&certificate);
    let replaced = store.put_certificate(certificate).await?;
    tracing::info!(replaced, not_after = %summary.not_after, "certificate deposited");
    Ok(Deposited { summary, replaced })
}

/// Every deposited certificate, by site, test before production.
pub(crate) async fn list(store: &dyn Store) -> Result<Vec<CertificateSummary>, StoreError> {
    Ok(store
        .certificates()
        .await?
        .iter()
        .map(CertificateSummary::from)
        .collect())
}

/// Removes the certificate of `bsnr` in `environment`; [`CertificateError::Missing`] if there
/// is none.
pub(crate) async fn remove(
    store: &dyn Store,
    bsnr: &Bsnr,
    environment: Environment,
) -> Result<(), CertificateError> {
    if store.remove_certificate(bsnr, environment).await? {
        Ok(())
    } else {
        Err(missing(bsnr, environment).into())
    }
}

fn missing(bsnr: &Bsnr, environment: Environment) -> CertificateMissing {
    CertificateMissing {
        bsnr: bsnr.clone(),
        environment,
    }
}

/// Why [`client_tls`] has no configuration to give.
#[derive(Debug, thiserror::Error)]
pub enum ClientTlsError {
    /// None is deposited for the site and environment: send nothing.
    #[error(transparent)]
    Missing(#[from] CertificateMissing),
    /// The deposited certificate's validity has ended: a new one must be deposited.
    #[error("the certificate deposited for BSNR {bsnr} in the {environment} environment expired at {}", .not_after.to_rfc3339())]
    Expired {
        /// The site.
        bsnr: Bsnr,
        /// The environment.
        environment: Environment,
        /// When it expired.
        not_after: DateTime<Utc>,
    },
    /// The stored key does not open with this master key, or rustls refuses it.
    #[error("the certificate deposited for BSNR {bsnr} in the {environment} environment cannot be used: {reason}")]
    Unusable {
        /// The site.
        bsnr: Bsnr,
        /// The environment.
        environment: Environment,
        /// Why.
        reason: String,
    },
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What a transport needs to present the facility's certificate of `bsnr` in `environment`: a
/// rustls client configuration (ring, TLS 1.2 and 1.3) trusting `roots` and answering a
/// server's certificate request with the deposited chain, signed with its key. reqwest takes it
/// with `ClientBuilder::use_preconfigured_tls`.
pub async fn client_tls(
    store: &dyn Store,
    master: &MasterKey,
    bsnr: &Bsnr,
    environment: Environment,
    roots: Arc<rustls::RootCertStore>,
) -> Result<rustls::ClientConfig, ClientTlsError> {
    let Some(certificate) = store.certificate(bsnr, environment).await? else {
        return Err(missing(bsnr, environment).into());
    };
    usable(certificate, master, roots)
}

/// The client configuration of a deposited `certificate`, as [`client_tls`] gives it: refused
/// when it expired, or its key does not open or does not sign.
fn usable(
    certificate: FacilityCertificate,
    master: &MasterKey,
    roots: Arc<rustls::RootCertStore>,
) -> Result<rustls::ClientConfig, ClientTlsError> {
    let (bsnr, environment) = (&certificate.bsnr, certificate.environment);
    if certificate.not_after <= Utc::now() {
        return Err(ClientTlsError::Expired {
            bsnr: bsnr.clone(),
            environment,
            not_after: certificate.not_after,
        });
    }
    let unusable = |reason: String| ClientTlsError::Unusable {
        bsnr: bsnr.clone(),
        environment,
        reason,
    };
    let key = master
        .unwrap(&key_purpose(bsnr, environment), &certificate.key)
        .map_err(|e| {
            unusable(format!(
                "its key does not open ({e}): it was wrapped under another master key, or \
                 for another site or environment"
            ))
        })?;
    let chain = certificate
        .chain_der
        .iter()
        .map(|der| CertificateDer::from(der.clone()))
        .collect();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key));
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| unusable(e.to_string()))?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| unusable(e.to_string()))
}
