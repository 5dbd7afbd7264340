//! The birth-notice form in a real headless Chromium (tests/common/browser.rs): magic link →
//! pre-filled form → typing, signing, submitting → confirmation page and delivery; validation
//! errors shown in the browser with the values kept; a broken magic link ending on the login error
//! page; rows added to the birth-data form; the operator dashboard on a phone. Screenshots land
//! in `target/browser-screenshots/`. Needs `chromium` and `chromedriver` (Debian's `chromium`,
//! `chromium-driver`): scripts/test.sh installs them; without them these tests fail.

mod common;

use common::browser::Chromium;
use common::*;
use serde_json::{json, Value};

/// A server with the user `klinik`.
fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// Opens the magic link of `notice` in the browser and waits for the form.
fn open_form(server: &Server, browser: &Chromium, notice: &Value) {
    let link = magic_link(server, "klinik", notice);
    browser.goto(&server.url(&link));
    let source = browser.wait_for_page("/forms/birthnotice");
    assert!(source.contains("Geburtsanzeige"), "{source}");
    assert_eq!(browser.text("h1"), "Geburtsanzeige");
}

fn sign(browser: &Chromium) {
    browser.fill("signatur.name", "Dr. Erika Beispiel");
    assert!(!browser.is_checked("signatur.bestaetigt"));
    browser.click("[name=\"signatur.bestaetigt\"]");
    assert!(browser.is_checked("signatur.bestaetigt"), "checkbox ticked");
}

#[test]
fn browser_fills_in_signs_and_dispatches_the_notice() {
    let (_dir, server) = server();
    let id = "geb-browser-1";
    let mut notice = complete_notice(id);
    notice["mutter"]["standard"]
        .as_object_mut()
        .unwrap()
        .remove("geburtsdatum");
    let browser = Chromium::desktop("journey");
    open_form(&server, &browser, &notice);

    // What the memento carried is in the inputs, umlauts intact; the missing date is empty.
    assert_eq!(browser.value("nameEinrichtung"), "Klinikum Süd");
    assert_eq!(
        browser.value("anschriftAutor.gebaeude.strasse"),
        "Hauptstraße"
    );
    assert_eq!(browser.value("mutter.standard.name.familienname"), "Muster");
    assert_eq!(browser.value("geburtsangaben.tag"), "2026-11-20");
    assert_eq!(browser.value("mutter.standard.geburtsdatum"), "");

    // Typed as a person would, in the order of the browser's locale.
    browser.click("[name=\"mutter.standard.geburtsdatum\"]");
    let order = browser.type_date("mutter.standard.geburtsdatum", "1990-04-01");
    assert_eq!(
        browser.value("mutter.standard.geburtsdatum"),
        "1990-04-01",
        "typed in the locale order {order}"
    );
    sign(&browser);
    browser.screenshot("filled");

    browser.click("button.send");
    browser.wait_for_page("/forms/birthnotice/sent");
    assert_eq!(browser.location().1, format!("id={id}"));
    assert_eq!(browser.text("h1"), "Geburtsanzeige abgesendet");
    assert!(browser.text("main, body").contains(id));
    browser.screenshot("sent");

    // The API has the report: PENDING (unless the office already acknowledged), then SUCCESS.
    let first = server.get_as(
        "klinik",
        &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
    );
    assert_eq!(first.status(), 200);
    let first: Value = first.json().unwrap();
    assert!(
        first["status"] == "PENDING" || first["status"] == "SUCCESS",
        "{first}"
    );
    let report = server.wait_for_status("klinik", id, "SUCCESS");
    assert_eq!(report["id"], id, "{report}");
}

#[test]
fn browser_shows_validation_errors_and_keeps_the_values() {
    let (_dir, server) = server();
    let browser = Chromium::desktop("validation");
    open_form(&server, &browser, &complete_notice("geb-browser-2"));

    browser.clear("mutter.standard.name.familienname");
    assert_eq!(browser.value("mutter.standard.name.familienname"), "");
    browser.fill("kind.name.vornamen", "Lina <&\"> Ülla");
    sign(&browser);
    browser.click_button("Geburtsanzeige absenden");

    browser.wait_for("div.errors");
    browser.screenshot("errors");
    assert_eq!(browser.location().0, "/forms/birthnotice");
    let errors = browser.text("div.errors");
    assert!(
        errors.contains("Familienname der Mutter: Pflichtangabe"),
        "{errors}"
    );
    // Everything else is still there, the signature included; the cleared field stays empty.
    assert_eq!(browser.value("mutter.standard.name.familienname"), "");
    assert_eq!(browser.value("nameEinrichtung"), "Klinikum Süd");
    assert_eq!(browser.value("mutter.standard.name.vornamen"), "Anna");
    assert_eq!(browser.value("mutter.standard.geburtsdatum"), "1990-04-01");
    assert_eq!(browser.value("kind.name.vornamen"), "Lina <&\"> Ülla");
    assert_eq!(browser.value("signatur.name"), "Dr. Erika Beispiel");
    assert!(browser.is_checked("signatur.bestaetigt"));

    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, json!([]), "nothing dispatched");
}

#[test]
fn browser_with_a_broken_magic_link_ends_at_the_login_error() {
    let (_dir, server) = server();
    let link = magic_link(&server, "klinik", &complete_notice("geb-browser-3"));
    // Break the token: change the character before the query.
    let at = link.find('?').unwrap_or(link.len()) - 1;
    let replacement = if link.as_bytes()[at] == b'A' {
        "B"
    } else {
        "A"
    };
    let broken = format!("{}{replacement}{}", &link[..at], &link[at + 1..]);
    assert_ne!(broken, link);

    let browser = Chromium::desktop("broken-link");
    browser.goto(&server.url(&broken));
    browser.wait_for_page("/login");
    assert_eq!(browser.location().1, "error");
    assert_eq!(browser.text("h1"), "Anmeldung");
    let message = browser.text("[role=alert]");
    assert!(message.contains("ungültig"), "{message}");
    browser.screenshot("login-error");
    // And no form opens without a session.
    browser.goto(&server.url("/forms/birthnotice"));
    browser.wait_for_page("/login");
}

#[test]
fn browser_adds_contact_rows_and_enter_sends_the_birthdata_form() {
    let (_dir, server) = server();
    let browser = Chromium::desktop("birthdata-rows");
    let data = json!({
        "id": "gd-browser-1",
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "vorgangsidentifikation": {"ereignis": {"zeitpunkt": "2026-11-20T10:30:00+01:00", "zeichen": "ELT-7"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "10:15"},
        "kind": {"geschlecht": "w", "name": {"familienname": {"name": "Muster"}, "vornamen": {"name": "Lina"}}},
        "mutter": {"namen": {"vornamen": "Anna", "familienname": "Muster"}, "geburt": {"tag": "1990-04-01"},
                   "geschlecht": "w", "staatsangehoerigkeit": {"code": "000"}}
    });
    let response = server.memento_in("birthdata", "klinik", &data);
    assert_eq!(response.status(), 200);
    let link = response.json::<Value>().unwrap()["magicLink"]
        .as_str()
        .unwrap()
        .to_owned();
    browser.goto(&server.url(&link));
    browser.wait_for_page("/forms/birthdata");
    assert_eq!(browser.text("h1"), "Geburtsdaten der Eltern");

    // One empty contact row; "Weitere Zeile" adds a second and keeps what was typed.
    // The channel is a select of the code list.
    browser.select("kontaktdaten[0].kanal", "01");
    browser.type_into("kontaktdaten[0].kennung", "anna@example.org");
    assert!(browser
        .find_all("[name=\"kontaktdaten[1].kanal\"]")
        .is_empty());
    browser.click("button.more[value=\"kontaktdaten\"]");
    browser.wait_for("[name=\"kontaktdaten[1].kanal\"]");
    assert_eq!(browser.value("kontaktdaten[0].kennung"), "anna@example.org");
    browser.select("kontaktdaten[1].kanal", "02");
    browser.type_into("kontaktdaten[1].kennung", "030 1234567");
    browser.screenshot("rows");

    // Enter in a text field sends the form with its first submit button: the one that sends.
    browser.type_into("auftragsnummer", "EG-2026-1\u{E007}");
    browser.wait_for_page("/forms/birthdata/sent");
    assert_eq!(browser.text("h1"), "Geburtsdaten der Eltern abgesendet");
    browser.screenshot("sent");

    let done = server.wait_for_status_in("birthdata", "klinik", "gd-browser-1", "SUCCESS");
    assert_eq!(done["module"], "birthdata");
    let message = server
        .admin_get("/admin/api/v1/reports/birthdata/gd-browser-1/message")
        .text()
        .unwrap();
    assert!(message.contains("030 1234567"), "{message}");
    assert!(message.contains("<code>01</code>") && message.contains("<code>02</code>"));
    assert!(message.contains("EG-2026-1"));
}

/// The text of `<strong id="{id}">…</strong>` in a page's source.
fn strong_text<'a>(source: &'a str, id: &str) -> &'a str {
    let open = format!("<strong id=\"{id}\">");
    let start = source.find(&open).map(|at| at + open.len()).unwrap_or(0);
    let end = source[start..].find('<').map_or(start, |at| start + at);
    &source[start..end]
}

#[test]
fn browser_shows_the_operator_dashboard_on_a_phone_sized_screen() {
    let (_dir, server) = server();
    dispatch(&server, "klinik", &complete_notice("geb-dashboard"));
    server.wait_for_status("klinik", "geb-dashboard", "SUCCESS");
    let browser = Chromium::phone("dashboard");
    // Credentials in the URL are what a browser turns into the Basic header.
    let base = server.url("/admin/");
    let with_credentials = base.replacen(
        "http://",
        &format!("http://{}:{}@", OPERATOR.0, OPERATOR.1),
        1,
    );
    browser.goto(&with_credentials);
    // The page reloads itself every few seconds, so it is read from its source (one snapshot)
    // rather than element by element, which a reload in between would make stale.
    let source = browser.wait_for_page("/admin/");
    assert!(
        source.contains("<h1>meldewerk – operations</h1>"),
        "{source}"
    );
    assert_eq!(strong_text(&source, "degraded"), "0");
    assert_eq!(strong_text(&source, "processed"), "1");
    let start = source.find("<tbody>").unwrap();
    let body = &source[start..start + source[start..].find("</tbody>").unwrap()];
    assert_eq!(
        body.matches("<tr>").count(),
        13,
        "outbox, the store, seven modules, the inbox, retention, the court mailbox's watcher \
         and hydration"
    );
    assert!(
        body.contains("<td data-label=\"Actor\">store</td>"),
        "{body}"
    );
    assert!(source.contains("<td data-label=\"Transport\">xpersonenstand</td>"));
    assert!(body.contains("module:birthnotice") && body.contains("running"));
    assert!(body.contains("inbox:xpersonenstand"));
    // On a narrow screen the header row is hidden and each row is a card of its own. Layout is
    // read in one script, within one load; a reload in between only means another try.
    let layout = wait_until("the layout is readable", || {
        let script = "return ['thead', 'tbody tr']\
                      .map(css => getComputedStyle(document.querySelector(css)).display)";
        browser
            .block_on(browser.client().execute(script, vec![]))
            .ok()
    });
    assert_eq!(layout, json!(["none", "block"]));
    browser.screenshot("phone");

    // The page refreshes itself: a report finished after the first load shows up.
    dispatch(&server, "klinik", &complete_notice("geb-dashboard-2"));
    server.wait_for_status("klinik", "geb-dashboard-2", "SUCCESS");
    wait_until("the dashboard shows the second report", || {
        (strong_text(&browser.source(), "processed") == "2").then_some(())
    });
}
