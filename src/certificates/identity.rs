//! The deposited certificates as transports present them: [`DepositedCertificates`] is the
//! [`Credentials`] every transport's `connect` gets, and the identity it makes presents, for
//! each delivery, the certificate deposited for the delivery's sender (site and environment).
//!
//! The rustls configuration of a certificate is built once and kept while the same certificate
//! stays deposited: each delivery reads the certificate's record (one store read, no key
//! material unwrapped) and compares its fingerprint and deposit time with the kept one, so a
//! certificate deposited anew (by the operator API or the command line) is presented from the
//! next delivery on, and one removed is no longer presented at all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use meldewerk_storage::{Sender, Store};
use meldewerk_transports::tls::{ClientIdentity, Credentials};
use meldewerk_transports::{Delivery, TransportError};
use rustls::{ClientConfig, RootCertStore};

use super::{missing, usable, ClientTlsError};
use crate::crypto::MasterKey;

/// The store and the master key, once open.
struct Keys {
    store: Arc<dyn Store>,
    master: Arc<MasterKey>,
}

/// The facilities' deposited certificates, for the transports. The transports open beside the
/// store (both replay their logs at start-up), so this is made first and bound to the store and
/// the master key ([`DepositedCertificates::bind`]) before the engine delivers anything.
#[derive(Clone, Default)]
pub struct DepositedCertificates {
    keys: Arc<OnceLock<Keys>>,
}

impl DepositedCertificates {
    /// Reads the certificates from `store`, their keys opened with `master`, from now on.
    /// Bound once; a second call changes nothing.
    pub fn bind(&self, store: Arc<dyn Store>, master: Arc<MasterKey>) {
        let _ = self.keys.set(Keys { store, master });
    }
}

impl Credentials for DepositedCertificates {
    fn deposited(&self, roots: Arc<RootCertStore>) -> Arc<dyn ClientIdentity> {
        Arc::new(DepositedIdentity {
            keys: Arc::clone(&self.keys),
            roots,
            built: Mutex::default(),
        })
    }
}

/// Which deposit a kept configuration was built from.
type Deposit = (String, DateTime<Utc>);

/// Presents the certificate deposited for each delivery's sender, trusting `roots`.
struct DepositedIdentity {
    keys: Arc<OnceLock<Keys>>,
    roots: Arc<RootCertStore>,
    /// The configuration of each sender's certificate, with the deposit it was built from.
    built: Mutex<HashMap<Sender, (Deposit, Arc<ClientConfig>)>>,
}

impl DepositedIdentity {
    fn kept(&self, sender: &Sender, deposit: &Deposit) -> Option<Arc<ClientConfig>> {
        let built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        built
            .get(sender)
            .filter(|(kept, _)| kept == deposit)
            .map(|(_, config)| Arc::clone(config))
    }

    fn keep(&self, sender: &Sender, deposit: Deposit, config: &Arc<ClientConfig>) {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        built.insert(sender.clone(), (deposit, Arc::clone(config)));
    }

    fn forget(&self, sender: &Sender) {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        built.remove(sender);
    }
}

/// A certificate that cannot be presented: nothing is sent. Refused, not transient: the
/// reporting system is not at fault, so its circuit breaker stays shut for every other
/// facility, while the engine retries the report with backoff, so that a certificate
/// deposited meanwhile takes it (see docs/decisions.md, "The deposited certificate on the
/// wire").
fn not_sent(e: impl std::fmt::Display) -> TransportError {
    TransportError::Refused(format!("{e}; nothing was sent"))
}

#[async_trait]
impl ClientIdentity for DepositedIdentity {
    async fn client_config(
        &self,
        delivery: &Delivery,
    ) -> Result<Arc<ClientConfig>, TransportError> {
        let Some(sender) = &delivery.sender else {
            return Err(not_sent("the message names no sending facility"));
        };
        let Some(keys) = self.keys.get() else {
            return Err(not_sent("the certificates are not readable yet"));
        };
        let (bsnr, environment) = (&sender.bsnr, sender.environment);
        let certificate = keys
            .store
            .certificate(bsnr, environment)
            .await
            .map_err(|e| not_sent(ClientTlsError::from(e)))?;
        let Some(certificate) = certificate else {
            self.forget(sender);
            return Err(not_sent(missing(bsnr, environment)));
        };
        if certificate.not_after <= Utc::now() {
            self.forget(sender);
        }
        let deposit = (
            certificate.fingerprint_sha256.clone(),
            certificate.deposited_at,
        );
        if let Some(config) = self.kept(sender, &deposit) {
            return Ok(config);
        }
        let config =
            Arc::new(usable(certificate, &keys.master, Arc::clone(&self.roots)).map_err(not_sent)?);
        self.keep(sender, deposit, &config);
        Ok(config)
    }
}
