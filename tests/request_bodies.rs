//! How every module's memento endpoint reads its body: only `application/json` (415 otherwise),
//! no duplicate member names (400), and each module answers in its own error style.

mod common;

use common::*;
use serde_json::Value;

fn post(server: &Server, module: &str, body: &str, content_type: Option<&str>) -> (u16, Value) {
    let mut request = server
        .client()
        .post(server.url(&format!("/api/{module}/v1/memento")))
        .basic_auth("klinik", Some(PASSWORD))
        .body(body.to_string());
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

#[test]
fn bodies_must_be_declared_as_json() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    for (module, body) in [
        ("birthnotice", r#"{"id": "x"}"#),
        ("deathnotice", r#"{"id": "x", "Einrichtung": {}}"#),
    ] {
        for content_type in [
            None,
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
        ] {
            let (status, answer) = post(&server, module, body, content_type);
            assert_eq!(status, 415, "{module} {content_type:?}");
            assert_eq!(
                answer,
                serde_json::json!({"errors": ["the request body must be sent as Content-Type: application/json"]})
            );
        }
        let (status, _) = post(
            &server,
            module,
            body,
            Some("application/json; charset=UTF-8"),
        );
        assert_eq!(status, 200, "{module}");
    }
    let (status, answer) = post(&server, "birthdata", r#"{"id": "x"}"#, Some("text/plain"));
    assert_eq!(status, 415);
    assert!(answer["type"]
        .as_str()
        .unwrap()
        .ends_with("/problems/unsupported-media-type"));
}

#[test]
fn duplicate_member_names_are_refused() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let (status, answer) = post(
        &server,
        "birthnotice",
        r#"{"id": "BIRTHNOTICE-TEST-SUCCESS", "id": "harmless"}"#,
        Some("application/json"),
    );
    assert_eq!(status, 400);
    let error = answer["errors"][0].as_str().unwrap();
    assert!(
        error.starts_with("invalid JSON: duplicate member \"id\""),
        "{error}"
    );
    let (status, answer) = post(
        &server,
        "deathnotice",
        r#"{"id": "a", "Einrichtung": {"leichenID": "1", "leichenID": "2"}}"#,
        Some("application/json"),
    );
    assert_eq!(status, 400);
    assert!(answer["errors"][0]
        .as_str()
        .unwrap()
        .contains("duplicate member \"leichenID\""));
}

#[test]
fn the_operator_api_reads_json_as_strictly() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let send = |method: reqwest::Method, path: &str, body: &str, content_type: Option<&str>| {
        let mut request = server
            .client()
            .request(method, server.url(path))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .body(body.to_string());
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        (status, response.json::<Value>().unwrap_or(Value::Null))
    };
    let user = r#"{"name": "neu", "password": "a long enough password 1"}"#;
    // (The body types of HTML forms are refused before, as cross-site: operator_access.rs.)
    let (status, answer) = send(
        reqwest::Method::POST,
        "/admin/api/v1/users",
        user,
        Some("application/xml"),
    );
    assert_eq!(status, 415);
    assert_eq!(
        answer,
        serde_json::json!({"errors": ["the request body must be sent as Content-Type: application/json"]})
    );
    let twice = r#"{"name": "neu", "name": "other", "password": "a long enough password 1"}"#;
    let (status, answer) = send(
        reqwest::Method::POST,
        "/admin/api/v1/users",
        twice,
        Some("application/json"),
    );
    assert_eq!(status, 400);
    assert!(answer["errors"][0]
        .as_str()
        .unwrap()
        .contains("duplicate member \"name\""));
    let script = "/admin/api/v1/transports/xpersonenstand/script";
    let (status, _) = send(reqwest::Method::PUT, script, r#"{"rules": []}"#, None);
    assert_eq!(status, 415);
    let (status, _) = send(
        reqwest::Method::PUT,
        script,
        r#"{"rules": [], "rules": []}"#,
        Some("application/json"),
    );
    assert_eq!(status, 400);
    // An empty body still deposits a new seal; a body must be declared as JSON.
    let seal = "/admin/api/v1/users/klinik/seal";
    assert_eq!(
        send(reqwest::Method::POST, seal, r#"{"pkcs8": null}"#, None).0,
        415
    );
    assert_eq!(send(reqwest::Method::POST, seal, "", None).0, 201);
}
