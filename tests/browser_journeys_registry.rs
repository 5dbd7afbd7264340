//! The three forms of the death notice, each on its whole way in a real headless Chromium
//! (tests/common/browser.rs): the magic link opens the report type's own form pre-filled from
//! the memento; a submit with a required field left empty and a postcode mistyped shows each
//! problem next to its field and keeps every value, the signature included; corrected, the
//! form sends, the browser lands on the confirmation page, and the integrator reads the report
//! through the API as it is delivered and consumed. Screenshots of each final page land in
//! `target/browser-screenshots/journey-deathnotice-*.png`.

mod common;

use common::browser::Chromium;
use common::*;
use serde_json::{json, Value};

const USER: &str = "bestatter";
const API: &str = "/api/deathnotice/v1";

/// One report type's journey: `body` is its memento, `code` its form, `title` the form's
/// heading, `prefilled` a value the memento gave, `rest` what the form still needs (its
/// sender's street last: the journey leaves it out at first).
struct Journey<'a> {
    body: Value,
    code: &'a str,
    title: &'a str,
    prefilled: (&'a str, &'a str),
    rest: &'a [(&'a str, &'a str)],
    /// Text the delivered message must hold, from the memento or typed into the form.
    delivered: &'a [&'a str],
}

fn run(journey: Journey) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(&dir, &[]);
    let id = journey.body["id"].as_str().unwrap().to_owned();
    let path = format!("/forms/deathnotice/{}", journey.code);
    let browser = Chromium::desktop(&format!("journey-deathnotice-{}", journey.code));

    // The magic link opens this report type's form, pre-filled.
    let link = magic_link_in(&server, "deathnotice", USER, &journey.body);
    browser.goto(&server.url(&link));
    browser.wait_for_page(&path);
    assert_eq!(browser.text("h1"), journey.title);
    let (prefilled, value) = journey.prefilled;
    assert_eq!(browser.value(prefilled), value);

    // Everything but the street, the postcode mistyped, signed: two problems at their fields.
    let slot = prefilled.split('.').next().unwrap();
    let street = format!("{slot}.anschriftAutor.gebaeude.strasse");
    let postcode = format!("{slot}.anschriftAutor.gebaeude.postleitzahl");
    let (last, earlier) = journey.rest.split_last().unwrap();
    assert_eq!(last.0, street, "the street comes last");
    for (name, value) in earlier {
        browser.enter(name, value);
    }
    browser.fill(&postcode, "1O117");
    browser.sign("Dr. Erika Beispiel");
    browser.click("button.send");
    browser.wait_for("div.errors");
    assert_eq!(browser.location().0, path);
    assert_eq!(
        browser.problem_at(&street),
        "Straße (Absender): Pflichtangabe"
    );
    let problem = browser.problem_at(&postcode);
    assert!(
        problem.starts_with("Postleitzahl (Absender): "),
        "{problem}"
    );
    browser.screenshot("problems");
    // Nothing was sent, and every value is still there.
    let unknown = server.get_as(USER, &format!("{API}/reports/{id}?peek=true"));
    assert_eq!(unknown.status(), 404);
    assert_eq!(browser.value(prefilled), value);
    assert_eq!(browser.value(&postcode), "1O117");
    for (name, value) in earlier.iter().filter(|(name, _)| *name != postcode) {
        assert_eq!(browser.value(name), *value, "{name}");
    }
    assert_eq!(browser.value("signatur.name"), "Dr. Erika Beispiel");
    assert!(browser.is_checked("signatur.bestaetigt"));

    // Corrected, the form sends and the browser shows the confirmation.
    browser.fill(&postcode, "10117");
    browser.enter(last.0, last.1);
    browser.click("button.send");
    browser.wait_for_page(&format!("{path}/sent"));
    assert_eq!(browser.location().1, format!("id={id}"));
    assert!(browser.page_text().contains(&id));
    browser.screenshot("sent");

    // The integrator's view: listed, delivered, then consumed.
    let listed: Value = server
        .get_as(USER, &format!("{API}/reports"))
        .json()
        .unwrap();
    assert_eq!(listed, json!([id]));
    let success = server.wait_for_status_in("deathnotice", USER, &id, "SUCCESS");
    assert_eq!(success["module"], "deathnotice");
    let message = server
        .admin_get(&format!("/admin/api/v1/reports/deathnotice/{id}/message"))
        .text()
        .unwrap();
    for expected in journey.delivered.iter().chain([&last.1]) {
        assert!(message.contains(expected), "{expected} in {message}");
    }
    let consumed = server.get_as(USER, &format!("{API}/reports/{id}"));
    assert_eq!(consumed.status(), 200);
    let gone = server.get_as(USER, &format!("{API}/reports/{id}"));
    assert_eq!(gone.status(), 410);
}

#[test]
fn journey_of_the_facility_notice_084020_in_the_browser() {
    run(Journey {
        body: json!({"id": "tod-bj-e", "Einrichtung": {
            "anzeigender": {"nameOrganisation": "Klinikum Süd",
                "kontaktdaten": [{"kanal": "01", "kennung": "station3@klinikum.example"}]},
            "verstorbener": {"vorname": "Karl", "familienname": "Muster",
                "geschlecht": "maennlich", "geburtstag": "1940-02-03"},
            "sterbefall": {"todeszeitpunkt": {"todestag":
                {"zeitpunkt": "2026-11-20T14:30:00+01:00", "uhrzeitExakt": true}}},
            "leichenID": "L-2026-0101"}}),
        code: "084020",
        title: "Sterbefallanzeige der Einrichtung",
        prefilled: ("Einrichtung.verstorbener.familienname", "Muster"),
        rest: &[
            ("Einrichtung.anschriftAutor.gebaeude.hausnummer", "5"),
            ("Einrichtung.anschriftAutor.gebaeude.wohnort", "Berlin"),
            ("Einrichtung.sterbefall.sterbeort.ort", "Berlin"),
            ("Einrichtung.anschriftAutor.gebaeude.strasse", "Hauptstraße"),
        ],
        delivered: &["Klinikum Süd", "L-2026-0101"],
    });
}

#[test]
fn journey_of_the_undertaker_notice_084021_in_the_browser() {
    run(Journey {
        body: json!({"id": "tod-bj-b", "Bestatter": {
            "anzeigender": {"nameOrganisation": "Bestattungen Ruhe GmbH",
                "kontaktdaten": [{"kanal": "02", "kennung": "030 123456"}]},
            "verstorbener": {"vorname": "Erna", "familienname": "Beispiel",
                "geschlecht": "weiblich", "familienstand": "VW"},
            "anzahlKinderVolljaehrig": 1,
            "volljaehrigeKinder": [{"vornamen": "Paul", "familienname": "Beispiel",
                "anschrift": {"strasse": "Lindenallee 7", "plz": "20095", "ort": "Hamburg"}}],
            "artDerBestattung": "feuerbestattung",
            "zahlDerUrkunden": {"anzahlStandardformat": 2}}}),
        code: "084021",
        title: "Sterbefallanzeige des Bestatters",
        prefilled: ("Bestatter.volljaehrigeKinder[0].anschrift.ort", "Hamburg"),
        rest: &[
            ("Bestatter.anschriftAutor.gebaeude.hausnummer", "1"),
            ("Bestatter.anschriftAutor.gebaeude.wohnort", "Berlin"),
            ("Bestatter.anschriftAutor.gebaeude.strasse", "Friedhofsweg"),
        ],
        delivered: &["Bestattungen Ruhe GmbH", "Lindenallee 7"],
    });
}

#[test]
fn journey_of_the_death_certificate_084040_in_the_browser() {
    run(Journey {
        body: json!({"id": "tod-bj-t", "Todesbescheinigung": {
            "verstorbener": {"familienname": "Muster", "geschlecht": "divers",
                "identifizierung": "EPR"},
            "sterbefall": {"todeszeitpunkt": {"todestag":
                {"zeitpunkt": "2026-11-20T03:05:00+01:00"}}, "natuerlicherTod": true},
            "angabenLeichenschau": {"namenArzt": {"vornamen": "Erika", "familienname": "Beispiel"},
                "kontaktArzt": [{"kanal": "01", "kennung": "praxis@beispiel.example"}],
                "datum": "2026-11-20", "ort": "Berlin"},
            "leichenID": "L-2026-0102"}}),
        code: "084040",
        title: "Todesbescheinigung",
        prefilled: ("Todesbescheinigung.verstorbener.identifizierung", "EPR"),
        rest: &[
            (
                "Todesbescheinigung.anschriftAutor.gebaeude.wohnort",
                "Berlin",
            ),
            ("Todesbescheinigung.angabenLeichenschau.uhrzeit", "05:40"),
            (
                "Todesbescheinigung.anschriftAutor.gebaeude.strasse",
                "Praxisweg",
            ),
        ],
        delivered: &["L-2026-0102", "05:40"],
    });
}
