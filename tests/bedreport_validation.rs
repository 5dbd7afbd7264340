//! The strict validation of the bed occupancy module's direct submission (`POST /report`,
//! spec/02 §2.5, §7, §8, spec/04) against the real server: every rule answers 400 with
//! `{"errors": [...]}` strings naming the fields, all problems at once; what the rules allow
//! (optional details, more beds occupied than operated, zero) is sent. Nothing refused reaches
//! the reporting system.

mod common;

use common::demis::{assert_valid_fhir, complete_bed_report, received_notifications};
use common::*;
use serde_json::{json, Value};

const USER: &str = "klinikum";
const REPORT: &str = "/api/bedreport/v1/report";

fn start() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// `complete_bed_report(id)` with `change` applied to it.
fn changed(id: &str, change: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut body = complete_bed_report(id);
    change(body.as_object_mut().unwrap());
    body
}

fn numbers(body: &mut serde_json::Map<String, Value>) -> &mut serde_json::Map<String, Value> {
    body.get_mut("numbers").unwrap().as_object_mut().unwrap()
}

/// Posts `body` and expects 400 with exactly `errors` (in any order).
fn assert_refused(server: &Server, body: &Value, errors: &[&str]) {
    let response = server.post_as(USER, REPORT, body);
    assert_eq!(response.status(), 400, "{body}");
    let answer: Value = response.json().unwrap();
    let mut got: Vec<String> = answer["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    got.sort();
    let mut expected: Vec<String> = errors.iter().map(|e| (*e).to_owned()).collect();
    expected.sort();
    assert_eq!(got, expected, "{body}");
    assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
}

/// Posts `body` and expects the reporting system's acceptance.
fn assert_sent(server: &Server, body: &Value) {
    let response = server.post_as(USER, REPORT, body);
    let status = response.status();
    let answer: Value = response.json().unwrap();
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["succeeded"], true, "{answer}");
}

#[test]
fn every_rule_of_the_direct_submission_is_answered_400_naming_the_fields() {
    let (_dir, server) = start();
    let whole = "numbers.kinder_betten_belegt must be a whole number from 0 to 100000";
    // The id.
    assert_refused(
        &server,
        &changed("", |b| drop(b.remove("reportId"))),
        &["reportId must not be null"],
    );
    assert_refused(
        &server,
        &changed("", |b| drop(b.insert("reportId".into(), json!(7)))),
        &["reportId must be a string"],
    );
    assert_refused(
        &server,
        &complete_bed_report("  "),
        &["reportId must not be empty"],
    );
    assert_refused(
        &server,
        &complete_bed_report(&"B".repeat(129)),
        &["reportId must have at most 128 characters"],
    );
    assert_refused(
        &server,
        &complete_bed_report("B-1\n"),
        &["reportId must not contain control characters"],
    );
    // Location id and institution code: digits of their length, as text.
    for wrong in [
        json!("98765"),
        json!("9876543"),
        json!("98765a"),
        json!(987654),
    ] {
        let body = changed("B-1", |b| drop(b.insert("StandortId".into(), wrong)));
        assert_refused(&server, &body, &["StandortId must be 6 digits"]);
    }
    for wrong in [json!("26110101"), json!("2611010150"), json!("26110101X")] {
        let body = changed("B-1", |b| drop(b.insert("IK_Nummer".into(), wrong)));
        assert_refused(&server, &body, &["IK_Nummer must be 9 digits"]);
    }
    // Counts: whole numbers, none negative, none absurd.
    for wrong in [
        json!(-1),
        json!(1.5),
        json!(37.0),
        json!("37"),
        json!(100001),
        json!(true),
    ] {
        let body = changed("B-1", |b| {
            drop(numbers(b).insert("kinder_betten_belegt".into(), wrong))
        });
        assert_refused(&server, &body, &[whole]);
    }
    let body = changed("B-1", |b| {
        drop(numbers(b).insert("erwachsenen_betten_betrieben".into(), json!(-250)))
    });
    assert_refused(
        &server,
        &body,
        &["numbers.erwachsenen_betten_betrieben must be a whole number from 0 to 100000"],
    );
    // What every report must give.
    let body = changed("B-1", |b| {
        numbers(b).remove("kinder_betten_belegt");
        numbers(b).insert("erwachsenen_betten_belegt".into(), Value::Null);
    });
    assert_refused(
        &server,
        &body,
        &[
            "numbers.erwachsenen_betten_belegt must not be null",
            "numbers.kinder_betten_belegt must not be null",
        ],
    );
    assert_refused(
        &server,
        &changed("B-1", |b| drop(b.remove("numbers"))),
        &["numbers must not be null"],
    );
    assert_refused(
        &server,
        &changed("B-1", |b| {
            drop(b.insert("numbers".into(), json!([37, 221])))
        }),
        &["numbers must be an object"],
    );
    let body = changed("B-1", |b| {
        for member in [
            "StandortId",
            "IK_Nummer",
            "Strasse",
            "Hausnummer",
            "PLZ",
            "Ort",
        ] {
            b.remove(member);
        }
        b.insert("Standortname".into(), json!("  "));
    });
    assert_refused(
        &server,
        &body,
        &[
            "StandortId must not be null",
            "IK_Nummer must not be null",
            "Standortname must not be empty",
            "Strasse must not be null",
            "Hausnummer must not be null",
            "PLZ must not be null",
            "Ort must not be null",
        ],
    );
    // Formats of the other members, and members the contract does not have.
    let body = changed("B-1", |b| {
        b.insert("dateOfReport".into(), json!("24.11.2026"));
        b.insert("PLZ".into(), json!("1011"));
        b.insert("Telefon".into(), json!("030\n123"));
        b.insert("Bettenzahl".into(), json!(12));
        numbers(b).insert("intensiv_betten_belegt".into(), json!(3));
    });
    assert_refused(
        &server,
        &body,
        &[
            "dateOfReport must be a date YYYY-MM-DD",
            "PLZ must be a postcode of five digits",
            "Telefon must not contain control characters",
            "Bettenzahl is not a known field",
            "numbers.intensiv_betten_belegt is not a known field",
        ],
    );
    // Every problem at once.
    let body = json!({"StandortId": "1", "numbers": {"kinder_betten_belegt": -3}});
    assert_refused(
        &server,
        &body,
        &[
            "reportId must not be null",
            "StandortId must be 6 digits",
            whole,
            "IK_Nummer must not be null",
            "Standortname must not be null",
            "Strasse must not be null",
            "Hausnummer must not be null",
            "PLZ must not be null",
            "Ort must not be null",
            "numbers.erwachsenen_betten_belegt must not be null",
        ],
    );
    assert!(received_notifications(&server, "bedreport").is_empty());
}

#[test]
fn bodies_that_are_not_a_bounded_json_object_are_refused() {
    let (_dir, server) = start();
    let post = |content_type: &str, body: Vec<u8>| {
        let response = server
            .client()
            .post(server.url(REPORT))
            .basic_auth(USER, Some(PASSWORD))
            .header("content-type", content_type)
            .body(body)
            .send()
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json::<Value>().unwrap())
    };
    assert_eq!(
        post("application/json", b"[1, 2]".to_vec()),
        (400, json!({"errors": ["the body must be a JSON object"]}))
    );
    let (status, body) = post("application/json", b"{\"reportId\": ".to_vec());
    assert_eq!(status, 400);
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON"),
        "{body}"
    );
    let (status, body) = post(
        "application/json",
        br#"{"reportId": "B-1", "reportId": "B-2"}"#.to_vec(),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["errors"][0].as_str().unwrap().contains("reportId"),
        "{body}"
    );
    assert_eq!(
        post(
            "text/plain",
            serde_json::to_vec(&complete_bed_report("B-1")).unwrap()
        ),
        (
            415,
            json!({"errors": ["the request body must be sent as Content-Type: application/json"]})
        )
    );
    // A report is small: 32 KiB is room for every member at its longest.
    let mut large = complete_bed_report("B-LARGE");
    large["Standortname"] = json!("x".repeat(40 * 1024));
    assert_eq!(
        post("application/json", serde_json::to_vec(&large).unwrap()),
        (413, json!({"errors": ["request body exceeds 32768 bytes"]}))
    );
    // The endpoints answer other methods in the module's style.
    let wrong = server.get_as(USER, REPORT);
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "POST");
    assert_eq!(
        wrong.json::<Value>().unwrap(),
        json!({"errors": ["method not allowed; use POST"]})
    );
    let wrong = server.post_as(USER, "/api/bedreport/v1/status/B-1", &json!({}));
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "GET");
    let mut long = complete_bed_report("B-LONG");
    long["Standortname"] = json!("x".repeat(501));
    assert_eq!(
        post("application/json", serde_json::to_vec(&long).unwrap()),
        (
            400,
            json!({"errors": ["Standortname must have at most 500 characters"]})
        )
    );
    assert!(received_notifications(&server, "bedreport").is_empty());
}

#[test]
fn what_the_rules_allow_is_sent() {
    let (_dir, server) = start();
    // Only what every report must give: no date (the day of sending), phone or operated beds.
    assert_sent(
        &server,
        &changed("B-MINIMAL", |b| {
            b.remove("dateOfReport");
            b.remove("Telefon");
            numbers(b).remove("kinder_betten_betrieben");
            numbers(b).remove("erwachsenen_betten_betrieben");
        }),
    );
    // More beds occupied than operated (beds set up beyond the operated ones are occupied all
    // the same), and none at all.
    assert_sent(
        &server,
        &changed("B-FULL", |b| {
            numbers(b).insert("erwachsenen_betten_belegt".into(), json!(260));
            numbers(b).insert("kinder_betten_belegt".into(), json!(0));
            numbers(b).insert("kinder_betten_betrieben".into(), json!(0));
        }),
    );
    // Members sent as null count as not given.
    assert_sent(
        &server,
        &changed("B-NULLS", |b| {
            b.insert("Telefon".into(), Value::Null);
            numbers(b).insert("kinder_betten_betrieben".into(), Value::Null);
        }),
    );
    let records = received_notifications(&server, "bedreport");
    assert_eq!(assert_valid_fhir(&records, "BedOccupancyExample.json"), 3);
}
