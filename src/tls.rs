//! HTTPS without a reverse proxy: the certificate and key of `server.tls`, read from their PEM
//! files at start-up, and read again on SIGHUP and whenever either file changes, so that a renewed
//! certificate is served without a restart. A renewal that cannot be used (unreadable PEM, a key
//! that does not fit the certificate, a pair caught half-written) keeps the certificate being
//! served and logs why.

use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;

use crate::configuration::TlsSettings;

/// How often the files are looked at for a change. Two `stat` calls; short enough that a renewal
/// is served within seconds, with no file-watching machinery.
const CHANGE_CHECK_INTERVAL: Duration = Duration::from_secs(2);

/// What identifies one version of a file without reading it: modification time, size and inode
/// (a renewal written to a new file and renamed over the old one changes the inode even within
/// the file system's time resolution).
type Fingerprint = [Option<(SystemTime, u64, u64)>; 2];

fn fingerprint(path: &Path) -> Option<(SystemTime, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len(), metadata.ino()))
}

/// The certificate being served, and where it comes from. Handed to rustls as the server's
/// certificate resolver: every handshake takes whatever is current.
pub(crate) struct CertificateReloader {
    files: TlsSettings,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    /// The files' state at the last load attempt, successful or not: a broken pair is reported
    /// once, and tried again as soon as either file changes.
    seen: Mutex<Fingerprint>,
}

impl std::fmt::Debug for CertificateReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertificateReloader")
            .field("certificate", &self.files.certificate)
            .field("key", &self.files.key)
            .finish_non_exhaustive()
    }
}

impl ResolvesServerCert for CertificateReloader {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read().expect("certificate lock")))
    }
}

impl CertificateReloader {
    /// Reads the files; an error is a sentence naming the file and what is wrong with it.
    fn open(files: &TlsSettings) -> Result<Arc<Self>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let seen = Self::fingerprints(files);
        let key = load(files, &provider)?;
        Ok(Arc::new(CertificateReloader {
            files: files.clone(),
            provider,
            current: RwLock::new(Arc::new(key)),
            seen: Mutex::new(seen),
        }))
    }

    fn fingerprints(files: &TlsSettings) -> Fingerprint {
        [fingerprint(&files.certificate), fingerprint(&files.key)]
    }

    /// Reads the files again and serves what they hold from the next handshake on; keeps the
    /// current certificate when they cannot be used.
    fn reload(&self, trigger: &str) {
        *self.seen.lock().expect("fingerprint lock") = Self::fingerprints(&self.files);
        match load(&self.files, &self.provider) {
            Ok(key) => {
                *self.current.write().expect("certificate lock") = Arc::new(key);
                tracing::info!(
                    trigger,
                    certificate = %self.files.certificate.display(),
                    "TLS certificate reloaded"
                );
            }
            Err(error) => tracing::error!(
                trigger,
                %error,
                "TLS certificate reload failed; still serving the previous certificate"
            ),
        }
    }

    fn reload_if_changed(&self) {
        let now = Self::fingerprints(&self.files);
        if now != *self.seen.lock().expect("fingerprint lock") {
            self.reload("file changed");
        }
    }

    /// Reloads on SIGHUP and when the files change, for as long as the process runs. Must be
    /// called inside the server's runtime; SIGHUP is taken over before this returns, so that a
    /// signal sent once the server is up never ends the process (its default action).
    pub(crate) fn watch(self: Arc<Self>) -> std::io::Result<()> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut hangup = signal(SignalKind::hangup())?;
        actix_web::rt::spawn(async move {
            let mut check = tokio::time::interval(CHANGE_CHECK_INTERVAL);
            check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            // Two small files: read in place rather than on a blocking thread.
            loop {
                tokio::select! {
                    Some(()) = hangup.recv() => self.reload("SIGHUP"),
                    _ = check.tick() => self.reload_if_changed(),
                }
            }
        });
        Ok(())
    }
}

/// The certified key in `files`: the chain (server certificate first) and a private key that
/// matches it.
fn load(files: &TlsSettings, provider: &CryptoProvider) -> Result<CertifiedKey, String> {
    let certificate = files.certificate.display();
    let chain = CertificateDer::pem_file_iter(&files.certificate)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("server.tls.certificate {certificate}: {e}"))?;
    if chain.is_empty() {
        return Err(format!(
            "server.tls.certificate {certificate}: no CERTIFICATE in the PEM file"
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => format!(
            "server.tls.key {}: no PRIVATE KEY in the PEM file",
            files.key.display()
        ),
        e => format!("server.tls.key {}: {e}", files.key.display()),
    })?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| {
        format!(
            "server.tls.key {} does not fit server.tls.certificate {certificate}: {e}",
            files.key.display()
        )
    })
}

/// The rustls configuration of the HTTPS listener, and the reloader behind its certificate
/// (to [`CertificateReloader::watch`] once the server runs).
pub(crate) fn server_config(
    files: &TlsSettings,
) -> Result<(ServerConfig, Arc<CertificateReloader>), String> {
    let reloader = CertificateReloader::open(files)?;
    let config = ServerConfig::builder_with_provider(Arc::clone(&reloader.provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(reloader.clone());
    Ok((config, reloader))
}
