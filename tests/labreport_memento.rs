//! `POST /api/labreport/v1/memento` against the real server: the standard and the anonymous
//! patient, the rules of each (a request mixing them is 400 naming the member), the field
//! rules (e-mail, dates, the gender values, unknown members), the reporting facility resolved
//! in the registry within the user's scope, 401, and `magicLink` null for a user whose
//! configuration issues no tokens (set on the command line and in the operator API).

mod common;
mod labreport_support;

use common::*;
use labreport_support::*;
use serde_json::{json, Value};

/// Asserts a 400 with exactly `errors`.
fn refused(server: &Server, body: &Value, errors: &[&str]) {
    let (status, answer) = memento(server, body);
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer, json!({ "errors": errors }));
}

#[test]
fn a_standard_and_an_anonymous_patient_get_a_memento_and_a_link_to_the_disease_index() {
    let (_dir, server) = start(&[]);
    for body in [standard("lab-m-1"), anonymous("lab-m-2")] {
        let (status, answer) = memento(&server, &body);
        assert_eq!(status, 200, "{answer}");
        assert!(answer["memento"].as_str().is_some_and(|m| !m.is_empty()));
        let link = answer["magicLink"].as_str().unwrap();
        assert!(link.starts_with("/mtl/"), "{link}");
        let landed = Browser::new().get(&server.url(link));
        assert_eq!(landed.status(), 302);
        let location = landed.headers()["location"].to_str().unwrap().to_owned();
        assert_eq!(
            location,
            format!("/labreport/?m={}", answer["memento"].as_str().unwrap())
        );
    }
    // Only reportId is required.
    let (status, _) = memento(&server, &json!({"reportId": "lab-m-3"}));
    assert_eq!(status, 200);
}

#[test]
fn a_request_mixing_the_standard_and_the_anonymous_patient_is_refused_naming_the_member() {
    let (_dir, server) = start(&[]);
    let mut mixed = anonymous("lab-x-1");
    mixed["Patient"]["Standard"] = json!({"Name": {"Vorname": "Maxime"}});
    refused(
        &server,
        &mixed,
        &[
            "Patient.Standard must not be given for an anonymous patient (Patient.IsAnonym \
           true): an anonymous patient has no name and no contact, only Patient.Anonym",
        ],
    );
    let mut mixed = standard("lab-x-2");
    mixed["Patient"]["Anonym"] = json!({"GeburtsmonatJahr": "1975-04"});
    refused(
        &server,
        &mixed,
        &[
            "Patient.Anonym must not be given for a standard patient: set Patient.IsAnonym to \
           true for an anonymous patient, or give Patient.Standard",
        ],
    );
    // An anonymous patient has no name, no contact, and of the address only PLZ and Land.
    let mut named = anonymous("lab-x-3");
    named["Patient"]["Anonym"]["Name"] = json!({"Vorname": "Maxime"});
    named["Patient"]["Anonym"]["Kontakt"] = json!({"Telefon": "030 1"});
    named["Patient"]["Anonym"]["Adresse"]["Strasse"] = json!("Gartenweg 3");
    refused(
        &server,
        &named,
        &[
            "Patient.Anonym.Adresse.Strasse is not a known field",
            "Patient.Anonym.Kontakt is not a known field",
            "Patient.Anonym.Name is not a known field",
        ],
    );
    let mut month = anonymous("lab-x-4");
    month["Patient"]["Anonym"]["GeburtsmonatJahr"] = json!("1975-04-12");
    refused(
        &server,
        &month,
        &["Patient.Anonym.GeburtsmonatJahr must be a month YYYY-MM"],
    );
}

#[test]
fn each_field_rule_names_its_field_every_problem_at_once() {
    let (_dir, server) = start(&[]);
    let mut body = standard("lab-f-1");
    body["MeldungsDatum"] = json!("24.11.2026");
    body["Patient"]["Standard"]["Geburtsdatum"] = json!("11.02.1950");
    body["Patient"]["Standard"]["Geschlecht"] = json!("W");
    body["Patient"]["Standard"]["Kontakt"]["Email"] = json!("maxime at example.org");
    body["MeldendeEinrichtung"]["Email"] = json!("labor@");
    body["MeldendeEinrichtung"]["Fax"] = json!("030 1");
    refused(
        &server,
        &body,
        &[
            "MeldendeEinrichtung.Email must be a well-formed email address (send null or omit it)",
            "MeldendeEinrichtung.Fax is not a known field",
            "MeldungsDatum must be a date YYYY-MM-DD",
            "Patient.Standard.Geburtsdatum must be a date YYYY-MM-DD",
            "Patient.Standard.Geschlecht must be one of NASK, ASKU, MAENNLICH, WEIBLICH, \
             DIVERS, UNBESTIMMT",
            "Patient.Standard.Kontakt.Email must be a well-formed email address (send null or \
             omit it)",
        ],
    );
    refused(
        &server,
        &json!({"MeldungsDatum": "2026-11-24"}),
        &["reportId must not be null"],
    );
    // The 0.2 shape of MeldendeEinrichtung is gone in 0.3.
    let mut old = standard("lab-f-2");
    old["MeldendeEinrichtung"]["EinrichtungsName"] = json!("Labor");
    refused(
        &server,
        &old,
        &["MeldendeEinrichtung.EinrichtungsName is not a known field"],
    );
    // Every gender value of the contract is taken; null stands for an omitted value.
    for gender in [
        "NASK",
        "ASKU",
        "MAENNLICH",
        "WEIBLICH",
        "DIVERS",
        "UNBESTIMMT",
    ] {
        let mut body = standard(&format!("lab-g-{gender}"));
        body["Patient"]["Standard"]["Geschlecht"] = json!(gender);
        body["Patient"]["Standard"]["Kontakt"]["Email"] = Value::Null;
        assert_eq!(memento(&server, &body).0, 200, "{gender}");
    }
}

#[test]
fn the_reporting_facility_must_be_registered_active_and_in_the_users_scope() {
    let (_dir, server) = start(&[]);
    for (bsnr, error) in [
        (
            UNKNOWN,
            "MeldendeEinrichtung.BSNR 555555555 is not a registered facility",
        ),
        (
            INACTIVE,
            "MeldendeEinrichtung.BSNR 012345678 is a deactivated facility and may not report",
        ),
        (
            OUT_OF_SCOPE,
            "MeldendeEinrichtung.BSNR 987654321 is not a facility this account may report for",
        ),
        ("12345", "MeldendeEinrichtung.BSNR must be exactly 9 digits"),
    ] {
        let mut body = standard("lab-b-1");
        body["MeldendeEinrichtung"]["BSNR"] = json!(bsnr);
        refused(&server, &body, &[error]);
    }
    // A user without a customer may name no facility.
    let dir2 = data_dir();
    ok(&dir2, &["user", "customer", USER, "--none"]);
    let server2 = Server::start(&dir2, &[]);
    refused(
        &server2,
        &standard("lab-b-2"),
        &["MeldendeEinrichtung.BSNR 123456789 is not a facility this account may report for"],
    );
}

#[test]
fn without_credentials_the_api_answers_401_as_the_other_modules() {
    let (_dir, server) = start(&[]);
    for (method, path) in [
        ("POST", format!("{API}/memento")),
        ("GET", format!("{API}/reports")),
        ("GET", format!("{API}/reports/lab-1")),
    ] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let anonymous = server
            .client()
            .request(method.clone(), server.url(&path))
            .json(&standard("lab-1"))
            .send()
            .unwrap();
        assert_eq!(anonymous.status(), 401, "{path}");
        assert!(anonymous.headers().contains_key("www-authenticate"));
        assert_eq!(anonymous.text().unwrap(), "", "{path}");
        let wrong = server
            .client()
            .request(method, server.url(&path))
            .basic_auth(USER, Some("wrong password"))
            .json(&standard("lab-1"))
            .send()
            .unwrap();
        assert_eq!(wrong.status(), 401, "{path}");
    }
}

#[test]
fn a_user_whose_configuration_issues_no_tokens_gets_magic_link_null() {
    let dir = data_dir();
    assert_eq!(
        ok(&dir, &["user", "magic-links", USER, "off"]),
        "mementos of labor come without a magic link"
    );
    let users: Vec<Value> = serde_json::from_str(&ok(&dir, &["user", "list", "--json"])).unwrap();
    let flags: Vec<(&str, bool)> = users
        .iter()
        .map(|u| {
            (
                u["name"].as_str().unwrap(),
                u["magicLinks"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(flags, [(USER, false), (OTHER, true)]);
    let server = Server::start(&dir, &[]);
    let (status, answer) = memento(&server, &standard("lab-n-1"));
    assert_eq!(status, 200);
    assert_eq!(answer["magicLink"], Value::Null, "{answer}");
    assert!(answer["memento"].as_str().is_some_and(|m| !m.is_empty()));
    let other: Value = memento_as(&server, OTHER, &standard("lab-n-1"))
        .json()
        .unwrap();
    assert!(other["magicLink"].as_str().is_some(), "{other}");

    // The operator API sets it too, each change audited; the default is to issue links.
    let path = format!("/admin/api/v1/users/{USER}/magic-links");
    let put = |body: &Value| {
        server
            .client()
            .put(server.url(&path))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .json(body)
            .send()
            .unwrap()
    };
    assert_eq!(put(&json!({"magicLinks": true})).status(), 204);
    let (_, answer) = memento(&server, &standard("lab-n-2"));
    assert!(answer["magicLink"].as_str().is_some(), "{answer}");
    assert_eq!(put(&json!({"magicLinks": false})).status(), 204);
    let (_, answer) = memento(&server, &standard("lab-n-3"));
    assert_eq!(answer["magicLink"], Value::Null);
    let bad = put(&json!({"magicLinks": "no"}));
    assert_eq!(bad.status(), 400);
    assert_eq!(
        bad.json::<Value>().unwrap(),
        json!({"errors": ["magicLinks is required: true or false"]})
    );
    let unknown = server
        .client()
        .put(server.url("/admin/api/v1/users/nobody/magic-links"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&json!({"magicLinks": false}))
        .send()
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let audit = audited(&server);
    assert!(
        audit.contains(&("issue-magic-links".into(), format!("user {USER}"))),
        "{audit:?}"
    );
    assert!(
        audit.contains(&("stop-magic-links".into(), format!("user {USER}"))),
        "{audit:?}"
    );
}

#[test]
fn bodies_are_read_strictly_as_by_every_module() {
    let (_dir, server) = start(&[]);
    let post = |content_type: &str, body: &str| {
        server
            .client()
            .post(server.url(&format!("{API}/memento")))
            .basic_auth(USER, Some(PASSWORD))
            .header("Content-Type", content_type)
            .body(body.to_owned())
            .send()
            .unwrap()
    };
    let twice = post(
        "application/json",
        r#"{"reportId": "lab-s-1", "reportId": "lab-s-2"}"#,
    );
    assert_eq!(twice.status(), 400);
    let errors: Value = twice.json().unwrap();
    assert!(
        errors["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("invalid JSON: duplicate member \"reportId\""),
        "{errors}"
    );
    let plain = post("text/plain", r#"{"reportId": "lab-s-1"}"#);
    assert_eq!(plain.status(), 415);
    assert_eq!(
        plain.json::<Value>().unwrap(),
        json!({"errors": ["the request body must be sent as Content-Type: application/json"]})
    );
    let array = post("application/json", r#"[{"reportId": "lab-s-1"}]"#);
    assert_eq!(array.status(), 400);
}
