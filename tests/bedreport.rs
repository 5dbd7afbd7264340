//! The bed occupancy module's direct submission against the real server (spec/02 §2.5, §3,
//! §4.3, spec/04): `POST /report` answered with the reporting system's decision (accepted with a
//! receipt, refused with its reason, slower than the wait, a transient fault retried), the
//! status and its consumption, the list of reports not yet retrieved, a used id, another
//! user's report, missing credentials and a wait out of bounds. Every notification the
//! simulated reporting system recorded is validated as FHIR and compared with the DEMIS
//! example.

mod common;

use base64::Engine as _;
use common::demis::{assert_valid_fhir, complete_bed_report, received_notifications};
use common::*;
use serde_json::{json, Value};

const USER: &str = "klinikum";
const OTHER: &str = "nachbarklinik";
const API: &str = "/api/bedreport/v1";
const SCRIPT: &str = "/admin/api/v1/transports/demis/script/rules";

fn start(env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    dir.add_user(OTHER);
    let server = Server::start(&dir, env);
    (dir, server)
}

/// Status and body of `POST /report` as `user`.
fn submit_as(server: &Server, user: &str, body: &Value) -> (u16, Value) {
    let response = server.post_as(user, &format!("{API}/report"), body);
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// Status and body of `GET /status/{id}` (with `query`) as `user`.
fn status_as(server: &Server, user: &str, id: &str, query: &str) -> (u16, Value) {
    let response = server.get_as(user, &format!("{API}/status/{id}{query}"));
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

fn pending(server: &Server, user: &str) -> Vec<String> {
    let response = server.get_as(user, &format!("{API}/reports"));
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

fn script(server: &Server, rule: Value) {
    let answer = server.admin_post_json(SCRIPT, &rule);
    assert_eq!(answer.status(), 200, "{rule}");
}

/// The reporting system's records of report `id`.
fn received(server: &Server, id: &str) -> Vec<Value> {
    received_page(
        server,
        &format!("/admin/api/v1/transports/demis/received?module=bedreport&report={id}"),
    )
    .0
}

#[test]
fn an_accepted_report_answers_at_once_and_its_status_carries_the_receipt() {
    let (dir, mut server) = start(&[]);
    let (status, body) = submit_as(&server, USER, &complete_bed_report("BED-2026-0001"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"reportId": "BED-2026-0001", "succeeded": true, "errorMsg": null})
    );
    assert_eq!(pending(&server, USER), ["BED-2026-0001"]);
    // Another user sees neither the report nor its status.
    assert!(pending(&server, OTHER).is_empty());
    let (status, body) = status_as(&server, OTHER, "BED-2026-0001", "");
    assert_eq!(status, 404);
    assert_eq!(body, json!({"errors": ["report BED-2026-0001 not found"]}));

    // A peek leaves it on the list.
    let (status, peeked) = status_as(&server, USER, "BED-2026-0001", "?peek=true");
    assert_eq!(status, 200, "{peeked}");
    assert_eq!(pending(&server, USER), ["BED-2026-0001"]);
    // A read takes it off the list, and it can be read again.
    let (status, read) = status_as(&server, USER, "BED-2026-0001", "");
    assert_eq!(status, 200);
    assert_eq!(read, peeked);
    assert!(pending(&server, USER).is_empty());
    let (status, again) = status_as(&server, USER, "BED-2026-0001", "");
    assert_eq!(status, 200);
    assert_eq!(again, read);

    let members: Vec<&String> = read.as_object().unwrap().keys().collect();
    assert_eq!(
        members,
        [
            "base64Pdf",
            "errorMsg",
            "formName",
            "reportId",
            "sendDate",
            "succeeded"
        ]
    );
    assert_eq!(read["reportId"], "BED-2026-0001");
    assert_eq!(read["succeeded"], true);
    assert_eq!(read["errorMsg"], Value::Null);
    assert_eq!(read["formName"], "Bettenbelegung");
    let sent = chrono::DateTime::parse_from_rfc3339(read["sendDate"].as_str().unwrap());
    assert!(sent.is_ok(), "{read}");
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(read["base64Pdf"].as_str().unwrap())
        .unwrap();
    let text = checked_receipt_text(&pdf);
    assert!(text.contains("BED-2026-0001"), "{text}");
    assert!(text.contains("987654"), "{text}");

    // The id is used: a second report under it is refused, and nothing more is delivered.
    let (status, body) = submit_as(&server, USER, &complete_bed_report("BED-2026-0001"));
    assert_eq!(status, 409);
    assert_eq!(
        body,
        json!({"errors": ["report BED-2026-0001 has been sent already; a report id is used once, send a fresh one"]})
    );
    // Ids are per user: another user's report of the same id is another report.
    let (status, body) = submit_as(&server, OTHER, &complete_bed_report("BED-2026-0001"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(received(&server, "BED-2026-0001").len(), 2);
    assert_eq!(status_as(&server, USER, "unknown-id", "").0, 404);
    let (status, body) = status_as(&server, USER, "BED-2026-0001", "?peek=maybe");
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"errors": ["peek must be true or false, got \"maybe\""]})
    );

    let records = received_notifications(&server, "bedreport");
    assert_eq!(assert_valid_fhir(&records, "BedOccupancyExample.json"), 2);

    // The reporting system knows the sender by the transport's client certificate: the message
    // is not signed.
    let message = server.admin_get(&format!(
        "/admin/api/v1/reports/bedreport/BED-2026-0001/message?user={USER}"
    ));
    assert_eq!(message.status(), 200);
    assert!(message.headers().get("x-signature-kind").is_none());
    // The operator's lookup says so too.
    let page = server.admin_get(&format!(
        "/admin/reports?module=bedreport&id=BED-2026-0001&user={USER}"
    ));
    assert_eq!(page.status(), 200);
    let html = page.text().unwrap();
    let history = &html[html.find("id=\"history\"").unwrap()..];
    let history = &history[..history.find("</table>").unwrap()];
    assert!(
        history.contains("<td data-label=\"What\">message built</td>"),
        "{history}"
    );
    assert!(!history.contains("signed"), "{history}");

    // A health module's payload is stored with LZ4 (docs/decisions.md, "Payloads packed by
    // module"): what the server told its store at start.
    if dir.sled() {
        server.kill();
        let db = sled::Config::new()
            .path(dir.path().join("db"))
            .open()
            .unwrap();
        let key = format!("{USER}\0bedreport\0BED-2026-0001");
        for tree in ["submissions", "messages", "receipts"] {
            let stored = db.open_tree(tree).unwrap().get(&key).unwrap().unwrap();
            assert_eq!(stored[..2], [0, 2], "{tree}: packed with LZ4");
        }
    }
}

#[test]
fn a_valid_report_the_reporting_system_refuses_is_answered_200_with_its_reason() {
    let (_dir, server) = start(&[]);
    script(
        &server,
        json!({"kind": "reject", "reason": "Meldung inhaltlich unplausibel", "report_id": "BED-REFUSED"}),
    );
    let (status, body) = submit_as(&server, USER, &complete_bed_report("BED-REFUSED"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["succeeded"], false);
    assert_eq!(body["errorMsg"], "Meldung inhaltlich unplausibel");

    // Its own checks refuse a location it does not know, with the reason.
    let mut unknown = complete_bed_report("BED-UNKNOWN");
    unknown["StandortId"] = json!("123123");
    let (status, body) = submit_as(&server, USER, &unknown);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({
            "reportId": "BED-UNKNOWN",
            "succeeded": false,
            "errorMsg": "the hospital location 123123 is not registered with the reporting system"
        })
    );

    // The status says the same and has no receipt; a refused id is used all the same.
    let (status, read) = status_as(&server, USER, "BED-UNKNOWN", "");
    assert_eq!(status, 200);
    assert_eq!(read["succeeded"], false);
    assert_eq!(read["errorMsg"], body["errorMsg"]);
    assert_eq!(read["base64Pdf"], Value::Null);
    assert_eq!(pending(&server, USER), ["BED-REFUSED"]);
    assert_eq!(
        submit_as(&server, USER, &complete_bed_report("BED-UNKNOWN")).0,
        409
    );

    // The scripted refusal came before the reporting system recorded anything; its own
    // refusal is recorded with its reason.
    let records = received_notifications(&server, "bedreport");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["report_id"], "BED-UNKNOWN");
    assert_eq!(records[0]["decision"]["status"], "refused");
    assert_valid_fhir(&records, "BedOccupancyExample.json");
}

#[test]
fn a_transient_fault_is_retried_within_the_wait_and_registered_once() {
    let (_dir, server) = start(&[]);
    script(
        &server,
        json!({"kind": "transient", "message": "Wartung", "count": 1, "report_id": "BED-RETRY"}),
    );
    let (status, body) = submit_as(&server, USER, &complete_bed_report("BED-RETRY"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["succeeded"], true, "{body}");
    let records = received(&server, "BED-RETRY");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["repeat_submissions"], 0);
    assert_eq!(records[0]["decision"]["status"], "accepted");
    // The script's fault was used up by the first attempt: the engine made a second.
    let script: Value = server
        .admin_get("/admin/api/v1/transports/demis/script")
        .json()
        .unwrap();
    assert_eq!(script["rules"], json!([]), "{script}");
    assert_valid_fhir(&records, "BedOccupancyExample.json");
}

#[test]
fn a_reporting_system_slower_than_the_wait_is_answered_202_and_the_report_goes_on() {
    // The reporting system holds the first attempt far longer than the engine waits for a
    // call (5 s), which waits far longer than the request (1 s): the request is answered while
    // the report is undecided, and the engine's retry, a repeat of the registered notification,
    // gets the decision at once.
    let (_dir, server) = start(&[
        ("MELDEWERK_MODULES__BEDREPORT__ANSWER_WAIT_SECS", "1"),
        ("MELDEWERK_ENGINE__TRANSPORT_TIMEOUT_SECS", "5"),
    ]);
    script(
        &server,
        json!({"kind": "latency", "ms": 600000, "report_id": "BED-SLOW"}),
    );
    let (status, body) = submit_as(&server, USER, &complete_bed_report("BED-SLOW"));
    assert_eq!(status, 202, "{body}");
    let undecided = "the reporting system has not decided yet; the report is being delivered, \
                     read GET /api/bedreport/v1/status/{reportId} for its outcome";
    assert_eq!(
        body,
        json!({"reportId": "BED-SLOW", "succeeded": false, "errorMsg": undecided})
    );
    // Undecided: the status says so (202) and consumes nothing.
    let (status, read) = status_as(&server, USER, "BED-SLOW", "");
    assert_eq!(status, 202, "{read}");
    assert_eq!(read["succeeded"], false);
    assert_eq!(read["errorMsg"], undecided);
    assert_eq!(read["base64Pdf"], Value::Null);
    assert_eq!(read["formName"], "Bettenbelegung");
    assert_eq!(pending(&server, USER), ["BED-SLOW"]);
    // The engine goes on: the decision arrives and the status answers it.
    let decided = wait_until("the slow report is decided", || {
        let (status, read) = status_as(&server, USER, "BED-SLOW", "?peek=true");
        (status == 200).then_some(read)
    });
    assert_eq!(decided["succeeded"], true, "{decided}");
    assert!(decided["base64Pdf"].is_string());
    // Registered once: the retry was answered with the first registration's answer.
    let records = received(&server, "BED-SLOW");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["repeat_submissions"], 1);
    assert_valid_fhir(&records, "BedOccupancyExample.json");
}

#[test]
fn every_endpoint_needs_the_api_users_credentials() {
    let (_dir, server) = start(&[]);
    let client = server.client();
    let requests = [
        client
            .post(server.url(&format!("{API}/report")))
            .json(&complete_bed_report("BED-X")),
        client
            .post(server.url(&format!("{API}/memento")))
            .json(&complete_bed_report("BED-X")),
        client.get(server.url(&format!("{API}/reports"))),
        client.get(server.url(&format!("{API}/status/BED-X"))),
        client
            .get(server.url(&format!("{API}/status/BED-X")))
            .basic_auth(USER, Some("wrong password")),
    ];
    for request in requests {
        let response = request.send().unwrap();
        assert_eq!(response.status(), 401, "{}", response.url());
        assert!(response.headers().contains_key("www-authenticate"));
        assert_eq!(response.text().unwrap(), "");
    }
    assert!(received_notifications(&server, "bedreport").is_empty());
}

#[test]
fn a_wait_out_of_bounds_stops_the_start() {
    for value in ["0", "301"] {
        let stderr = refused_start(&[("MELDEWERK_MODULES__BEDREPORT__ANSWER_WAIT_SECS", value)]);
        assert!(
            stderr.contains("modules.bedreport: answer_wait_secs must be from 1 to 300"),
            "{value}: {stderr}"
        );
    }
}
