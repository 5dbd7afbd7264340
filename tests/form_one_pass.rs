//! A submit reports every problem at once, each at its place: a malformed value, a missing
//! mandatory field and a value only the message's writer refuses come in one answer, each at its
//! input; a group that needs a row at its fieldset; the signature at the signature block; the
//! list above the form links to every place. Mandatory fields are marked before the first submit.

mod common;

use common::{minimal_birth_data, open_form_in, without_tags, DataDir, Server};
use serde_json::{json, Value};

fn started() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// The problem shown at the input `name`.
fn error_at(html: &str, name: &str) -> Option<String> {
    let open = format!("<div class=\"error\" id=\"{name}-fehler\">");
    let start = html.find(&open)? + open.len();
    let end = html[start..].find("</div>")? + start;
    Some(without_tags(&html[start..end]).replace("&#39;", "'"))
}

/// The HTML of the fieldset with `id`.
fn fieldset<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("<fieldset id=\"{id}\">");
    let start = html
        .find(&open)
        .unwrap_or_else(|| panic!("no fieldset {id}"));
    let end = html[start..].find("</fieldset>").unwrap() + start;
    &html[start..end]
}

/// The id of the fieldset whose legend starts with `legend`.
fn fieldset_id(html: &str, legend: &str) -> String {
    let at = html
        .find(&format!("<legend>{legend}"))
        .or_else(|| html.find(&format!("<legend class=\"visually-hidden\">{legend}")))
        .unwrap_or_else(|| panic!("no section {legend}"));
    let open = html[..at].rfind("<fieldset id=\"").unwrap() + "<fieldset id=\"".len();
    let end = html[open..].find('"').unwrap() + open;
    html[open..end].to_owned()
}

/// The list above the form: (link target, text) per problem.
fn summary(html: &str) -> Vec<(String, String)> {
    let start = html.find("class=\"errors\"").expect("a list of problems");
    let list = &html[start..start + html[start..].find("</ul>").unwrap()];
    list.split("<li><a href=\"")
        .skip(1)
        .map(|item| {
            let (href, rest) = item.split_once("\">").unwrap();
            let text = &rest[..rest.find("</a>").unwrap()];
            (href.to_owned(), without_tags(text).replace("&#39;", "'"))
        })
        .collect()
}

/// The opening tag of the input (or select) named `name`.
fn tag<'a>(html: &'a str, name: &str) -> &'a str {
    let needle = format!(" name=\"{name}\"");
    let at = html
        .find(&needle)
        .unwrap_or_else(|| panic!("no input {name}"));
    let start = html[..at].rfind('<').unwrap();
    let end = html[at..].find('>').unwrap() + at;
    &html[start..=end]
}

#[test]
fn a_bad_date_a_missing_field_and_a_wrong_code_come_in_one_answer_each_at_its_field() {
    let (_dir, server) = started();
    let (browser, mut form) = open_form_in(
        &server,
        "birthdata",
        "klinik",
        &json!({"id": "gd-one", "mutter": {"namen": {"vornamen": "Anna"}}}),
    );
    form.set("geburtsangaben.tag", "2026-02-30");
    form.set("mutter.staatsangehoerigkeit.code", "deutsch");
    form.set("anschriftAutor.gebaeude.hausnummer", "12-14");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422, "{}", page.html);

    let expected = [
        (
            "geburtsangaben.tag",
            "Tag der Geburt: Datum im Format JJJJ-MM-TT",
        ),
        (
            "mutter.namen.familienname",
            "Familienname der Mutter: Pflichtangabe",
        ),
        (
            "mutter.staatsangehoerigkeit.code",
            "Staatsangehörigkeit der Mutter: bitte einen der angebotenen Werte wählen",
        ),
        (
            "anschriftAutor.gebaeude.hausnummer",
            "Anschrift der meldenden Stelle: Hausnummer: Hausnummer wie 12, 12a oder 3 1/2 (bis \
             zu vier Ziffern, danach höchstens vier Buchstaben, Ziffern, '.' oder '/')",
        ),
    ];
    let listed = summary(&page.html);
    for (name, message) in expected {
        assert_eq!(
            error_at(&page.html, name).as_deref(),
            Some(message),
            "{name}"
        );
        assert!(
            tag(&page.html, name).contains("aria-invalid=\"true\""),
            "{name}"
        );
        assert!(
            listed.contains(&(format!("#{name}"), message.to_owned())),
            "{name} in {listed:?}"
        );
    }
    // The list that needs a first row says so at its group, linked from above.
    let contacts = fieldset_id(&page.html, "Kontaktdaten der Eltern");
    assert!(
        fieldset(&page.html, &contacts)
            .contains("<div class=\"error group\">Kontaktdaten der Eltern: Pflichtangabe</div>"),
        "{}",
        fieldset(&page.html, &contacts)
    );
    assert!(listed.contains(&(
        format!("#{contacts}"),
        "Kontaktdaten der Eltern: Pflichtangabe".to_owned()
    )));
    // Every value is kept, the wrong ones too (a code that is not on the list has no option).
    assert_eq!(page.get("geburtsangaben.tag"), Some("2026-02-30"));
    assert_eq!(
        page.get("anschriftAutor.gebaeude.hausnummer"),
        Some("12-14")
    );
    assert_eq!(page.get("mutter.namen.vornamen"), Some("Anna"));
    assert_eq!(
        server
            .get_as("klinik", "/api/birthdata/v1/reports/gd-one?peek=true")
            .status(),
        404,
        "nothing was dispatched"
    );
}

#[test]
fn every_value_the_writer_refuses_comes_in_one_answer() {
    let (_dir, server) = started();
    let (browser, mut form) = open_form_in(
        &server,
        "birthdata",
        "klinik",
        &minimal_birth_data("gd-two"),
    );
    // Nothing is missing; the writer refuses two things, each found only when it writes: a
    // building address beside a post-office box, and a marriage of parents not married.
    form.set("anschriftAutor.postfach.postfach", "1234");
    form.set("ehe.kinderDerEhe", "2");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422, "{}", page.html);
    assert_eq!(
        page.errors(),
        [
            "Meldende Stelle: genau eines angeben: Gebäude oder Postfach",
            "Ehe der Eltern: Angaben zur Ehe sind nur zulässig, wenn die Eltern verheiratet sind",
        ]
    );
    let sender = fieldset_id(&page.html, "Meldende Stelle");
    assert!(fieldset(&page.html, &sender).contains(
        "<div class=\"error group\">Meldende Stelle: genau eines angeben: Gebäude oder \
         Postfach</div>"
    ));
    let marriage = fieldset_id(&page.html, "Ehe der Eltern");
    assert!(fieldset(&page.html, &marriage).contains(
        "<div class=\"error group\">Ehe der Eltern: Angaben zur Ehe sind nur zulässig, wenn \
         die Eltern verheiratet sind</div>"
    ));
}

#[test]
fn group_and_signature_problems_stand_at_their_fieldsets() {
    let (_dir, server) = started();
    let (browser, form) = open_form_in(
        &server,
        "deathnotice",
        "klinik",
        &json!({"id": "tod-one", "Bestatter": {}}),
    );
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422, "{}", page.html);
    let group = "Kontaktdaten der anzeigenden Stelle (mindestens ein Eintrag): Pflichtangabe";
    let undertaker = fieldset_id(&page.html, "Bestattungsunternehmen");
    assert!(
        fieldset(&page.html, &undertaker)
            .contains(&format!("<div class=\"error group\">{group}</div>")),
        "{}",
        page.html
    );
    let signature =
        "Signatur: Bitte geben Sie Ihren Namen an und bestätigen Sie die Unterschrift. \
                     Ohne Siegel oder Signatur kann die Meldung nicht versendet werden.";
    let block = fieldset(&page.html, "signatur");
    assert!(
        block.contains(&format!(
            "<div class=\"error\" id=\"signatur-fehler\">{signature}</div>"
        )),
        "{block}"
    );
    assert!(tag(&page.html, "signatur.name").contains("aria-describedby=\"signatur-fehler\""));
    let listed = summary(&page.html);
    assert_eq!(
        listed.first(),
        Some(&(format!("#{undertaker}"), group.to_owned()))
    );
    assert_eq!(
        listed.last(),
        Some(&("#signatur.name".to_owned(), signature.to_owned()))
    );
    assert!(listed.contains(&(
        "#Bestatter.verstorbener.familienname".to_owned(),
        "Familienname der verstorbenen Person: Pflichtangabe".to_owned()
    )));
}

#[test]
fn a_rule_across_fields_comes_with_the_missing_fields() {
    let (_dir, server) = started();
    let (browser, mut form) = open_form_in(
        &server,
        "deathnotice",
        "klinik",
        &json!({"id": "tod-two", "Todesbescheinigung": {}}),
    );
    form.set("Todesbescheinigung.angabenLeichenschau.uhrzeit", "10:00");
    form.set(
        "Todesbescheinigung.angabenLeichenschau.uhrzeitUnbekannt",
        "true",
    );
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422, "{}", page.html);
    assert_eq!(
        error_at(
            &page.html,
            "Todesbescheinigung.angabenLeichenschau.uhrzeitUnbekannt"
        )
        .as_deref(),
        Some(
            "Uhrzeit der Leichenschau unbekannt: eine unbekannte Uhrzeit schließt die Angabe \
             einer Uhrzeit aus"
        )
    );
    assert_eq!(
        error_at(&page.html, "Todesbescheinigung.leichenID").as_deref(),
        Some("Leichen-ID: Pflichtangabe")
    );
    let examination = fieldset_id(&page.html, "Leichenschau");
    assert!(fieldset(&page.html, &examination).contains(
        "<div class=\"error group\">Kontaktdaten des Arztes / der Ärztin (mindestens ein \
         Eintrag): Pflichtangabe</div>"
    ));
    // Signed: no signature problem.
    assert!(!page.html.contains("signatur-fehler"));
}

#[test]
fn mandatory_fields_are_marked_before_the_first_submit() {
    let (_dir, server) = started();
    let (_, form) = open_form_in(&server, "birthdata", "klinik", &json!({"id": "gd-marks"}));
    let html = &form.html;
    assert!(html.contains(
        "<p class=\"hint\"> <span class=\"required\" aria-hidden=\"true\">*</span> Pflichtangabe</p>"
    ));
    assert!(html.contains("<form method=\"post\" action=\"/forms/birthdata\" novalidate>"));
    for name in [
        "auftragsnummer",
        "geburtsangaben.tag",
        "mutter.namen.familienname",
        "kind.geschlecht",
    ] {
        let input = tag(html, name);
        assert!(input.contains(" required"), "{input}");
        assert!(input.contains("aria-required=\"true\""), "{input}");
        assert!(
            html.contains(&format!(
                "<label for=\"{name}\">{} <span class=\"required\" aria-hidden=\"true\">*</span></label>",
                label_of(html, name)
            )),
            "{name}"
        );
    }
    for name in [
        "ansprechpartner",
        "kontaktdaten[0].kanal",
        "elternVerheiratet",
    ] {
        let input = tag(html, name);
        assert!(!input.contains("required"), "{input}");
    }
    // Nothing is reported before the first submit.
    assert!(!html.contains("class=\"errors\""));
    assert!(!html.contains("class=\"error"));

    // The signature fields of a form signed by the end user are mandatory too.
    let (_, form) = open_form_in(
        &server,
        "deathnotice",
        "klinik",
        &json!({"id": "tod-marks", "Einrichtung": {}}),
    );
    for name in [
        "signatur.name",
        "signatur.bestaetigt",
        "Einrichtung.leichenID",
    ] {
        if name == "Einrichtung.leichenID" {
            assert!(
                !tag(&form.html, name).contains("required"),
                "optional in 084020"
            );
        } else {
            assert!(
                tag(&form.html, name).contains("aria-required=\"true\""),
                "{name}"
            );
        }
    }
}

/// The text of the label for `name`, up to its marker.
fn label_of<'a>(html: &'a str, name: &str) -> &'a str {
    let open = format!("<label for=\"{name}\">");
    let start = html.find(&open).unwrap() + open.len();
    let end = html[start..].find(" <span").unwrap() + start;
    &html[start..end]
}

#[test]
fn the_memento_api_refuses_a_house_number_the_message_cannot_carry() {
    let (_dir, server) = started();
    let response = server.memento_in(
        "birthnotice",
        "klinik",
        &json!({"id": "geb-hnr", "anschriftAutor": {"gebaeude": {"hausnummer": "12-14"}}}),
    );
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({"errors": ["anschriftAutor.gebaeude.hausnummer must be a house number: up to \
                           four digits, then at most four letters, digits, '.' or '/'"]})
    );
    let response = server.memento_in(
        "birthdata",
        "klinik",
        &json!({"id": "gd-hnr", "mutter": {"anschrift": {"hausnummer": "7 Hinterhaus"}}}),
    );
    assert_eq!(response.status(), 400);
    let body: Value = response.json().unwrap();
    assert_eq!(
        body["errors"],
        json!([{"pointer": "/mutter/anschrift/hausnummer",
                "detail": "mutter.anschrift.hausnummer must be a house number: up to four \
                           digits, then at most four letters, digits, '.' or '/'"}])
    );
    for fine in ["12", "12a", "3 1/2", "7 b"] {
        let response = server.memento_in(
            "birthnotice",
            "klinik",
            &json!({"id": "geb-hnr", "anschriftAutor": {"gebaeude": {"hausnummer": fine}}}),
        );
        assert_eq!(response.status(), 200, "{fine}");
    }
}
