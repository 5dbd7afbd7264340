//! `hospreport` when the reporting system answers later than the submit may wait (the report
//! stays with the engine and is registered once, however often the end user sends the form
//! again), after the nightly cleanup (404, not 410), and in the production environment (a test
//! certificate does not send there).

mod common;
mod hospreport_common;

use common::wait_until;
use hospreport_common::*;
use serde_json::{json, Value};

/// The submit waits one second; the scripted reporting system takes three.
const WAIT: (&str, &str) = ("MELDEWERK_MODULES__HOSPREPORT__ANSWER_WAIT_SECS", "1");

/// Reads of the report: nothing until it succeeded (404), then the result; never another
/// status. `None` while there is none.
fn success_read(server: &common::Server, id: &str) -> Option<Value> {
    let answer = api_get(server, &format!("reports/{id}?peek=true"));
    match answer.status().as_u16() {
        404 => None,
        200 => {
            let result: Value = answer.json().unwrap();
            assert_eq!(result["status"], "SUCCESS", "{result}");
            Some(result)
        }
        other => panic!("a read answered {other}"),
    }
}

#[test]
fn a_slow_reporting_system_registers_the_report_once_however_often_the_user_sends_again() {
    let (_dir, server) = start(&[WAIT]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-SLOW";
    script(
        &server,
        &json!({"kind": "latency", "ms": 3000, "report_id": id}),
    );
    let (browser, form) = open(&server, &complete(Some(id), KNOWN_BSNR));

    // The submit stops waiting: 202, the form again with every value and a note.
    let (status, location, page) = post(&server, &browser, &form);
    assert_eq!((status, location), (202, None));
    assert!(page.html.contains("wird noch gesendet"), "{}", page.html);
    assert!(page.errors().is_empty(), "{:?}", page.errors());
    assert_eq!(page.get("Patient.Vorname"), Some("Bertha"));
    // Nothing to read but a success, never a pending report; the list names none yet.
    let early = success_read(&server, id);
    if early.is_none() {
        assert!(pending(&server).is_empty());
    }

    // The user sends the form again (as it came back) until the answer is there: each submit
    // waits for the report in delivery instead of sending another.
    send_until_accepted(&server, &browser, &page);
    assert!(success_read(&server, id).is_some());
    assert_eq!(pending(&server), [id]);

    let records = received(&server, id);
    assert_eq!(records.len(), 1, "registered once: {records:?}");
    assert_eq!(records[0]["decision"]["status"], "accepted");
    assert_valid_fhir(&records);
    // A retry after the success is the double-report protection's.
    assert_eq!(post(&server, &browser, &page).0, 409);
    assert_eq!(received(&server, id).len(), 1);
}

#[test]
fn a_report_refused_after_the_submit_stopped_waiting_opens_its_form_again_with_the_reason() {
    let (_dir, server) = start(&[WAIT]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-SLOW-REFUSED";
    script(
        &server,
        &json!({"kind": "latency", "ms": 3000, "report_id": id, "count": 1}),
    );
    script(
        &server,
        &json!({"kind": "reject", "reason": "Diagnose unplausibel (Test)", "report_id": id,
                "count": 1}),
    );
    let request = complete(Some(id), KNOWN_BSNR);
    let (browser, form) = open(&server, &request);
    assert_eq!(post(&server, &browser, &form).0, 202);

    // The user comes back by the link later: while the report is in delivery the link says it
    // was sent; once refused, it opens the form again, the reason above it, and no report.
    let link: Value = memento(&server, &request).json().unwrap();
    let url = server.url(&format!("{FORM}?m={}", link["memento"].as_str().unwrap()));
    let reopened = wait_until("the refusal reached the form", || {
        let page = browser.form(&url);
        assert_eq!(page.status, 200);
        page.errors()
            .iter()
            .any(|e| e.contains("Diagnose unplausibel (Test)"))
            .then_some(page)
    });
    assert!(success_read(&server, id).is_none());
    assert_eq!(reopened.get("Patient.Vorname"), Some("Bertha"));
    send(&server, &browser, &reopened);
    assert!(success_read(&server, id).is_some());
    assert_eq!(
        received(&server, id).len(),
        1,
        "the scripted refusal recorded nothing"
    );
}

#[test]
fn a_retry_with_other_values_waits_for_the_report_in_delivery_and_does_not_take_its_success() {
    let (_dir, server) = start(&[WAIT]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-SLOW-CHANGED";
    script(
        &server,
        &json!({"kind": "latency", "ms": 6000, "report_id": id}),
    );
    let (browser, form) = open(&server, &complete(Some(id), KNOWN_BSNR));
    assert_eq!(post(&server, &browser, &form).0, 202);

    // Sent again with a value the checks refuse and another name: the report in delivery is
    // waited for, not a 400 about a report that does not exist.
    let mut changed = common::Form {
        status: form.status,
        html: form.html.clone(),
        fields: form.fields.clone(),
    };
    changed.set("Patient.Geburtsdatum", "kein Datum");
    changed.set("Patient.Vorname", "Berta");
    let (status, _, page) = post(&server, &browser, &changed);
    assert_eq!(status, 202, "{:?}", page.errors());
    assert!(page.html.contains("wird noch gesendet"), "{}", page.html);
    // Once the report in delivery is accepted, its success is not this post's.
    let last = wait_until("the report in delivery ended", || {
        let (status, location, page) = post(&server, &browser, &changed);
        assert_ne!(
            status, 302,
            "the other values were never sent: {location:?}"
        );
        (status != 202).then_some((status, page))
    });
    assert_eq!(last.0, 409, "{}", last.1.html);
    let records = received(&server, id);
    assert_eq!(records.len(), 1, "registered once: {records:?}");
    // The values that were sent: the double-report protection's 409.
    assert_eq!(post(&server, &browser, &form).0, 409);
}

/// Asserts the page of a report that could not be delivered: no form, no reason of the engine's
/// (attempts, endpoints, faults), the operator named.
fn assert_undeliverable(page: &common::Form) {
    assert!(page.html.contains("Nicht zugestellt"), "{}", page.html);
    assert!(page.html.contains("Betrieb des Portals"), "{}", page.html);
    assert!(
        page.get("Patient.Vorname").is_none(),
        "no form: {}",
        page.html
    );
    for engine_words in ["Wartung", "attempts", "http", "discarded", "abgelehnt"] {
        assert!(
            !page.html.contains(engine_words),
            "{engine_words}: {}",
            page.html
        );
    }
}

/// Asserts that the report `id` of `request`, which ended without the reporting system's
/// decision, stays: the form posted (again) answers 400 with the page saying it could not be
/// delivered and sends nothing; the link, handed out again, opens that page instead of the
/// form; reads know only successes.
fn assert_stays_undeliverable(
    server: &common::Server,
    browser: &common::Browser,
    form: &common::Form,
    request: &Value,
    id: &str,
) {
    let (status, location, page) = post(server, browser, form);
    assert_eq!((status, location), (400, None));
    assert_undeliverable(&page);
    let link: Value = memento(server, request).json().unwrap();
    let url = server.url(&format!("{FORM}?m={}", link["memento"].as_str().unwrap()));
    let later = browser.form(&url);
    assert_eq!(later.status, 200);
    assert_undeliverable(&later);
    assert_eq!(api_get(server, &format!("reports/{id}")).status(), 404);
    assert!(pending(server).is_empty());
    assert!(received(server, id).is_empty());
}

#[test]
fn a_report_whose_delivery_ran_out_of_attempts_stays_and_its_id_is_not_sent_again() {
    let (_dir, server) = start(&[
        ("MELDEWERK_ENGINE__MAX_ATTEMPTS", "2"),
        ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "10"),
        ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "50"),
    ]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-GIVEN-UP";
    // Each attempt fails transiently (the system may have registered it all the same); a
    // third delivery of the id would be accepted.
    script(
        &server,
        &json!({"kind": "transient", "message": "Wartung", "count": 2, "report_id": id}),
    );
    let request = complete(Some(id), KNOWN_BSNR);
    let (browser, form) = open(&server, &request);
    let (status, location, page) = post(&server, &browser, &form);
    assert_eq!((status, location), (400, None));
    assert_undeliverable(&page);

    // Sending again sends nothing: the report stays, its id used.
    assert_stays_undeliverable(&server, &browser, &form, &request, id);
}

#[test]
fn a_report_an_operator_discarded_stays_and_its_id_is_not_sent_again() {
    // The first attempt fails and the next is a minute away: the job waits in the outbox.
    let (_dir, server) = start(&[
        WAIT,
        ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "60000"),
        ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "60000"),
    ]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-DISCARDED";
    script(
        &server,
        &json!({"kind": "transient", "message": "Wartung", "count": 1, "report_id": id}),
    );
    let request = complete(Some(id), KNOWN_BSNR);
    let (browser, form) = open(&server, &request);
    assert_eq!(post(&server, &browser, &form).0, 202);

    let job = wait_until("the job waits after its failed attempt", || {
        let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
        page["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["report"] == id && j["attempts"].as_u64() >= Some(1))
            .map(|j| j["id"].as_u64().unwrap())
    });
    let discarded = server.admin_post(&format!("/admin/api/v1/jobs/{job}/discard"));
    assert_eq!(discarded.status(), 200);

    // The next submit, as the form came back, finds the discarded report: nothing is sent
    // (the script would accept a second delivery now).
    assert_stays_undeliverable(&server, &browser, &form, &request, id);
}

#[test]
fn the_nightly_cleanup_removes_a_result_and_reads_answer_404() {
    let (_dir, server) = start(&[
        ("MELDEWERK_MODULES__HOSPREPORT__RETENTION_SECS", "3"),
        ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
    ]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-CLEANUP";
    let (browser, form) = open(&server, &complete(Some(id), KNOWN_BSNR));
    send(&server, &browser, &form);
    wait_until("the cleanup removed the result", || {
        success_read(&server, id).is_none().then_some(())
    });
    // 404 with and without peek, never 410; not listed; the id stays used.
    assert_eq!(api_get(&server, &format!("reports/{id}")).status(), 404);
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        404
    );
    assert!(pending(&server).is_empty());
    assert_eq!(post(&server, &browser, &form).0, 409);
    assert_valid_fhir(&received(&server, id));
}

#[test]
fn in_the_production_environment_a_test_certificate_sends_nothing() {
    let (_dir, server) = start(&[("MELDEWERK_MODULES__HOSPREPORT__ENVIRONMENT", "production")]);
    deposit_certificate(&server, KNOWN_BSNR);
    let (browser, form) = open(&server, &complete(Some("HOSP-PROD"), KNOWN_BSNR));
    let (status, _, page) = post(&server, &browser, &form);
    assert_eq!(status, 400);
    assert!(
        page.errors().iter().any(|e| e.contains("Produktivsystem")),
        "{:?}",
        page.errors()
    );
    assert!(received_all(&server).is_empty());
}

#[test]
fn settings_out_of_bounds_stop_the_start() {
    common::assert_module_settings_refused(
        "hospreport",
        &[
            (
                "ANSWER_WAIT_SECS",
                "0",
                "modules.hospreport: answer_wait_secs must be from 1 to 120",
            ),
            (
                "ENVIRONMENT",
                "staging",
                "modules.hospreport: unknown variant: found `staging`",
            ),
        ],
    );
}
