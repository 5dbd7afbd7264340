//! The birth-notice form against the real server (spec/01 §1, §2.3, §3, §5.8): every memento field
//! is pre-filled and safely escaped; the server validates what the end user posts (422 with the form
//! again, values kept, nothing dispatched); without a deposited seal the end user must sign, with
//! one the seal is applied and the office receives its public key; a confidential birth yields
//! schema-valid XML; a report is dispatched once only (409 afterwards); cross-site posts and posts
//! without a session are refused; and the operator API needs operator credentials.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};

const SIGNATORY: &str = "Dr. Erika Beispiel";

/// `(dotted path, form value)` of every leaf of a notice except `id` and `clientReference`.
fn leaves(value: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    for (key, inner) in value.as_object().unwrap() {
        if prefix.is_empty() && (key == "id" || key == "clientReference") {
            continue;
        }
        let path = format!("{prefix}{key}");
        match inner {
            Value::Object(_) => leaves(inner, &format!("{path}."), out),
            Value::String(s) => out.push((path, s.clone())),
            other => out.push((path, other.to_string())),
        }
    }
}

/// A birth notice with every field of the form, umlauts and HTML-special characters.
fn maximal_notice(id: &str) -> Value {
    json!({
        "id": id,
        "clientReference": "KIS <&\"> 1",
        "standortId": "STO-4711",
        "nameEinrichtung": "Klinik \"Süd\" <Haus & Hof>",
        "ansprechpartner": "Dr. Jörg O'Neil <script>alert(1)</script>",
        "anschriftAutor": {"gebaeude": {"strasse": "Äußere Straße", "hausnummer": "5a", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "totgeburt": true,
        "totgeburtAngaben": {"schwangerschaftswoche": 30, "geburtsgewicht": 1200},
        "vertraulicheGeburt": true,
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "23:59", "ort": {"strasse": "Hauptstraße", "hausnummer": "5", "ort": "Berlin-Mitte"}},
        "mehrlingsgeburt": {"anzahlKnaben": 1, "anzahlMaedchen": 2, "anzahlUnbestimmt": 0},
        "kind": {"geschlecht": "DIVERS", "name": {"vornamen": "Zoë Ågot", "familienname": "Groß & Klein"}},
        "mutter": {
            "standard": {"name": {"vornamen": "Anna-Lena", "familienname": "Müller-Lüdenscheidt", "geburtsname": "\"Beispiel\""},
                         "geburtsdatum": "1990-04-01",
                         "anschrift": {"strasse": "Gartenweg", "hausnummer": "3", "postleitzahl": "01067", "wohnort": "Dresden"}},
            "vertraulich": {"vornamen": "Maria", "familienname": "Vertraulich"}
        },
        "elternteil2": {"name": {"vornamen": "Jürgen", "familienname": "Muster", "geburtsname": "Ölmann"}},
        "standesamtKennung": "psw:11000000",
        "zuordnungGeburtsanzeige": "ZU-2026-<1>&'x'"
    })
}

/// Opens the form of `notice` in a fresh browser.
fn open(server: &Server, user: &str, notice: &Value) -> (Browser, Form) {
    let link = magic_link(server, user, notice);
    let browser = Browser::new();
    let form = browser.open_magic_link(server, &link);
    assert_eq!(form.status, 200, "{}", form.html);
    (browser, form)
}

fn sign(form: &mut Form) {
    form.set("signatur.name", SIGNATORY);
    form.set("signatur.bestaetigt", "true");
}

/// No report exists: not listed, 404.
fn assert_nothing_dispatched(server: &Server, user: &str, id: &str) {
    let listed: Value = server
        .get_as(user, "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, json!([]));
    let report = server.get_as(user, &format!("/api/birthnotice/v1/reports/{id}?peek=true"));
    assert_eq!(report.status(), 404);
    assert_eq!(received(server, id), Vec::<Value>::new());
}

/// Submits and expects `303 /forms/birthnotice/sent?id={id}`.
fn submit_ok(server: &Server, browser: &Browser, form: &Form, id: &str) {
    let response = browser.submit(server, form);
    if response.status() != 303 {
        panic!("dispatch refused: {:?}", page_errors(response));
    }
    let location = response.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(location, format!("/forms/birthnotice/sent?id={id}"));
    let sent = browser.get(&server.url(&location));
    assert_eq!(sent.status(), 200);
    assert!(sent.text().unwrap().contains(id));
}

/// A byte field of the JSON: an array of numbers or a base64 string.
fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::Array(items) => items.iter().map(|b| b.as_u64().unwrap() as u8).collect(),
        Value::String(s) => base64::engine::general_purpose::STANDARD.decode(s).unwrap(),
        other => panic!("not bytes: {other}"),
    }
}

#[test]
fn every_memento_field_is_prefilled_and_escaped() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let notice = maximal_notice("geb-f-max");
    let (_, form) = open(&server, "klinik", &notice);

    let mut expected = Vec::new();
    leaves(&notice, "", &mut expected);
    assert!(expected.len() >= 37, "{} leaves", expected.len());
    for (path, value) in &expected {
        assert_eq!(form.get(path), Some(value.as_str()), "field {path}");
    }
    // Nothing the memento carried was rendered as markup.
    assert!(!form.html.contains("<script>alert"), "unescaped script");
    assert!(!form.html.contains("<Haus"), "unescaped name");
    assert!(!form.html.contains("<1>"), "unescaped Zuordnung");
    assert!(
        form.html.contains("Meldung <strong>geb-f-max</strong>"),
        "the id is shown"
    );
    // No signature given yet: the signature inputs are empty.
    assert_eq!(form.get("signatur.name"), Some(""));
    assert_eq!(form.get("signatur.bestaetigt"), None);
}

#[test]
fn server_side_validation_keeps_the_values_and_dispatches_nothing() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-valid";
    let (browser, mut form) = open(&server, "klinik", &complete_notice(id));
    sign(&mut form);
    form.set("mutter.standard.name.familienname", "");
    form.set("kind.name.vornamen", "Lina <&\"> Marie");
    form.set("ansprechpartner", "Schwester Ünal");

    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422, "{}", page.html);
    let errors = page.errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Familienname der Mutter: Pflichtangabe")),
        "{errors:?}"
    );
    assert!(page.html.contains("name=\"m\""), "the form is shown again");
    for (name, value) in &form.fields {
        assert_eq!(page.get(name), Some(value.as_str()), "value of {name} kept");
    }

    let mut page = page;
    page.set("mutter.standard.name.familienname", "Muster");
    page.set("geburtsangaben.tag", "2026-02-30");
    let again = browser.submit_expecting_form(&server, &page);
    assert_eq!(again.status, 422, "{}", again.html);
    let errors = again.errors();
    assert!(
        errors.iter().any(|e| e.contains("Tag der Geburt")),
        "{errors:?}"
    );
    assert!(
        !errors.iter().any(|e| e.contains("Familienname der Mutter")),
        "{errors:?}"
    );
    assert_eq!(again.get("geburtsangaben.tag"), Some("2026-02-30"));
    assert_eq!(
        again.get("mutter.standard.name.familienname"),
        Some("Muster")
    );
    assert_nothing_dispatched(&server, "klinik", id);

    // A rule across fields, checked by the message's writer, speaks the form's language too.
    let mut crossed = again;
    crossed.set("geburtsangaben.tag", "2026-02-28");
    crossed.set("totgeburtAngaben.schwangerschaftswoche", "30");
    crossed.set("totgeburtAngaben.geburtsgewicht", "850");
    let refused = browser.submit_expecting_form(&server, &crossed);
    assert_eq!(refused.status, 422, "{}", refused.html);
    let errors = refused.errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Angaben zur Totgeburt sind nur bei einer Totgeburt zulässig")),
        "{errors:?}"
    );
    assert_nothing_dispatched(&server, "klinik", id);

    // Corrected, it goes through.
    let mut fixed = refused;
    fixed.set("totgeburtAngaben.schwangerschaftswoche", "");
    fixed.set("totgeburtAngaben.geburtsgewicht", "");
    submit_ok(&server, &browser, &fixed, id);
    server.wait_for_status("klinik", id, "SUCCESS");
}

#[test]
fn without_a_seal_the_end_user_must_sign() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-sig";
    let (browser, form) = open(&server, "klinik", &complete_notice(id));
    assert!(
        form.html.contains("name=\"signatur.name\""),
        "signature input missing"
    );
    assert!(
        form.html.contains("name=\"signatur.bestaetigt\""),
        "signature checkbox missing"
    );

    let unsigned: [(Option<&str>, bool); 4] = [
        (None, false),
        (Some(SIGNATORY), false),
        (None, true),
        (Some("   "), true),
    ];
    for (name, confirmed) in unsigned {
        let mut attempt = Form {
            status: form.status,
            html: String::new(),
            fields: form.fields.clone(),
        };
        if let Some(name) = name {
            attempt.set("signatur.name", name);
        }
        if confirmed {
            attempt.set("signatur.bestaetigt", "true");
        }
        let page = browser.submit_expecting_form(&server, &attempt);
        assert_eq!(page.status, 422, "{name:?} {confirmed}");
        assert!(
            page.errors().iter().any(|e| e.starts_with("Signatur")),
            "{:?}",
            page.errors()
        );
    }
    assert_nothing_dispatched(&server, "klinik", id);

    let mut signed = Form {
        status: form.status,
        html: String::new(),
        fields: form.fields.clone(),
    };
    sign(&mut signed);
    submit_ok(&server, &browser, &signed, id);
    server.wait_for_status("klinik", id, "SUCCESS");
    let message = server.admin_get(&format!("/admin/api/v1/reports/birthnotice/{id}/message"));
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "end-user");
    let records = received(&server, id);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["signature"]["kind"], "end-user");
    assert_eq!(records[0]["signature"]["signer"], SIGNATORY);
}

#[test]
fn a_deposited_seal_is_applied_automatically() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let (ok, out, err) = dir.cli(&["seal", "deposit", "klinik"], None);
    assert!(ok, "seal deposit: {out} {err}");
    let public_key = out.trim().rsplit(' ').next().unwrap().to_string();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&public_key)
        .expect("base64 public key");
    assert_eq!(raw.len(), 32, "{out}");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-seal";
    let (browser, form) = open(&server, "klinik", &complete_notice(id));
    assert!(
        !form.html.contains("name=\"signatur.name\""),
        "signature asked for despite the seal"
    );
    assert!(
        form.html.contains("Siegel hinterlegt"),
        "the seal is not mentioned"
    );
    assert_eq!(form.get("signatur.name"), None);

    submit_ok(&server, &browser, &form, id);
    server.wait_for_status("klinik", id, "SUCCESS");
    let message = server.admin_get(&format!("/admin/api/v1/reports/birthnotice/{id}/message"));
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "seal");
    let records = received(&server, id);
    assert_eq!(records.len(), 1);
    let signature = &records[0]["signature"];
    assert_eq!(signature["kind"], "seal");
    let delivered_key =
        base64::engine::general_purpose::STANDARD.encode(bytes(&signature["public_key"]));
    assert_eq!(delivered_key, public_key);
}

#[test]
fn confidential_birth_dispatches_schema_valid_xml() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-vertraulich";
    let mut notice = complete_notice(id);
    notice["vertraulicheGeburt"] = json!(true);
    notice["mutter"] = json!({"vertraulich": {"vornamen": "Maria", "familienname": "Pseudonymia"}});
    let (browser, mut form) = open(&server, "klinik", &notice);
    assert_eq!(form.get("vertraulicheGeburt"), Some("true"));
    assert_eq!(form.get("mutter.standard.name.familienname"), Some(""));
    sign(&mut form);

    // Ticked without the pseudonym: refused.
    let mut missing = Form {
        status: 200,
        html: String::new(),
        fields: form.fields.clone(),
    };
    missing.set("mutter.vertraulich.familienname", "");
    let page = browser.submit_expecting_form(&server, &missing);
    assert_eq!(page.status, 422);
    assert!(
        page.errors().iter().any(|e| e.contains("Pflichtangabe")),
        "{:?}",
        page.errors()
    );
    assert_nothing_dispatched(&server, "klinik", id);

    submit_ok(&server, &browser, &form, id);
    server.wait_for_status("klinik", id, "SUCCESS");
    let message = server.admin_get(&format!("/admin/api/v1/reports/birthnotice/{id}/message"));
    assert_eq!(message.status(), 200);
    let xml = message.bytes().unwrap();
    xmllint_xpersonenstand(&xml).expect("delivered XML is schema-valid");
    assert!(String::from_utf8_lossy(&xml).contains("Pseudonymia"));
}

#[test]
fn a_notice_is_dispatched_only_once() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-twice";
    let notice = complete_notice(id);
    let link = magic_link(&server, "klinik", &notice);
    let browser = Browser::new();
    let mut form = browser.open_magic_link(&server, &link);
    sign(&mut form);
    submit_ok(&server, &browser, &form, id);

    let again = browser.submit(&server, &form);
    assert_eq!(again.status(), 409);
    assert!(again.text().unwrap().contains("Bereits abgesendet"));
    // The same link opened in another browser says it was sent, and a post of the form from
    // that session cannot send it again either.
    let other = Browser::new();
    let sent_page = other.open_magic_link(&server, &link);
    assert!(sent_page.html.contains("bereits abgesendet"));
    form.set("csrf", sent_page.get("csrf").unwrap());
    let again = other.submit(&server, &form);
    assert_eq!(again.status(), 409);

    server.wait_for_status("klinik", id, "SUCCESS");
    assert_eq!(received(&server, id).len(), 1);
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, json!([id]));
    // Still one after the office has answered and a further attempt.
    assert_eq!(other.submit(&server, &form).status(), 409);
    assert_eq!(received(&server, id).len(), 1);
}

#[test]
fn posts_need_the_session_and_its_csrf_token() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = "geb-f-csrf";
    let (browser, mut form) = open(&server, "klinik", &complete_notice(id));
    sign(&mut form);
    let genuine = form.get("csrf").expect("a csrf field").to_string();
    assert!(genuine.len() >= 16, "csrf {genuine}");

    let mut forged = Form {
        status: 200,
        html: String::new(),
        fields: form.fields.clone(),
    };
    forged.set("csrf", "wrong");
    assert_eq!(browser.submit(&server, &forged).status(), 403);
    forged.fields.retain(|(k, _)| k != "csrf");
    assert_eq!(browser.submit(&server, &forged).status(), 403);
    // The token of another session does not fit this one.
    let (_, other) = open(&server, "klinik", &complete_notice(id));
    forged.set("csrf", other.get("csrf").unwrap());
    assert_eq!(browser.submit(&server, &forged).status(), 403);
    // Without a session: login error.
    let response = Browser::new().submit(&server, &form);
    assert_eq!(response.status(), 302);
    assert_eq!(response.headers()["location"], "/login?error");
    assert_nothing_dispatched(&server, "klinik", id);

    submit_ok(&server, &browser, &form, id);
}

#[test]
fn operator_api_needs_operator_credentials() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let id = dispatch(&server, "klinik", &complete_notice("geb-f-op"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let paths = [
        format!("/admin/api/v1/reports/birthnotice/{id}/message"),
        "/admin/api/v1/transports/xpersonenstand/received".to_string(),
        "/admin/api/v1/actors".to_string(),
    ];
    for path in &paths {
        let anonymous = server.client().get(server.url(path)).send().unwrap();
        assert_eq!(anonymous.status(), 401, "{path}");
        let wrong = server
            .client()
            .get(server.url(path))
            .basic_auth(OPERATOR.0, Some("guess"))
            .send()
            .unwrap();
        assert_eq!(wrong.status(), 401, "{path}");
        let api_user = server.get_as("klinik", path);
        assert_eq!(api_user.status(), 401, "{path}: an API user is no operator");
        assert_eq!(server.admin_get(path).status(), 200, "{path}");
    }
}

#[test]
fn unreadable_posts_and_queries_get_clear_answers() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[("MELDEWERK_MAX_BODY_BYTES", "2048")]);
    let (browser, mut form) = open(&server, "klinik", &complete_notice("geb-unreadable"));
    // A post over the body limit: 413 as an HTML page, nothing dispatched.
    form.set("ansprechpartner", &"x".repeat(4096));
    let response = browser.submit(&server, &form);
    assert_eq!(response.status(), 413);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(response.text().unwrap().contains("Formular nicht lesbar"));
    assert_nothing_dispatched(&server, "klinik", "geb-unreadable");
    // A query string that does not fit (the memento given twice): 400 with an errors body.
    let response = browser.get(&server.url("/forms/birthnotice?m=a&m=b"));
    assert_eq!(response.status(), 400);
    let body: Value = response.json().unwrap();
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .contains("invalid query string"),
        "{body}"
    );
}
