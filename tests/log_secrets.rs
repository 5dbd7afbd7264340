//! Logs keep secrets (civil registry and logins): with `RUST_LOG=debug`, a marker in every string
//! member of a memento request (each member the memento takes one in) and in every input of the
//! form, a first submit refused and the corrected one delivered, the memento, the magic-link
//! token and a tampered token, passwords right and wrong (users added on the command line and
//! through the operator API, a changed password, the operator's), and a facility certificate's
//! PKCS#12 passphrase right and wrong: the server's whole log shows none of them, while it does
//! show debug lines. Report ids and user names are logged on purpose and are no secrets here.
//! The health modules and the court mailbox: `tests/log_secrets_health.rs`.

mod common;
mod log_secrets_support;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::pkcs12::{pkcs12_of, TestCa};
use common::*;
use log_secrets_support::*;
use serde_json::{json, Value};

const USER: &str = "klinik";

/// A civil-registry module's journey with markers: `sample` (a request that dispatches), marked
/// through the memento, its form marked and sent after a refused first submit, the report
/// delivered to the simulated office with markers and its result read; then the log.
fn civil_registry_journey(module: &'static str, sample: Value) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = debug_server(&dir, &[]);
    let mut secrets = Secrets::new(module);
    secrets.keep_login(USER, PASSWORD);
    let id = sample["id"].as_str().unwrap().to_owned();

    let (request, marked) = marked_request(&server, USER, module, &sample, &["id"], &mut secrets);
    assert!(marked >= 5, "only {marked} members took a marker");
    let plain_answer = issue(&server, USER, module, &sample, &mut secrets);
    let (plain_browser, plain_location) = open_link(&server, &plain_answer, &mut secrets);
    let plain = plain_browser.form(&server.url(&plain_location));
    let answer = issue(&server, USER, module, &request, &mut secrets);
    let (browser, location) = open_link(&server, &answer, &mut secrets);
    let form = browser.form(&server.url(&location));
    assert_eq!(form.status, 200, "{}", form.html);

    let (sent, _) = send_marked(&server, &browser, form, &plain, &["id"], &mut secrets);
    assert_eq!(sent.status(), 303);
    let confirmation = sent.headers()["location"].to_str().unwrap().to_owned();
    let summary = browser.get(&server.url(&confirmation));
    assert_eq!(summary.status(), 200);
    assert!(
        markers_in(&summary.text().unwrap()) >= 5,
        "the summary shows the markers"
    );

    server.wait_for_status_in(module, USER, &id, "SUCCESS");
    assert!(
        markers_in(&delivered(&server, module, &id)) >= 5,
        "the markers reached the office"
    );
    let fetched = server.get_as(USER, &format!("/api/{module}/v1/reports/{id}"));
    assert_eq!(fetched.status(), 200);
    assert_log_keeps_secrets(&server, &secrets);
}

#[test]
fn a_birth_notice_journey_logs_no_marker_memento_or_token() {
    civil_registry_journey("birthnotice", complete_notice("geb-secret-1"));
}

#[test]
fn a_birth_data_journey_logs_no_marker_memento_or_token() {
    civil_registry_journey("birthdata", complete_birth_data("eltern-secret-1"));
}

#[test]
fn a_death_notice_journey_logs_no_marker_memento_or_token() {
    civil_registry_journey("deathnotice", complete_death_notice("tod-secret-1"));
}

/// `GET /api/birthnotice/v1/reports` with Basic credentials: the status.
fn api_status(server: &Server, user: &str, password: &str) -> u16 {
    server
        .client()
        .get(server.url("/api/birthnotice/v1/reports"))
        .basic_auth(user, Some(password))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// `PUT` of an operator path with a JSON body: the status.
fn operator_put(server: &Server, path: &str, body: &Value) -> u16 {
    server
        .client()
        .put(server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(body)
        .send()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn passwords_and_passphrases_right_or_wrong_are_not_logged() {
    let mut secrets = Secrets::new("logins");
    let dir = DataDir::new();
    // A user added on the command line, before the start.
    let on_the_command_line = secrets.marker();
    let (ok, out, err) = dir.cli(
        &["user", "add", "kommandozeile", "--password-stdin"],
        Some(&on_the_command_line),
    );
    assert!(ok, "{out} {err}");
    secrets.keep_login("kommandozeile", &on_the_command_line);
    let server = debug_server(&dir, &[]);

    // A user added through the operator API, then given a new password.
    let first = secrets.marker();
    let added = server.admin_post_json(
        "/admin/api/v1/users",
        &json!({"name": "online", "password": first}),
    );
    assert_eq!(added.status(), 201);
    let second = secrets.marker();
    let changed = operator_put(
        &server,
        "/admin/api/v1/users/online/password",
        &json!({"password": second}),
    );
    assert_eq!(changed, 204);
    secrets.keep_login("online", &first);
    secrets.keep_login("online", &second);

    // Right and wrong passwords, at the API, at the `/bal/` login and at the operator API.
    assert_eq!(
        api_status(&server, "kommandozeile", &on_the_command_line),
        200
    );
    assert_eq!(api_status(&server, "online", &second), 200);
    assert_eq!(
        api_status(&server, "online", &first),
        401,
        "the old password"
    );
    let wrong = secrets.marker();
    secrets.keep_login("kommandozeile", &wrong);
    assert_eq!(api_status(&server, "kommandozeile", &wrong), 401);
    for (password, target) in [
        (second.as_str(), "/forms/birthnotice"),
        (wrong.as_str(), "/login?error"),
    ] {
        let bal = server
            .client()
            .get(server.url("/bal/forms/birthnotice"))
            .basic_auth("online", Some(password))
            .send()
            .unwrap();
        assert_eq!(bal.status(), 302);
        if target != "/login?error" {
            keep_session(&bal, &mut secrets);
        }
        assert_eq!(bal.headers()["location"], target);
    }
    secrets.keep_login("online", &wrong);
    let wrong_operator = secrets.marker();
    secrets.keep_login(OPERATOR.0, &wrong_operator);
    let refused = server
        .client()
        .get(server.url("/admin/api/v1/actors"))
        .basic_auth(OPERATOR.0, Some(&wrong_operator))
        .send()
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(server.admin_get("/admin/api/v1/actors").status(), 200);

    // A facility certificate's passphrase: deposited with the right one, refused with a wrong one.
    let ca = TestCa::new("Test-CA Krankenhaus");
    let issued = ca.issue("Klinikum Mitte", 2040);
    let passphrase = secrets.marker();
    secrets.keep("the PKCS#12 passphrase", &passphrase);
    let file = STANDARD.encode(pkcs12_of(
        &issued.key_der,
        &[&issued.der, &ca.der],
        &passphrase,
    ));
    let certificate = "/admin/api/v1/certificates/123456789/test";
    let wrong_passphrase = secrets.marker();
    let refused = operator_put(
        &server,
        certificate,
        &json!({"pkcs12": file, "passphrase": wrong_passphrase}),
    );
    assert_eq!(refused, 400);
    let deposited = operator_put(
        &server,
        certificate,
        &json!({"pkcs12": file, "passphrase": passphrase}),
    );
    assert_eq!(deposited, 201);

    assert_log_keeps_secrets(&server, &secrets);
}
