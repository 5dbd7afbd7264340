//! Long forms a person can finish: sections holding something mandatory come first, the others
//! are folded (`<details>`, open when they hold a value or a problem); fields that need it carry
//! a hint; the count of problems stands at each section; every "Weitere Zeile" button stands in
//! the group it adds a row to, while the form's first submit button sends (Enter in a text input
//! submits with it).

mod common;

use common::{minimal_birth_data, open_form_in, DataDir, Server};
use serde_json::json;

fn started() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("eltern");
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// The sections in page order: (heading with its count, folded?, open?).
fn sections(html: &str) -> Vec<(String, bool, bool)> {
    let form = &html[html.find("<form method=\"post\"").unwrap()..];
    let mut found = Vec::new();
    let mut rest = form;
    loop {
        let fieldset = rest.find("<fieldset id=\"abschnitt-");
        let details = rest.find("<details");
        match (fieldset, details) {
            (Some(f), d) if d.is_none_or(|d| f < d) => {
                let legend = &rest[f..];
                let start = legend.find("<legend>").unwrap() + "<legend>".len();
                let end = legend.find("</legend>").unwrap();
                found.push((text(&legend[start..end]), false, true));
                rest = &legend[end..];
            }
            (_, Some(d)) => {
                let block = &rest[d..];
                let open = block[..block.find('>').unwrap()].contains(" open");
                let start = block.find("<summary>").unwrap() + "<summary>".len();
                let end = block.find("</summary>").unwrap();
                found.push((text(&block[start..end]), true, open));
                rest = &block[block.find("</details>").unwrap()..];
            }
            _ => return found,
        }
    }
}

fn text(html: &str) -> String {
    common::without_tags(html)
}

/// The HTML of the section headed `heading` (its fieldset, or its `<details>`).
fn section<'a>(html: &'a str, heading: &str) -> &'a str {
    let at = html
        .find(&format!("<legend>{heading}"))
        .or_else(|| html.find(&format!("<summary>{heading}")))
        .unwrap_or_else(|| panic!("no section {heading}"));
    let end = html[at..].find("</fieldset>").unwrap() + at;
    &html[at..end]
}

#[test]
fn mandatory_sections_come_first_and_optional_ones_are_folded() {
    let (_dir, server) = started();
    let (_, form) = open_form_in(&server, "birthdata", "eltern", &json!({"id": "gd-s1"}));
    assert_eq!(
        sections(&form.html),
        [
            ("Meldende Stelle", false, true),
            ("Geburt", false, true),
            ("Kind", false, true),
            ("Mutter", false, true),
            ("Kontaktdaten der Eltern", false, true),
            ("Elterngeld", false, true),
            ("Zweiter Elternteil", true, false),
            ("Ehe der Eltern", true, false),
            ("Vorangegangenes Kind", true, false),
            ("Urkunden", true, false),
        ]
        .map(|(h, folded, open)| (h.to_owned(), folded, open))
    );
    // A list that needs a first row says so before the first submit.
    assert!(section(&form.html, "Kontaktdaten der Eltern")
        .contains("<p class=\"hint\">Mindestens eine Zeile ist auszufüllen.</p>"));

    // A folded section that holds a value is open.
    let (_, form) = open_form_in(
        &server,
        "birthdata",
        "eltern",
        &json!({"id": "gd-s2", "elternteil2": {"namen": {"vornamen": "Max"}}}),
    );
    let shown = sections(&form.html);
    assert!(shown.contains(&("Zweiter Elternteil".to_owned(), true, true)));
    assert!(shown.contains(&("Ehe der Eltern".to_owned(), true, false)));
}

#[test]
fn fields_that_need_it_carry_a_hint() {
    let (_dir, server) = started();
    let (_, form) = open_form_in(&server, "birthdata", "eltern", &json!({"id": "gd-hint"}));
    let html = &form.html;
    assert!(html.contains(
        "<div class=\"hint\" id=\"auftragsnummer-hinweis\">Die Auftragsnummer aus dem \
         Elterngeldverfahren, mit der das Standesamt die Geburtsdaten an die Elterngeldstelle \
         weiterleitet; steht auf dem Antrag.</div>"
    ));
    assert!(html.contains("aria-describedby=\"auftragsnummer-hinweis\""));
    assert!(html.contains("id=\"zuordnungGeburtsanzeige-hinweis\""));
    assert!(html.contains("id=\"zustaendigeElterngeldstelle.kennung-hinweis\""));
    // Auftragsnummer stands in a section shown open, before every folded one.
    let auftrag = html.find("name=\"auftragsnummer\"").unwrap();
    assert!(auftrag < html.find("<details").unwrap());
}

#[test]
fn problems_are_counted_at_their_section_and_open_a_folded_one() {
    let (_dir, server) = started();
    let (browser, mut form) =
        open_form_in(&server, "birthdata", "eltern", &json!({"id": "gd-count"}));
    form.set("mutter.namen.vornamen", "Anna");
    form.set("elternteil2.geburt.tag", "1990-13-01");
    form.set("kontaktdaten[0].kanal", "01");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422);
    let shown = sections(&page.html);
    let heading = |name: &str| {
        shown
            .iter()
            .find(|(h, _, _)| h.starts_with(name))
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {shown:?}"))
    };
    // Missing: family name, sex and nationality of the mother.
    assert_eq!(
        heading("Mutter").0,
        "Mutter – 3 Angaben fehlen oder sind ungültig"
    );
    assert_eq!(heading("Kind").0, "Kind – 1 Angabe fehlt oder ist ungültig");
    // A row without its address: the problem names the list's field, and stands at the group.
    assert_eq!(
        heading("Kontaktdaten der Eltern").0,
        "Kontaktdaten der Eltern – 1 Angabe fehlt oder ist ungültig"
    );
    assert!(section(&page.html, "Kontaktdaten der Eltern")
        .contains("<div class=\"error group\">Kontakt: Adresse oder Nummer: Pflichtangabe</div>"));
    // A folded section with a problem is open.
    assert_eq!(
        heading("Zweiter Elternteil"),
        (
            "Zweiter Elternteil – 1 Angabe fehlt oder ist ungültig".to_owned(),
            true,
            true
        )
    );
    assert_eq!(heading("Urkunden"), ("Urkunden".to_owned(), true, false));
}

#[test]
fn another_row_is_asked_for_inside_its_group_and_the_first_button_sends() {
    let (_dir, server) = started();
    let (browser, form) = open_form_in(
        &server,
        "birthdata",
        "eltern",
        &minimal_birth_data("gd-rows"),
    );
    let html = &form.html;
    // Each "Weitere Zeile" button stands in the group it adds a row to.
    assert!(section(html, "Kontaktdaten der Eltern").contains(
        "<button class=\"more\" type=\"submit\" name=\"_zeile\" value=\"kontaktdaten\">Weitere Zeile: Kontakt</button>"
    ));
    assert!(section(html, "Elterngeld").contains(
        "value=\"zustaendigeElterngeldstelle.erreichbarkeit\">Weitere Zeile: Elterngeldstelle: Kontakt</button>"
    ));
    // The form's first submit button sends: it has no name, so a post by Enter (or by that
    // button) carries no "_zeile".
    let inside = &html[html.find("<form method=\"post\"").unwrap()..];
    let first = &inside[inside.find("<button").unwrap()..];
    let first = &first[..first.find('>').unwrap()];
    assert_eq!(
        first,
        "<button class=\"default\" type=\"submit\" tabindex=\"-1\" aria-hidden=\"true\""
    );
    assert!(inside.find("<button").unwrap() < inside.find("name=\"_zeile\"").unwrap());

    // What the browser posts for Enter in a text input: the fields, no button name. It sends.
    let response = browser.submit(&server, &form);
    assert_eq!(
        response.status(),
        303,
        "{:?}",
        common::page_errors(response)
    );
    server.wait_for_status_in("birthdata", "eltern", "gd-rows", "SUCCESS");
}
