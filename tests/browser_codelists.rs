//! Code lists and date-times in a real headless Chromium (tests/common/browser.rs): a contact
//! channel and a nationality are chosen from their lists, a date-time is typed as a date and a
//! time, a time the clocks skipped is shown at its field, and what was chosen and typed arrives in
//! the delivered message with the offset of Europe/Berlin; the death notice's date and time on a
//! phone. Screenshots land in `target/browser-screenshots/`.

mod common;

use common::browser::Chromium;
use common::*;
use serde_json::{json, Value};

const ZEITPUNKT: &str = "vorgangsidentifikation.ereignis.zeitpunkt";

fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "200")],
    );
    (dir, server)
}

/// Opens the form of a memento of `module` and waits for `path`.
fn open(server: &Server, browser: &Chromium, module: &str, body: &Value, path: &str) {
    let link = magic_link_in(server, module, "klinik", body);
    browser.goto(&server.url(&link));
    browser.wait_for_page(path);
}

#[test]
fn code_lists_are_choices_and_a_date_time_is_a_date_and_a_time() {
    let (_dir, server) = server();
    let browser = Chromium::desktop("codelists");
    let id = "cl-browser-1";
    let mut body = complete_birth_data(id);
    body["vorgangsidentifikation"]["ereignis"]["zeitpunkt"] = json!("2026-11-20T09:30:00Z");
    body.as_object_mut().unwrap().remove("kontaktdaten");
    open(&server, &browser, "birthdata", &body, "/forms/birthdata");

    // Pre-filled as the local date and time of the memento's instant.
    assert_eq!(browser.value(&format!("{ZEITPUNKT}.datum")), "2026-11-20");
    assert_eq!(browser.value(&format!("{ZEITPUNKT}.uhrzeit")), "10:30");
    for (part, kind) in [("datum", "date"), ("uhrzeit", "time")] {
        let input = browser.find(&format!("input[name=\"{ZEITPUNKT}.{part}\"]"));
        let found = browser.block_on(input.attr("type")).unwrap();
        assert_eq!(found.as_deref(), Some(kind));
    }

    // The channel and the nationality are selects of their lists, with German labels.
    let channel = "select[name=\"kontaktdaten[0].kanal\"]";
    assert_eq!(
        browser.text(&format!("{channel} option[value=\"03\"]")),
        "Mobiltelefon"
    );
    assert_eq!(
        browser.text("select[name=\"mutter.staatsangehoerigkeit.code\"] option[selected]"),
        "Deutschland"
    );
    browser.select("kontaktdaten[0].kanal", "03");
    browser.type_into("kontaktdaten[0].kennung", "0170 1234567");
    browser.select("mutter.weitereStaatsangehoerigkeit.code", "129");

    // A time the clocks skipped: the problem stands at the field, the values stay.
    browser.type_date(&format!("{ZEITPUNKT}.datum"), "2026-03-29");
    browser.type_time(&format!("{ZEITPUNKT}.uhrzeit"), "02:30");
    assert_eq!(browser.value(&format!("{ZEITPUNKT}.uhrzeit")), "02:30");
    browser.click("button.send");
    browser.wait_for(".error");
    let problem = browser.text(".datetime + .error");
    assert_eq!(
        problem,
        "Vorgang: Zeitpunkt: 29.03.2026 02:30 gibt es wegen der Zeitumstellung an diesem Tag nicht"
    );
    assert_eq!(browser.value("kontaktdaten[0].kanal"), "03");
    browser.screenshot("skipped-time");

    // A summer date: sent with +02:00, the chosen codes with it.
    browser.type_date(&format!("{ZEITPUNKT}.datum"), "2026-07-15");
    browser.type_time(&format!("{ZEITPUNKT}.uhrzeit"), "10:15");
    browser.screenshot("filled");
    browser.click("button.send");
    browser.wait_for_page("/forms/birthdata/sent");
    server.wait_for_status_in("birthdata", "klinik", id, "SUCCESS");
    let message = server
        .admin_get(&format!("/admin/api/v1/reports/birthdata/{id}/message"))
        .text()
        .unwrap();
    for expected in [
        "<ereignis.zeitpunkt>2026-07-15T10:15:00+02:00</ereignis.zeitpunkt>",
        "<code>03</code>",
        "<code>129</code>",
    ] {
        assert!(message.contains(expected), "{expected} in {message}");
    }
}

#[test]
fn a_death_notice_takes_the_time_of_death_as_a_date_and_a_time_on_a_phone() {
    let (_dir, server) = server();
    let browser = Chromium::phone("codelists-phone");
    let id = "cl-browser-2";
    let body = json!({
        "id": id,
        "Einrichtung": {
            "anzeigender": {"nameOrganisation": "Klinikum Süd",
                            "kontaktdaten": [{"kanal": "01", "kennung": "station3@klinikum.example"}]},
            "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "hausnummer": "5",
                                            "postleitzahl": "10117", "wohnort": "Berlin"}},
            "verstorbener": {"familienname": "Muster", "vorname": "Karl", "geschlecht": "maennlich"},
            "sterbefall": {"todeszeitpunkt": {"todestag": {"zeitpunkt": "2026-01-20T13:30:00Z",
                                                           "uhrzeitExakt": true}},
                           "sterbeort": {"ort": "Berlin"}}
        }
    });
    open(
        &server,
        &browser,
        "deathnotice",
        &body,
        "/forms/deathnotice/084020",
    );
    let name = "Einrichtung.sterbefall.todeszeitpunkt.todestag.zeitpunkt";
    assert_eq!(browser.value(&format!("{name}.datum")), "2026-01-20");
    assert_eq!(browser.value(&format!("{name}.uhrzeit")), "14:30");
    // Date and time side by side, both within the phone's width.
    assert_eq!(browser.css(".datetime", "display"), "flex");
    let width = browser.execute(
        "return [document.documentElement.clientWidth, \
         ...Array.from(document.querySelectorAll('.datetime input')).map(i => i.getBoundingClientRect().right)]",
        vec![],
    );
    let width: Vec<f64> = serde_json::from_value(width).unwrap();
    assert!(
        width[1..].iter().all(|right| *right <= width[0]),
        "{width:?}"
    );
    assert_eq!(
        browser.text(
            "select[name=\"Einrichtung.anzeigender.kontaktdaten[0].kanal\"] option[selected]"
        ),
        "E-Mail"
    );
    browser.screenshot("time-of-death");
}
