//! How the operator API is protected from the operator's own browser, and what it records.
//!
//! Proves: every state-changing operator route refuses a request that a page of another site
//! makes the browser send (`Origin` of another site, `Sec-Fetch-Site` other than `same-origin` or
//! `none`, or, without either header, a body an HTML form can send) with 403 and an exact body,
//! and nothing changes; curl-like clients and the service's own origin are admitted; and every
//! change an operator makes is in the audit log with who, what and which target (never an
//! address or a password), while refused and failed requests are not.

mod common;

use common::*;
use reqwest::blocking::{RequestBuilder, Response};
use reqwest::Method;
use serde_json::{json, Value};

const CROSS_SITE: &str = "cross-site requests to the operator API are refused";
const FORM_POST: &str =
    "the operator API takes no form posts: send no body, or JSON with Content-Type: application/json";
const SCRIPT: &str = "/admin/api/v1/transports/xpersonenstand/script";

/// A request as operator.
fn operator(server: &Server, method: Method, path: &str) -> RequestBuilder {
    server
        .client()
        .request(method, server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
}

/// Sends `request` with `body` as JSON, if any.
fn send(request: RequestBuilder, body: &Option<Value>) -> Response {
    match body {
        Some(body) => request.json(body),
        None => request,
    }
    .send()
    .unwrap()
}

/// Asserts a 403 with exactly `message`.
fn assert_refused(response: Response, message: &str, what: &str) {
    assert_eq!(response.status(), 403, "{what}");
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({ "errors": [message] }),
        "{what}"
    );
}

fn actor(server: &Server, name: &str) -> Value {
    let actors: Vec<Value> = server.admin_get("/admin/api/v1/actors").json().unwrap();
    actors.into_iter().find(|a| a["name"] == name).unwrap()
}

fn audit(server: &Server) -> Vec<Value> {
    let page: Value = server.admin_get("/admin/api/v1/audit").json().unwrap();
    page["entries"].as_array().unwrap().clone()
}

/// The one job in the outbox, once it is there.
fn the_job(server: &Server) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
        if let [job] = page["jobs"].as_array().unwrap().as_slice() {
            return job["id"].as_u64().unwrap();
        }
        assert!(std::time::Instant::now() < deadline, "{page}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn cross_site_requests_change_nothing_while_scripts_and_the_own_origin_are_admitted() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    // As a script would (curl sends neither Origin nor Sec-Fetch-Site): pause, and a job waits.
    assert_eq!(
        server
            .admin_post("/admin/api/v1/modules/birthnotice/pause")
            .status(),
        200
    );
    dispatch(&server, "klinik", &complete_notice("geb-csrf"));
    let job = the_job(&server);

    let changes: Vec<(Method, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/admin/api/v1/modules/birthnotice/resume".into(),
            None,
        ),
        (
            Method::POST,
            "/admin/api/v1/modules/deathnotice/pause".into(),
            None,
        ),
        (
            Method::POST,
            format!("/admin/api/v1/jobs/{job}/retry"),
            None,
        ),
        (
            Method::POST,
            format!("/admin/api/v1/jobs/{job}/discard?force=true"),
            None,
        ),
        (Method::POST, "/admin/api/v1/users/klinik/seal".into(), None),
        (
            Method::POST,
            "/admin/api/v1/users".into(),
            Some(json!({"name": "mallory", "password": "a long enough password 1"})),
        ),
        (
            Method::PUT,
            "/admin/api/v1/users/klinik/password".into(),
            Some(json!({"password": "a long enough password 2"})),
        ),
        (
            Method::PUT,
            "/admin/api/v1/users/klinik/email".into(),
            Some(json!({"email": "it@evil.example"})),
        ),
        (Method::DELETE, "/admin/api/v1/users/klinik".into(), None),
        (
            Method::PUT,
            SCRIPT.into(),
            Some(json!({"rules": [{"kind": "reject", "reason": "x"}]})),
        ),
        (
            Method::POST,
            format!("{SCRIPT}/rules"),
            Some(json!({"kind": "reject", "reason": "x"})),
        ),
        (Method::DELETE, SCRIPT.into(), None),
    ];
    let browsers: [&[(&str, &str)]; 4] = [
        &[("origin", "https://evil.example")],
        &[("origin", "null")],
        &[
            ("sec-fetch-site", "cross-site"),
            ("origin", "https://evil.example"),
        ],
        // A sibling site is another site too, and a right Origin does not excuse it.
        &[
            ("sec-fetch-site", "same-site"),
            ("origin", server.base.as_str()),
        ],
    ];
    for (method, path, body) in &changes {
        for headers in browsers {
            let mut request = operator(&server, method.clone(), path);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            assert_refused(
                send(request, body),
                CROSS_SITE,
                &format!("{method} {path} {headers:?}"),
            );
        }
    }
    // Browsers too old to send either header still send a form's Content-Type.
    for (method, path, _) in &changes {
        for (content_type, body) in [
            ("application/x-www-form-urlencoded", ""),
            ("text/plain", r#"{"password": "a long enough password 2"}"#),
            ("multipart/form-data; boundary=x", "--x--\r\n"),
        ] {
            let request = operator(&server, method.clone(), path)
                .header("content-type", content_type)
                .body(body);
            assert_refused(
                request.send().unwrap(),
                FORM_POST,
                &format!("{method} {path} {content_type}"),
            );
        }
    }

    // Nothing changed.
    assert_eq!(actor(&server, "module:birthnotice")["paused"], true);
    assert_eq!(actor(&server, "module:deathnotice")["paused"], false);
    assert_eq!(the_job(&server), job);
    let users: Vec<Value> = server.admin_get("/admin/api/v1/users").json().unwrap();
    assert_eq!(users.len(), 1, "{users:?}");
    assert_eq!(users[0]["name"], "klinik");
    assert_eq!(users[0]["seal"], false);
    assert_eq!(users[0]["email"], Value::Null);
    assert_eq!(
        server
            .get_as("klinik", "/api/birthnotice/v1/reports")
            .status(),
        200
    );
    assert_eq!(
        server.admin_get(SCRIPT).json::<Value>().unwrap(),
        json!({"rules": [], "transient_rate": 0.0})
    );
    let entries = audit(&server);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["action"], "pause");

    // The service's own origin, and what the operator typed themselves, are admitted.
    let own = operator(
        &server,
        Method::POST,
        "/admin/api/v1/modules/deathnotice/pause",
    )
    .header("origin", server.base.as_str())
    .header("sec-fetch-site", "same-origin")
    .send()
    .unwrap();
    assert_eq!(own.status(), 200);
    let typed = operator(
        &server,
        Method::POST,
        "/admin/api/v1/modules/deathnotice/resume",
    )
    .header("sec-fetch-site", "none")
    .send()
    .unwrap();
    assert_eq!(typed.status(), 200);
    // Reads are never refused, whoever asks.
    let read = operator(&server, Method::GET, "/admin/api/v1/jobs")
        .header("origin", "https://evil.example")
        .header("sec-fetch-site", "cross-site")
        .send()
        .unwrap();
    assert_eq!(read.status(), 200);
    // And a script's discard goes through.
    let discarded = server.admin_post(&format!("/admin/api/v1/jobs/{job}/discard?force=true"));
    assert_eq!(discarded.status(), 200);
    server.wait_for_status("klinik", "geb-csrf", "FAILURE");
    let refused = server.log();
    assert!(
        refused.contains("operator request refused as cross-site"),
        "{refused}"
    );
}

#[test]
fn every_operator_change_is_in_the_audit_log() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let password = "a long enough password 1";
    let ok = |method: Method, path: &str, body: Option<Value>, status: u16| {
        let response = send(operator(&server, method.clone(), path), &body);
        assert_eq!(response.status(), status, "{method} {path}");
    };
    ok(
        Method::POST,
        "/admin/api/v1/modules/birthnotice/pause",
        None,
        200,
    );
    ok(
        Method::POST,
        "/admin/api/v1/modules/birthnotice/resume",
        None,
        200,
    );
    ok(
        Method::POST,
        "/admin/api/v1/users",
        Some(json!({"name": "labor", "password": password, "email": "it@labor.example"})),
        201,
    );
    let email = "/admin/api/v1/users/labor/email";
    ok(
        Method::PUT,
        email,
        Some(json!({"email": "neu@labor.example"})),
        204,
    );
    ok(Method::PUT, email, Some(json!({"email": null})), 204);
    ok(
        Method::PUT,
        "/admin/api/v1/users/labor/password",
        Some(json!({"password": "another long password 2"})),
        204,
    );
    ok(Method::POST, "/admin/api/v1/users/labor/seal", None, 201);
    ok(Method::PUT, SCRIPT, Some(json!({"rules": []})), 200);
    ok(
        Method::POST,
        &format!("{SCRIPT}/rules"),
        Some(json!({"kind": "reset", "count": 1})),
        200,
    );
    ok(Method::DELETE, SCRIPT, None, 200);
    ok(Method::DELETE, "/admin/api/v1/users/labor", None, 204);
    // Requests that change nothing leave nothing.
    ok(
        Method::POST,
        "/admin/api/v1/modules/nothing/pause",
        None,
        404,
    );
    ok(
        Method::PUT,
        "/admin/api/v1/users/ghost/email",
        Some(json!({"email": null})),
        404,
    );
    ok(
        Method::PUT,
        SCRIPT,
        Some(json!({"rules": [{"kind": "x"}]})),
        400,
    );
    ok(Method::DELETE, "/admin/api/v1/users/labor", None, 404);

    let entries = audit(&server);
    let recorded: Vec<(&str, &str, &str)> = entries
        .iter()
        .map(|e| {
            assert!(e["at"].is_string(), "{e}");
            (
                e["who"].as_str().unwrap(),
                e["action"].as_str().unwrap(),
                e["target"].as_str().unwrap(),
            )
        })
        .collect();
    let transport = "transport xpersonenstand";
    assert_eq!(
        recorded,
        [
            ("operator", "pause", "module birthnotice"),
            ("operator", "resume", "module birthnotice"),
            ("operator", "add-user", "user labor"),
            ("operator", "set-email", "user labor"),
            ("operator", "remove-email", "user labor"),
            ("operator", "change-password", "user labor"),
            ("operator", "deposit-seal", "user labor"),
            ("operator", "replace-script", transport),
            ("operator", "add-script-rule", transport),
            ("operator", "reset-script", transport),
            ("operator", "remove-user", "user labor"),
        ]
    );
    let text = serde_json::to_string(&entries).unwrap();
    assert!(!text.contains("labor.example"), "{text}");
    assert!(!text.contains("long"), "{text}");
}
