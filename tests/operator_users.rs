//! Online user administration through the operator API (`/admin/api/v1/users…`), against the
//! real server over HTTP.
//!
//! Proves: users are created, listed, refused (409, 400 with exact `errors`, 413) and protected by
//! operator credentials (401); a user created online works at once; a password change or a removal
//! made while the server runs ends the user's open sessions, unredeemed magic links, old mementos
//! and old password at once, without a restart, while dispatched reports stay readable for
//! operators; a seal deposited online seals the next dispatch with exactly the key it returned.

mod common;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::*;
use reqwest::blocking::{RequestBuilder, Response};
use serde_json::{json, Value};

const NEW_PASSWORD: &str = "a completely new secret";
const USERS: &str = "/admin/api/v1/users";

/// An operator request.
fn operator(request: RequestBuilder) -> RequestBuilder {
    request.basic_auth(OPERATOR.0, Some(OPERATOR.1))
}

/// `POST /admin/api/v1/users` with `body` as operator.
fn create(server: &Server, body: &Value) -> Response {
    operator(server.client().post(server.url(USERS)))
        .json(body)
        .send()
        .unwrap()
}

/// Creates `name` with [`PASSWORD`] online; asserts 201.
fn create_ok(server: &Server, name: &str) -> Value {
    let response = create(server, &json!({"name": name, "password": PASSWORD}));
    assert_eq!(response.status(), 201, "creating {name}");
    response.json().unwrap()
}

/// `POST` a raw body to `path` as operator.
fn post_raw(server: &Server, path: &str, body: impl Into<String>) -> Response {
    operator(server.client().post(server.url(path)))
        .header("content-type", "application/json")
        .body(body.into())
        .send()
        .unwrap()
}

/// `PUT …/users/{name}/password` as operator.
fn set_password(server: &Server, name: &str, password: &str) -> Response {
    operator(
        server
            .client()
            .put(server.url(&format!("{USERS}/{name}/password"))),
    )
    .json(&json!({ "password": password }))
    .send()
    .unwrap()
}

/// `DELETE …/users/{name}` as operator.
fn remove(server: &Server, name: &str) -> Response {
    operator(
        server
            .client()
            .delete(server.url(&format!("{USERS}/{name}"))),
    )
    .send()
    .unwrap()
}

/// `GET …/users` as operator.
fn list(server: &Server) -> Vec<Value> {
    let response = server.admin_get(USERS);
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

/// Asserts `response` has `status` and exactly the body `{"errors": errors}`.
fn assert_errors(response: Response, status: u16, errors: &[&str]) {
    assert_eq!(response.status(), status);
    let body: Value = response.json().unwrap();
    assert_eq!(body, json!({ "errors": errors }));
}

/// The `errors` of an answer with `status`.
fn errors_of(response: Response, status: u16) -> Vec<String> {
    assert_eq!(response.status(), status);
    let body: Value = response.json().unwrap();
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors array in {body}"))
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

/// Status of a memento request with an explicit password.
fn memento_status(server: &Server, user: &str, password: &str, id: &str) -> u16 {
    server
        .client()
        .post(server.url("/api/birthnotice/v1/memento"))
        .basic_auth(user, Some(password))
        .json(&complete_notice(id))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// A magic link made with an explicit password.
fn magic_link_with(server: &Server, user: &str, password: &str, id: &str) -> String {
    let response = server
        .client()
        .post(server.url("/api/birthnotice/v1/memento"))
        .basic_auth(user, Some(password))
        .json(&complete_notice(id))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    body["magicLink"].as_str().unwrap().to_string()
}

/// The memento of a magic link `/mtl/{token}?m={memento}`.
fn memento_of(link: &str) -> &str {
    link.split_once("?m=").expect("a magic link carries m").1
}

/// Form URL of a memento.
fn form_url(server: &Server, memento: &str) -> String {
    server.url(&format!("/forms/birthnotice?m={memento}"))
}

/// Asserts a 302 to `/login?error`.
fn assert_login_error(response: Response, what: &str) {
    assert_eq!(response.status(), 302, "{what}");
    assert_eq!(response.headers()["location"], "/login?error", "{what}");
}

/// Opens a magic link in a fresh browser; returns the browser (holding the session) and the form.
fn open_session(server: &Server, link: &str) -> (Browser, Form) {
    let browser = Browser::new();
    let form = browser.open_magic_link(server, link);
    assert_eq!(form.status, 200);
    (browser, form)
}

/// Bytes of a JSON value that is either base64 text or an array of byte numbers.
fn bytes_of(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => STANDARD.decode(text).expect("base64"),
        Value::Array(items) => items
            .iter()
            .map(|b| u8::try_from(b.as_u64().expect("a byte")).expect("a byte"))
            .collect(),
        other => panic!("not a byte string: {other}"),
    }
}

#[test]
fn users_are_created_listed_and_refused_with_exact_errors() {
    let dir = DataDir::new();
    let mut server = Server::start(&dir, &[]);
    assert_eq!(list(&server), Vec::<Value>::new());

    let response = create(
        &server,
        &json!({"name": "klinik", "password": PASSWORD, "customer": "K-1"}),
    );
    assert_eq!(response.status(), 201);
    let text = response.text().unwrap();
    assert!(!text.contains(PASSWORD), "a password is never echoed");
    let created: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(created["name"], "klinik");
    assert_eq!(created["customer"], "K-1");
    assert_eq!(created["email"], Value::Null);
    assert_eq!(created["seal"], false);
    assert_eq!(created["magicLinks"], true, "new users get magic links");
    assert!(created["createdAt"].is_string(), "{created}");
    assert_eq!(created["passwordChangedAt"], created["createdAt"]);
    let mut members: Vec<&str> = created
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    members.sort();
    assert_eq!(
        members,
        [
            "createdAt",
            "customer",
            "email",
            "magicLinks",
            "name",
            "passwordChangedAt",
            "seal"
        ]
    );
    create_ok(&server, "labor");
    let users = list(&server);
    assert_eq!(users.len(), 2, "{users:?}");
    assert_eq!(users[0], created);
    assert_eq!(users[1]["name"], "labor");
    assert_eq!(users[1]["customer"], Value::Null);

    // Refusals, each with its exact answer.
    assert_errors(
        create(
            &server,
            &json!({"name": "klinik", "password": NEW_PASSWORD}),
        ),
        409,
        &["user klinik exists already"],
    );
    assert_errors(
        create(&server, &json!({"name": "a:b", "password": PASSWORD})),
        400,
        &["invalid user name \"a:b\": use 1 to 64 characters of A-Z a-z 0-9 . _ -"],
    );
    assert_errors(
        create(&server, &json!({"name": "kurz", "password": "short"})),
        400,
        &["the password must have 8 to 1024 characters"],
    );
    assert_errors(
        create(
            &server,
            &json!({"name": "", "password": "short", "customer": 5}),
        ),
        400,
        &[
            "invalid user name \"\": use 1 to 64 characters of A-Z a-z 0-9 . _ -",
            "the password must have 8 to 1024 characters",
            "customer must be a string",
        ],
    );
    assert_errors(
        create(&server, &json!({"password": PASSWORD})),
        400,
        &["name must not be null"],
    );
    assert_errors(
        create(&server, &json!({"name": "x", "password": 12345678})),
        400,
        &["password must be a string"],
    );
    assert_errors(
        create(
            &server,
            &json!({"name": "rolle", "password": PASSWORD, "role": "admin"}),
        ),
        400,
        &["role is not a known field"],
    );
    assert_errors(
        post_raw(&server, USERS, "[]"),
        400,
        &["the body must be a JSON object"],
    );
    let invalid = errors_of(post_raw(&server, USERS, "{\"name\": "), 400);
    assert_eq!(invalid.len(), 1, "{invalid:?}");
    assert!(invalid[0].starts_with("invalid JSON: "), "{invalid:?}");

    // Other operations on users that do not exist, or with bad values.
    assert_errors(
        set_password(&server, "ghost", NEW_PASSWORD),
        404,
        &["there is no user ghost"],
    );
    assert_errors(
        set_password(&server, "klinik", "short"),
        400,
        &["the password must have 8 to 1024 characters"],
    );
    assert_errors(remove(&server, "ghost"), 404, &["there is no user ghost"]);
    assert_errors(
        post_raw(&server, &format!("{USERS}/ghost/seal"), ""),
        404,
        &["there is no user ghost"],
    );

    // None of the refused requests created or changed anything.
    let names: Vec<Value> = list(&server).iter().map(|u| u["name"].clone()).collect();
    assert_eq!(names, [json!("klinik"), json!("labor")]);
    assert_eq!(
        list(&server)[0],
        created,
        "the refused password change changed nothing"
    );
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-ou-1"), 200);

    // What was made online is in the store: the offline CLI sees it once the server is stopped.
    assert!(server.terminate());
    let (ok, out, err) = dir.cli(&["user", "list", "--json"], None);
    assert!(ok, "{err}");
    let offline: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(offline[0], created);
    assert_eq!(offline.len(), 2);
}

#[test]
fn user_administration_needs_operator_credentials() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    create_ok(&server, "klinik");
    let body = json!({"name": "intruder", "password": PASSWORD});
    let attempts: Vec<(&str, reqwest::Method, String)> = vec![
        ("list", reqwest::Method::GET, USERS.to_string()),
        ("create", reqwest::Method::POST, USERS.to_string()),
        (
            "password",
            reqwest::Method::PUT,
            format!("{USERS}/klinik/password"),
        ),
        ("remove", reqwest::Method::DELETE, format!("{USERS}/klinik")),
        (
            "seal",
            reqwest::Method::POST,
            format!("{USERS}/klinik/seal"),
        ),
    ];
    for (what, method, path) in &attempts {
        let request = || {
            server
                .client()
                .request(method.clone(), server.url(path))
                .json(&json!({"name": "intruder", "password": NEW_PASSWORD}))
        };
        assert_operators_only(what, request, "klinik");
    }
    // Nothing changed: klinik still has its password and no seal, nobody was added.
    let users = list(&server);
    assert_eq!(users.len(), 1, "{users:?}");
    assert_eq!(users[0]["seal"], false);
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-ou-2"), 200);
    assert_eq!(create(&server, &body).status(), 201, "the operator may");
}

#[test]
fn bodies_over_the_limit_are_413() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[("MELDEWERK_MAX_BODY_BYTES", "2048")]);
    create_ok(&server, "klinik");
    let big = json!({"name": "gross", "password": "p".repeat(1000), "customer": "c".repeat(3000)})
        .to_string();
    assert!(big.len() > 4000);
    let limit = ["request body exceeds 2048 bytes"];
    assert_errors(post_raw(&server, USERS, big.clone()), 413, &limit);
    let big_password = json!({"password": "p".repeat(3000)}).to_string();
    let response = operator(
        server
            .client()
            .put(server.url(&format!("{USERS}/klinik/password"))),
    )
    .header("content-type", "application/json")
    .body(big_password)
    .send()
    .unwrap();
    assert_errors(response, 413, &limit);
    let big_key = json!({"pkcs8": "A".repeat(4000)}).to_string();
    assert_errors(
        post_raw(&server, &format!("{USERS}/klinik/seal"), big_key),
        413,
        &limit,
    );
    // Nothing was created or changed; a body under the limit works.
    let users = list(&server);
    assert_eq!(users.len(), 1);
    assert_eq!(users[0]["seal"], false);
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-ou-3"), 200);
    let fits = json!({"name": "passt", "password": "p".repeat(1024), "customer": "c".repeat(100)});
    assert!(fits.to_string().len() <= 2048);
    assert_eq!(create(&server, &fits).status(), 201);
}

#[test]
fn a_user_created_online_works_at_once() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    // Unknown before, known right after: no cached refusal stands in the way.
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-ou-4"), 401);
    create_ok(&server, "klinik");
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-ou-4"), 200);
    let id = dispatch(&server, "klinik", &complete_notice("geb-ou-online"));
    server.wait_for_status("klinik", &id, "SUCCESS");
}

#[test]
fn a_live_password_change_ends_sessions_links_and_mementos_at_once() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    create_ok(&server, "klinik");
    create_ok(&server, "other");
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-pw-0"), 200);

    // Before the change: an open session, an unredeemed link, a memento.
    let opened = magic_link(&server, "klinik", &complete_notice("geb-pw-1"));
    let (browser, _) = open_session(&server, &opened);
    let open_form = form_url(&server, memento_of(&opened));
    assert_eq!(browser.get(&open_form).status(), 200, "the session works");
    let unredeemed = magic_link(&server, "klinik", &complete_notice("geb-pw-2"));
    let old_memento = memento_of(&unredeemed).to_string();
    // Another user's session is not affected by klinik's change.
    let (other_browser, _) = open_session(
        &server,
        &magic_link(&server, "other", &complete_notice("geb-pw-o")),
    );
    let other_link = magic_link(&server, "other", &complete_notice("geb-pw-o2"));
    let other_form = form_url(&server, memento_of(&other_link));

    assert_eq!(set_password(&server, "klinik", NEW_PASSWORD).status(), 204);

    // All at once, on the same running server.
    assert_eq!(
        memento_status(&server, "klinik", PASSWORD, "geb-pw-3"),
        401,
        "the old password"
    );
    assert_login_error(browser.get(&open_form), "the open session");
    assert_login_error(
        Browser::new().get(&server.url(&unredeemed)),
        "the unredeemed magic link",
    );
    // The new password works, and a new session opens its own mementos but not the old one.
    assert_eq!(
        memento_status(&server, "klinik", NEW_PASSWORD, "geb-pw-4"),
        200
    );
    let fresh = magic_link_with(&server, "klinik", NEW_PASSWORD, "geb-pw-5");
    let (new_browser, _) = open_session(&server, &fresh);
    let page = new_browser.get(&form_url(&server, &old_memento));
    assert_eq!(page.status(), 400, "a memento from before the change");
    assert!(page.text().unwrap().contains("Link ungültig"));
    assert_eq!(
        new_browser
            .get(&form_url(&server, memento_of(&fresh)))
            .status(),
        200,
        "the new session itself is fine"
    );
    // The other user noticed nothing.
    assert_eq!(other_browser.get(&other_form).status(), 200);
    assert_eq!(memento_status(&server, "other", PASSWORD, "geb-pw-6"), 200);
    // The change is listed.
    let klinik = list(&server)
        .into_iter()
        .find(|u| u["name"] == "klinik")
        .unwrap();
    assert_ne!(klinik["passwordChangedAt"], klinik["createdAt"]);
}

#[test]
fn a_live_removal_ends_sessions_and_links_but_keeps_reports() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    create_ok(&server, "klinik");
    let id = dispatch(&server, "klinik", &complete_notice("geb-rm-1"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let opened = magic_link(&server, "klinik", &complete_notice("geb-rm-2"));
    let (browser, _) = open_session(&server, &opened);
    let open_form = form_url(&server, memento_of(&opened));
    assert_eq!(browser.get(&open_form).status(), 200);
    let unredeemed = magic_link(&server, "klinik", &complete_notice("geb-rm-3"));
    assert_eq!(
        server
            .get_as("klinik", "/api/birthnotice/v1/reports")
            .status(),
        200
    );

    assert_eq!(remove(&server, "klinik").status(), 204);

    assert_eq!(
        server
            .get_as("klinik", "/api/birthnotice/v1/reports")
            .status(),
        401
    );
    assert_eq!(memento_status(&server, "klinik", PASSWORD, "geb-rm-4"), 401);
    assert_login_error(browser.get(&open_form), "the open session");
    assert_login_error(
        Browser::new().get(&server.url(&unredeemed)),
        "the unredeemed magic link",
    );
    assert_eq!(list(&server), Vec::<Value>::new());
    assert_errors(remove(&server, "klinik"), 404, &["there is no user klinik"]);
    // The dispatched report stays for operators.
    let message = server.admin_get(&format!(
        "/admin/api/v1/reports/birthnotice/{id}/message?user=klinik"
    ));
    assert_eq!(message.status(), 200);
    assert!(!message.bytes().unwrap().is_empty());

    // The name is not given out again: a new account under it would read the old reports.
    let refused = post_raw(
        &server,
        USERS,
        json!({"name": "klinik", "password": PASSWORD}).to_string(),
    );
    assert_errors(
        refused,
        409,
        &["the name klinik belonged to a removed user whose reports remain; choose another name"],
    );
    assert_login_error(
        browser.get(&open_form),
        "the old session after the refused re-creation",
    );
}

#[test]
fn a_seal_deposited_online_seals_the_next_dispatch() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    create_ok(&server, "klinik");
    let seal_path = format!("{USERS}/klinik/seal");

    // Refused keys deposit nothing.
    let refused = errors_of(
        post_raw(&server, &seal_path, json!({"pkcs8": "AAAA"}).to_string()),
        400,
    );
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].starts_with("invalid seal key: not an Ed25519 PKCS#8 (DER) key"),
        "{refused:?}"
    );
    let refused = errors_of(
        post_raw(
            &server,
            &seal_path,
            json!({"pkcs8": "no base64!"}).to_string(),
        ),
        400,
    );
    assert!(
        refused[0].starts_with("pkcs8 must be standard base64"),
        "{refused:?}"
    );
    assert_errors(
        post_raw(&server, &seal_path, json!({"key": "AAAA"}).to_string()),
        400,
        &["key is not a known field"],
    );
    assert_eq!(list(&server)[0]["seal"], false);

    // An empty body: a new key.
    let response = post_raw(&server, &seal_path, "");
    assert_eq!(response.status(), 201);
    let deposited: Value = response.json().unwrap();
    assert_eq!(deposited["algorithm"], "Ed25519");
    let public_key = STANDARD
        .decode(deposited["publicKey"].as_str().unwrap())
        .unwrap();
    assert_eq!(public_key.len(), 32);
    assert_eq!(list(&server)[0]["seal"], true);

    // A form opened in a new session asks for no signature; the dispatch is sealed.
    let form = Browser::new().open_magic_link(
        &server,
        &magic_link(&server, "klinik", &complete_notice("geb-seal-0")),
    );
    assert_eq!(form.status, 200);
    assert!(
        !form.html.contains("name=\"signatur.name\""),
        "a sealed user is not asked to sign"
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-seal-1"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let message = server.admin_get(&format!(
        "/admin/api/v1/reports/birthnotice/{id}/message?user=klinik"
    ));
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "seal");
    let received = received(&server, &id);
    assert_eq!(received.len(), 1, "{received:?}");
    let signature = &received[0]["signature"];
    assert_eq!(signature["kind"], "seal");
    assert_eq!(signature["signer"], "klinik");
    assert_eq!(
        bytes_of(&signature["public_key"]),
        public_key,
        "the office verified with the key the operator was given"
    );
}

/// RFC 8410 section 10.3: an Ed25519 private key in PKCS#8; its public key is the one in 10.1.
const RFC8410_PKCS8: &str = "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC";
const RFC8410_PUBLIC: &str = "Gb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=";

#[test]
fn a_given_seal_key_is_deposited_as_is() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    create_ok(&server, "klinik");
    let response = post_raw(
        &server,
        &format!("{USERS}/klinik/seal"),
        json!({ "pkcs8": RFC8410_PKCS8 }).to_string(),
    );
    assert_eq!(response.status(), 201);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({"algorithm": "Ed25519", "publicKey": RFC8410_PUBLIC})
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-seal-2"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let received = received(&server, &id);
    assert_eq!(
        bytes_of(&received[0]["signature"]["public_key"]),
        STANDARD.decode(RFC8410_PUBLIC).unwrap()
    );
}

#[test]
fn concurrent_changes_of_one_user_are_not_lost() {
    // A password change hashes for a while between reading and writing the record; a seal
    // deposited meanwhile must survive it, and the new password must hold (never the old key
    // written back). Each round uses a fresh user, so that every round can show a lost update.
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let rounds = 5;
    for round in 0..rounds {
        create_ok(&server, &format!("r{round}"));
    }
    for round in 0..rounds {
        let name = format!("r{round}");
        let password = format!("{NEW_PASSWORD} {round}");
        std::thread::scope(|scope| {
            let change = scope.spawn(|| set_password(&server, &name, &password).status());
            let seal = scope.spawn(|| {
                post_raw(&server, &format!("{USERS}/{name}/seal"), "")
                    .status()
                    .as_u16()
            });
            assert_eq!(change.join().unwrap(), 204);
            assert_eq!(seal.join().unwrap(), 201);
        });
        let user = list(&server)
            .into_iter()
            .find(|u| u["name"] == name.as_str())
            .unwrap();
        assert_eq!(user["seal"], true, "{name}: the seal was lost");
        assert_ne!(user["passwordChangedAt"], user["createdAt"], "{name}");
        assert_eq!(
            memento_status(&server, &name, &password, &format!("geb-cc-{round}")),
            200,
            "{name}: the new password was lost"
        );
        assert_eq!(
            memento_status(&server, &name, PASSWORD, &format!("geb-cc-{round}")),
            401,
            "{name}: the old password came back"
        );
    }
}

#[test]
fn a_refused_address_is_answered_but_never_logged() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let address = "kein-at.station3";
    let message = format!(
        "invalid email {address:?}: give one address like name@example.org, at most 254 characters"
    );
    assert_errors(
        create(
            &server,
            &json!({"name": "praxis", "password": PASSWORD, "email": address}),
        ),
        400,
        &[&message],
    );
    let set = operator(
        server
            .client()
            .put(server.url("/admin/api/v1/users/klinik/email")),
    )
    .json(&json!({"email": address}))
    .send()
    .unwrap();
    assert_errors(set, 400, &[&message]);
    let log = server.settled_log();
    assert!(!log.contains(address), "{log}");
    assert_eq!(
        log.matches("invalid email (the address is not logged); problems in all: 1")
            .count(),
        2,
        "{log}"
    );
}
