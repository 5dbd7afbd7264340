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
pub(crate) struct DepositedCertificates {
    keys: Arc<OnceLock<Keys>>,
}

impl DepositedCertificates {
    /// Reads the certificates from `store`, their keys opened with `master`, from now on.
    /// Bound once; a second call changes nothing.
    pub(crate) fn bind(&self, store: Arc<dyn Store>, master: Arc<MasterKey>) {
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

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use meldewerk_storage::{Bsnr, Environment, FacilityCertificate, SledStore};

    use super::*;
    use crate::certificates::key_purpose;

    fn sender() -> Sender {
        Sender {
            bsnr: Bsnr::parse("123456789").unwrap(),
            environment: Environment::Test,
        }
    }

    fn delivery(sender: Option<Sender>) -> Delivery {
        Delivery {
            idempotency_key: "k".into(),
            module: "hospreport".into(),
            report_id: "r".into(),
            message_uuid: "u".into(),
            content_type: "application/fhir+json".into(),
            body: b"{}".to_vec(),
            signature: None,
            sender,
        }
    }

    /// A self-signed certificate of `sender` with its key wrapped under `master`, deposited
    /// `deposited_at` and valid until `not_after`.
    fn certificate(
        master: &MasterKey,
        deposited_at: DateTime<Utc>,
        not_after: DateTime<Utc>,
    ) -> FacilityCertificate {
        let key = rcgen::KeyPair::generate().unwrap();
        let der = rcgen::CertificateParams::new(vec!["klinikum.example".to_owned()])
            .unwrap()
            .self_signed(&key)
            .unwrap()
            .der()
            .to_vec();
        let sender = sender();
        FacilityCertificate {
            key: master.wrap(
                &key_purpose(&sender.bsnr, sender.environment),
                &key.serialize_der(),
            ),
            bsnr: sender.bsnr,
            environment: sender.environment,
            subject: "CN=Klinikum".into(),
            not_after,
            fingerprint_sha256: crate::routes::admin::messages::sha256_hex(&der),
            chain_der: vec![der],
            deposited_at,
        }
    }

    fn refusal(result: Result<Arc<ClientConfig>, TransportError>) -> String {
        match result {
            Err(TransportError::Refused(reason)) => reason,
            other => panic!("not refused: {:?}", other.map(|_| "a configuration")),
        }
    }

    #[tokio::test]
    async fn the_sender_s_certificate_is_built_once_per_deposit_and_refused_when_unusable() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> = Arc::new(SledStore::open(&dir.path().join("db")).unwrap());
        let master = Arc::new(MasterKey::load_or_create(dir.path(), None).unwrap());
        let certificates = DepositedCertificates::default();
        let identity = certificates.deposited(Arc::new(RootCertStore::empty()));
        let of_sender = delivery(Some(sender()));

        // Before the store is bound, and for a delivery that names no sender: nothing is sent.
        assert_eq!(
            refusal(identity.client_config(&of_sender).await),
            "the certificates are not readable yet; nothing was sent"
        );
        certificates.bind(Arc::clone(&store), Arc::clone(&master));
        assert_eq!(
            refusal(identity.client_config(&delivery(None)).await),
            "the message names no sending facility; nothing was sent"
        );
        assert_eq!(
            refusal(identity.client_config(&of_sender).await),
            "no certificate is deposited for BSNR 123456789 in the test environment; nothing \
             was sent"
        );

        // Deposited: the same configuration for every delivery while it stays deposited.
        let now = Utc::now();
        let year = now + Duration::days(365);
        store
            .put_certificate(certificate(&master, now, year))
            .await
            .unwrap();
        let first = identity.client_config(&of_sender).await.unwrap();
        let again = identity.client_config(&of_sender).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));

        // Deposited anew: a new configuration.
        let later = now + Duration::seconds(1);
        store
            .put_certificate(certificate(&master, later, year))
            .await
            .unwrap();
        let renewed = identity.client_config(&of_sender).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &renewed));

        // Expired, or wrapped under another master key: refused, saying so.
        let expired = now - Duration::days(1);
        store
            .put_certificate(certificate(&master, now, expired))
            .await
            .unwrap();
        let reason = refusal(identity.client_config(&of_sender).await);
        assert!(reason.contains("expired at"), "{reason}");
        let other = tempfile::tempdir().unwrap();
        let other_master = MasterKey::load_or_create(other.path(), None).unwrap();
        store
            .put_certificate(certificate(&other_master, later, year))
            .await
            .unwrap();
        let reason = refusal(identity.client_config(&of_sender).await);
        assert!(reason.contains("its key does not open"), "{reason}");

        // Removed: refused again.
        store
            .remove_certificate(&sender().bsnr, Environment::Test)
            .await
            .unwrap();
        let reason = refusal(identity.client_config(&of_sender).await);
        assert!(
            reason.starts_with("no certificate is deposited"),
            "{reason}"
        );
    }
}
