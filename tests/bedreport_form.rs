//! The bed occupancy module's interactive way against the real server (spec/02 §2.5, §4.3):
//! the memento answers `{memento}` only, the form at `/bedreport/pm/De/Bettenbelegung?m=…`
//! (reached with a `/bal/` login) is pre-filled from it, refuses a report without what every
//! report must give, and sends one that has it to the reporting system as a FHIR
//! `ReportBundle`, validated against the DEMIS example.

mod common;

use common::demis::{assert_valid_fhir, received_notifications};
use common::*;
use serde_json::{json, Value};

const USER: &str = "klinikum";
const FORM: &str = "/bedreport/pm/De/Bettenbelegung";

fn start() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// Status and body of a memento request.
fn memento(server: &Server, body: &Value) -> (u16, Value) {
    let response = server.memento_in("bedreport", USER, body);
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// Logs in at `/bal/` with the user's credentials in the URL, as an integration's browser
/// does, and opens the form of `memento`.
fn open_form(server: &Server, browser: &Browser, memento: &str) -> Form {
    let with_userinfo = server.base.replacen(
        "http://",
        &format!("http://{USER}:correct%20horse%20battery@"),
        1,
    );
    let response = browser.get(&format!("{with_userinfo}/bal{FORM}?m={memento}"));
    assert_eq!(response.status(), 302);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, format!("{FORM}?m={memento}"));
    browser.form(&server.url(&location))
}

#[test]
fn the_memento_answers_the_memento_only_and_checks_the_fields() {
    let (_dir, server) = start();
    let (status, body) = memento(&server, &json!({"reportId": "BED-M-1"}));
    assert_eq!(status, 200, "{body}");
    let members: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(members, ["memento"]);
    assert!(!body["memento"].as_str().unwrap().is_empty());

    // Only reportId is required; the members given are checked as in a direct submission.
    let (status, body) = memento(&server, &json!({"StandortId": "98765"}));
    assert_eq!(status, 400);
    let mut errors: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        ["StandortId must be 6 digits", "reportId must not be null"]
    );
    let (status, body) = memento(
        &server,
        &json!({"reportId": "BED-M-2", "numbers": {"kinder_betten_belegt": -1, "betten": 3}}),
    );
    assert_eq!(status, 400);
    assert_eq!(body["errors"].as_array().unwrap().len(), 2, "{body}");
}

#[test]
fn the_form_is_prefilled_refuses_what_is_missing_and_sends_the_report() {
    let (_dir, server) = start();
    let (status, body) = memento(
        &server,
        &json!({
            "reportId": "BED-FORM-1",
            "StandortId": "987654",
            "Standortname": "Klinikum Mitte, Standort Nord",
            "numbers": {"erwachsenen_betten_belegt": 221}
        }),
    );
    assert_eq!(status, 200, "{body}");
    let memento = body["memento"].as_str().unwrap().to_owned();
    let browser = Browser::new();
    let mut form = open_form(&server, &browser, &memento);
    assert_eq!(form.status, 200, "{}", form.html);
    assert_eq!(form.get("StandortId"), Some("987654"));
    assert_eq!(
        form.get("Standortname"),
        Some("Klinikum Mitte, Standort Nord")
    );
    assert_eq!(form.get("numbers.erwachsenen_betten_belegt"), Some("221"));
    assert_eq!(form.action(), FORM);
    assert!(
        form.html.contains("Bettenbelegung absenden"),
        "{}",
        form.html
    );
    // No signature: the portal signs a statistic as its sender.
    assert!(!form.html.contains("signatur.name"), "{}", form.html);

    // What every report must give is asked for, each at its field; nothing is sent.
    let refused = browser.submit_expecting_form(&server, &form);
    assert_eq!(refused.status, 422);
    let errors = refused.errors();
    for expected in [
        "Institutionskennzeichen (IK): Pflichtangabe",
        "Straße: Pflichtangabe",
        "Hausnummer: Pflichtangabe",
        "Postleitzahl: Pflichtangabe",
        "Ort: Pflichtangabe",
        "Belegte Betten, Kinder: Pflichtangabe",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{expected}: {errors:?}"
        );
    }
    assert!(!errors.iter().any(|e| e.contains("Telefon")), "{errors:?}");
    assert!(received_notifications(&server, "bedreport").is_empty());

    // A session's form only: without its CSRF token nothing is sent.
    let mut forged = Form {
        status: form.status,
        html: form.html.clone(),
        fields: form.fields.clone(),
    };
    forged.set("csrf", "forged");
    assert_eq!(browser.submit(&server, &forged).status(), 403);

    for (name, value) in [
        ("IK_Nummer", "261101015"),
        ("Strasse", "Chausseestraße"),
        ("Hausnummer", "12"),
        ("PLZ", "10115"),
        ("Ort", "Berlin"),
        ("numbers.kinder_betten_belegt", "37"),
        ("numbers.kinder_betten_betrieben", "40"),
    ] {
        form.set(name, value);
    }
    let response = browser.submit(&server, &form);
    assert_eq!(response.status(), 303, "{:?}", page_errors(response));
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, format!("{FORM}/sent?id=BED-FORM-1"));
    let confirmation = browser.get(&server.url(&location));
    assert_eq!(confirmation.status(), 200);
    let page = confirmation.text().unwrap();
    assert!(page.contains("Bettenbelegung abgesendet"), "{page}");
    assert!(
        page.contains("Bericht (Krankenhausbettenbelegungsstatistik)"),
        "{page}"
    );
    assert!(page.contains("987654"), "{page}");

    // The integrator reads the outcome; the reporting system registered it once.
    let status = wait_until("the form's report is decided", || {
        let response = server.get_as(USER, "/api/bedreport/v1/status/BED-FORM-1?peek=true");
        (response.status() == 200).then(|| response.json::<Value>().unwrap())
    });
    assert_eq!(status["succeeded"], true, "{status}");
    assert_eq!(status["formName"], "Bettenbelegung");
    assert!(status["base64Pdf"].is_string());
    let records = received_notifications(&server, "bedreport");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["report_id"], "BED-FORM-1");
    assert_eq!(records[0]["notification_id"], "BED-FORM-1");
    assert_valid_fhir(&records, "BedOccupancyExample.json");

    // Sent again from the same page: refused, nothing delivered twice.
    let response = browser.submit_to(&server, FORM, &form);
    assert_eq!(response.status(), 409);
    // The link again opens the page saying it was sent, not the form.
    let again = open_form(&server, &browser, &memento);
    assert_eq!(again.status, 200);
    assert!(
        !again.html.contains("Bettenbelegung absenden"),
        "{}",
        again.html
    );
    assert!(
        again.html.contains(&format!("{FORM}/sent?id=BED-FORM-1")),
        "{}",
        again.html
    );
    assert_eq!(received_notifications(&server, "bedreport").len(), 1);
}
