//! The facility's deposited certificate on the wire: `meldewerk simulate demis` as its own
//! process, serving TLS and taking only client certificates of its CA; the service in `url`
//! mode with nothing but that CA configured (no `client_certificate`), so that what it presents
//! is the PKCS#12 certificate deposited through the operator API for the report's BSNR in the
//! module's environment. A hospreport sent through the form is accepted; a certificate of
//! another CA is refused in the handshake, a removed one is not presented at all, and in both
//! cases nothing is registered and the report waits (retried) until a usable certificate is
//! deposited, which the next attempt presents.

mod common;
mod hospreport_common;

use std::path::Path;
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::pkcs12::{pkcs12, Issued, TestCa};
use common::remote::Peer;
use common::{wait_until, Server, OPERATOR};
use hospreport_common::*;
use reqwest::blocking::Client;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::Value;

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
/// 127.0.0.1, taking client certificates of `ca` only; `ca.pem` is left in `dir`.
fn reporting_system(dir: &Path, ca: &TestCa) -> Peer {
    let server = ca.server("127.0.0.1");
    let env = [
        (
            "SERVER_CERTIFICATE",
            write(dir, "server.pem", &pem("CERTIFICATE", &server.der)),
        ),
        (
            "SERVER_KEY",
            write(dir, "server-key.pem", &pem("PRIVATE KEY", &server.key_der)),
        ),
        ("CA", write(dir, "ca.pem", &pem("CERTIFICATE", &ca.der))),
    ]
    .map(|(key, path)| (format!("MELDEWERK_TRANSPORTS__DEMIS__{key}"), path));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let data = dir.join("simulator");
    std::fs::create_dir_all(&data).unwrap();
    Peer::simulate(&data, "demis", &env)
}

/// A tester's client of the simulator's process, presenting `facility` (of `ca`).
fn tester(ca: &TestCa, facility: &Issued) -> Client {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from(ca.der.clone())).unwrap();
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
    common::loopback_client()
        .use_preconfigured_tls(config)
        .build()
        .unwrap()
}

/// The last error of the outbox job of report `id`, once it has one.
fn last_error(server: &Server, id: &str) -> Option<String> {
    let jobs: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
    jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|job| job["report"] == id)
        .and_then(|job| job["lastError"].as_str().map(str::to_owned))
}

#[test]
fn the_deposited_certificate_of_the_report_s_facility_is_what_the_reporting_system_sees() {
    let pki = tempfile::tempdir().unwrap();
    let demis_ca = TestCa::new("Test-CA DEMIS");
    let peer = reporting_system(pki.path(), &demis_ca);
    let ca_pem = pki.path().join("ca.pem").display().to_string();
    let url = peer.url("/fhir");
    let (_dir, server) = start(&[
        ("MELDEWERK_TRANSPORTS__DEMIS__URL", &url),
        ("MELDEWERK_TRANSPORTS__DEMIS__CA", &ca_pem),
        ("MELDEWERK_MODULES__HOSPREPORT__ANSWER_WAIT_SECS", "1"),
        // Retried quickly, and as long as the test needs.
        ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "50"),
        ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "200"),
        ("MELDEWERK_ENGINE__MAX_ATTEMPTS", "100000"),
        ("MELDEWERK_ENGINE__BREAKER_FAILURES", "100000"),
    ]);
    let facility = demis_ca.issue("Klinikum Mitte", 2040);
    let good = pkcs12(&facility, &demis_ca);
    let tester = tester(&demis_ca, &facility);

    // The facility's certificate of the reporting system's CA, deposited: accepted.
    assert_eq!(deposit_pkcs12(&server, KNOWN_BSNR, &good), 201);
    let (browser, form) = open(&server, &complete(Some("HOSP-CERT-1"), KNOWN_BSNR));
    send_until_accepted(&server, &browser, &form);
    let records = peer.received(&tester, "HOSP-CERT-1");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
    let result: Value = api_get(&server, "reports/HOSP-CERT-1?peek=true")
        .json()
        .unwrap();
    assert_eq!(result["status"], "SUCCESS", "{result}");
    assert!(result["receiptPdf"].is_string(), "{result}");

    // A certificate of another CA deposited in its place: presented from the next delivery on,
    // and refused in the handshake. Nothing is registered; the report waits.
    let stranger_ca = TestCa::new("Another CA");
    let stranger = pkcs12(&stranger_ca.issue("Klinikum Mitte", 2040), &stranger_ca);
    assert_eq!(deposit_pkcs12(&server, KNOWN_BSNR, &stranger), 200);
    let (browser, form) = open(&server, &complete(Some("HOSP-CERT-2"), KNOWN_BSNR));
    let (status, location, page) = post(&server, &browser, &form);
    assert_eq!((status, location), (202, None), "{:?}", page.errors());
    let error = wait_until("a failed attempt", || last_error(&server, "HOSP-CERT-2"));
    // The simulator's TLS refuses the unknown issuer: an alert the client reads as a failed
    // connection, the same as a network fault.
    let operation = format!("transient transport error: {url}/$process-notification");
    assert!(
        error.starts_with(&operation) && error.contains("UnknownCA"),
        "{error}"
    );
    assert!(peer.received(&tester, "HOSP-CERT-2").is_empty());

    // Removed: nothing is presented, nor sent, and the error says why.
    let removed = server
        .client()
        .delete(server.url(&format!("/admin/api/v1/certificates/{KNOWN_BSNR}/test")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .send()
        .unwrap();
    assert_eq!(removed.status(), 204);
    let error = wait_until("an attempt without a certificate", || {
        last_error(&server, "HOSP-CERT-2").filter(|e| e.starts_with("refused: "))
    });
    assert_eq!(
        error,
        format!(
            "refused: no certificate is deposited for BSNR {KNOWN_BSNR} in the test \
             environment; nothing was sent"
        )
    );
    assert!(peer.received(&tester, "HOSP-CERT-2").is_empty());

    // The right certificate deposited again: the waiting report goes through, registered once.
    assert_eq!(deposit_pkcs12(&server, KNOWN_BSNR, &good), 201);
    send_until_accepted(&server, &browser, &form);
    let records = peer.received(&tester, "HOSP-CERT-2");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
    assert_valid_fhir(&records);
}
