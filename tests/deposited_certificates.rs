//! The certificates on the wire: `meldewerk simulate demis` as its own process, serving TLS and
//! taking only client certificates of its CA; the service in `url` mode with that CA configured.
//! Reports that name their facility (hospreport, labreport) present the PKCS#12 certificate
//! deposited through the operator API for the report's BSNR in the module's environment: a
//! certificate of another CA is refused in the handshake, a missing one is not presented at
//! all, and in both cases nothing is registered and the report waits (retried) until a usable
//! certificate is deposited, which the next attempt presents. A bed occupancy report names no
//! BSNR and goes with the service's own certificate, `client_certificate`/`client_key`.

mod common;
mod hospreport_common;
mod labreport_support;

use common::deposited::{
    deposit_pkcs12, last_error, no_certificate, pairs, remove_certificate, TlsReportingSystem,
};
use common::pkcs12::{pkcs12, TestCa};
use common::{wait_until, DataDir, Server};
use hospreport_common as hosp;
use labreport_support as lab;
use serde_json::{json, Value};

#[test]
fn the_deposited_certificate_of_the_report_s_facility_is_what_the_reporting_system_sees() {
    let system = TlsReportingSystem::start();
    let mut env = system.service_env();
    env.push((
        "MELDEWERK_MODULES__HOSPREPORT__ANSWER_WAIT_SECS".into(),
        "1".into(),
    ));
    let (_dir, server) = hosp::start(&pairs(&env));
    let facility = system.ca.issue("Klinikum Mitte", 2040);
    let good = pkcs12(&facility, &system.ca);
    let tester = system.tester(&facility);
    let bsnr = hosp::KNOWN_BSNR;

    // The facility's certificate of the reporting system's CA, deposited: accepted.
    assert_eq!(deposit_pkcs12(&server, bsnr, &good), 201);
    let (browser, form) = hosp::open(&server, &hosp::complete(Some("HOSP-CERT-1"), bsnr));
    hosp::send_until_accepted(&server, &browser, &form);
    let records = system.received(&tester, "HOSP-CERT-1");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
    let result: Value = hosp::api_get(&server, "reports/HOSP-CERT-1?peek=true")
        .json()
        .unwrap();
    assert_eq!(result["status"], "SUCCESS", "{result}");
    assert!(result["receiptPdf"].is_string(), "{result}");

    // A certificate of another CA deposited in its place: presented from the next delivery on,
    // and refused in the handshake. Nothing is registered; the report waits.
    let stranger_ca = TestCa::new("Another CA");
    let stranger = pkcs12(&stranger_ca.issue("Klinikum Mitte", 2040), &stranger_ca);
    assert_eq!(deposit_pkcs12(&server, bsnr, &stranger), 200);
    let (browser, form) = hosp::open(&server, &hosp::complete(Some("HOSP-CERT-2"), bsnr));
    let (status, location, page) = hosp::post(&server, &browser, &form);
    assert_eq!((status, location), (202, None), "{:?}", page.errors());
    let error = wait_until("a failed attempt", || last_error(&server, "HOSP-CERT-2"));
    // The simulator's TLS refuses the unknown issuer: an alert the client reads as a failed
    // connection, the same as a network fault.
    let operation = format!(
        "transient transport error: {}/$process-notification",
        system.url()
    );
    assert!(
        error.starts_with(&operation) && error.contains("UnknownCA"),
        "{error}"
    );
    assert!(system.received(&tester, "HOSP-CERT-2").is_empty());

    // Removed: nothing is presented, nor sent, and the error says why.
    assert_eq!(remove_certificate(&server, bsnr), 204);
    let error = wait_until("an attempt without a certificate", || {
        last_error(&server, "HOSP-CERT-2").filter(|e| e.starts_with("refused: "))
    });
    assert_eq!(error, no_certificate(bsnr, "test"));
    assert!(system.received(&tester, "HOSP-CERT-2").is_empty());

    // The right certificate deposited again: the waiting report goes through, registered once.
    assert_eq!(deposit_pkcs12(&server, bsnr, &good), 201);
    hosp::send_until_accepted(&server, &browser, &form);
    let records = system.received(&tester, "HOSP-CERT-2");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
    hosp::assert_valid_fhir(&records);
}

/// `GET /api/labreport/v1/reports/{id}?peek=true` as the laboratory's user: status and body.
fn lab_result(server: &Server, id: &str) -> (u16, Value) {
    let answer = server.get_as(lab::USER, &format!("{}/reports/{id}?peek=true", lab::API));
    let status = answer.status().as_u16();
    (status, answer.json().unwrap_or(Value::Null))
}

#[test]
fn a_laboratory_report_waits_for_the_laboratory_s_certificate_and_is_then_sent_with_it() {
    let system = TlsReportingSystem::start();
    let (_dir, mut server) = lab::start(&pairs(&system.service_env()));
    let laboratory = system.ca.issue("Labor Berlin Mitte", 2040);
    let tester = system.tester(&laboratory);

    // No certificate deposited for the laboratory: the submit is taken all the same (no check
    // at the form), and the report waits in delivery, the job saying why; nothing is sent.
    let id = lab::send(&server, &lab::standard("LAB-CERT-1"), "Influenza");
    let error = wait_until("an attempt without a certificate", || {
        last_error(&server, &id)
    });
    assert_eq!(error, no_certificate(lab::BSNR, "test"));
    assert!(system.received(&tester, &id).is_empty());
    // Not decided yet: no result (spec/02 §3).
    assert_eq!(lab_result(&server, &id).0, 404);

    // The laboratory's certificate deposited: the next attempt presents it, and the report is
    // registered once, its result SUCCESS with the receipt.
    assert_eq!(
        deposit_pkcs12(&server, lab::BSNR, &pkcs12(&laboratory, &system.ca)),
        201
    );
    let result = lab::final_result(&server, &id, "SUCCESS");
    assert!(
        result["receiptPdf"].as_str().is_some_and(|r| r.len() > 100),
        "{result}"
    );
    assert_eq!(result["failureReason"], Value::Null, "{result}");
    let records = system.received(&tester, &id);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
    lab::assert_valid_laboratory_notifications(&[(records[0].clone(), lab::suffix("Influenza"))]);

    // With the certificate there, the next report goes at once.
    let id = lab::send(&server, &lab::standard("LAB-CERT-2"), "Sarscov2");
    let result = lab::final_result(&server, &id, "SUCCESS");
    assert!(result["receiptPdf"].is_string(), "{result}");
    assert_eq!(system.received(&tester, &id).len(), 1);

    // Sent to the production environment, the laboratory's test certificate is not presented.
    server.set_env("MELDEWERK_MODULES__LABREPORT__ENVIRONMENT", "production");
    server.restart();
    let id = lab::send(&server, &lab::standard("LAB-CERT-3"), "Rsv");
    let error = wait_until("an attempt without a production certificate", || {
        last_error(&server, &id)
    });
    assert_eq!(error, no_certificate(lab::BSNR, "production"));
    assert!(system.received(&tester, &id).is_empty());
}

#[test]
fn a_laboratory_report_whose_certificate_never_comes_fails_with_the_reason() {
    let system = TlsReportingSystem::start();
    let mut env = system.service_env();
    env.retain(|(key, _)| key != "MELDEWERK_ENGINE__MAX_ATTEMPTS");
    env.push(("MELDEWERK_ENGINE__MAX_ATTEMPTS".into(), "2".into()));
    let (_dir, server) = lab::start(&pairs(&env));
    let id = lab::send(&server, &lab::standard("LAB-CERT-4"), "Norovirus");
    let result = lab::final_result(&server, &id, "FAILURE");
    let reason = result["failureReason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!(
            "no certificate is deposited for BSNR {} in the test environment",
            lab::BSNR
        )),
        "{result}"
    );
    assert_eq!(result["receiptPdf"], Value::Null, "{result}");
}

#[test]
fn a_bed_occupancy_report_goes_with_the_service_s_own_certificate() {
    let system = TlsReportingSystem::start();
    // The service's certificate of the reporting system's CA, as PEM files; no facility
    // certificate is deposited at all.
    let own = system.ca.issue("Meldeportal", 2040);
    let mut env = system.service_env();
    env.extend(system.client_files_env(&own));
    let dir = DataDir::new();
    dir.add_user("klinikum");
    let server = Server::start(&dir, &pairs(&env));

    let report = common::demis::complete_bed_report("BED-CERT-1");
    let answer = server.post_as("klinikum", "/api/bedreport/v1/report", &report);
    assert_eq!(answer.status(), 200);
    assert_eq!(
        answer.json::<Value>().unwrap(),
        json!({"reportId": "BED-CERT-1", "succeeded": true, "errorMsg": null})
    );
    let records = system.received(&system.tester(&own), "BED-CERT-1");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted", "{records:?}");
}

#[test]
fn a_laboratory_environment_other_than_test_or_production_stops_the_start() {
    common::assert_module_settings_refused(
        "labreport",
        &[
            (
                "ENVIRONMENT",
                "staging",
                "modules.labreport: unknown variant: found `staging`",
            ),
            (
                "ENVIROMENT",
                "test",
                "modules.labreport: unknown field: found `enviroment`",
            ),
        ],
    );
}
