//! Code lists and date-times against the real server: the memento API refuses a code outside its
//! list in each module's error style, the forms offer a list's values (and refuse others), a
//! date-time is a date and a time input in the service's time zone, and the simulated office
//! refuses a message with codes outside their lists in its acknowledgement.

mod common;

use base64::Engine as _;
use common::remote::Peer;
use common::*;
use serde_json::{json, Value};

const BASE: &str = "https://problems.example.org/meldewerk";
const ZEITPUNKT: &str = "vorgangsidentifikation.ereignis.zeitpunkt";

fn started() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("eltern");
    dir.add_user("bestatter");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_MODULES__BIRTHDATA__PROBLEMS_BASE", BASE),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "200"),
        ],
    );
    (dir, server)
}

/// Parents' birth data complete for the 081021 message, without the procedure's time.
fn birth_data(id: &str) -> Value {
    let mut data = complete_birth_data(id);
    data["vorgangsidentifikation"]["ereignis"]
        .as_object_mut()
        .unwrap()
        .remove("zeitpunkt");
    data
}

/// The birth-data form of `body`, opened in a fresh browser.
fn birth_data_form(server: &Server, body: &Value) -> (Browser, Form) {
    open_form_in(server, "birthdata", "eltern", body)
}

/// Sends the form with the procedure's time as a local date and time; the answer.
fn send_with_time(
    server: &Server,
    browser: &Browser,
    form: &mut Form,
    date: &str,
    time: &str,
) -> reqwest::blocking::Response {
    form.set(&format!("{ZEITPUNKT}.datum"), date);
    form.set(&format!("{ZEITPUNKT}.uhrzeit"), time);
    browser.submit(server, form)
}

/// The message the office received for a birth-data report.
fn delivered(server: &Server, id: &str) -> String {
    server.wait_for_status_in("birthdata", "eltern", id, "SUCCESS");
    let received = received_in(server, "birthdata", id);
    assert_eq!(received.len(), 1, "{received:?}");
    let body = base64::engine::general_purpose::STANDARD
        .decode(received[0]["body"].as_str().unwrap())
        .unwrap();
    String::from_utf8(body).unwrap()
}

#[test]
fn the_birth_data_api_refuses_codes_outside_their_lists_as_problem_details() {
    let (_dir, server) = started();
    let response = server.memento_in(
        "birthdata",
        "eltern",
        &json!({
            "id": "cl-1",
            "kind": {"name": {"vornamen": {"name": "Lina", "namensartCode": "Rufname"}}},
            "kontaktdaten": [{"kanal": "01", "kennung": "a@b.example"}, {"kanal": "E-Mail", "kennung": "c@d.example"}],
            "mutter": {"staatsangehoerigkeit": {"code": "DE"}, "weitereStaatsangehoerigkeit": {"code": "deutsch"}}
        }),
    );
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let nationality =
        "urn:de:bund:destatis:bevoelkerungsstatistik:schluessel:staatsangehoerigkeit (2023-02-24)";
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({
            "type": format!("{BASE}/problems/validation-error"),
            "title": "Request validation failed",
            "status": 400,
            "detail": "the request is invalid; see errors",
            "instance": "/api/birthdata/v1/memento",
            "errors": [
                {"pointer": "/kind/name/vornamen/namensartCode",
                 "detail": "kind.name.vornamen.namensartCode must be a code of the list urn:xpersonenstand:schluesseltabelle:namensart (1)"},
                {"pointer": "/kontaktdaten/1/kanal",
                 "detail": "kontaktdaten[1].kanal must be a code of the list urn:de:xoev:codeliste:erreichbarkeit (1)"},
                {"pointer": "/mutter/staatsangehoerigkeit/code",
                 "detail": format!("mutter.staatsangehoerigkeit.code must be a code of the list {nationality}")},
                {"pointer": "/mutter/weitereStaatsangehoerigkeit/code",
                 "detail": format!("mutter.weitereStaatsangehoerigkeit.code must be a code of the list {nationality}")}
            ]
        })
    );
    let mut good = birth_data("cl-2");
    good["kind"]["name"]["vornamen"]["namensartCode"] = json!("vv");
    good["mutter"]["weitereStaatsangehoerigkeit"] = json!({"code": "163"});
    assert_eq!(
        server.memento_in("birthdata", "eltern", &good).status(),
        200
    );
}

#[test]
fn the_death_notice_api_refuses_codes_outside_their_lists_in_every_slot() {
    let (_dir, server) = started();
    let answer = |body: Value| {
        let response = server.post_as("bestatter", "/api/deathnotice/v1/memento", &body);
        let status = response.status().as_u16();
        (status, response.json::<Value>().unwrap())
    };
    let channel = "must be a code of the list urn:de:xoev:codeliste:erreichbarkeit (1)";
    assert_eq!(
        answer(json!({"id": "cl-3", "Bestatter": {
            "auskunftsgeber": {"kontaktdaten": [{"kanal": "Telefon", "kennung": "030 1234"}]},
            "verstorbener": {"familienstand": "verheiratet"}}})),
        (
            400,
            json!({"errors": [
                format!("Bestatter.auskunftsgeber.kontaktdaten[0].kanal {channel}"),
                "Bestatter.verstorbener.familienstand must be a code of the list urn:xpersonenstand:schluesseltabelle:familienstandpersonenstandswesen (1)"
            ]})
        )
    );
    assert_eq!(
        answer(json!({"id": "cl-4", "Todesbescheinigung": {
            "angabenLeichenschau": {"kontaktArzt": [{"kanal": "08", "kennung": "x"}]},
            "verstorbener": {"identifizierung": "Ausweis"}}})),
        (
            400,
            json!({"errors": [
                format!("Todesbescheinigung.angabenLeichenschau.kontaktArzt[0].kanal {channel}"),
                "Todesbescheinigung.verstorbener.identifizierung must be a code of the list urn:xoev-de:xpersonenstand:codeliste:identifizierungsart (1)"
            ]})
        )
    );
    let (status, _) = answer(json!({"id": "cl-5", "Bestatter": {
        "auskunftsgeber": {"kontaktdaten": [{"kanal": "02", "kennung": "030 1234"}]},
        "verstorbener": {"familienstand": "VW"}}}));
    assert_eq!(status, 200);
}

#[test]
fn forms_offer_the_values_of_a_list_and_refuse_any_other() {
    let (_dir, server) = started();
    let mut body = birth_data("cl-6");
    body["vorgangsidentifikation"]["ereignis"]["zeitpunkt"] = json!("2026-11-20T10:30:00+01:00");
    let (browser, mut form) = birth_data_form(&server, &body);
    for (name, selected) in [
        (
            "kontaktdaten[0].kanal",
            "<option value=\"01\" selected>E-Mail</option>",
        ),
        (
            "mutter.staatsangehoerigkeit.code",
            "<option value=\"000\" selected>Deutschland</option>",
        ),
        (
            "kind.name.vornamen.namensartCode",
            "<option value=\"vv\">Vorname und Vatersname</option>",
        ),
    ] {
        let select = format!("<select id=\"{name}\" name=\"{name}\"");
        let start = form
            .html
            .find(&select)
            .unwrap_or_else(|| panic!("{name} is no select"));
        let end = start + form.html[start..].find("</select>").unwrap();
        assert!(
            form.html[start..end].contains(selected),
            "{name}: {selected}"
        );
    }
    assert!(form
        .html
        .contains("<option value=\"03\">Mobiltelefon</option>"));
    assert!(!form.html.contains("Kanal (Code"));

    // A forged post with free text is refused at its field, every value kept.
    form.set("kontaktdaten[0].kanal", "E-Mail");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422);
    let message = "Kontakt: Kanal: bitte einen der angebotenen Werte wählen";
    assert_eq!(page.errors(), [message]);
    assert!(
        page.html.contains(&format!(
            "</select><div class=\"error\" id=\"kontaktdaten[0].kanal-fehler\">{message}</div>"
        )),
        "the problem stands at its select"
    );
}

#[test]
fn a_date_time_is_a_date_and_a_time_in_the_local_time_zone() {
    let (_dir, server) = started();

    // Pre-filled as the local date and time of the memento's instant.
    let mut body = birth_data("cl-7");
    body["vorgangsidentifikation"]["ereignis"]["zeitpunkt"] = json!("2026-11-20T09:30:00Z");
    let (_, form) = birth_data_form(&server, &body);
    assert_eq!(form.get(&format!("{ZEITPUNKT}.datum")), Some("2026-11-20"));
    assert_eq!(form.get(&format!("{ZEITPUNKT}.uhrzeit")), Some("10:30"));
    assert!(
        form.get(ZEITPUNKT).is_none(),
        "no input takes the date-time as text"
    );
    for kind in ["date", "time"] {
        assert!(form
            .html
            .contains(&format!("<input type=\"{kind}\" id=\"{ZEITPUNKT}.")));
    }
    assert!(!form.html.contains("JJJJ-MM-TTThh"));

    // Summer and winter time: the offset of the day.
    for (id, date, expected) in [
        ("cl-8", "2026-07-15", "2026-07-15T10:15:00+02:00"),
        ("cl-9", "2026-01-15", "2026-01-15T10:15:00+01:00"),
    ] {
        let (browser, mut form) = birth_data_form(&server, &birth_data(id));
        let response = send_with_time(&server, &browser, &mut form, date, "10:15");
        assert_eq!(response.status(), 303, "{:?}", page_errors(response));
        let xml = delivered(&server, id);
        assert!(
            xml.contains(&format!(
                "<ereignis.zeitpunkt>{expected}</ereignis.zeitpunkt>"
            )),
            "{xml}"
        );
    }

    // A time the clocks skipped is refused at its field, the values kept.
    let (browser, mut form) = birth_data_form(&server, &birth_data("cl-10"));
    form.set(&format!("{ZEITPUNKT}.datum"), "2026-03-29");
    form.set(&format!("{ZEITPUNKT}.uhrzeit"), "02:30");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422);
    let message =
        "Vorgang: Zeitpunkt: 29.03.2026 02:30 gibt es wegen der Zeitumstellung an diesem Tag nicht";
    assert_eq!(page.errors(), [message]);
    assert!(page.html.contains(&format!(
        "</div><div class=\"error\" id=\"{ZEITPUNKT}-fehler\">{message}</div>"
    )));
    assert_eq!(page.get(&format!("{ZEITPUNKT}.datum")), Some("2026-03-29"));
    assert_eq!(page.get(&format!("{ZEITPUNKT}.uhrzeit")), Some("02:30"));
}

#[test]
fn the_simulator_process_refuses_codes_outside_their_lists_in_its_acknowledgement() {
    let dir = DataDir::new();
    let simulator = Peer::simulator(
        dir.path(),
        &[(
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__REQUIRE_SIGNATURE",
            "false",
        )],
    );
    let message = r#"<?xml version="1.0" encoding="UTF-8"?>
<xpsw:portal2StA.Sterbefall.084020 xmlns:xpsw="http://xpsw.domap.de/xpsw2611">
<xpsw:anzeigender><xpsw:kontaktdaten><kanal listURI="urn:de:xoev:codeliste:erreichbarkeit" listVersionID="1"><code>E-Mail</code></kanal><kennung>station3@klinikum.example</kennung></xpsw:kontaktdaten></xpsw:anzeigender>
</xpsw:portal2StA.Sterbefall.084020>"#;
    let delivery = json!({
        "idempotency_key": "cl-office-1",
        "module": "deathnotice",
        "report_id": "cl-office",
        "message_uuid": "6f1c8a52-3d2b-4b8e-9a51-0d6f1c8a5201",
        "content_type": "application/xml",
        "body": base64::engine::general_purpose::STANDARD.encode(message),
        "signature": null
    });
    let response = simulator
        .client()
        .post(simulator.url("/deliveries"))
        .json(&delivery)
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let transport_ref = response.json::<Value>().unwrap()["transport_ref"]
        .as_str()
        .unwrap()
        .to_string();
    let ack = wait_until("the acknowledgement", || {
        let batch: Value = simulator
            .client()
            .get(simulator.url("/acknowledgements"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        batch["acknowledgements"].as_array()?.first().cloned()
    });
    assert_eq!(
        ack,
        json!({
            "status": "rejected",
            "message_uuid": "6f1c8a52-3d2b-4b8e-9a51-0d6f1c8a5201",
            "transport_ref": transport_ref,
            "reason": "Standesamt: Nachricht abgelehnt, Codes außerhalb ihrer Codeliste: \
                       portal2StA.Sterbefall.084020/anzeigender/kontaktdaten/kanal: Code 'E-Mail' \
                       der Liste urn:de:xoev:codeliste:erreichbarkeit (Version 1): kein Code der Liste"
        })
    );
}
