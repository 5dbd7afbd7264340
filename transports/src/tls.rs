//! Mutual TLS from PEM files, with ring as the provider (as every TLS end in the tree): the
//! server side of a simulated authority that takes only facilities' client certificates, and the
//! client side that presents one. And where a client's certificate comes from per delivery
//! ([`ClientIdentity`]): files, or the certificates the service keeps for the facilities it sends
//! for ([`Credentials`], handed to every transport's `connect`).

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of the PEM file `path` (named `key` in errors), at least one.
fn certificates(key: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{key} {shown}: {e}"))?;
    if chain.is_empty() {
        return Err(format!("{key} {shown}: no CERTIFICATE in the PEM file"));
    }
    Ok(chain)
}

/// The private key of the PEM file `path` (named `key` in errors).
fn private_key(key: &str, path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("{key} {}: no PRIVATE KEY in the PEM file", path.display())
        }
        e => format!("{key} {}: {e}", path.display()),
    })
}

/// The trust anchors of the PEM file `path` (named `key` in errors).
pub fn roots(key: &str, path: &Path) -> Result<Arc<RootCertStore>, String> {
    let mut roots = RootCertStore::empty();
    for certificate in certificates(key, path)? {
        roots
            .add(certificate)
            .map_err(|e| format!("{key} {}: {e}", path.display()))?;
    }
    Ok(Arc::new(roots))
}

/// PEM files of one end: its certificate chain and key, and the CA it trusts of the other end.
/// `prefix` names the configuration section in errors (`transports.demis.`).
#[derive(Debug, Clone, Copy)]
pub struct MutualTls<'a> {
    /// The section's key prefix, e.g. `transports.demis.`.
    pub prefix: &'a str,
    /// Configuration key and file of the certificate chain (own certificate first).
    pub certificate: (&'a str, &'a Path),
    /// Configuration key and file of the private key.
    pub key: (&'a str, &'a Path),
    /// Configuration key and file of the CA the other end's certificate must chain to.
    pub ca: (&'a str, &'a Path),
}

impl MutualTls<'_> {
    fn chain(&self) -> Result<Vec<CertificateDer<'static>>, String> {
        certificates(
            &format!("{}{}", self.prefix, self.certificate.0),
            self.certificate.1,
        )
    }

    fn private_key(&self) -> Result<PrivateKeyDer<'static>, String> {
        private_key(&format!("{}{}", self.prefix, self.key.0), self.key.1)
    }

    fn roots(&self) -> Result<Arc<RootCertStore>, String> {
        roots(&format!("{}{}", self.prefix, self.ca.0), self.ca.1)
    }

    fn mismatch(&self, e: rustls::Error) -> String {
        format!(
            "{p}{} does not fit {p}{}: {e}",
            self.key.0,
            self.certificate.0,
            p = self.prefix
        )
    }

    /// A server that requires every client to present a certificate chaining to the CA: a
    /// connection without one, or with another, ends in the handshake.
    pub fn server(&self) -> Result<ServerConfig, String> {
        let provider = provider();
        let verifier =
            WebPkiClientVerifier::builder_with_provider(self.roots()?, Arc::clone(&provider))
                .build()
                .map_err(|e| format!("{}{}: {e}", self.prefix, self.ca.0))?;
        ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(self.chain()?, self.private_key()?)
            .map_err(|e| self.mismatch(e))
    }

    /// A client that presents the certificate and trusts only servers chaining to the CA.
    pub fn client(&self) -> Result<ClientConfig, String> {
        let roots = self.roots()?;
        ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_root_certificates(roots)
            .with_client_auth_cert(self.chain()?, self.private_key()?)
            .map_err(|e| self.mismatch(e))
    }
}

/// Where the client certificate a delivery is sent with comes from: the facility that sends
/// authenticates by it.
///
/// Asynchronous, so that an identity read from the store (a certificate deposited per site and
/// environment, unwrapped under the master key) fits as well as one read from files.
#[async_trait]
pub trait ClientIdentity: Send + Sync {
    /// The TLS client configuration (certificate, key, trusted CA) to send `delivery` with.
    /// The same `Arc` for the same certificate, so that its connections are reused. A facility
    /// without a usable certificate is a [`crate::TransportError`] saying so.
    async fn client_config(
        &self,
        delivery: &crate::Delivery,
    ) -> Result<Arc<ClientConfig>, crate::TransportError>;
}

/// The certificates the service keeps for the facilities it sends for (deposited per site and
/// environment): what a transport's `connect` ([`crate::TransportKind::connect`]) gets to
/// present the one of each delivery's [`crate::Delivery::sender`], without knowing the store
/// or the master key.
pub trait Credentials: Send + Sync {
    /// The identity that presents, for a delivery with a sender, the certificate deposited for
    /// it, trusting only servers that chain to `roots`. A delivery without a sender, or a
    /// sender without a usable certificate, is a [`crate::TransportError`] saying so.
    fn deposited(&self, roots: Arc<RootCertStore>) -> Arc<dyn ClientIdentity>;
}
