//! The form layer in a real headless Chromium (tests/common/browser.rs): mandatory fields marked
//! before the first submit, every problem of a submit at its place with a link from the list
//! above the form, optional sections folded until opened, the long birth-data form at desktop
//! and phone size, and a group's and the signature's problems at their fieldsets. Screenshots
//! land in `target/browser-screenshots/`.

mod common;

use common::browser::{Chromium, Screen};
use common::*;
use serde_json::{json, Value};

/// A server with the user `klinik`.
fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// Opens the form of a memento of `module` and waits for it at `path`.
fn open(server: &Server, browser: &Chromium, module: &str, body: &Value, path: &str) {
    let link = magic_link_in(server, module, "klinik", body);
    browser.goto(&server.url(&link));
    browser.wait_for_page(path);
}

/// The element with the id `id` (ids of the form layer hold dots and brackets).
fn by_id(id: &str) -> String {
    format!("[id=\"{id}\"]")
}

#[test]
fn browser_shows_every_problem_at_its_place_in_one_submit() {
    let (_dir, server) = server();
    let browser = Chromium::desktop("forms-one-pass");
    open(
        &server,
        &browser,
        "birthdata",
        &json!({"id": "gd-browser-one", "mutter": {"namen": {"vornamen": "Anna"}}}),
        "/forms/birthdata",
    );
    // Marked before the first submit, and explained.
    assert!(browser.page_text().contains("* Pflichtangabe"));
    let required = browser.execute(
        "return [document.getElementsByName('auftragsnummer')[0].required, \
                 document.getElementsByName('ansprechpartner')[0].required]",
        vec![],
    );
    assert_eq!(required, json!([true, false]));
    browser.screenshot("marked");

    browser.fill("anschriftAutor.gebaeude.hausnummer", "12-14");
    // A folded section opens with a click on its heading.
    browser.click("details:has([name=\"ehe.kinderDerEhe\"]) summary");
    browser.fill("ehe.kinderDerEhe", "2");
    browser.click_button("Geburtsdaten der Eltern absenden");
    browser.wait_for("div.errors");
    browser.screenshot("problems");
    assert_eq!(browser.location().0, "/forms/birthdata");

    let list = browser.text("div.errors");
    for problem in [
        "Anschrift der meldenden Stelle: Hausnummer: Hausnummer wie 12, 12a oder 3 1/2",
        "Familienname der Mutter: Pflichtangabe",
        "Ehe der Eltern: Angaben zur Ehe sind nur zulässig, wenn die Eltern verheiratet sind",
        "Kontaktdaten der Eltern: Pflichtangabe",
    ] {
        assert!(list.contains(problem), "{problem} in {list}");
    }
    assert!(browser
        .text(&by_id("anschriftAutor.gebaeude.hausnummer-fehler"))
        .contains("Hausnummer wie 12, 12a oder 3 1/2"));
    assert_eq!(
        browser.text("fieldset .error.group"),
        "Kontaktdaten der Eltern: Pflichtangabe"
    );
    assert!(browser
        .text("fieldset:has(.error.group) legend")
        .starts_with("Kontaktdaten der Eltern – 1 Angabe fehlt"));
    // Every value is still there.
    assert_eq!(browser.value("mutter.namen.vornamen"), "Anna");
    assert_eq!(browser.value("anschriftAutor.gebaeude.hausnummer"), "12-14");
    assert_eq!(browser.value("ehe.kinderDerEhe"), "2");

    // The link of a problem leads to its input.
    browser.click("div.errors a[href=\"#anschriftAutor.gebaeude.hausnummer\"]");
    let hash = browser.execute("return location.hash", vec![]);
    assert_eq!(hash, json!("#anschriftAutor.gebaeude.hausnummer"));
}

#[test]
fn browser_folds_optional_sections_of_the_long_form_on_desktop_and_phone() {
    let (_dir, server) = server();
    for (screen, name) in [(Screen::Desktop, "desktop"), (Screen::Phone, "phone")] {
        let browser = Chromium::start("forms-long", screen);
        open(
            &server,
            &browser,
            "birthdata",
            &json!({"id": format!("gd-browser-{name}")}),
            "/forms/birthdata",
        );
        let folded = browser.execute(
            "return [...document.querySelectorAll('details')].map(d => \
                 [d.querySelector('summary').textContent, d.open])",
            vec![],
        );
        assert_eq!(
            folded,
            json!([
                ["Zweiter Elternteil", false],
                ["Ehe der Eltern", false],
                ["Vorangegangenes Kind", false],
                ["Urkunden", false]
            ])
        );
        // Nothing wider than the screen.
        let widths = browser.execute(
            "return [document.documentElement.scrollWidth, window.innerWidth]",
            vec![],
        );
        assert!(widths[0].as_u64() <= widths[1].as_u64(), "{name}: {widths}");
        browser.screenshot(&format!("{name}-folded"));

        // A folded section opens without JavaScript's help: a click on its summary.
        browser.click("details summary");
        let open = browser.execute("return document.querySelector('details').open", vec![]);
        assert_eq!(open, json!(true), "{name}");
        browser.fill("elternteil2.namen.vornamen", "Max");
        browser.screenshot(&format!("{name}-opened"));
    }
}

#[test]
fn browser_shows_group_and_signature_problems_at_their_fieldsets() {
    let (_dir, server) = server();
    let browser = Chromium::desktop("forms-groups");
    open(
        &server,
        &browser,
        "deathnotice",
        &json!({"id": "tod-browser-groups", "Bestatter": {}}),
        "/forms/deathnotice/084021",
    );
    browser.click_button("Sterbefallanzeige des Bestatters absenden");
    browser.wait_for("div.errors");
    browser.screenshot("problems");
    assert_eq!(
        browser.text("fieldset .error.group"),
        "Kontaktdaten der anzeigenden Stelle (mindestens ein Eintrag): Pflichtangabe"
    );
    assert!(browser
        .text("fieldset:has(.error.group) legend")
        .starts_with("Bestattungsunternehmen – 5 Angaben fehlen oder sind ungültig"));
    assert!(browser
        .text("#signatur .error")
        .starts_with("Signatur: Bitte geben Sie Ihren Namen an"));
}
