//! Failed-login limits that stop guessing without locking anyone out, seen from several client
//! addresses (all of 127.0.0.0/8 is loopback on Linux, so a client bound to 127.0.0.2 is another
//! address to the server).
//!
//! Proves: while an attacker keeps guessing a user name's password from one address, the user
//! keeps working from an address it logged in from before (operator and API user alike), a
//! Prometheus scraper with the metrics token keeps scraping, and the attacker is refused with 429
//! even with the right password, as is an address the user never logged in from; a known address
//! is still limited for its own guesses, and keeps its access when its other names are blocked.

mod common;

use std::net::IpAddr;

use common::*;
use reqwest::blocking::{Client, Response};
use serde_json::{json, Value};

const ACTORS: &str = "/admin/api/v1/actors";
const REPORTS: &str = "/api/birthnotice/v1/reports";
const TOKEN: &str = "metrics-token-0123456789abcdef0123456789";

/// A client whose connections come from `address`.
fn client_from(address: &str) -> Client {
    loopback_client()
        .local_address(address.parse::<IpAddr>().unwrap())
        .build()
        .unwrap()
}

fn get(client: &Client, server: &Server, path: &str, user: &str, password: &str) -> Response {
    client
        .get(server.url(path))
        .basic_auth(user, Some(password))
        .send()
        .unwrap()
}

fn scrape(client: &Client, server: &Server, token: &str) -> Response {
    client
        .get(server.url("/metrics"))
        .bearer_auth(token)
        .send()
        .unwrap()
}

/// A 429 with `Retry-After` (at most `longest` seconds) and the exact `errors` body.
fn assert_limited(response: Response, longest: u64, what: &str) {
    assert_eq!(response.status(), 429, "{what}");
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=longest).contains(&retry),
        "{what}: Retry-After {retry}"
    );
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({"errors": [format!("too many failed logins; try again in {retry} seconds")]}),
        "{what}"
    );
}

/// `allowance` wrong passwords for `user` at `path` are answered 401, the next attempt 429.
fn guess_until_blocked(client: &Client, server: &Server, path: &str, user: &str, allowance: u32) {
    for attempt in 1..=allowance {
        let response = get(client, server, path, user, "wrong password");
        assert_eq!(response.status(), 401, "failure {attempt}");
    }
    assert_limited(
        get(client, server, path, user, "wrong password"),
        60,
        "after the allowance",
    );
}

/// Three failures a minute per name: a block lasts 20 s, far longer than the test needs.
const PER_NAME: (&str, &str) = ("MELDEWERK_SECURITY__FAILED_LOGINS_PER_USER_PER_MINUTE", "3");

#[test]
fn guessing_the_operator_password_locks_out_only_the_guesser() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[PER_NAME, ("MELDEWERK_METRICS__TOKEN", TOKEN)]);
    let operator = client_from("127.0.0.1");
    let attacker = client_from("127.0.0.2");
    let scraper = client_from("127.0.0.3");
    let stranger = client_from("127.0.0.4");
    let (name, password) = OPERATOR;
    // The operator has worked from 127.0.0.1 before.
    assert_eq!(
        get(&operator, &server, ACTORS, name, password).status(),
        200
    );

    guess_until_blocked(&attacker, &server, ACTORS, name, 3);
    // The attacker keeps going; the operator and the scraper are not disturbed.
    for round in 0..10 {
        let what = format!("round {round}");
        assert_limited(
            get(&attacker, &server, ACTORS, name, "wrong password"),
            20,
            &what,
        );
        assert_eq!(
            get(&operator, &server, ACTORS, name, password).status(),
            200,
            "{what}"
        );
        assert_eq!(
            get(&operator, &server, "/metrics", name, password).status(),
            200,
            "{what}"
        );
        let scraped = scrape(&scraper, &server, TOKEN);
        assert_eq!(scraped.status(), 200, "{what}");
        assert!(scraped
            .text()
            .unwrap()
            .contains("meldewerk_http_requests_total"));
    }
    // Guessing stays stopped: the attacker's address even with the right password, and an
    // address the operator never logged in from.
    assert_limited(
        get(&attacker, &server, ACTORS, name, password),
        20,
        "attacker",
    );
    assert_limited(
        get(&stranger, &server, ACTORS, name, password),
        20,
        "stranger",
    );

    // The token reads the metrics only, and a wrong one is an ordinary failed login.
    assert_eq!(scrape(&scraper, &server, TOKEN).status(), 200);
    let read = scraper
        .get(server.url(ACTORS))
        .bearer_auth(TOKEN)
        .send()
        .unwrap();
    assert_eq!(read.status(), 401);
    let wrong = scrape(&stranger, &server, "not-the-token");
    assert_eq!(wrong.status(), 401);
    assert_eq!(
        wrong.json::<Value>().unwrap(),
        json!({"errors": ["operator credentials required"]})
    );
    assert_eq!(
        get(&operator, &server, ACTORS, name, password).status(),
        200
    );
    assert!(!server.log().contains(TOKEN), "the token was logged");
}

#[test]
fn a_metrics_token_shorter_than_32_characters_stops_the_start() {
    let dir = DataDir::new();
    let output = std::process::Command::new(binary())
        .arg("--data-dir")
        .arg(dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("MELDEWERK_METRICS__TOKEN", "short")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("metrics.token must have at least 32 characters"),
        "{stderr}"
    );
}

#[test]
fn guessing_an_api_users_password_locks_out_only_the_guesser() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[PER_NAME]);
    let hospital = client_from("127.0.0.1");
    let attacker = client_from("127.0.0.2");
    let stranger = client_from("127.0.0.4");
    assert_eq!(
        get(&hospital, &server, REPORTS, "klinik", PASSWORD).status(),
        200
    );

    guess_until_blocked(&attacker, &server, REPORTS, "klinik", 3);
    for round in 0..5 {
        let what = format!("round {round}");
        assert_limited(
            get(&attacker, &server, REPORTS, "klinik", "wrong password"),
            20,
            &what,
        );
        assert_eq!(
            get(&hospital, &server, REPORTS, "klinik", PASSWORD).status(),
            200,
            "{what}"
        );
    }
    let memento = hospital
        .post(server.url("/api/birthnotice/v1/memento"))
        .basic_auth("klinik", Some(PASSWORD))
        .json(&json!({"id": "geb-under-attack"}))
        .send()
        .unwrap();
    assert_eq!(memento.status(), 200);
    assert_limited(
        get(&attacker, &server, REPORTS, "klinik", PASSWORD),
        20,
        "attacker",
    );
    assert_limited(
        get(&stranger, &server, REPORTS, "klinik", PASSWORD),
        20,
        "stranger",
    );

    // A known address is limited for its own guesses all the same.
    guess_until_blocked(&hospital, &server, REPORTS, "klinik", 3);
    assert_limited(
        get(&hospital, &server, REPORTS, "klinik", PASSWORD),
        20,
        "the known address after guessing",
    );
}

#[test]
fn a_known_address_keeps_its_user_when_it_guesses_other_names() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("labor");
    let server = Server::start(
        &dir,
        &[(
            "MELDEWERK_SECURITY__FAILED_LOGINS_PER_ADDRESS_PER_MINUTE",
            "3",
        )],
    );
    // One address for a whole hospital: klinik has logged in from it, labor has not.
    let shared = client_from("127.0.0.5");
    assert_eq!(
        get(&shared, &server, REPORTS, "klinik", PASSWORD).status(),
        200
    );
    for name in ["guess-1", "guess-2", "guess-3"] {
        assert_eq!(
            get(&shared, &server, REPORTS, name, "x").status(),
            401,
            "{name}"
        );
    }
    assert_limited(
        get(&shared, &server, REPORTS, "guess-4", "x"),
        60,
        "guess-4",
    );
    assert_limited(
        get(&shared, &server, REPORTS, "labor", PASSWORD),
        60,
        "labor, unknown here",
    );
    assert_eq!(
        get(&shared, &server, REPORTS, "klinik", PASSWORD).status(),
        200
    );
}
