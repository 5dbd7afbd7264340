//! The HTTP contract of the `birthnotice` API as an integrator sees it (spec/01 §2.1, §2.3, §3,
//! §4.1, §5, §7, §8 and spec/04): the memento endpoint and its validation errors (all listed at
//! once, `{"errors":[…]}`), the body limit, Basic authentication (401 with an empty body and a
//! challenge) and the failed-login limit (429), the pending list and per-user isolation, the
//! reserved mock ids, the result body of dispatched reports, and the service endpoints
//! (unknown paths, health, readiness, `x-request-id`).

mod common;

use base64::Engine as _;
use common::*;
use reqwest::blocking::Response;
use serde_json::{json, Value};

const MEMENTO: &str = "/api/birthnotice/v1/memento";
const REPORTS: &str = "/api/birthnotice/v1/reports";

/// Every key of a report result, sorted.
const RESULT_KEYS: &str =
    "clientReference failureReason id module portal receiptPdf status submittedAt";

/// A data directory with the users `names` and a server on it.
fn server_with(names: &[&str], env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    for name in names {
        dir.add_user(name);
    }
    let server = Server::start(&dir, env);
    (dir, server)
}

/// POSTs `body` verbatim to the memento endpoint as `user`/`password`.
fn post_raw(
    server: &Server,
    user: &str,
    password: &str,
    body: impl Into<reqwest::blocking::Body>,
) -> Response {
    server
        .client()
        .post(server.url(MEMENTO))
        .basic_auth(user, Some(password))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .unwrap()
}

/// Asserts the response carries an `x-request-id` header.
fn assert_request_id(response: &Response) {
    let id = response
        .headers()
        .get("x-request-id")
        .map(|v| v.to_str().unwrap().to_string());
    assert!(
        id.is_some_and(|id| !id.is_empty()),
        "no x-request-id on {} {:?}",
        response.status(),
        response.url()
    );
}

/// Asserts `response` has `status` and a body that is exactly `{"errors":[strings…]}`; returns them.
fn errors_with(response: Response, status: u16) -> Vec<String> {
    assert_eq!(response.status(), status);
    assert_request_id(&response);
    let body: Value = response.json().expect("JSON error body");
    let keys: Vec<&String> = body.as_object().expect("an object").keys().collect();
    assert_eq!(keys, vec!["errors"], "{body}");
    let errors: Vec<String> =
        serde_json::from_value(body["errors"].clone()).expect("an array of strings");
    assert!(!errors.is_empty(), "{body}");
    errors
}

/// The validation errors of a memento request that must be refused.
fn refused(server: &Server, body: &Value) -> Vec<String> {
    errors_with(server.memento("klinik", body), 400)
}

/// Asserts a memento request is refused with exactly one error that mentions `needle`.
fn refused_once_mentioning(server: &Server, body: Value, needle: &str) {
    let errors = refused(server, &body);
    assert_eq!(errors.len(), 1, "{body}: {errors:?}");
    assert!(
        errors[0].contains(needle),
        "{body}: {errors:?} should mention {needle}"
    );
}

/// Asserts a memento request is accepted; returns the response body.
fn accepted(server: &Server, body: &Value) -> Value {
    let response = server.memento("klinik", body);
    assert_eq!(
        response.status(),
        200,
        "{body} refused: {}",
        response.text().unwrap_or_default()
    );
    response.json().unwrap()
}

fn sorted_keys(body: &Value) -> String {
    let mut keys: Vec<&str> = body
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys.join(" ")
}

/// Asserts a report result body: exactly the contract's keys, `id`, `status`, the module, an
/// RFC 3339 `submittedAt` with a numeric `±hh:mm` offset, a receipt only on SUCCESS and a
/// failure reason only (and always) on FAILURE. Returns the decoded receipt PDF, if any.
fn assert_result(body: &Value, id: &str, status: &str) -> Option<Vec<u8>> {
    assert_eq!(sorted_keys(body), RESULT_KEYS, "{body}");
    assert_eq!(
        (body["id"].as_str(), body["status"].as_str()),
        (Some(id), Some(status)),
        "{body}"
    );
    assert_eq!(body["module"], "birthnotice");
    let at = body["submittedAt"]
        .as_str()
        .expect("submittedAt is a string");
    chrono::DateTime::parse_from_rfc3339(at).unwrap_or_else(|e| panic!("{at}: {e}"));
    let offset = &at.as_bytes()[at.len() - 6..];
    assert!(
        (offset[0] == b'+' || offset[0] == b'-') && offset[3] == b':',
        "{at} has no ±hh:mm offset"
    );
    let reason = body["failureReason"]
        .as_str()
        .is_some_and(|r| !r.trim().is_empty());
    assert_eq!(
        reason,
        status == "FAILURE",
        "failureReason of a {status} result: {body}"
    );
    assert!(body["failureReason"].is_null() || reason, "{body}");
    if status != "SUCCESS" {
        assert!(
            body["receiptPdf"].is_null(),
            "receipt of a {status} result: {body}"
        );
        return None;
    }
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(body["receiptPdf"].as_str().expect("receiptPdf"));
    let pdf = pdf.expect("receiptPdf is base64");
    assert!(pdf.starts_with(b"%PDF-"));
    Some(pdf)
}

/// The pending list of `user`.
fn pending_list(server: &Server, user: &str) -> Value {
    let response = server.get_as(user, REPORTS);
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

/// `{"a":{"b":value}}` for the path `a.b`, plus an id.
fn body_with(path: &str, value: Value) -> Value {
    let mut body = value;
    for segment in path.rsplit('.') {
        body = json!({ segment: body });
    }
    body["id"] = json!("geb-types");
    body
}

fn get_with(server: &Server, path: &str, user: &str, password: &str) -> Response {
    server
        .client()
        .get(server.url(path))
        .basic_auth(user, Some(password))
        .send()
        .unwrap()
}

#[test]
fn memento_answers_memento_and_relative_magic_link() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    let notice = complete_notice("geb-m1");
    let response = server.memento("klinik", &notice);
    assert_eq!(response.status(), 200);
    assert_request_id(&response);
    let first: Value = response.json().unwrap();
    assert_eq!(sorted_keys(&first), "magicLink memento");
    let link = first["magicLink"].as_str().unwrap();
    assert!(link.starts_with("/mtl/") && !link.contains("://"), "{link}");
    let memento = first["memento"].as_str().unwrap();
    assert!(!memento.is_empty());

    // Random IV: identical data gives different mementos and links.
    let second = accepted(&server, &notice);
    assert_ne!(second["memento"], first["memento"]);
    assert_ne!(second["magicLink"], first["magicLink"]);

    // Null and empty fields are left out of the memento: padding the body with them adds nothing.
    let mut padded = notice.clone();
    let padding = json!({"standortId": null, "ansprechpartner": "", "standesamtKennung": null,
        "zuordnungGeburtsanzeige": null, "totgeburt": null, "vertraulicheGeburt": null,
        "mehrlingsgeburt": {"anzahlKnaben": null, "anzahlMaedchen": null},
        "elternteil2": {"name": {"vornamen": null, "familienname": null, "geburtsname": ""}}});
    for (k, v) in padding.as_object().unwrap() {
        padded[k] = v.clone();
    }
    let padded_len = accepted(&server, &padded)["memento"]
        .as_str()
        .unwrap()
        .len();
    assert!(
        padded_len <= memento.len() + 4,
        "memento with nulls has {padded_len} characters, without {}",
        memento.len()
    );

    // Only id is required.
    accepted(&server, &json!({"id": "geb-minimal"}));
    // Creating mementos submits nothing.
    assert_eq!(pending_list(&server, "klinik"), json!([]));
}

#[test]
fn memento_refuses_bad_ids_and_bodies() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    assert_eq!(refused(&server, &json!({})), vec!["id must not be null"]);
    assert_eq!(
        refused(&server, &json!({"id": null})),
        vec!["id must not be null"]
    );
    refused_once_mentioning(&server, json!({"id": ""}), "id");
    refused_once_mentioning(&server, json!({"id": 42}), "id");
    refused_once_mentioning(&server, json!({"id": ["a"]}), "id");
    refused_once_mentioning(&server, json!({"id": "x".repeat(129)}), "id");
    accepted(&server, &json!({"id": "x".repeat(128)}));
    for mock in [
        "BIRTHNOTICE-TEST-SUCCESS",
        "BIRTHNOTICE-TEST-PENDING",
        "BIRTHNOTICE-TEST-FAILURE",
    ] {
        refused_once_mentioning(&server, json!({"id": mock}), mock);
    }
    refused_once_mentioning(
        &server,
        json!({"id": "geb-1", "clientReference": 42}),
        "clientReference",
    );
    accepted(
        &server,
        &json!({"id": "geb-1", "clientReference": "any text / 123"}),
    );

    // Not JSON, or not an object.
    for raw in ["{\"id\":", "not json", "", "[]", "\"geb-1\"", "42", "null"] {
        let errors = errors_with(post_raw(&server, "klinik", PASSWORD, raw), 400);
        assert_eq!(errors.len(), 1, "{raw:?}: {errors:?}");
    }
}

#[test]
fn memento_refuses_unknown_fields_and_wrong_types_all_at_once() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    assert_eq!(
        refused(&server, &json!({"id": "g", "foo": 1})),
        vec!["foo is not a known field"]
    );
    assert_eq!(
        refused(
            &server,
            &json!({"id": "g", "mutter": {"standard": {"foo": "x"}}})
        ),
        vec!["mutter.standard.foo is not a known field"]
    );
    assert_eq!(
        refused(
            &server,
            &json!({"id": "g", "kind": {"name": {"rufname": "x"}}})
        ),
        vec!["kind.name.rufname is not a known field"]
    );

    let cases = [
        ("geburtsangaben.tag", json!("2026-02-30")),
        ("geburtsangaben.tag", json!("20.11.2026")),
        ("geburtsangaben.tag", json!(20261120)),
        ("geburtsangaben.uhrzeit", json!("24:00")),
        ("geburtsangaben.uhrzeit", json!("9:5")),
        ("geburtsangaben.uhrzeit", json!("10:60")),
        ("totgeburt", json!("yes")),
        ("vertraulicheGeburt", json!(1)),
        ("kind.geschlecht", json!("w")),
        ("kind.geschlecht", json!("weiblich")),
        ("anschriftAutor.gebaeude.postleitzahl", json!("1234")),
        ("anschriftAutor.gebaeude.postleitzahl", json!("1011a")),
        ("anschriftAutor.gebaeude.postleitzahl", json!(10117)),
        ("mutter.standard.geburtsdatum", json!("1990-13-01")),
        ("nameEinrichtung", json!(7)),
        ("kind", json!("x")),
        ("geburtsangaben", json!(["2026-11-20"])),
    ];
    for (path, value) in cases {
        refused_once_mentioning(&server, body_with(path, value), path);
    }

    // The values that are allowed pass.
    for geschlecht in ["KEINE_ANGABE", "MAENNLICH", "WEIBLICH", "DIVERS"] {
        accepted(
            &server,
            &json!({"id": "g", "kind": {"geschlecht": geschlecht}}),
        );
    }
    accepted(
        &server,
        &json!({"id": "g", "totgeburt": false, "geburtsangaben": {"tag": "2024-02-29", "uhrzeit": "23:59"},
                "anschriftAutor": {"gebaeude": {"postleitzahl": "01067"}}}),
    );

    // Every problem is listed in one answer.
    let errors = refused(
        &server,
        &json!({"id": 5, "foo": 1, "geburtsangaben": {"tag": "x", "uhrzeit": "25:00"}, "kind": {"geschlecht": "w"}}),
    );
    assert_eq!(errors.len(), 5, "{errors:?}");
    for needle in [
        "id",
        "foo is not a known field",
        "geburtsangaben.tag",
        "geburtsangaben.uhrzeit",
        "kind.geschlecht",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(needle)),
            "{needle} missing in {errors:?}"
        );
    }
    let three = refused(&server, &json!({"foo": 1, "totgeburt": "yes"}));
    assert_eq!(three.len(), 3, "{three:?}");
    assert!(
        three.contains(&"id must not be null".to_string()),
        "{three:?}"
    );
}

#[test]
fn body_over_the_limit_is_413_with_errors() {
    let (_dir, server) = server_with(&["klinik"], &[("MELDEWERK_MAX_BODY_BYTES", "2048")]);
    // Valid in every other respect: only its size is wrong.
    let text = "x".repeat(450);
    let big = json!({"id": "geb-big", "nameEinrichtung": text, "standortId": text, "ansprechpartner": text,
        "standesamtKennung": text, "zuordnungGeburtsanzeige": text, "kind": {"name": {"vornamen": text,
        "familienname": text}}, "mutter": {"standard": {"name": {"vornamen": text, "familienname": text}}}});
    let big = big.to_string();
    assert!(big.len() > 4000, "{}", big.len());
    errors_with(post_raw(&server, "klinik", PASSWORD, big), 413);
    // Below the limit the same endpoint works; the limit itself is inclusive.
    accepted(
        &server,
        &json!({"id": "geb-small", "nameEinrichtung": text, "standortId": text, "ansprechpartner": text}),
    );
    let sized = |total: usize| {
        let mut body = json!({"id": "geb-edge", "nameEinrichtung": text, "standortId": text, "ansprechpartner": text,
            "standesamtKennung": "", "zuordnungGeburtsanzeige": ""});
        let missing = total - body.to_string().len();
        body["standesamtKennung"] = json!("y".repeat(missing / 2));
        body["zuordnungGeburtsanzeige"] = json!("z".repeat(missing - missing / 2));
        let raw = body.to_string();
        assert_eq!(raw.len(), total);
        raw
    };
    assert_eq!(
        post_raw(&server, "klinik", PASSWORD, sized(2048)).status(),
        200
    );
    errors_with(post_raw(&server, "klinik", PASSWORD, sized(2049)), 413);
}

#[test]
fn missing_or_wrong_credentials_get_401_with_empty_body_and_challenge() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    let paths = [
        ("POST", MEMENTO.to_string()),
        ("GET", REPORTS.to_string()),
        ("GET", format!("{REPORTS}/geb-1")),
        ("GET", format!("{REPORTS}/geb-1?peek=true")),
        ("GET", format!("{REPORTS}/BIRTHNOTICE-TEST-SUCCESS")),
    ];
    let credentials: [Option<(&str, &str)>; 3] = [
        None,
        Some(("klinik", "wrong password 1")),
        Some(("nobody", PASSWORD)),
    ];
    for (method, path) in &paths {
        for credential in &credentials {
            let mut request = match *method {
                "POST" => server
                    .client()
                    .post(server.url(path))
                    .json(&complete_notice("geb-1")),
                _ => server.client().get(server.url(path)),
            };
            if let Some((user, password)) = credential {
                request = request.basic_auth(user, Some(password));
            }
            let response = request.send().unwrap();
            let what = format!("{method} {path} with {credential:?}");
            assert_eq!(response.status(), 401, "{what}");
            assert_request_id(&response);
            let challenge = response
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap());
            assert!(
                challenge.is_some_and(|c| c.starts_with("Basic")),
                "{what}: {challenge:?}"
            );
            assert_eq!(response.text().unwrap(), "", "{what}");
        }
    }
    // A header that is not Basic is no credential either.
    let bearer = server
        .client()
        .get(server.url(REPORTS))
        .bearer_auth("token")
        .send()
        .unwrap();
    assert_eq!(bearer.status(), 401);
    // The right credentials work.
    assert_eq!(server.get_as("klinik", REPORTS).status(), 200);
}

#[test]
fn failed_logins_beyond_the_allowance_get_429_for_that_user_only() {
    let (_dir, server) = server_with(
        &["alice", "bob"],
        &[("MELDEWERK_SECURITY__FAILED_LOGINS_PER_USER_PER_MINUTE", "3")],
    );
    for attempt in 1..=3 {
        let response = get_with(&server, REPORTS, "alice", "wrong password");
        assert_eq!(
            response.status(),
            401,
            "attempt {attempt} is within the allowance"
        );
    }
    // The 3rd failure used up the allowance: the 4th attempt is refused.
    assert_eq!(
        get_with(&server, REPORTS, "alice", "wrong password").status(),
        429
    );

    // Now even the right password is refused, with Retry-After and a JSON error body.
    for path in [
        REPORTS.to_string(),
        format!("{REPORTS}/BIRTHNOTICE-TEST-SUCCESS"),
    ] {
        let response = get_with(&server, &path, "alice", PASSWORD);
        assert_eq!(response.status(), 429, "{path}");
        let retry: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .expect("Retry-After seconds");
        assert!((1..=60).contains(&retry), "Retry-After {retry}");
        errors_with(response, 429);
    }
    let response = post_raw(
        &server,
        "alice",
        PASSWORD,
        json!({"id": "geb-1"}).to_string(),
    );
    assert_eq!(response.status(), 429);

    // Bob is not affected.
    assert_eq!(get_with(&server, REPORTS, "bob", PASSWORD).status(), 200);
    assert_eq!(server.memento("bob", &json!({"id": "geb-1"})).status(), 200);
}

#[test]
fn reports_are_listed_per_user_and_unknown_ids_are_404() {
    let (_dir, server) = server_with(&["alice", "bob"], &[]);
    let empty = server.get_as("alice", REPORTS);
    assert_request_id(&empty);
    assert_eq!(empty.json::<Value>().unwrap(), json!([]));

    let id = dispatch(&server, "alice", &complete_notice("geb-alice"));
    server.wait_for_status("alice", &id, "SUCCESS");
    assert_eq!(pending_list(&server, "alice"), json!(["geb-alice"]));
    assert_eq!(pending_list(&server, "bob"), json!([]));
    for query in ["?peek=true", ""] {
        let errors = errors_with(
            server.get_as("bob", &format!("{REPORTS}/geb-alice{query}")),
            404,
        );
        assert_eq!(errors, vec!["report geb-alice not found"]);
    }
    // Bob's attempts consumed nothing of alice's.
    assert_eq!(pending_list(&server, "alice"), json!(["geb-alice"]));

    for query in ["", "?peek=true", "?peek=false"] {
        let errors = errors_with(
            server.get_as("alice", &format!("{REPORTS}/geb-unknown{query}")),
            404,
        );
        assert_eq!(errors, vec!["report geb-unknown not found"]);
    }
    for query in ["?peek=maybe", "?peek=1", "?peek="] {
        errors_with(
            server.get_as("alice", &format!("{REPORTS}/geb-alice{query}")),
            400,
        );
    }
    // A misspelt or repeated `peek` is refused, not read as a consuming read.
    for (query, error) in [
        (
            "?peak=true",
            "unknown query parameter \"peak\"; only peek is read",
        ),
        ("?peek=true&peek=false", "peek must be given at most once"),
        (
            "?peek=true&_=1",
            "unknown query parameter \"_\"; only peek is read",
        ),
    ] {
        let errors = errors_with(
            server.get_as("alice", &format!("{REPORTS}/geb-alice{query}")),
            400,
        );
        assert_eq!(errors, vec![error], "{query}");
    }
    // The refused reads did not consume it either.
    assert_eq!(pending_list(&server, "alice"), json!(["geb-alice"]));
}

#[test]
fn mock_ids_simulate_outcomes_and_are_never_consumed() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    let mut receipt = None;
    // Read twice without peek and once with: never consumed.
    for query in ["", "", "?peek=true"] {
        for (id, status) in [
            ("BIRTHNOTICE-TEST-SUCCESS", "SUCCESS"),
            ("BIRTHNOTICE-TEST-PENDING", "PENDING"),
            ("BIRTHNOTICE-TEST-FAILURE", "FAILURE"),
        ] {
            let response = server.get_as("klinik", &format!("{REPORTS}/{id}{query}"));
            assert_eq!(response.status(), 200, "{id}{query}");
            let pdf = assert_result(&response.json().unwrap(), id, status);
            receipt = receipt.or(pdf);
        }
    }
    let text = checked_receipt_text(&receipt.unwrap());
    assert!(text.contains("BIRTHNOTICE-TEST-SUCCESS"), "{text}");

    // Other suffixes are ordinary (unknown) ids, and so is another module's mock id.
    errors_with(
        server.get_as("klinik", &format!("{REPORTS}/BIRTHNOTICE-TEST-OTHER")),
        404,
    );
    let errors = errors_with(
        server.get_as("klinik", &format!("{REPORTS}/DEATHNOTICE-TEST-SUCCESS")),
        404,
    );
    assert_eq!(errors, vec!["report DEATHNOTICE-TEST-SUCCESS not found"]);
    // Mock ids never show up in the pending list.
    assert_eq!(pending_list(&server, "klinik"), json!([]));
}

#[test]
fn pending_reports_have_the_result_body_and_are_not_consumed() {
    // The simulated office never acknowledges within the test: the report stays PENDING.
    let (_dir, slow) = server_with(
        &["klinik"],
        &[(
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS",
            "600000",
        )],
    );
    let id = dispatch(&slow, "klinik", &complete_notice("geb-slow"));
    for _ in 0..2 {
        let response = slow.get_as("klinik", &format!("{REPORTS}/{id}"));
        assert_eq!(response.status(), 200);
        let body: Value = response.json().unwrap();
        assert_result(&body, "geb-slow", "PENDING");
        assert_eq!(body["clientReference"], "KIS-geb-slow");
    }
    assert_eq!(pending_list(&slow, "klinik"), json!(["geb-slow"]));
}

#[test]
fn successful_reports_echo_the_client_reference_or_null() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    let id = dispatch(&server, "klinik", &complete_notice("geb-ok"));
    let body = server.wait_for_status("klinik", &id, "SUCCESS");
    assert_result(&body, "geb-ok", "SUCCESS");
    assert_eq!(body["clientReference"], "KIS-geb-ok");

    let mut anonymous = complete_notice("geb-noref");
    anonymous.as_object_mut().unwrap().remove("clientReference");
    let id = dispatch(&server, "klinik", &anonymous);
    let body = server.wait_for_status("klinik", &id, "SUCCESS");
    assert_result(&body, "geb-noref", "SUCCESS");
    assert!(body["clientReference"].is_null(), "{body}");
}

#[test]
fn unknown_paths_health_and_request_ids() {
    let (_dir, server) = server_with(&["klinik"], &[]);
    for path in [
        "/does-not-exist",
        "/api/birthnotice/v1/nope",
        "/api/birthnotice/v2/memento",
        "/api/nomodule/v1/reports",
    ] {
        let response = server.get_as("klinik", path);
        assert_eq!(response.status(), 404, "{path}");
        errors_with(response, 404);
    }
    let health = server.client().get(server.url("/healthz")).send().unwrap();
    assert_eq!(health.status(), 200);
    assert_request_id(&health);
    let ready = server.client().get(server.url("/readyz")).send().unwrap();
    assert_eq!(ready.status(), 200);
    assert_request_id(&ready);
    assert_eq!(ready.json::<Value>().unwrap(), json!({"status": "ready"}));

    // Request ids are unique per response.
    let a = server.client().get(server.url("/healthz")).send().unwrap();
    let b = server.client().get(server.url("/healthz")).send().unwrap();
    assert_ne!(a.headers()["x-request-id"], b.headers()["x-request-id"]);
}
