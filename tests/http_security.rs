//! Protections every answer and every login carries, seen from outside: client-chosen strings
//! cannot forge or flood log lines; the Basic scheme name is case-insensitive (API, operator API,
//! `/bal/`).

mod common;

use base64::Engine as _;
use common::*;
use reqwest::blocking::Response;

const REPORTS: &str = "/api/birthnotice/v1/reports";

/// GET `path` with an `Authorization` header of `scheme` and base64 of `user:password`.
fn get_with_scheme(
    server: &Server,
    path: &str,
    scheme: &str,
    user: &str,
    password: &str,
) -> Response {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    server
        .client()
        .get(server.url(path))
        .header("authorization", format!("{scheme} {encoded}"))
        .send()
        .unwrap()
}

/// The value of header `name`, if the answer has it.
fn header(response: &Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_string())
}

#[test]
fn client_strings_cannot_forge_or_flood_log_lines() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    // Basic user names cannot hold a colon, so the forged line goes without one.
    let forged = "FORGED 2026-01-01 INFO meldewerk operator logged in";
    let with_line_break = format!("klinik\n{forged}");
    let huge = "x".repeat(10 * 1024);
    for user in [with_line_break.as_str(), huge.as_str()] {
        for path in [REPORTS, "/bal/forms"] {
            let response = get_with_scheme(&server, path, "Basic", user, "wrong");
            assert!(
                [401, 302].contains(&response.status().as_u16()),
                "{path}: {}",
                response.status()
            );
        }
    }
    let log = server.log();
    // The names were logged (escaped and cut), so the checks below are about their form.
    assert!(log.contains("klinik\\u{a}FORGED 2026-01-01"), "{log}");
    assert!(log.contains(&format!("{}…[", "x".repeat(100))), "{log}");
    for line in log.lines() {
        assert!(
            !line.starts_with("2026-01-01T00:00:00"),
            "forged line: {line}"
        );
        assert!(
            line.len() < 2048,
            "a {} byte log line: {}…",
            line.len(),
            line.chars().take(200).collect::<String>()
        );
    }
}

#[test]
fn the_basic_scheme_name_is_case_insensitive() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    for scheme in ["Basic", "basic", "BASIC", "bAsIc"] {
        let api = get_with_scheme(&server, REPORTS, scheme, "klinik", PASSWORD);
        assert_eq!(api.status(), 200, "{scheme}: API");
        let wrong = get_with_scheme(&server, REPORTS, scheme, "klinik", "wrong");
        assert_eq!(wrong.status(), 401, "{scheme}: wrong password");
        let operator = get_with_scheme(
            &server,
            "/admin/api/v1/actors",
            scheme,
            OPERATOR.0,
            OPERATOR.1,
        );
        assert_eq!(operator.status(), 200, "{scheme}: operator API");
        let bal = get_with_scheme(&server, "/bal/forms", scheme, "klinik", PASSWORD);
        assert_eq!(bal.status(), 302, "{scheme}: /bal/");
        assert_eq!(header(&bal, "location").as_deref(), Some("/forms"));
        assert!(
            header(&bal, "set-cookie").is_some_and(|c| c.starts_with("meldewerk_session=")),
            "{scheme}: /bal/ without a session"
        );
    }
    // Another scheme is still no credential.
    let other = get_with_scheme(&server, REPORTS, "Basicx", "klinik", PASSWORD);
    assert_eq!(other.status(), 401);
}
