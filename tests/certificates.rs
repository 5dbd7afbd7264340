//! Facilities' client certificates through the operator API (`/admin/api/v1/certificates…`)
//! and the command line (`meldewerk certificate …`), against the real server and binary.
//!
//! Proves: a PKCS#12 file is deposited per site and environment (test and production apart), a
//! second deposit replaces the first, listings show only what identifies a certificate (never
//! key material, the chain or the passphrase), removal answers 404 once gone; every unusable
//! request is refused with its exact message (wrong passphrase, no PKCS#12, no key with a
//! certificate, a key that is not the certificate's, expired, bad BSNR or environment, a file or
//! body too large, unknown members) and leaves nothing; only operators may; every change is in
//! the audit log; the passphrase never reaches the log.

mod common;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::pkcs12::{key_entry, pkcs12, pkcs12_of, sha256_hex, TestCa, PASSPHRASE};
use common::*;
use reqwest::blocking::{RequestBuilder, Response};
use serde_json::{json, Value};

const CERTIFICATES: &str = "/admin/api/v1/certificates";
const SITE: &str = "/admin/api/v1/certificates/123456789/test";

/// An operator request.
fn operator(request: RequestBuilder) -> RequestBuilder {
    request.basic_auth(OPERATOR.0, Some(OPERATOR.1))
}

/// `PUT path` with `body` as operator.
fn put(server: &Server, path: &str, body: &Value) -> Response {
    operator(server.client().put(server.url(path)))
        .json(body)
        .send()
        .unwrap()
}

/// The deposit body of `file` with `passphrase`.
fn body(file: &[u8], passphrase: &str) -> Value {
    json!({"pkcs12": STANDARD.encode(file), "passphrase": passphrase})
}

fn delete(server: &Server, path: &str) -> Response {
    operator(server.client().delete(server.url(path)))
        .send()
        .unwrap()
}

fn list(server: &Server) -> Value {
    let response = server.admin_get(CERTIFICATES);
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

/// `status` and `{"errors": errors}`, as answered.
fn assert_refused(response: Response, status: u16, errors: &[&str]) {
    assert_eq!(response.status(), status);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({ "errors": errors })
    );
}

#[test]
fn certificates_are_deposited_per_site_and_environment_listed_without_keys_and_removed() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let ca = TestCa::new("Test CA");
    let first = ca.issue("Klinikum Test 1", 2045);
    let test_file = pkcs12(&first, &ca);

    let answer = put(&server, SITE, &body(&test_file, PASSPHRASE));
    assert_eq!(answer.status(), 201);
    let summary: Value = answer.json().unwrap();
    let deposited_at = summary["depositedAt"].as_str().unwrap().to_owned();
    assert_eq!(
        summary,
        json!({
            "bsnr": "123456789",
            "environment": "test",
            "subject": "CN=Klinikum Test 1, O=Klinikum Test",
            "notAfter": "2045-01-01T00:00:00Z",
            "fingerprintSha256": sha256_hex(&first.der),
            "depositedAt": deposited_at,
        })
    );

    // Production of the same site is its own slot.
    let production = ca.issue("Klinikum Produktion", 2046);
    let answer = put(
        &server,
        "/admin/api/v1/certificates/123456789/production",
        &body(&pkcs12(&production, &ca), PASSPHRASE),
    );
    assert_eq!(answer.status(), 201);
    // A second deposit for test replaces the first: 200.
    let renewed = ca.issue("Klinikum Test 2", 2047);
    let answer = put(&server, SITE, &body(&pkcs12(&renewed, &ca), PASSPHRASE));
    assert_eq!(answer.status(), 200);

    let listed = list(&server);
    let shown: Vec<(&str, &str, &str)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let members: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(
                members,
                [
                    "bsnr",
                    "depositedAt",
                    "environment",
                    "fingerprintSha256",
                    "notAfter",
                    "subject"
                ]
            );
            (
                c["environment"].as_str().unwrap(),
                c["subject"].as_str().unwrap(),
                c["fingerprintSha256"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "test",
                "CN=Klinikum Test 2, O=Klinikum Test",
                sha256_hex(&renewed.der).as_str()
            ),
            (
                "production",
                "CN=Klinikum Produktion, O=Klinikum Test",
                sha256_hex(&production.der).as_str()
            ),
        ]
    );
    // Nothing of the key, the chain or the passphrase, in any encoding.
    let text = listed.to_string();
    for secret in [
        STANDARD.encode(&renewed.key_der),
        STANDARD.encode(&renewed.der),
        STANDARD.encode(&ca.der),
        PASSPHRASE.to_owned(),
    ] {
        assert!(!text.contains(&secret[..24.min(secret.len())]), "{text}");
    }

    assert_eq!(delete(&server, SITE).status(), 204);
    assert_refused(
        delete(&server, SITE),
        404,
        &["no certificate is deposited for BSNR 123456789 in the test environment"],
    );
    assert_eq!(list(&server).as_array().unwrap().len(), 1);

    assert_eq!(
        audited(&server),
        [
            ("deposit-certificate", "certificate 123456789/test"),
            ("deposit-certificate", "certificate 123456789/production"),
            ("deposit-certificate", "certificate 123456789/test"),
            ("remove-certificate", "certificate 123456789/test"),
        ]
        .map(|(a, t)| (a.to_owned(), t.to_owned()))
    );
    let log = server.settled_log();
    assert!(!log.contains(PASSPHRASE), "{log}");
}

#[test]
fn unusable_deposits_are_refused_with_their_reason_and_leave_nothing() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[("MELDEWERK_MAX_BODY_BYTES", "100000")]);
    let ca = TestCa::new("Test CA");
    let issued = ca.issue("Klinikum Test", 2045);
    let file = pkcs12(&issued, &ca);

    assert_refused(
        put(&server, SITE, &body(&file, "not the passphrase")),
        400,
        &["the passphrase does not open the PKCS#12 file"],
    );
    assert_refused(
        put(
            &server,
            SITE,
            &body(b"-----BEGIN CERTIFICATE-----", PASSPHRASE),
        ),
        400,
        &["the file is not a PKCS#12 file"],
    );
    // Cut short anywhere: never more than "not PKCS#12" or a wrong passphrase.
    for end in [1, 16, file.len() / 3, file.len() / 2, file.len() - 1] {
        let answer = put(&server, SITE, &body(&file[..end], PASSPHRASE));
        assert_eq!(answer.status(), 400, "cut at {end}");
        let said: Value = answer.json().unwrap();
        assert!(
            said == json!({"errors": ["the file is not a PKCS#12 file"]})
                || said == json!({"errors": ["the passphrase does not open the PKCS#12 file"]}),
            "cut at {end}: {said}"
        );
    }
    let expired = ca.issue("Klinikum Abgelaufen", 2021);
    assert_refused(
        put(&server, SITE, &body(&pkcs12(&expired, &ca), PASSPHRASE)),
        400,
        &["the certificate expired at 2021-01-01T00:00:00+00:00"],
    );
    // A file holding only a certificate, without its key.
    let mut only_certificate = p12_keystore::KeyStore::new();
    only_certificate.add_entry(
        "ca",
        p12_keystore::KeyStoreEntry::Certificate(
            p12_keystore::Certificate::from_der(&ca.der).unwrap(),
        ),
    );
    let only_certificate = only_certificate.writer(PASSPHRASE).write().unwrap();
    assert_refused(
        put(&server, SITE, &body(&only_certificate, PASSPHRASE)),
        400,
        &["the PKCS#12 file holds no private key with its certificate"],
    );
    // Two keys, each with a certificate: which is the facility's?
    let other = ca.issue("Klinikum Zwei", 2045);
    let mut two = p12_keystore::KeyStore::new();
    two.add_entry("one", key_entry(&issued.key_der, &[&issued.der]));
    two.add_entry("two", key_entry(&other.key_der, &[&other.der]));
    let two = two.writer(PASSPHRASE).write().unwrap();
    assert_refused(
        put(&server, SITE, &body(&two, PASSPHRASE)),
        400,
        &["the PKCS#12 file holds more than one private key with a certificate; deposit a file with one"],
    );
    // The key of another certificate.
    let mismatched = pkcs12_of(&other.key_der, &[&issued.der, &ca.der], PASSPHRASE);
    assert_refused(
        put(&server, SITE, &body(&mismatched, PASSPHRASE)),
        400,
        &["the private key is not the key of the certificate"],
    );
    // An X25519 key (PKCS#8): a key agreement key, nothing TLS can sign with.
    let mut x25519 = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04,
        0x20,
    ];
    x25519.extend([7; 32]);
    assert_refused(
        put(&server, SITE, &body(&pkcs12_of(&x25519, &[&issued.der], PASSPHRASE), PASSPHRASE)),
        400,
        &["the private key's algorithm cannot be used for TLS (RSA, ECDSA P-256 or P-384, or Ed25519 can)"],
    );
    assert_refused(
        put(&server, SITE, &body(&vec![0x30; 64 * 1024 + 1], PASSPHRASE)),
        400,
        &["the PKCS#12 file must be at most 65536 bytes"],
    );
    assert_refused(
        put(&server, SITE, &body(&file, &"x".repeat(1025))),
        400,
        &["the passphrase must be at most 1024 characters"],
    );

    // The path: both problems at once.
    assert_refused(
        put(
            &server,
            "/admin/api/v1/certificates/12345678/staging",
            &body(&file, PASSPHRASE),
        ),
        400,
        &[
            "bsnr must be exactly 9 digits",
            "environment must be test or production",
        ],
    );
    assert_refused(
        put(
            &server,
            "/admin/api/v1/certificates/12345678a/test",
            &body(&file, PASSPHRASE),
        ),
        400,
        &["bsnr must be exactly 9 digits"],
    );
    assert_refused(
        delete(&server, "/admin/api/v1/certificates/123456789/prod"),
        400,
        &["environment must be test or production"],
    );
    // The body: strict, every problem at once.
    assert_refused(
        put(
            &server,
            SITE,
            &json!({"pkcs12": "not base64!", "password": PASSPHRASE}),
        ),
        400,
        &[
            "password is not a known field",
            "pkcs12 must be standard base64",
            "passphrase must not be null",
        ],
    );
    assert_refused(
        put(&server, SITE, &json!({"pkcs12": 12, "passphrase": null})),
        400,
        &["pkcs12 must be a string", "passphrase must not be null"],
    );
    let duplicate = operator(server.client().put(server.url(SITE)))
        .header("content-type", "application/json")
        .body(r#"{"pkcs12": "AA==", "pkcs12": "AA==", "passphrase": "x"}"#)
        .send()
        .unwrap();
    assert_eq!(duplicate.status(), 400);
    let not_json = operator(server.client().put(server.url(SITE)))
        .body(STANDARD.encode(&file))
        .send()
        .unwrap();
    assert_refused(
        not_json,
        415,
        &["the request body must be sent as Content-Type: application/json"],
    );
    assert_refused(
        put(&server, SITE, &body(&vec![0; 80_000], PASSPHRASE)),
        413,
        &["request body exceeds 100000 bytes"],
    );

    assert_eq!(list(&server), json!([]));
    assert_eq!(audited(&server), []);
    let log = server.settled_log();
    assert!(!log.contains(PASSPHRASE), "{log}");
}

#[test]
fn only_operators_may_see_deposit_or_remove_certificates() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let ca = TestCa::new("Test CA");
    let file = pkcs12(&ca.issue("Klinikum Test", 2045), &ca);
    let attempts = [
        (reqwest::Method::GET, CERTIFICATES),
        (reqwest::Method::PUT, SITE),
        (reqwest::Method::DELETE, SITE),
    ];
    for (method, path) in &attempts {
        let request = || {
            server
                .client()
                .request(method.clone(), server.url(path))
                .json(&body(&file, PASSPHRASE))
        };
        assert_operators_only(&format!("{method} {path}"), request, "klinik");
    }
    assert_eq!(list(&server), json!([]));
}

#[test]
fn the_command_line_deposits_lists_and_removes_what_the_server_then_shows() {
    let dir = DataDir::new();
    let ca = TestCa::new("Test CA");
    let issued = ca.issue("Klinikum Test", 2045);
    let path = dir.path().join("facility.p12");
    std::fs::write(&path, pkcs12(&issued, &ca)).unwrap();
    let file = path.to_str().unwrap();
    let deposit = |environment: &str, passphrase: &str| {
        dir.cli(
            &[
                "certificate",
                "deposit",
                "123456789",
                "--environment",
                environment,
                "--file",
                file,
                "--passphrase-stdin",
            ],
            Some(passphrase),
        )
    };
    let fingerprint = sha256_hex(&issued.der);

    let (ok, out, err) = deposit("test", "not the passphrase\n");
    assert!(!ok);
    assert_eq!(
        (out.as_str(), err.as_str()),
        ("", "error: the passphrase does not open the PKCS#12 file\n")
    );
    let (ok, _, err) = deposit("staging", PASSPHRASE);
    assert!(!ok);
    assert_eq!(err, "error: environment must be test or production\n");
    let refused = |args: &[&str]| {
        let (ok, out, err) = dir.cli(args, Some(PASSPHRASE));
        assert!(!ok && out.is_empty(), "{args:?}");
        err
    };
    let base = [
        "certificate",
        "deposit",
        "123456789",
        "--environment",
        "test",
    ];
    assert_eq!(
        refused(&[&base[..], &["--file", file]].concat()),
        "error: give the passphrase on standard input with --passphrase-stdin\n"
    );
    let large = dir.path().join("large.p12");
    std::fs::write(&large, vec![0x30; 64 * 1024 + 1]).unwrap();
    let large = large.to_str().unwrap();
    assert_eq!(
        refused(&[&base[..], &["--file", large, "--passphrase-stdin"]].concat()),
        "error: the PKCS#12 file must be at most 65536 bytes\n"
    );
    assert_eq!(
        refused(&[
            "certificate",
            "deposit",
            "12345",
            "--environment",
            "test",
            "--file",
            file
        ]),
        "error: bsnr must be exactly 9 digits\n"
    );

    // A trailing line break is not part of the passphrase.
    let (ok, out, err) = deposit("production", &format!("{PASSPHRASE}\n"));
    assert!(ok, "{err}");
    assert_eq!(
        out,
        format!(
            "certificate CN=Klinikum Test, O=Klinikum Test for BSNR 123456789 (production) \
             deposited; valid until 2045-01-01T00:00:00+00:00, SHA-256 {fingerprint}\n"
        )
    );
    let (ok, out, _) = deposit("production", PASSPHRASE);
    assert!(ok);
    assert!(
        out.contains("deposited in place of the previous one"),
        "{out}"
    );

    let (ok, out, _) = dir.cli(&["certificate", "list"], None);
    assert!(ok);
    assert_eq!(
        out,
        format!(
            "BSNR      ENV        VALID UNTIL               {:<64} SUBJECT\n\
             123456789 production 2045-01-01T00:00:00+00:00 {fingerprint} CN=Klinikum Test, O=Klinikum Test\n",
            "SHA-256"
        )
    );
    let (ok, json_out, _) = dir.cli(&["certificate", "list", "--json"], None);
    assert!(ok);
    let listed: Value = serde_json::from_str(&json_out).unwrap();
    assert_eq!(listed[0]["fingerprintSha256"], fingerprint.as_str());

    {
        let server = Server::start(&dir, &[]);
        assert_eq!(list(&server), listed);
    }

    let remove = |environment: &str| {
        dir.cli(
            &[
                "certificate",
                "remove",
                "123456789",
                "--environment",
                environment,
            ],
            None,
        )
    };
    let (ok, _, err) = remove("test");
    assert!(!ok);
    assert_eq!(
        err,
        "error: no certificate is deposited for BSNR 123456789 in the test environment\n"
    );
    let (ok, out, _) = remove("production");
    assert!(ok);
    assert_eq!(out, "certificate for BSNR 123456789 (production) removed\n");
    let (ok, out, _) = dir.cli(&["certificate", "list", "--json"], None);
    assert!(ok);
    assert_eq!(out, "[]\n");
}
