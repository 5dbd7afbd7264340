//! A deposited facility certificate in use: [`meldewerk::certificates::client_tls`] gives a
//! rustls client configuration that a TLS server requiring client certificates (its own CA,
//! rustls' `WebPkiClientVerifier`) accepts, while the same server refuses a client without one;
//! a site and environment without a certificate get the distinct "missing" error, so that
//! nothing is sent. The certificate is deposited with the real binary (`meldewerk certificate
//! deposit`), then read from the data directory it left.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::pkcs12::{pkcs12, TestCa, PASSPHRASE};
use common::DataDir;
use meldewerk::certificates::{client_tls, ClientTlsError};
use meldewerk::crypto::MasterKey;
use meldewerk_storage::{Bsnr, Environment, SledStore, Store};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca: &TestCa) -> Arc<RootCertStore> {
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(ca.der.clone())).unwrap();
    Arc::new(roots)
}

/// A TLS server on loopback for one connection that requires a client certificate issued by
/// `ca`: it echoes one line, and its thread ends with the DER of the client certificate it was
/// shown, or the error that ended the connection.
fn serve_once(ca: &TestCa) -> (u16, JoinHandle<Result<Vec<u8>, String>>) {
    let verifier = WebPkiClientVerifier::builder_with_provider(roots(ca), provider())
        .build()
        .unwrap();
    let server = ca.server("localhost");
    let config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            vec![server.der.clone().into(), ca.der.clone().into()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server.key_der.clone())),
        )
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().map_err(|e| e.to_string())?;
        // A bound on waiting, so that a broken client fails the test instead of hanging it.
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut connection = ServerConnection::new(Arc::new(config)).unwrap();
        let mut tls = rustls::Stream::new(&mut connection, &mut socket);
        let mut line = [0u8; 6];
        tls.read_exact(&mut line).map_err(|e| e.to_string())?;
        tls.write_all(&line).map_err(|e| e.to_string())?;
        tls.flush().map_err(|e| e.to_string())?;
        let shown = connection
            .peer_certificates()
            .and_then(|chain| chain.first())
            .map(|der| der.to_vec())
            .ok_or("no client certificate")?;
        connection.send_close_notify();
        let _ = connection.write_tls(&mut socket);
        Ok(shown)
    });
    (port, handle)
}

/// Connects with `config`, sends one line and reads it back.
fn exchange(port: u16, config: ClientConfig) -> std::io::Result<Vec<u8>> {
    let mut socket = TcpStream::connect(("127.0.0.1", port))?;
    socket.set_read_timeout(Some(Duration::from_secs(20)))?;
    let name = ServerName::try_from("localhost").unwrap();
    let mut connection = ClientConnection::new(Arc::new(config), name).unwrap();
    let mut tls = rustls::Stream::new(&mut connection, &mut socket);
    tls.write_all(b"hello\n")?;
    let mut answer = [0u8; 6];
    tls.read_exact(&mut answer)?;
    Ok(answer.to_vec())
}

/// Deposits a certificate of `ca` for 123456789 (test) with the command line; returns its DER.
fn deposit(dir: &DataDir, ca: &TestCa) -> Vec<u8> {
    let issued = ca.issue("Klinikum Test", 2045);
    let path = dir.path().join("facility.p12");
    std::fs::write(&path, pkcs12(&issued, ca)).unwrap();
    let (ok, out, err) = dir.cli(
        &[
            "certificate",
            "deposit",
            "123456789",
            "--environment",
            "test",
            "--file",
            path.to_str().unwrap(),
            "--passphrase-stdin",
        ],
        Some(PASSPHRASE),
    );
    assert!(ok, "{out} {err}");
    issued.der
}

fn open(dir: &DataDir) -> (SledStore, MasterKey) {
    (
        SledStore::open(&dir.path().join("db")).unwrap(),
        MasterKey::load_or_create(dir.path(), None).unwrap(),
    )
}

#[tokio::test]
async fn a_server_requiring_client_certificates_accepts_the_deposited_one_and_refuses_none() {
    let dir = DataDir::new();
    let ca = TestCa::new("Reporting System Test CA");
    let deposited = deposit(&dir, &ca);
    let (store, master) = open(&dir);
    let bsnr = Bsnr::parse("123456789").unwrap();

    let config = client_tls(&store, &master, &bsnr, Environment::Test, roots(&ca))
        .await
        .unwrap();
    let (port, server) = serve_once(&ca);
    let answer = tokio::task::spawn_blocking(move || exchange(port, config))
        .await
        .unwrap();
    assert_eq!(answer.unwrap(), b"hello\n");
    assert_eq!(server.join().unwrap().unwrap(), deposited);

    // The same server, a client without a certificate: refused in the handshake.
    let anonymous = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots(&ca))
        .with_no_client_auth();
    let (port, server) = serve_once(&ca);
    let answer = tokio::task::spawn_blocking(move || exchange(port, anonymous))
        .await
        .unwrap();
    assert!(answer.is_err(), "{answer:?}");
    assert_eq!(
        server.join().unwrap().unwrap_err(),
        "peer sent no certificates"
    );
}

/// Why [`client_tls`] gives no configuration for `bsnr` in `environment`.
async fn refusal(
    store: &SledStore,
    master: &MasterKey,
    bsnr: &str,
    environment: Environment,
    ca: &TestCa,
) -> ClientTlsError {
    let bsnr = Bsnr::parse(bsnr).unwrap();
    client_tls(store, master, &bsnr, environment, roots(ca))
        .await
        .unwrap_err()
}

#[tokio::test]
async fn without_a_certificate_for_the_site_and_environment_there_is_nothing_to_present() {
    let dir = DataDir::new();
    let ca = TestCa::new("Reporting System Test CA");
    deposit(&dir, &ca);
    let (store, master) = open(&dir);

    // The test certificate is never presented to production, nor for another site.
    let missing = refusal(&store, &master, "123456789", Environment::Production, &ca).await;
    assert!(matches!(missing, ClientTlsError::Missing(_)), "{missing:?}");
    assert_eq!(
        missing.to_string(),
        "no certificate is deposited for BSNR 123456789 in the production environment"
    );
    let missing = refusal(&store, &master, "987654321", Environment::Test, &ca).await;
    assert_eq!(
        missing.to_string(),
        "no certificate is deposited for BSNR 987654321 in the test environment"
    );

    // A record copied to production does not open there: its key is wrapped for test.
    let mut copied = store
        .certificate(&Bsnr::parse("123456789").unwrap(), Environment::Test)
        .await
        .unwrap()
        .unwrap();
    copied.environment = Environment::Production;
    store.put_certificate(copied.clone()).await.unwrap();
    let moved = refusal(&store, &master, "123456789", Environment::Production, &ca).await;
    assert_eq!(
        moved.to_string(),
        "the certificate deposited for BSNR 123456789 in the production environment cannot be \
         used: its key does not open (decryption failed): it was wrapped under another master \
         key, or for another site or environment"
    );

    // One whose validity has ended is not presented either.
    copied.environment = Environment::Test;
    copied.not_after = chrono::DateTime::from_timestamp(1_600_000_000, 0).unwrap();
    store.put_certificate(copied).await.unwrap();
    let expired = refusal(&store, &master, "123456789", Environment::Test, &ca).await;
    assert_eq!(
        expired.to_string(),
        "the certificate deposited for BSNR 123456789 in the test environment expired at \
         2020-09-13T12:26:40+00:00"
    );
}
