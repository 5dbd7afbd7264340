//! What the hospreport tests share: a server with an API user, facility certificates deposited
//! through the operator API, the memento → magic link → form way, the simulated reporting
//! system's received log, and the FHIR validation of what it received.
#![allow(dead_code)] // each test binary uses a different subset

use reqwest::blocking::Response;
use serde_json::{json, Value};

pub use crate::common::deposited::deposit_pkcs12;
use crate::common::pkcs12::{pkcs12, TestCa};
use crate::common::{Browser, DataDir, Form, Server};

pub const MODULE: &str = "hospreport";
pub const USER: &str = "klinikum";
/// Another API user, whose reports [`USER`] must not see.
pub const OTHER: &str = "fremd";
pub const FORM: &str = "/hospreport/hospitalisierungsmeldung";
pub const SUCCESS: &str = "/hospreport/hospitalisierungsmeldung/success";
/// A BSNR the simulated reporting system knows (its default).
pub const KNOWN_BSNR: &str = "123456789";
/// A BSNR it does not know: it refuses notifications from it.
pub const UNKNOWN_BSNR: &str = "111111111";

/// A server on a fresh data directory with the API users [`USER`] and [`OTHER`], `env` added.
pub fn start(env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    dir.add_user(OTHER);
    let server = Server::start(&dir, env);
    (dir, server)
}

/// Deposits a test-environment certificate for `bsnr` through the operator API.
pub fn deposit_certificate(server: &Server, bsnr: &str) {
    let ca = TestCa::new("Test-CA Krankenhaus");
    let issued = ca.issue("Klinikum Mitte", 2040);
    assert_eq!(
        deposit_pkcs12(server, bsnr, &pkcs12(&issued, &ca)),
        201,
        "{bsnr}"
    );
}

/// A memento request with everything a report needs, under `id` (none: the form makes one).
pub fn complete(id: Option<&str>, bsnr: &str) -> Value {
    let mut request = json!({
        "MeldeDatum": "2026-11-24",
        "Patient": {
            "Vorname": "Bertha", "Name": "Betroffen", "Geburtsdatum": "1999-06-09",
            "Geschlecht": "WEIBLICH",
            "Adresse": {"Strasse": "Berthastraße", "Hausnummer": "123", "PLZ": "12345",
                        "Stadt": "Betroffenenstadt", "inDeutschland": true},
            "Kontakt": {"Telefon": "01234567", "Email": "bertha@betroffen.de"}
        },
        "MedizinischeInformationen": {
            "Erkrankungsbeginn": "2026-11-18", "Diagnosedatum": "2026-11-20",
            "Symptome": {"FIEBER": true, "HUSTEN": true}, "Hinweis": "Textueller Hinweis"
        },
        "KlinischeAngaben": {
            "Hospitalisiert": "JA",
            "Hospitalisierung": {"AufnahmeAm": "2026-11-21", "IntensivBehandlung": true,
                                 "IntensivBehandlungVon": "2026-11-23",
                                 "ArtDerHospitalisierung": "INNERE_MEDIZIN"},
            "Verstorben": "NEIN"
        },
        "MeldendeEinrichtung": {
            "Name": "Klinikum Mitte", "BSNR": bsnr, "IK_Nummer": "261101015",
            "Adresse": {"Strasse": "Krankenhausstraße 1", "PLZ": "10115", "Stadt": "Berlin",
                        "Land": "DE"}
        },
        "Arzt": {"Titel": "Dr.", "Vorname": "Anna", "Nachname": "Ärztin", "LANR": "987654321",
                 "Kontakt": {"Telefon": "030 1234567"}}
    });
    if let Some(id) = id {
        request["MeldeId"] = json!(id);
    }
    request
}

/// `POST /api/hospreport/v1/memento` as [`USER`].
pub fn memento(server: &Server, body: &Value) -> Response {
    server.memento_in(MODULE, USER, body)
}

/// Opens the magic link of a memento of `body` in a fresh browser: the link leads to the form.
pub fn open(server: &Server, body: &Value) -> (Browser, Form) {
    let answer = memento(server, body);
    assert_eq!(answer.status(), 200);
    let link: Value = answer.json().unwrap();
    let browser = Browser::new();
    let landing = browser.get(&server.url(link["magicLink"].as_str().unwrap()));
    assert_eq!(landing.status(), 302);
    let location = landing.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&format!("{FORM}?m=")), "{location}");
    let form = browser.form(&server.url(&location));
    assert_eq!(form.status, 200, "{}", form.html);
    (browser, form)
}

/// Posts `form` and parses the page that comes back (a form shown again, or another page).
pub fn post(server: &Server, browser: &Browser, form: &Form) -> (u16, Option<String>, Form) {
    let answer = browser.submit_to(server, FORM, form);
    let status = answer.status().as_u16();
    let location = answer
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned());
    let html = answer.text().unwrap();
    let page = Form {
        status,
        fields: crate::common::parse_form(&html),
        html,
    };
    (status, location, page)
}

/// Posts `form` and asserts the success redirect.
pub fn send(server: &Server, browser: &Browser, form: &Form) {
    let (status, location, page) = post(server, browser, form);
    assert_eq!(status, 302, "{:?}", page.errors());
    assert_eq!(location.as_deref(), Some(SUCCESS));
}

/// Sends `form` again (as it came back) until the reporting system's answer is there and the
/// submit ends in the success redirect: while the report is in delivery each submit waits for
/// it (202) instead of sending another.
pub fn send_until_accepted(server: &Server, browser: &Browser, form: &Form) {
    crate::common::wait_until("a submit to end in the success redirect", || {
        let (status, location, page) = post(server, browser, form);
        match status {
            202 => None,
            302 => {
                assert_eq!(location.as_deref(), Some(SUCCESS));
                Some(())
            }
            other => panic!("a submit answered {other}: {:?}", page.errors()),
        }
    });
}

/// `GET /api/hospreport/v1/{path}` as [`USER`].
pub fn api_get(server: &Server, path: &str) -> Response {
    server.get_as(USER, &format!("/api/{MODULE}/v1/{path}"))
}

/// The pending list.
pub fn pending(server: &Server) -> Vec<String> {
    let answer = api_get(server, "reports");
    assert_eq!(answer.status(), 200);
    answer.json().unwrap()
}

/// What the simulated reporting system received for report `id`, oldest first.
pub fn received(server: &Server, id: &str) -> Vec<Value> {
    crate::common::received_page(
        server,
        &format!("/admin/api/v1/transports/demis/received?module={MODULE}&report={id}"),
    )
    .0
}

/// Everything the simulated reporting system received.
pub fn received_all(server: &Server) -> Vec<Value> {
    crate::common::received_page(server, "/admin/api/v1/transports/demis/received?limit=1000").0
}

/// Validates every bundle in `records` with Python's `fhir.resources` and against the DEMIS
/// hospitalisation example (profiles of the bundle and of each resource).
pub fn assert_valid_fhir(records: &[Value]) {
    crate::common::demis::assert_valid_fhir(
        records,
        "DiseaseHospitalizationNotificationExample.json",
    );
}

/// Appends `rule` to the simulated reporting system's script.
pub fn script(server: &Server, rule: &Value) {
    let answer = server.admin_post_json("/admin/api/v1/transports/demis/script/rules", rule);
    assert_eq!(answer.status(), 200, "{rule}");
}
