//! What the labreport tests share: a server with a laboratory user whose customer may report
//! for the registered facilities, the requests of a standard and an anonymous patient, the way
//! through the disease index to a form, and the notifications the simulated reporting system
//! received (validated by the health modules' shared helper, `common::demis`).
#![allow(dead_code)] // each test binary uses a different subset

use base64::Engine as _;
use reqwest::blocking::Response;
use serde_json::{json, Value};

pub use super::common::demis::assert_valid_laboratory_notifications;
use super::common::*;

/// The laboratory's API user, of customer `K-1`.
pub const USER: &str = "labor";
/// A second user of the same customer.
pub const OTHER: &str = "labor2";
/// The memento and result API.
pub const API: &str = "/api/labreport/v1";
/// A facility in the scope of `K-1`, active, and known to the simulated reporting system.
pub const BSNR: &str = "123456789";
/// A facility in the scope of `K-1`, deactivated.
pub const INACTIVE: &str = "012345678";
/// An active facility under an IK outside the scope of `K-1`.
pub const OUT_OF_SCOPE: &str = "987654321";
/// A BSNR no facility has.
pub const UNKNOWN: &str = "555555555";
/// The four diseases, as the index lists them.
pub const DISEASES: [&str; 4] = ["Influenza", "Rsv", "Norovirus", "Sarscov2"];

/// Runs `meldewerk args…` in `dir`; panics unless it succeeds.
pub fn ok(dir: &DataDir, args: &[&str]) -> String {
    let (ok, out, err) = dir.cli(args, None);
    assert!(ok, "{args:?}: {out} {err}");
    out.trim().to_owned()
}

fn add_facility(dir: &DataDir, bsnr: &str, name: &str, ik: &str, active: bool) {
    let mut args = vec![
        "facility",
        "add",
        bsnr,
        "--name",
        name,
        "--street",
        "Chausseestraße 12",
        "--postal-code",
        "10115",
        "--city",
        "Berlin",
        "--ik",
        ik,
    ];
    if !active {
        args.push("--inactive");
    }
    ok(dir, &args);
}

/// A data directory with the two users of customer `K-1`, its scope (IK 260326822) and the
/// facilities above.
pub fn data_dir() -> DataDir {
    let dir = DataDir::new();
    register(&dir);
    dir
}

/// Adds to the store of `dir` the two users of customer `K-1`, its scope and the facilities.
pub fn register(dir: &DataDir) {
    for user in [USER, OTHER] {
        dir.add_user(user);
        ok(dir, &["user", "customer", user, "K-1"]);
    }
    ok(dir, &["customer", "scope", "K-1", "--ik", "260326822"]);
    add_facility(dir, BSNR, "Labor Berlin Mitte", "260326822", true);
    add_facility(dir, INACTIVE, "Labor Alt", "260326822", false);
    add_facility(dir, OUT_OF_SCOPE, "Labor Fremd", "111111111", true);
}

/// Quick retries, so that scripted transient faults cost little time.
pub const QUICK_RETRIES: [(&str, &str); 2] = [
    ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "50"),
    ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "200"),
];

/// A server on a fresh [`data_dir`].
pub fn start(env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = data_dir();
    let server = Server::start(&dir, env);
    (dir, server)
}

/// A memento request of a standard patient.
pub fn standard(id: &str) -> Value {
    json!({
        "reportId": id,
        "MeldungsDatum": "2026-11-24",
        "Patient": {"IsAnonym": false, "Standard": {
            "Name": {"Vorname": "Maxime", "Nachname": "Mustermann"},
            "Geschlecht": "WEIBLICH",
            "Geburtsdatum": "1950-02-11",
            "Adresse": {"Strasse": "Gartenweg 3", "PLZ": "10115", "Stadt": "Berlin", "Land": "DE"},
            "Kontakt": {"Telefon": "030 555 0101", "Email": "maxime@example.org"}}},
        "MeldendeEinrichtung": {"BSNR": BSNR, "Telefon": "030 1234567",
            "Email": "labor@example.org"},
        "MeldendePerson": {"Name": {"Vorname": "Erika", "Nachname": "Beispiel"},
            "Kontakt": {"Telefon": "030 1234568"}},
        "EinsendendeEinrichtung": {"EinrichtungsName": "Praxis Dr. Süd",
            "Adresse": {"Strasse": "Hauptstraße 5", "PLZ": "10117", "Stadt": "Berlin"},
            "Kontakt": {"Telefon": "030 7654321"}}
    })
}

/// A memento request of an anonymous patient.
pub fn anonymous(id: &str) -> Value {
    json!({
        "reportId": id,
        "Patient": {"IsAnonym": true, "Anonym": {
            "Geschlecht": "DIVERS", "GeburtsmonatJahr": "1975-04",
            "Adresse": {"PLZ": "10115", "Land": "DE"}}},
        "MeldendeEinrichtung": {"BSNR": BSNR, "Telefon": "030 1234567"}
    })
}

/// POSTs a memento request as `user`.
pub fn memento_as(server: &Server, user: &str, body: &Value) -> Response {
    server.post_as(user, &format!("{API}/memento"), body)
}

/// Status and body of a memento request as [`USER`].
pub fn memento(server: &Server, body: &Value) -> (u16, Value) {
    let response = memento_as(server, USER, body);
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// Opens the magic link of `body` in a fresh browser: it lands on the disease index, whose
/// link to `disease` opens that form. Returns the browser, the form's path and the form.
pub fn open_disease_form(server: &Server, body: &Value, disease: &str) -> (Browser, String, Form) {
    let (status, answer) = memento(server, body);
    assert_eq!(status, 200, "{answer}");
    let browser = Browser::new();
    let landed = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    assert_eq!(landed.status(), 302);
    let index = landed.headers()["location"].to_str().unwrap().to_owned();
    assert!(index.starts_with("/labreport/?m="), "{index}");
    let page = browser.get(&server.url(&index));
    assert_eq!(page.status(), 200);
    let html = page.text().unwrap();
    let link = disease_link(&html, disease);
    let form = browser.form(&server.url(&link.replace("&amp;", "&")));
    assert_eq!(form.status, 200, "{}", form.html);
    let path = link.split_once('?').unwrap().0.to_owned();
    (browser, path, form)
}

/// The link of the index page `html` to the form of `disease`.
pub fn disease_link(html: &str, disease: &str) -> String {
    let marker = format!("data-key=\"{disease}\"");
    let tag_end = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{disease} in {html}"));
    let tag_start = html[..tag_end].rfind("<a ").unwrap();
    let tag = &html[tag_start..tag_end];
    let href = tag.split_once("href=\"").unwrap().1;
    href.split_once('"').unwrap().0.to_owned()
}

/// The first option of the choice `name` of `form` (the disease's first code).
pub fn first_option(form: &Form, name: &str) -> String {
    let select = form
        .html
        .split_once(&format!("name=\"{name}\""))
        .unwrap_or_else(|| panic!("{name} in the form"))
        .1;
    let value = select
        .split("<option value=\"")
        .skip(1)
        .map(|o| o.split_once('"').unwrap().0)
        .find(|v| !v.is_empty())
        .unwrap();
    value.to_owned()
}

/// Fills the findings of a disease form with its first codes and the result `ergebnis`.
pub fn fill_findings(form: &mut Form, ergebnis: &str) {
    for name in ["Befund.Test", "Befund.Methode", "Befund.Material"] {
        let value = first_option(form, name);
        form.set(name, &value);
    }
    form.set("Befund.Ergebnis", ergebnis);
}

/// The whole end user's part for `body`: the form of `disease`, findings filled in, sent (303).
/// Returns the report id.
pub fn send(server: &Server, body: &Value, disease: &str) -> String {
    let (browser, path, mut form) = open_disease_form(server, body, disease);
    fill_findings(&mut form, "POSITIVE");
    let response = browser.submit_to(server, &path, &form);
    assert_eq!(response.status(), 303, "{:?}", page_errors(response));
    body["reportId"].as_str().unwrap().to_owned()
}

/// The result of `id` read with `peek=true`, once it is final.
pub fn final_result(server: &Server, id: &str, status: &str) -> Value {
    server.wait_for_status_in("labreport", USER, id, status)
}

/// What the simulated reporting system received for the labreport `id`, oldest first.
pub fn notifications(server: &Server, id: &str) -> Vec<Value> {
    received_page(
        server,
        &format!("/admin/api/v1/transports/demis/received?module=labreport&report={id}"),
    )
    .0
}

/// The notification of a received record.
pub fn bundle_of(record: &Value) -> Value {
    let body = base64::engine::general_purpose::STANDARD
        .decode(record["body"].as_str().unwrap())
        .unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// The DEMIS profile suffix of each disease's laboratory profiles.
pub fn suffix(disease: &str) -> &'static str {
    match disease {
        "Influenza" => "INVP",
        "Rsv" => "RSVP",
        "Norovirus" => "NOVP",
        _ => "CVDP",
    }
}

/// The resource of type `kind` in `bundle`.
pub fn resource<'a>(bundle: &'a Value, kind: &str) -> &'a Value {
    bundle["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["resource"])
        .find(|r| r["resourceType"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {bundle}"))
}

/// Asserts that the reporting system registered `id` once, as a valid laboratory notification of
/// `disease` shaped like the DEMIS example.
pub fn assert_registered_once_and_valid(server: &Server, id: &str, disease: &str) {
    let records = notifications(server, id);
    assert_eq!(records.len(), 1, "{id}: {records:?}");
    assert_valid_laboratory_notifications(&[(records[0].clone(), suffix(disease))]);
}
