//! Protections every answer and every login carries, seen from outside: client-chosen strings
//! cannot forge or flood log lines; the Basic scheme name is case-insensitive (API, operator API,
//! `/bal/`); pages carry a Content-Security-Policy and, behind an `https://` address,
//! Strict-Transport-Security; nothing is cacheable; the failed-login limits answer exactly 10 (per
//! user name) and 30 (per client address) failures with 401 before refusing with 429.

mod common;

use base64::Engine as _;
use common::*;
use reqwest::blocking::Response;
use serde_json::{json, Value};

const REPORTS: &str = "/api/birthnotice/v1/reports";
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const HSTS: &str = "max-age=31536000; includeSubDomains";

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
    // Unknown field names come back in the 400 answer; the log must not carry them whole.
    let mut notice = complete_notice("geb-log");
    notice[&with_line_break] = json!(1);
    notice[&huge] = json!(2);
    assert_eq!(server.memento("klinik", &notice).status(), 400);
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

#[test]
fn pages_and_answers_carry_the_content_security_policy_and_no_hsts_over_http() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let link = magic_link(&server, "klinik", &complete_notice("geb-csp"));
    let browser = Browser::new();
    let form = browser.open_magic_link(&server, &link);
    assert_eq!(form.status, 200);
    // The policy allows no inline script, so the pages must not have any.
    assert!(!form.html.contains("<script"), "{}", form.html);

    let form_page = browser.get(&server.url(&format!(
        "/forms/birthnotice?m={}",
        link.split("?m=").nth(1).unwrap()
    )));
    let answers = [
        ("form", form_page),
        (
            "login page",
            server
                .client()
                .get(server.url("/login?error"))
                .send()
                .unwrap(),
        ),
        (
            "logout page",
            server.client().get(server.url("/logout")).send().unwrap(),
        ),
        ("API", server.get_as("klinik", REPORTS)),
        (
            "not found",
            server.client().get(server.url("/nowhere")).send().unwrap(),
        ),
    ];
    for (what, response) in &answers {
        assert_eq!(
            header(response, "content-security-policy").as_deref(),
            Some(CSP),
            "{what}"
        );
        assert_eq!(
            header(response, "strict-transport-security"),
            None,
            "{what}"
        );
    }
}

#[test]
fn an_https_base_url_adds_strict_transport_security() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_BASE_URL", "https://meldungen.example.org")],
    );
    let answers = [
        (
            "login page",
            server.client().get(server.url("/login")).send().unwrap(),
        ),
        ("API", server.get_as("klinik", REPORTS)),
        (
            "401",
            server.client().get(server.url(REPORTS)).send().unwrap(),
        ),
        (
            "health",
            server.client().get(server.url("/healthz")).send().unwrap(),
        ),
    ];
    for (what, response) in &answers {
        assert_eq!(
            header(response, "strict-transport-security").as_deref(),
            Some(HSTS),
            "{what}"
        );
        assert_eq!(
            header(response, "content-security-policy").as_deref(),
            Some(CSP),
            "{what}"
        );
    }
}

#[test]
fn no_answer_may_be_cached() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let client = server.client();
    let answers: Vec<(&str, Response, u16)> = vec![
        (
            "memento",
            server.memento("klinik", &complete_notice("geb-cache")),
            200,
        ),
        (
            "report",
            server.get_as("klinik", &format!("{REPORTS}/BIRTHNOTICE-TEST-SUCCESS")),
            200,
        ),
        ("pending list", server.get_as("klinik", REPORTS), 200),
        (
            "unknown report",
            server.get_as("klinik", &format!("{REPORTS}/nope")),
            404,
        ),
        (
            "no credentials",
            client.get(server.url(REPORTS)).send().unwrap(),
            401,
        ),
        (
            "invalid memento",
            server.memento("klinik", &json!({"id": "geb-x", "unbekannt": 1})),
            400,
        ),
        (
            "bad peek",
            server.get_as("klinik", &format!("{REPORTS}/geb-1?peek=1")),
            400,
        ),
        ("operator", server.admin_get("/admin/api/v1/users"), 200),
        (
            "operator actors",
            server.admin_get("/admin/api/v1/actors"),
            200,
        ),
        (
            "operator 401",
            client
                .get(server.url("/admin/api/v1/users"))
                .send()
                .unwrap(),
            401,
        ),
        (
            "operator 404",
            server.admin_get("/admin/api/v1/reports/birthnotice/nope/message"),
            404,
        ),
        (
            "login page",
            client.get(server.url("/login")).send().unwrap(),
            200,
        ),
    ];
    for (what, response, status) in &answers {
        assert_eq!(response.status(), *status, "{what}");
        assert_eq!(
            header(response, "cache-control").as_deref(),
            Some("no-store"),
            "{what}"
        );
    }
}

/// `n` attempts as `user` with a wrong password are each answered 401.
fn failures_answered_401(server: &Server, user: &str, n: usize) {
    for attempt in 1..=n {
        let response = get_with_scheme(server, REPORTS, "Basic", user, "wrong password");
        assert_eq!(response.status(), 401, "{user}: failure {attempt} of {n}");
    }
}

/// A 429 with `Retry-After` and an `errors` body.
fn assert_limited(response: Response, what: &str) {
    assert_eq!(response.status(), 429, "{what}");
    let retry: u64 = header(&response, "retry-after")
        .unwrap_or_else(|| panic!("{what}: no Retry-After"))
        .parse()
        .expect("Retry-After seconds");
    assert!((1..=60).contains(&retry), "{what}: Retry-After {retry}");
    let body: Value = response.json().unwrap();
    assert!(body["errors"][0].is_string(), "{what}: {body}");
}

#[test]
fn exactly_ten_failures_a_minute_per_user_name_then_429() {
    let dir = DataDir::new();
    dir.add_user("alice");
    dir.add_user("bob");
    let server = Server::start(&dir, &[]);
    failures_answered_401(&server, "alice", 10);
    // The 11th attempt is refused, even with the right password.
    assert_limited(
        server.get_as("alice", REPORTS),
        "11th attempt, right password",
    );
    assert_limited(
        get_with_scheme(&server, REPORTS, "Basic", "alice", "wrong password"),
        "12th attempt",
    );
    // Another user from the same address is not affected.
    assert_eq!(server.get_as("bob", REPORTS).status(), 200);
}

#[test]
fn exactly_thirty_failures_a_minute_per_client_address_then_429() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let started = std::time::Instant::now();
    // 30 failures from one address under 30 names (unknown names count like wrong passwords),
    // far from the per-name limit.
    for i in 1..=15 {
        failures_answered_401(&server, &format!("guess-{i}"), 1);
    }
    failures_answered_401(&server, "klinik", 5);
    for i in 16..=25 {
        failures_answered_401(&server, &format!("guess-{i}"), 1);
    }
    // The limit refills one failure every two seconds (30 a minute). On a loaded machine the 30
    // failures may take longer than that: each refill lets exactly one more failure through
    // before the 429, and no more.
    let refills = || (started.elapsed().as_secs_f64() / 2.0).floor() as usize;
    let mut extra = 0;
    while extra < refills() {
        let response = get_with_scheme(&server, REPORTS, "Basic", "guess-extra", "wrong");
        if response.status() == 429 {
            break;
        }
        assert_eq!(response.status(), 401);
        extra += 1;
    }
    // The next attempt from this address is refused, whatever the name and password.
    assert_limited(
        server.get_as("klinik", REPORTS),
        "31st attempt, right password",
    );
    assert_limited(
        get_with_scheme(&server, REPORTS, "Basic", "guess-99", "x"),
        "a new name",
    );
}

/// Sends the head of a POST of `path` announcing `length` bytes with `Expect: 100-continue` and
/// nothing more; the first answer.
fn expecting(
    server: &Server,
    path: &str,
    length: u64,
    credentials: (&str, &str),
) -> common::raw::RawAnswer {
    let head = common::raw::post_head(path, "application/json", length, credentials, true);
    let mut stream = common::raw::connect(&server.base);
    std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
    common::raw::read_answer(&mut stream)
}

#[test]
fn a_body_over_the_limit_is_never_asked_for() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    let huge = 100_000_000;
    let too_large = json!({"errors": ["request body exceeds 262144 bytes"]});

    // Without valid credentials: 401 at once, not `100 Continue`.
    for path in ["/api/birthnotice/v1/memento", "/api/birthdata/v1/memento"] {
        let answer = expecting(&server, path, huge, ("klinik", "wrong password"));
        assert_eq!(answer.status, 401, "{path}: {answer:?}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some("Basic realm=\"meldewerk\", charset=\"UTF-8\"")
        );
    }
    let answer = expecting(&server, "/admin/api/v1/users", huge, ("operator", "wrong"));
    assert_eq!(answer.status, 401, "{answer:?}");

    // With them: 413 at once, in the route family's shape.
    let as_klinik = |path: &str| expecting(&server, path, huge, ("klinik", PASSWORD));
    let answer = as_klinik("/api/birthnotice/v1/memento");
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(answer.json(), too_large);
    let answer = as_klinik("/api/birthdata/v1/memento");
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(
        answer.header("content-type"),
        Some("application/problem+json")
    );
    assert_eq!(
        answer.json()["type"],
        format!("{}/problems/request-too-large", server.base)
    );
    assert_eq!(answer.json()["detail"], "request body exceeds 262144 bytes");
    let answer = expecting(&server, "/admin/api/v1/users", huge, OPERATOR);
    assert_eq!(answer.status, 413, "{answer:?}");
    assert_eq!(answer.json(), too_large);

    // A body within the limit is asked for and read as ever.
    let body = r#"{"id": "geb-expect-1"}"#;
    let head = common::raw::post_head(
        "/api/birthnotice/v1/memento",
        "application/json",
        body.len() as u64,
        ("klinik", PASSWORD),
        true,
    );
    let mut stream = common::raw::connect(&server.base);
    std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
    assert_eq!(common::raw::read_answer(&mut stream).status, 100);
    std::io::Write::write_all(&mut stream, body.as_bytes()).unwrap();
    let answer = common::raw::read_answer(&mut stream);
    assert_eq!(answer.status, 200, "{answer:?}");
    assert!(answer.json()["magicLink"].is_string());
}
