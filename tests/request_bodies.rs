//! How every module's memento endpoint reads its body: only `application/json` (415 otherwise),
//! no duplicate member names (400), and each module answers in its own error style; and that
//! every endpoint of a module's API checks the caller before it reads the body.

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

/// The head of a POST of `path` with 1000 bytes of `content_type` to come and `credentials`.
fn slow_post(path: &str, content_type: &str, credentials: (&str, &str)) -> String {
    common::raw::post_head(path, content_type, 1000, credentials, false)
}

#[test]
fn a_body_that_trickles_in_is_cut_off_with_408() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[("MELDEWERK_BODY_TIMEOUT_SECS", "2")]);
    let klinik = ("klinik", PASSWORD);
    let late = "the request body did not arrive within 2 seconds";
    let json = "application/json";

    let (answer, closed) = common::raw::trickle(
        &server.base,
        &slow_post("/api/birthnotice/v1/memento", json, klinik),
    );
    assert_eq!(answer.status, 408);
    assert_eq!(answer.json(), serde_json::json!({"errors": [late]}));
    assert_eq!(answer.header("connection"), Some("close"));
    assert!(closed, "the connection stays open");

    let (answer, closed) = common::raw::trickle(
        &server.base,
        &slow_post("/api/birthdata/v1/memento", json, klinik),
    );
    assert_eq!(answer.status, 408);
    assert_eq!(
        answer.header("content-type"),
        Some("application/problem+json")
    );
    assert_eq!(
        answer.json(),
        serde_json::json!({
            "type": format!("{}/problems/request-timeout", server.base),
            "title": "Request body too slow",
            "status": 408,
            "detail": late,
            "instance": "/api/birthdata/v1/memento",
        })
    );
    assert!(closed);

    let (answer, closed) = common::raw::trickle(
        &server.base,
        &slow_post("/admin/api/v1/users", json, OPERATOR),
    );
    assert_eq!(answer.status, 408);
    assert_eq!(answer.json(), serde_json::json!({"errors": [late]}));
    assert!(closed);

    let script = "/admin/api/v1/transports/xpersonenstand/script/rules";
    let (answer, closed) = common::raw::trickle(&server.base, &slow_post(script, json, OPERATOR));
    assert_eq!(answer.status, 408);
    assert_eq!(answer.json(), serde_json::json!({"errors": [late]}));
    assert!(closed);

    // A session, for the posts of pages.
    use reqwest::cookie::CookieStore as _;
    let jar = std::sync::Arc::new(reqwest::cookie::Jar::default());
    let browser = Browser::with_cookies(jar.clone());
    let form = browser.open_magic_link(
        &server,
        &magic_link(&server, "klinik", &complete_notice("geb-slow")),
    );
    let cookie = jar.cookies(&server.base.parse().unwrap()).unwrap();
    // The form's post and the logout button's, each in the page style.
    let cookie = cookie.to_str().unwrap();
    for (path, title) in [
        (form.action(), "Formular nicht lesbar"),
        ("/logout".to_owned(), "Abmeldung nicht lesbar"),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nCookie: {cookie}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
        );
        let (answer, closed) = common::raw::trickle(&server.base, &head);
        assert_eq!(answer.status, 408, "{path}: {answer:?}");
        let content_type = answer.header("content-type").unwrap();
        assert!(content_type.starts_with("text/html"), "{content_type}");
        assert!(answer.body.contains(title), "{}", answer.body);
        assert!(answer.body.contains(late), "{}", answer.body);
        assert!(closed, "{path}: the connection stays open");
    }

    // A body that arrives in time is read as ever.
    let (status, _) = post(&server, "birthnotice", r#"{"id": "geb-1"}"#, Some(json));
    assert_eq!(status, 200);
}

/// Every endpoint of a module's API checks the caller before it reads anything of the request:
/// wrong credentials with a body that is neither declared as JSON nor JSON, or larger than any
/// limit, get 401 with the challenge and an empty body, never the body's 415, 413 or 400.
#[test]
fn credentials_are_checked_before_the_body_is_read() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let mut endpoints: Vec<(&str, String)> = MODULES
        .iter()
        .map(|module| ("POST", format!("/api/{module}/v1/memento")))
        .collect();
    endpoints.extend([
        ("POST", "/api/bedreport/v1/report".to_owned()),
        ("GET", "/api/bedreport/v1/status/B-1".to_owned()),
        ("GET", "/api/bedreport/v1/reports".to_owned()),
        ("GET", "/api/labreport/v1/reports/L-1?peek=true".to_owned()),
        (
            "GET",
            "/api/guardianship/v1/messages?since=not-a-time".to_owned(),
        ),
        ("POST", "/api/guardianship/v1/messages/ack".to_owned()),
        ("GET", "/api/guardianship/v1/download/1".to_owned()),
        ("PUT", "/api/guardianship/v1/contact".to_owned()),
        ("DELETE", "/api/guardianship/v1/contact".to_owned()),
    ]);
    let large = "x".repeat(4 * 1024 * 1024);
    for (i, (method, path)) in endpoints.iter().enumerate() {
        // Without credentials, and with a wrong password (a user name each, so that the
        // failures stay within every allowance: 429 would be no answer to the question here;
        // one client address may fail 30 times a minute, and this makes one failure per
        // endpoint).
        let wrong = format!("nobody-{i}");
        for (credentials, body) in [
            (None, "{\"id\": 1, \"id\": 2"),
            (Some(wrong.as_str()), large.as_str()),
        ] {
            let mut request = server
                .client()
                .request(method.parse().unwrap(), server.url(path))
                .header("Content-Type", "text/plain")
                .body(body.to_owned());
            if let Some(user) = credentials {
                request = request.basic_auth(user, Some(PASSWORD));
            }
            let response = request.send().unwrap();
            let what = format!("{method} {path} as {credentials:?}, {} bytes", body.len());
            assert_eq!(response.status(), 401, "{what}");
            assert!(
                response.headers().contains_key("www-authenticate"),
                "{what}"
            );
            assert_eq!(response.text().unwrap(), "", "{what}");
        }
    }
}
