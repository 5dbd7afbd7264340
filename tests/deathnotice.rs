//! The death-notice module against the real server: the journey of each of the three report
//! types (memento → magic link → its own form → dispatch → PENDING → SUCCESS → consumed), the
//! exactly-one-slot rule, the field rules, the mock ids, authentication, 404/410 and retention.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};

const USER: &str = "bestatter";
const API: &str = "/api/deathnotice/v1";

fn start(env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(&dir, env);
    (dir, server)
}

fn memento(server: &Server, body: &Value) -> reqwest::blocking::Response {
    server.post_as(USER, &format!("{API}/memento"), body)
}

/// Status and body of a memento request.
fn answer(server: &Server, body: &Value) -> (u16, Value) {
    let response = memento(server, body);
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// Opens the magic link of `body` in `browser`; returns where it led and the form found there.
fn open_form(server: &Server, browser: &Browser, body: &Value) -> (String, Form) {
    let (status, answer) = answer(server, body);
    assert_eq!(status, 200, "{answer}");
    let response = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    assert_eq!(response.status(), 302);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let form = browser.form(&server.url(&location));
    (location, form)
}

/// Fills `values` and the end user's signature, submits, and expects the dispatch (303).
fn complete_and_send(
    server: &Server,
    browser: &Browser,
    path: &str,
    form: &mut Form,
    values: &[(&str, &str)],
) {
    for (name, value) in values {
        form.set(name, value);
    }
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    let response = browser.submit_to(server, path, form);
    assert_eq!(response.status(), 303, "{:?}", page_errors(response));
}

fn einrichtung(id: &str) -> Value {
    json!({"id": id, "Einrichtung": {
        "anzeigender": {"nameOrganisation": "Klinikum Süd",
            "kontaktdaten": [{"kanal": "01", "kennung": "station3@klinikum.example"}]},
        "verstorbener": {"vorname": "Karl", "familienname": "Muster", "geschlecht": "maennlich",
            "geburtstag": "1940-02-03",
            "letzterWohnsitz": {"strasse": "Gartenweg 3", "plz": "10115", "ort": "Berlin"}},
        "sterbefall": {"todeszeitpunkt": {"todestag":
            {"zeitpunkt": "2026-11-20T14:30:00+01:00", "uhrzeitExakt": true}}},
        "leichenID": "L-2026-0001"}})
}

/// What the `Einrichtung` memento above leaves for the form.
const EINRICHTUNG_REST: &[(&str, &str)] = &[
    ("Einrichtung.anschriftAutor.gebaeude.strasse", "Hauptstraße"),
    ("Einrichtung.anschriftAutor.gebaeude.hausnummer", "5"),
    ("Einrichtung.anschriftAutor.gebaeude.postleitzahl", "10117"),
    ("Einrichtung.anschriftAutor.gebaeude.wohnort", "Berlin"),
    ("Einrichtung.sterbefall.sterbeort.ort", "Berlin"),
];

fn bestatter(id: &str) -> Value {
    json!({"id": id, "Bestatter": {
        "anzeigender": {"nameOrganisation": "Bestattungen Ruhe GmbH",
            "kontaktdaten": [{"kanal": "02", "kennung": "030 123456"}]},
        "verstorbener": {"vorname": "Erna", "familienname": "Beispiel", "geschlecht": "weiblich",
            "familienstand": "VW"},
        "anzahlKinderVolljaehrig": 1,
        "volljaehrigeKinder": [{"vornamen": "Paul", "familienname": "Beispiel",
            "anschrift": {"strasse": "Lindenallee 7", "plz": "20095", "ort": "Hamburg"}}],
        "artDerBestattung": "feuerbestattung",
        "zahlDerUrkunden": {"anzahlStandardformat": 2}}})
}

fn todesbescheinigung(id: &str) -> Value {
    json!({"id": id, "Todesbescheinigung": {
        "verstorbener": {"familienname": "Muster", "geschlecht": "divers", "identifizierung": "EPR"},
        "sterbefall": {"todeszeitpunkt": {"todestag": {"zeitpunkt": "2026-11-20T03:05:00+01:00"}},
            "natuerlicherTod": true},
        "angabenLeichenschau": {"namenArzt": {"vornamen": "Erika", "familienname": "Beispiel"},
            "kontaktArzt": [{"kanal": "01", "kennung": "praxis@beispiel.example"}],
            "datum": "2026-11-20", "ort": "Berlin"},
        "leichenID": "L-2026-0002"}})
}

/// The whole journey of one report type; returns the delivered XML.
fn journey(
    body: Value,
    code: &str,
    title: &str,
    prefilled: (&str, &str),
    rest: &[(&str, &str)],
) -> String {
    let (_dir, server) = start(&[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "1500")]);
    let id = body["id"].as_str().unwrap().to_string();
    let path = format!("/forms/deathnotice/{code}");
    assert_eq!(
        server
            .get_as(USER, &format!("{API}/reports/{id}?peek=true"))
            .status(),
        404
    );

    let browser = Browser::new();
    let (location, mut form) = open_form(&server, &browser, &body);
    assert!(location.starts_with(&format!("{path}?m=")), "{location}");
    assert_eq!(form.status, 200);
    assert!(
        form.html.contains(&format!("<h1>{title}</h1>")),
        "{}",
        form.html
    );
    assert_eq!(form.get(prefilled.0), Some(prefilled.1));
    // Only this type's fields are offered.
    let slot = prefilled.0.split('.').next().unwrap();
    assert!(form
        .fields
        .iter()
        .filter(|(n, _)| n.contains('.') && !n.starts_with("signatur."))
        .all(|(n, _)| n.starts_with(&format!("{slot}."))));

    // Sent as it came, the form is incomplete and says what is missing.
    let refused = browser.submit_to(&server, &path, &form);
    assert_eq!(refused.status(), 422);
    let errors = page_errors(refused);
    assert!(
        errors
            .iter()
            .any(|e| e == "Straße (Absender): Pflichtangabe"),
        "{errors:?}"
    );
    assert_eq!(
        server
            .get_as(USER, &format!("{API}/reports/{id}?peek=true"))
            .status(),
        404
    );

    complete_and_send(&server, &browser, &path, &mut form, rest);
    let pending: Value = server
        .get_as(USER, &format!("{API}/reports/{id}"))
        .json()
        .unwrap();
    assert_eq!(pending["status"], "PENDING", "{pending}");
    assert_eq!(pending["module"], "deathnotice");
    assert!(pending.get("clientReference").is_none(), "{pending}");
    let listed: Value = server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap();
    assert_eq!(listed, json!([id]));

    let success = server.wait_for_status_in("deathnotice", USER, &id, "SUCCESS");
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(success["receiptPdf"].as_str().unwrap())
        .unwrap();
    let text = checked_receipt_text(&pdf);
    assert!(text.contains(&id), "{text}");

    let message = server.admin_get(&format!("/admin/api/v1/reports/deathnotice/{id}/message"));
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "end-user");
    let xml = message.bytes().unwrap();
    xmllint_xpersonenstand(&xml).expect("delivered XML is schema-valid");
    let xml = String::from_utf8(xml.to_vec()).unwrap();
    assert!(
        xml.contains(&format!("<xpsw:portal2StA.Sterbefall.{code}")),
        "{xml}"
    );

    assert_eq!(
        server.get_as(USER, &format!("{API}/reports/{id}")).status(),
        200
    );
    let again = server.get_as(USER, &format!("{API}/reports/{id}"));
    assert_eq!(again.status(), 410);
    let listed: Value = server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap();
    assert_eq!(listed, json!([]));
    xml
}

#[test]
fn journey_of_a_facility_notice_084020() {
    let xml = journey(
        einrichtung("tod-e-1"),
        "084020",
        "Sterbefallanzeige der Einrichtung",
        ("Einrichtung.verstorbener.familienname", "Muster"),
        EINRICHTUNG_REST,
    );
    assert!(
        xml.contains("Klinikum Süd") && xml.contains("L-2026-0001"),
        "{xml}"
    );
}

#[test]
fn journey_of_an_undertaker_notice_084021() {
    let rest = [
        ("Bestatter.anschriftAutor.gebaeude.strasse", "Friedhofsweg"),
        ("Bestatter.anschriftAutor.gebaeude.hausnummer", "1"),
        ("Bestatter.anschriftAutor.gebaeude.postleitzahl", "10117"),
        ("Bestatter.anschriftAutor.gebaeude.wohnort", "Berlin"),
    ];
    let xml = journey(
        bestatter("tod-b-1"),
        "084021",
        "Sterbefallanzeige des Bestatters",
        ("Bestatter.volljaehrigeKinder[0].anschrift.ort", "Hamburg"),
        &rest,
    );
    assert!(
        xml.contains("Bestattungen Ruhe GmbH") && xml.contains("Lindenallee 7"),
        "{xml}"
    );
}

#[test]
fn journey_of_a_death_certificate_084040() {
    let rest = [
        (
            "Todesbescheinigung.anschriftAutor.gebaeude.strasse",
            "Praxisweg",
        ),
        (
            "Todesbescheinigung.anschriftAutor.gebaeude.postleitzahl",
            "10117",
        ),
        (
            "Todesbescheinigung.anschriftAutor.gebaeude.wohnort",
            "Berlin",
        ),
        ("Todesbescheinigung.angabenLeichenschau.uhrzeit", "05:40"),
    ];
    let xml = journey(
        todesbescheinigung("tod-t-1"),
        "084040",
        "Todesbescheinigung",
        ("Todesbescheinigung.verstorbener.identifizierung", "EPR"),
        &rest,
    );
    // Both "exact" boxes were left unticked beside a given time: not exact.
    assert!(
        xml.contains("exakt=\"false\"") && !xml.contains("exakt=\"true\""),
        "{xml}"
    );
    assert!(xml.contains("L-2026-0002"), "{xml}");
}

const ONE_OF: &str = "exactly one of Einrichtung, Bestatter, Todesbescheinigung must be given";

#[test]
fn exactly_one_slot_is_required() {
    let (_dir, server) = start(&[]);
    assert_eq!(
        answer(&server, &json!({"id": "s-0"})),
        (400, json!({"errors": [ONE_OF]}))
    );
    assert_eq!(
        answer(&server, &json!({"id": "s-0", "Einrichtung": null})),
        (400, json!({"errors": [ONE_OF]}))
    );
    assert_eq!(
        answer(
            &server,
            &json!({"id": "s-2", "Einrichtung": {}, "Bestatter": {}})
        ),
        (
            400,
            json!({"errors": [format!("{ONE_OF}, not several: Einrichtung, Bestatter")]})
        )
    );
    assert_eq!(
        answer(
            &server,
            &json!({"id": "s-3", "Einrichtung": {}, "Bestatter": {}, "Todesbescheinigung": {}})
        ),
        (
            400,
            json!({"errors": [format!("{ONE_OF}, not several: Einrichtung, Bestatter, Todesbescheinigung")]})
        )
    );
    assert_eq!(
        answer(&server, &json!({"id": "s-s", "Einrichtung": "ja"})),
        (400, json!({"errors": ["Einrichtung must be an object"]}))
    );
    // An empty slot is a valid choice and opens the form of its type.
    let browser = Browser::new();
    for (slot, code) in [
        ("Einrichtung", "084020"),
        ("Bestatter", "084021"),
        ("Todesbescheinigung", "084040"),
    ] {
        let (location, form) = open_form(&server, &browser, &json!({"id": "s-1", slot: {}}));
        assert!(
            location.starts_with(&format!("/forms/deathnotice/{code}?m=")),
            "{location}"
        );
        assert_eq!(form.status, 200);
    }
    let (status, _) = answer(
        &server,
        &json!({"id": "s-1", "Einrichtung": null, "Bestatter": {}}),
    );
    assert_eq!(status, 200);
}

#[test]
fn fields_of_a_slot_are_checked() {
    let (_dir, server) = start(&[]);
    let one = |slot: Value| answer(&server, &json!({"id": "f-1", "Einrichtung": slot}));
    assert_eq!(
        one(json!({"x": 1})),
        (
            400,
            json!({"errors": ["Einrichtung.x is not a known field"]})
        )
    );
    assert_eq!(
        one(
            json!({"sterbefall": {"todeszeitpunkt": {"todestag": {"zeitpunkt": "2026-11-20T14:30:00"}}}})
        ),
        (
            400,
            json!({"errors": ["Einrichtung.sterbefall.todeszeitpunkt.todestag.zeitpunkt must be a date-time with offset YYYY-MM-DDThh:mm:ss+hh:mm"]})
        )
    );
    assert_eq!(
        one(json!({"verstorbener": {"geschlecht": "m"}})),
        (
            400,
            json!({"errors": ["Einrichtung.verstorbener.geschlecht must be one of weiblich, maennlich, divers, unbestimmt"]})
        )
    );
    assert_eq!(
        one(json!({"anzeigender": {"kontaktdaten": [{"kanal": "E-Mail"}]}})),
        (
            400,
            json!({"errors": ["Einrichtung.anzeigender.kontaktdaten[0].kanal must be a code of the list urn:de:xoev:codeliste:erreichbarkeit (1)"]})
        )
    );
    for geschlecht in ["maennlich", "weiblich", "divers", "unbestimmt"] {
        assert_eq!(
            one(json!({"verstorbener": {"geschlecht": geschlecht}})).0,
            200
        );
    }
    // Every violation at once.
    let (status, body) = answer(
        &server,
        &json!({
        "Bestatter": {"verstorbener": {"geburtstag": "2026-02-30"}, "leichenId": "x",
            "zahlDerUrkunden": {"anzahlStandardformat": -1}},
        "Todesbescheinigung": {}}),
    );
    assert_eq!(status, 400);
    let mut errors: Vec<String> = serde_json::from_value(body["errors"].clone()).unwrap();
    errors.sort();
    let mut expected = vec![
        "id must not be null".to_string(),
        "Bestatter.verstorbener.geburtstag must be a date YYYY-MM-DD".into(),
        "Bestatter.leichenId is not a known field".into(),
        "Bestatter.zahlDerUrkunden.anzahlStandardformat must be a whole number from 0 to 99".into(),
        format!("{ONE_OF}, not several: Bestatter, Todesbescheinigung"),
    ];
    expected.sort();
    assert_eq!(errors, expected);
}

#[test]
fn mock_ids_answer_fixed_outcomes() {
    let (_dir, server) = start(&[]);
    let read = |id: &str| -> Value {
        let response = server.get_as(USER, &format!("{API}/reports/{id}"));
        assert_eq!(response.status(), 200, "{id}");
        response.json().unwrap()
    };
    for _ in 0..2 {
        let success = read("DEATHNOTICE-TEST-SUCCESS");
        assert_eq!(success["status"], "SUCCESS");
        assert_eq!(success["module"], "deathnotice");
        assert!(success.get("clientReference").is_none(), "{success}");
        let pdf = base64::engine::general_purpose::STANDARD
            .decode(success["receiptPdf"].as_str().unwrap())
            .unwrap();
        let text = checked_receipt_text(&pdf);
        assert!(text.contains("DEATHNOTICE-TEST-SUCCESS"), "{text}");
        let pending = read("DEATHNOTICE-TEST-PENDING");
        assert_eq!(pending["status"], "PENDING");
        assert!(pending["receiptPdf"].is_null() && pending["failureReason"].is_null());
        let failure = read("DEATHNOTICE-TEST-FAILURE");
        assert_eq!(failure["status"], "FAILURE");
        assert!(!failure["failureReason"].as_str().unwrap().is_empty());
    }
    let listed: Value = server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap();
    assert_eq!(listed, json!([]));
    // Another module's mock ids are not this module's.
    assert_eq!(
        server
            .get_as(USER, &format!("{API}/reports/BIRTHNOTICE-TEST-SUCCESS"))
            .status(),
        404
    );
    assert_eq!(
        answer(
            &server,
            &json!({"id": "DEATHNOTICE-TEST-PENDING", "Einrichtung": {}})
        ),
        (
            400,
            json!({"errors": ["id DEATHNOTICE-TEST-PENDING is reserved for test results and cannot be used for a report"]})
        )
    );
}

#[test]
fn every_endpoint_needs_credentials() {
    let (_dir, server) = start(&[]);
    let client = server.client();
    let requests = [
        client
            .post(server.url(&format!("{API}/memento")))
            .json(&einrichtung("a-1")),
        client.get(server.url(&format!("{API}/reports"))),
        client.get(server.url(&format!("{API}/reports/DEATHNOTICE-TEST-SUCCESS"))),
    ];
    for request in requests {
        for request in [
            request.try_clone().unwrap(),
            request.basic_auth(USER, Some("wrong password")),
        ] {
            let response = request.send().unwrap();
            assert_eq!(response.status(), 401);
            assert!(response.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .starts_with("Basic"));
            assert_eq!(response.text().unwrap(), "");
        }
    }
}

#[test]
fn unknown_ids_and_other_modules_reports_are_not_found() {
    let (_dir, server) = start(&[]);
    let not_found = server.get_as(USER, &format!("{API}/reports/tod-unbekannt"));
    assert_eq!(not_found.status(), 404);
    assert_eq!(
        not_found.json::<Value>().unwrap(),
        json!({"errors": ["report tod-unbekannt not found"]})
    );

    let id = dispatch(&server, USER, &complete_notice("geb-1"));
    server.wait_for_status(USER, &id, "SUCCESS");
    assert_eq!(
        server
            .get_as(USER, &format!("{API}/reports/geb-1?peek=true"))
            .status(),
        404
    );
    let listed: Value = server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap();
    assert_eq!(listed, json!([]));
}

#[test]
fn retention_turns_a_read_into_410() {
    let (_dir, server) = start(&[
        ("MELDEWERK_MODULES__DEATHNOTICE__RETENTION_SECS", "1"),
        ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
    ]);
    let browser = Browser::new();
    let (_, mut form) = open_form(&server, &browser, &einrichtung("tod-r-1"));
    complete_and_send(
        &server,
        &browser,
        "/forms/deathnotice/084020",
        &mut form,
        EINRICHTUNG_REST,
    );
    server.wait_for_status_in("deathnotice", USER, "tod-r-1", "SUCCESS");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let expired = loop {
        let response = server.get_as(USER, &format!("{API}/reports/tod-r-1?peek=true"));
        if response.status() == 410 {
            break response.json::<Value>().unwrap();
        }
        assert_eq!(response.status(), 200);
        assert!(std::time::Instant::now() < deadline, "never expired");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(
        expired,
        json!({"errors": ["report tod-r-1 has expired: its result was removed by retention"]})
    );
}

#[test]
fn a_memento_opens_only_the_form_of_its_type() {
    let (_dir, server) = start(&[]);
    let browser = Browser::new();
    let (location, form) = open_form(&server, &browser, &einrichtung("tod-x-1"));
    let memento = location.split_once("?m=").unwrap().1;
    let other = browser.form(&server.url(&format!("/forms/deathnotice/084021?m={memento}")));
    assert_eq!(other.status, 400);
    assert!(other.html.contains("Link ungültig"), "{}", other.html);
    // Posting it to another type's form is refused the same way, and nothing is dispatched.
    let mut post = Form {
        status: 0,
        html: String::new(),
        fields: form.fields.clone(),
    };
    post.set("signatur.name", "Dr. Erika Beispiel");
    post.set("signatur.bestaetigt", "true");
    let response = browser.submit_to(&server, "/forms/deathnotice/084040", &post);
    assert_eq!(response.status(), 400);
    assert!(response.text().unwrap().contains("Link ungültig"));
    assert_eq!(
        server
            .get_as(USER, &format!("{API}/reports/tod-x-1?peek=true"))
            .status(),
        404
    );
}
