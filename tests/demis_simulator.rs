//! `meldewerk simulate demis`: the simulated reporting system as its own process, speaking
//! DEMIS's `$process-notification` over TLS and taking only facilities' client certificates;
//! reached by the service's own client (`FhirClient`, what `transports.demis.url` opens), killed
//! mid-delivery and started again.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::remote::Peer;
use common::wait_until;
use meldewerk_fhir::answer;
use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
use meldewerk_fhir::{Facility, RandomIds};
use meldewerk_transports::demis::{DemisConfig, FhirClient, PemIdentity};
use meldewerk_transports::tls::MutualTls;
use meldewerk_transports::wire::HttpTransportSettings;
use meldewerk_transports::{Answer, Delivery, Finished, Outcome, Transport, TransportError};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use reqwest::blocking::Client;
use serde_json::{json, Value};

/// A CA of the test's own, and certificates it issued: the simulator's (for 127.0.0.1), a
/// facility's, and a facility's from another CA that the simulator must not take.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let pki = Pki {
            dir: tempfile::tempdir().unwrap(),
        };
        let (ca, ca_pem) = authority("Test-CA DEMIS");
        pki.write("ca.pem", &ca_pem);
        pki.issue(
            &ca,
            "server",
            "127.0.0.1",
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        pki.issue(
            &ca,
            "client",
            "Klinikum Mitte",
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        let (other, _) = authority("Another CA");
        pki.issue(
            &other,
            "stranger",
            "Unbekannt",
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        pki
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, pem: &str) {
        std::fs::write(self.path(name), pem).unwrap();
    }

    /// `NAME.pem` and `NAME-key.pem`, issued by `ca` for `subject`.
    fn issue(
        &self,
        ca: &Issuer<'static, KeyPair>,
        name: &str,
        subject: &str,
        usage: ExtendedKeyUsagePurpose,
    ) {
        let mut params = CertificateParams::new(vec![subject.to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, subject);
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let certificate = params.signed_by(&key, ca).unwrap();
        self.write(&format!("{name}.pem"), &certificate.pem());
        self.write(&format!("{name}-key.pem"), &key.serialize_pem());
    }

    /// The simulator's section as environment variables.
    fn simulator_env(&self) -> Vec<(String, String)> {
        [
            ("SERVER_CERTIFICATE", "server.pem"),
            ("SERVER_KEY", "server-key.pem"),
            ("CA", "ca.pem"),
        ]
        .into_iter()
        .map(|(key, file)| {
            (
                format!("MELDEWERK_TRANSPORTS__DEMIS__{key}"),
                self.path(file).display().to_string(),
            )
        })
        .collect()
    }

    /// A client presenting `NAME.pem` (none: no certificate at all) and trusting the CA.
    fn client(&self, name: Option<&str>) -> Client {
        let builder = common::loopback_client();
        let builder = match name {
            Some(name) => {
                let (certificate, key, ca) = (
                    self.path(&format!("{name}.pem")),
                    self.path(&format!("{name}-key.pem")),
                    self.path("ca.pem"),
                );
                let files = MutualTls {
                    prefix: "",
                    certificate: ("certificate", &certificate),
                    key: ("key", &key),
                    ca: ("ca", &ca),
                };
                builder.use_preconfigured_tls(files.client().unwrap())
            }
            None => builder.add_root_certificate(
                reqwest::Certificate::from_pem(&std::fs::read(self.path("ca.pem")).unwrap())
                    .unwrap(),
            ),
        };
        builder.build().unwrap()
    }

    /// The service's side: the client `transports.demis.url` opens, with the facility's
    /// certificate.
    fn service(&self, url: &str) -> FhirClient {
        let config = DemisConfig {
            client_certificate: Some(self.path("client.pem")),
            client_key: Some(self.path("client-key.pem")),
            ca: Some(self.path("ca.pem")),
            ..DemisConfig::default()
        };
        let settings = HttpTransportSettings {
            url: url.to_owned(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(120),
        };
        FhirClient::new(
            "demis",
            &settings,
            Arc::new(PemIdentity::from_config(&config).unwrap()),
        )
        .unwrap()
    }
}

/// A self-signed CA: its issuer and its certificate's PEM.
fn authority(name: &str) -> (Issuer<'static, KeyPair>, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().unwrap();
    let certificate = params.self_signed(&key).unwrap();
    (Issuer::new(params, key), certificate.pem())
}

fn simulator(data: &Path, pki: &Pki) -> Peer {
    let env = pki.simulator_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Peer::simulate(data, "demis", &env)
}

/// A bed occupancy report of `location_id`, as FHIR JSON.
fn bed_report(report_id: &str, location_id: &str) -> Vec<u8> {
    let report = BedOccupancyReport {
        report_id: report_id.into(),
        report_date: None,
        location_id: location_id.into(),
        location: Facility::default(),
        beds: BedCounts {
            adults_occupied: 12,
            adults_operable: None,
            children_occupied: 3,
            children_operable: None,
        },
    };
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-24T14:30:00+01:00").unwrap();
    beds::build(&report, &mut RandomIds, now).unwrap().to_json()
}

fn delivery(key: &str, report_id: &str, body: Vec<u8>) -> Delivery {
    Delivery {
        idempotency_key: key.to_owned(),
        module: "bedreport".to_owned(),
        report_id: report_id.to_owned(),
        message_uuid: format!("uuid-{key}"),
        content_type: "application/fhir+json".to_owned(),
        body,
        signature: None,
        sender: None,
    }
}

fn post_bundle(client: &Client, url: &str, body: Vec<u8>) -> reqwest::blocking::Response {
    client
        .post(url)
        .header("content-type", "application/fhir+json")
        .body(body)
        .send()
        .unwrap()
}

/// Runs `meldewerk --data-dir DIR COMMAND --listen 127.0.0.1:0` with `env`, which must refuse
/// to start; its standard error.
fn refused_start(data: &Path, command: &[&str], env: &[(&str, &str)]) -> String {
    let output = std::process::Command::new(common::binary())
        .arg("--data-dir")
        .arg(data)
        .args(command)
        .args(["--listen", "127.0.0.1:0"])
        .env_remove("MELDEWERK_DATA_DIR")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn without_its_certificates_it_refuses_to_start() {
    let data = tempfile::tempdir().unwrap();
    let stderr = refused_start(data.path(), &["simulate", "demis"], &[]);
    assert!(
        stderr.contains(
            "transports.demis: `meldewerk simulate demis` serves TLS only and requires \
             facilities' client certificates"
        ),
        "{stderr}"
    );
}

#[test]
fn it_speaks_fhir_over_tls_to_facilities_with_a_certificate_only() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let peer = simulator(data.path(), &pki);
    assert!(peer.base.starts_with("https://127.0.0.1:"), "{}", peer.base);
    let facility = pki.client(Some("client"));

    let health: Value = facility
        .get(peer.url("/healthz"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(health, json!({"status": "ok", "simulator": "demis"}));
    // No certificate, or one of another CA: the handshake ends the connection.
    for stranger in [pki.client(None), pki.client(Some("stranger"))] {
        let refused = stranger.get(peer.url("/healthz")).send();
        assert!(refused.is_err(), "{refused:?}");
    }

    // A bare FHIR client: the bundle's own ids key it.
    let body = bed_report("BED-PLAIN", "987654");
    let response = post_bundle(&facility, &peer.url("/$process-notification"), body.clone());
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/fhir+json");
    let document = response.bytes().unwrap();
    let parameters: Value = serde_json::from_slice(&document).unwrap();
    assert_eq!(parameters["resourceType"], "Parameters");
    let Ok(answer::Answer::Accepted(receipt)) = answer::read(&document) else {
        panic!("no receipt in {parameters}");
    };
    assert_eq!(receipt.notification_id, "BED-PLAIN");
    assert_eq!(receipt.content_type, "application/pdf");
    // The same bundle again: the same answer, registered once.
    let again = post_bundle(&facility, &peer.url("/fhir/$process-notification"), body);
    assert_eq!(again.status(), 200);
    assert_eq!(again.bytes().unwrap(), document);
    let records = peer.received(&facility, "BED-PLAIN");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["repeat_submissions"], 1);
    assert_eq!(records[0]["decision"]["answer"], parameters);

    // A refusal: 422 with an OperationOutcome naming what is wrong, below a base path too.
    let response = post_bundle(
        &facility,
        &peer.url("/fhir/$process-notification"),
        bed_report("BED-UNKNOWN", "123123"),
    );
    assert_eq!(response.status(), 422);
    let outcome: Value = response.json().unwrap();
    assert_eq!(outcome["resourceType"], "OperationOutcome");
    assert_eq!(outcome["issue"][0]["severity"], "error");
    assert_eq!(
        outcome["issue"][0]["details"]["text"],
        "the hospital location 123123 is not registered with the reporting system"
    );

    // The wire protocol is not what this simulator speaks.
    let response = facility.post(peer.url("/deliveries")).send().unwrap();
    assert_eq!(response.status(), 404);
}

#[test]
fn the_service_client_is_answered_refused_and_faulted() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let peer = simulator(data.path(), &pki);
    let tester = pki.client(Some("client"));
    let service = pki.service(&format!("{}/fhir", peer.base));
    let runtime = tokio::runtime::Runtime::new().unwrap();

    let accepted = runtime
        .block_on(service.submit(delivery("k1", "BED-1", bed_report("BED-1", "987654"))))
        .unwrap();
    let Answer::Finished(Finished {
        outcome: Outcome::Success { receipt, .. },
        ..
    }) = accepted
    else {
        panic!("expected an acceptance, got {accepted:?}");
    };
    assert_eq!(receipt.media_type, "application/pdf");
    assert!(receipt.bytes.starts_with(b"%PDF"));

    let refused = runtime
        .block_on(service.submit(delivery("k2", "BED-2", bed_report("BED-2", "123123"))))
        .unwrap();
    assert_eq!(
        refused.finished().map(|f| f.outcome.clone()),
        Some(Outcome::Failure {
            reason: "the hospital location 123123 is not registered with the reporting system"
                .into()
        })
    );

    let response = tester
        .post(peer.url("/script/rules"))
        .json(&json!({"kind": "transient", "message": "Wartung", "count": 1}))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    match runtime.block_on(service.submit(delivery("k3", "BED-3", bed_report("BED-3", "987654")))) {
        Err(TransportError::Transient(message)) => {
            assert!(
                message.ends_with(
                    "/fhir/$process-notification: HTTP 503 Service Unavailable: Wartung"
                ),
                "{message}"
            )
        }
        other => panic!("expected a transient fault, got {other:?}"),
    }
    // The module and report id travel with the notification, for the received log.
    let records = peer.received(&tester, "BED-1");
    assert_eq!(records[0]["module"], "bedreport");
    assert_eq!(records[0]["idempotency_key"], "k1");
}

#[test]
fn killed_mid_delivery_and_started_again_nothing_is_lost_or_registered_twice() {
    let pki = Pki::new();
    let data = tempfile::tempdir().unwrap();
    let mut peer = simulator(data.path(), &pki);
    let tester = pki.client(Some("client"));
    let service = Arc::new(pki.service(&peer.base));
    let runtime = tokio::runtime::Runtime::new().unwrap();

    // One report registered before the crash.
    let before = delivery("k-before", "BED-BEFORE", bed_report("BED-BEFORE", "987654"));
    runtime.block_on(service.submit(before.clone())).unwrap();

    // One held in flight by the script when the process dies.
    let response = tester
        .post(peer.url("/script/rules"))
        .json(&json!({"kind": "latency", "ms": 600000, "report_id": "BED-KILL"}))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let in_flight = delivery("k-kill", "BED-KILL", bed_report("BED-KILL", "987654"));
    let submitting = Arc::clone(&service);
    let sent = in_flight.clone();
    let task = runtime.spawn(async move { submitting.submit(sent).await });
    // A system slow to answer has registered the notification all the same: the process dies
    // with the record on disk and the answer never sent.
    wait_until("the held notification registered", || {
        (peer.received(&tester, "BED-KILL").len() == 1).then_some(())
    });
    peer.kill();
    match runtime.block_on(task).unwrap() {
        Err(TransportError::Transient(_)) => {}
        other => panic!("expected a transient fault, got {other:?}"),
    }

    peer.start_again();
    // The retries find it registered, once, and get its receipt; nothing is registered again.
    let first = runtime.block_on(service.submit(in_flight.clone())).unwrap();
    let second = runtime.block_on(service.submit(in_flight)).unwrap();
    let receipt = |answer: &Answer| match answer.finished().map(|f| &f.outcome) {
        Some(Outcome::Success { receipt, .. }) => receipt.bytes.clone(),
        other => panic!("expected an acceptance, got {other:?}"),
    };
    assert_eq!(receipt(&first), receipt(&second));
    let records = peer.received(&tester, "BED-KILL");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["repeat_submissions"], 2);

    // What was registered before the crash is still there, and a retry of it registers nothing.
    runtime.block_on(service.submit(before)).unwrap();
    let records = peer.received(&tester, "BED-BEFORE");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["repeat_submissions"], 1);
}

#[test]
fn the_service_scripts_and_reads_its_in_process_reporting_system_and_needs_certificates_for_a_url()
{
    let dir = common::DataDir::new();
    let server = common::Server::start(&dir, &[]);
    let base = "/admin/api/v1/transports/demis";
    let answer = server.admin_post_json(
        &format!("{base}/script/rules"),
        &json!({"kind": "reject", "reason": "Test", "report_id": "BED-1"}),
    );
    assert_eq!(answer.status(), 200);
    let script: Value = server.admin_get(&format!("{base}/script")).json().unwrap();
    assert_eq!(script["rules"][0]["reason"], "Test", "{script}");
    let received = server.admin_get(&format!("{base}/received"));
    assert_eq!(received.status(), 200);
    let received: Value = received.json().unwrap();
    assert_eq!(received, json!({"messages": [], "next": null}));
    drop(server);

    // With a url, the service posts with a client certificate, and will not start without the
    // CA the endpoint's certificate chains to.
    let stderr = refused_start(
        dir.path(),
        &["serve"],
        &[
            ("MELDEWERK_OPERATOR__PASSWORD", common::OPERATOR.1),
            (
                "MELDEWERK_TRANSPORTS__DEMIS__URL",
                "https://127.0.0.1:9/fhir",
            ),
        ],
    );
    assert!(
        stderr.contains(
            "transports.demis.url is set: the reporting system authenticates the facility by \
             its client certificate, so ca (PEM of the CA the endpoint's certificate chains to) \
             is required"
        ),
        "{stderr}"
    );
}
