//! The reporting system on the wire for the tests of deposited certificates: `meldewerk
//! simulate demis` as its own process, serving TLS and taking only client certificates of its
//! CA, and the service's settings for `url` mode against it; facility certificates deposited
//! and removed through the operator API, and the outbox job's last error that says why a
//! report waits.

use std::path::Path;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::blocking::Client;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{json, Value};

use super::pkcs12::{Issued, TestCa, PASSPHRASE};
use super::remote::Peer;
use super::{loopback_client, Server, OPERATOR};

/// `der` as a PEM block labelled `label`.
fn pem(label: &str, der: &[u8]) -> String {
    let text = STANDARD.encode(der);
    let lines: Vec<&str> = text
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// Writes `name` into `dir`; its path as text.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The simulated reporting system as its own process with its CA's server certificate for
/// 127.0.0.1, taking client certificates of [`TlsReportingSystem::ca`] only. Killed when
/// dropped, its files removed.
pub struct TlsReportingSystem {
    /// The CA its server certificate chains to and its clients' certificates must chain to.
    pub ca: TestCa,
    /// The process.
    pub peer: Peer,
    dir: tempfile::TempDir,
}

impl TlsReportingSystem {
    /// Starts it on a fresh CA (`Test-CA DEMIS`).
    pub fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new("Test-CA DEMIS");
        let server = ca.server("127.0.0.1");
        let env = [
            (
                "SERVER_CERTIFICATE",
                write(dir.path(), "server.pem", &pem("CERTIFICATE", &server.der)),
            ),
            (
                "SERVER_KEY",
                write(
                    dir.path(),
                    "server-key.pem",
                    &pem("PRIVATE KEY", &server.key_der),
                ),
            ),
            (
                "CA",
                write(dir.path(), "ca.pem", &pem("CERTIFICATE", &ca.der)),
            ),
        ]
        .map(|(key, path)| (format!("MELDEWERK_TRANSPORTS__DEMIS__{key}"), path));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let data = dir.path().join("simulator");
        std::fs::create_dir_all(&data).unwrap();
        let peer = Peer::simulate(&data, "demis", &env);
        TlsReportingSystem { ca, peer, dir }
    }

    /// Its `$process-notification` base, what `[transports.demis] url` is set to.
    pub fn url(&self) -> String {
        self.peer.url("/fhir")
    }

    /// The service's environment for `url` mode against it: the url and the CA, nothing else
    /// (so that a report with a sender presents the certificate deposited for it), and the
    /// engine retrying quickly for as long as a test needs, its circuit breaker never opening.
    pub fn service_env(&self) -> Vec<(String, String)> {
        [
            ("MELDEWERK_TRANSPORTS__DEMIS__URL", self.url()),
            (
                "MELDEWERK_TRANSPORTS__DEMIS__CA",
                self.dir.path().join("ca.pem").display().to_string(),
            ),
            ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "50".into()),
            ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "200".into()),
            ("MELDEWERK_ENGINE__MAX_ATTEMPTS", "100000".into()),
            ("MELDEWERK_ENGINE__BREAKER_FAILURES", "100000".into()),
        ]
        .map(|(key, value)| (key.to_owned(), value))
        .to_vec()
    }

    /// The service's `[transports.demis] client_certificate` and `client_key`: `issued`
    /// written as PEM files.
    pub fn client_files_env(&self, issued: &Issued) -> Vec<(String, String)> {
        let certificate = write(
            self.dir.path(),
            "client.pem",
            &pem("CERTIFICATE", &issued.der),
        );
        let key = write(
            self.dir.path(),
            "client-key.pem",
            &pem("PRIVATE KEY", &issued.key_der),
        );
        vec![
            (
                "MELDEWERK_TRANSPORTS__DEMIS__CLIENT_CERTIFICATE".into(),
                certificate,
            ),
            ("MELDEWERK_TRANSPORTS__DEMIS__CLIENT_KEY".into(), key),
        ]
    }

    /// A tester's client of the process, presenting `facility` (of [`Self::ca`]).
    pub fn tester(&self, facility: &Issued) -> Client {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from(self.ca.der.clone()))
            .unwrap();
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_client_auth_cert(
            vec![CertificateDer::from(facility.der.clone())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(facility.key_der.clone())),
        )
        .unwrap();
        loopback_client()
            .use_preconfigured_tls(config)
            .build()
            .unwrap()
    }

    /// What the process received for report `id`, oldest first (read by `tester`).
    pub fn received(&self, tester: &Client, id: &str) -> Vec<Value> {
        self.peer.received(tester, id)
    }
}

/// `env` as the pairs `Server::start` takes.
pub fn pairs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Deposits the PKCS#12 `file` (encrypted with [`PASSPHRASE`]) as the test-environment
/// certificate of `bsnr` through the operator API; the answer's status (201 new, 200 replaced).
pub fn deposit_pkcs12(server: &Server, bsnr: &str, file: &[u8]) -> u16 {
    let body = json!({"pkcs12": STANDARD.encode(file), "passphrase": PASSPHRASE});
    server
        .client()
        .put(server.url(&format!("/admin/api/v1/certificates/{bsnr}/test")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&body)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// Removes the test-environment certificate of `bsnr` through the operator API; the status.
pub fn remove_certificate(server: &Server, bsnr: &str) -> u16 {
    server
        .client()
        .delete(server.url(&format!("/admin/api/v1/certificates/{bsnr}/test")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// The last error of the outbox job of report `id` (operator API), once it has one.
pub fn last_error(server: &Server, id: &str) -> Option<String> {
    let job = super::job_of_report(server, id)?;
    job["lastError"].as_str().map(str::to_owned)
}

/// The job's error of a report waiting for want of the certificate of `bsnr` in `environment`.
pub fn no_certificate(bsnr: &str, environment: &str) -> String {
    format!(
        "refused: no certificate is deposited for BSNR {bsnr} in the {environment} \
         environment; nothing was sent"
    )
}
