//! `GET /api/labreport/v1/reports[/{reportId}]` against the real server (spec/02 §2.2, §3):
//! the result's members for SUCCESS and for FAILURE (the reporting system's reason, scripted),
//! a transient fault retried and the notification registered once, consumption and `peek`,
//! 410 after consumption, another user's report 404, and 404 once the cleanup removed a result.

mod common;
mod labreport_support;

use common::*;
use labreport_support::*;
use serde_json::{json, Value};

const SCRIPT: &str = "/admin/api/v1/transports/demis/script/rules";

fn read(server: &Server, user: &str, id: &str, peek: bool) -> reqwest::blocking::Response {
    let query = if peek { "?peek=true" } else { "" };
    server.get_as(user, &format!("{API}/reports/{id}{query}"))
}

fn pending(server: &Server) -> Value {
    server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap()
}

#[test]
fn a_success_is_read_with_peek_then_consumed_once_then_410() {
    let (_dir, server) = start(&[]);
    assert_eq!(
        read(&server, USER, "lab-r-1", true).status(),
        404,
        "no report yet"
    );
    let id = send(&server, &standard("lab-r-1"), "Norovirus");
    let peeked = final_result(&server, &id, "SUCCESS");
    let members: Vec<&str> = peeked
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        members,
        [
            "description",
            "diseaseCode",
            "failureReason",
            "module",
            "receiptPdf",
            "reportId",
            "status",
            "submittedAt"
        ]
    );
    assert_registered_once_and_valid(&server, &id, "Norovirus");
    // The reporting system knows the laboratory by its certificate: the message is not signed.
    let message = server.admin_get(&format!(
        "/admin/api/v1/reports/labreport/{id}/message?user={USER}"
    ));
    assert_eq!(message.status(), 200);
    assert!(message.headers().get("x-signature-kind").is_none());
    assert_eq!(peeked["reportId"], "lab-r-1");
    assert_eq!(peeked["module"], "labreport");
    assert_eq!(peeked["diseaseCode"], "Norovirus");
    assert_eq!(peeked["description"], "Erregernachweis Norovirus");
    assert_eq!(peeked["failureReason"], Value::Null);
    assert!(peeked["receiptPdf"].as_str().is_some_and(|r| r.len() > 100));
    assert!(chrono::DateTime::parse_from_rfc3339(peeked["submittedAt"].as_str().unwrap()).is_ok());

    // Another user of the same customer does not see it.
    assert_eq!(read(&server, OTHER, &id, true).status(), 404);
    assert_eq!(read(&server, OTHER, &id, false).status(), 404);

    assert_eq!(pending(&server), json!([id]));
    let again = read(&server, USER, &id, true);
    assert_eq!(again.status(), 200, "peek is repeatable");
    let consumed = read(&server, USER, &id, false);
    assert_eq!(consumed.status(), 200);
    assert_eq!(consumed.json::<Value>().unwrap(), peeked);
    assert_eq!(pending(&server), json!([]));
    for peek in [false, true] {
        let gone = read(&server, USER, &id, peek);
        assert_eq!(gone.status(), 410);
        assert_eq!(
            gone.json::<Value>().unwrap(),
            json!({"errors": ["report lab-r-1 was already retrieved (without peek=true)"]})
        );
    }
}

#[test]
fn a_notification_the_reporting_system_refuses_is_a_failure_with_its_reason() {
    let (_dir, server) = start(&[]);
    let rule = json!({"kind": "reject", "report_id": "lab-r-2",
        "reason": "Meldung abgelehnt: Erregernachweis unplausibel (Code 4711)"});
    assert_eq!(server.admin_post_json(SCRIPT, &rule).status(), 200);
    let id = send(&server, &standard("lab-r-2"), "Influenza");
    let result = final_result(&server, &id, "FAILURE");
    assert_eq!(
        result["failureReason"],
        "Meldung abgelehnt: Erregernachweis unplausibel (Code 4711)"
    );
    assert_eq!(result["receiptPdf"], Value::Null);
    assert_eq!(result["diseaseCode"], "Influenza");
    // The next report goes through.
    let next = send(&server, &standard("lab-r-3"), "Influenza");
    final_result(&server, &next, "SUCCESS");
    // A refused notification is not registered; the next one is.
    assert!(notifications(&server, &id).is_empty());
    assert_registered_once_and_valid(&server, &next, "Influenza");
}

#[test]
fn a_transient_fault_is_retried_and_the_notification_registered_once() {
    let (_dir, server) = start(&QUICK_RETRIES);
    let rule = json!({"kind": "transient", "message": "Wartungsfenster", "count": 2,
        "report_id": "lab-r-4"});
    assert_eq!(server.admin_post_json(SCRIPT, &rule).status(), 200);
    let id = send(&server, &anonymous("lab-r-4"), "Sarscov2");
    let result = final_result(&server, &id, "SUCCESS");
    assert!(result["receiptPdf"].is_string());
    let records = notifications(&server, &id);
    assert_eq!(records.len(), 1, "registered once: {records:?}");
    assert_eq!(records[0]["repeat_submissions"], 0);
    let log = server.settled_log();
    let retried = "transient error; retrying later report=labor/labreport/lab-r-4";
    assert_eq!(log.matches(retried).count(), 2, "{log}");
    assert_valid_laboratory_notifications(&[(records[0].clone(), "CVDP")]);
}

#[test]
fn a_report_still_in_delivery_has_no_result_and_is_not_listed_until_decided() {
    let (_dir, server) = start(&QUICK_RETRIES);
    let rule = json!({"kind": "transient", "message": "Wartungsfenster", "report_id": "lab-r-6"});
    assert_eq!(server.admin_post_json(SCRIPT, &rule).status(), 200);
    let id = send(&server, &standard("lab-r-6"), "Rsv");
    // The engine retries: until the reporting system decides, there is no result.
    wait_until("a retry", || {
        server
            .settled_log()
            .contains("transient error; retrying later report=labor/labreport/lab-r-6")
            .then_some(())
    });
    assert_eq!(read(&server, USER, &id, true).status(), 404);
    assert_eq!(read(&server, USER, &id, false).status(), 404);
    assert_eq!(pending(&server), json!([]));
    let reset = server
        .client()
        .delete(server.url("/admin/api/v1/transports/demis/script"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .send()
        .unwrap();
    assert_eq!(reset.status(), 200);
    final_result(&server, &id, "SUCCESS");
    assert_eq!(pending(&server), json!([id]));
    assert_registered_once_and_valid(&server, &id, "Rsv");
}

#[test]
fn the_cleanup_removes_a_result_after_its_retention_then_reads_answer_404() {
    let (_dir, server) = start(&[
        ("MELDEWERK_MODULES__LABREPORT__RETENTION_SECS", "2"),
        ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
    ]);
    let id = send(&server, &standard("lab-r-5"), "Rsv");
    final_result(&server, &id, "SUCCESS");
    assert_registered_once_and_valid(&server, &id, "Rsv");
    wait_until("the cleanup", || {
        (read(&server, USER, &id, true).status() == 404).then_some(())
    });
    let gone = read(&server, USER, &id, false);
    assert_eq!(gone.status(), 404);
    assert_eq!(
        gone.json::<Value>().unwrap(),
        json!({"errors": ["report lab-r-5 not found"]})
    );
}
