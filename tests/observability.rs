//! What operators watch: Prometheus metrics at `/metrics`, health probes kept out of the info log,
//! and the operator login behind the same failed-login limit as the API users.

mod common;

use common::*;

fn scrape(server: &Server) -> String {
    let response = server.admin_get("/metrics");
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/openmetrics-text"));
    response.text().unwrap()
}

#[test]
fn metrics_count_requests_by_route_pattern_and_show_every_actor() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    for path in ["/metrics", "/admin/"] {
        let anonymous = server.client().get(server.url(path)).send().unwrap();
        assert_eq!(anonymous.status(), 401, "{path}");
        assert!(anonymous.headers().contains_key("www-authenticate"));
    }

    for _ in 0..3 {
        assert_eq!(
            server
                .client()
                .get(server.url("/healthz"))
                .send()
                .unwrap()
                .status(),
            200
        );
    }
    // A token in a path must never become a label.
    let secret_token = "AAAAsecret-token-in-the-path";
    server
        .client()
        .get(server.url(&format!("/mtl/{secret_token}")))
        .send()
        .unwrap();
    server
        .client()
        .get(server.url("/no/such/path/with-a-secret"))
        .send()
        .unwrap();
    for invented in ["XMETHOD1", "XMETHOD2"] {
        let method = reqwest::Method::from_bytes(invented.as_bytes()).unwrap();
        server
            .client()
            .request(method, server.url("/nothing"))
            .send()
            .unwrap();
    }
    dispatch(&server, "klinik", &complete_notice("geb-metrics"));
    server.wait_for_status("klinik", "geb-metrics", "SUCCESS");

    let text = scrape(&server);
    assert!(
        text.contains(
            r#"meldewerk_http_requests_total{method="GET",route="/healthz",status="200"} 3"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/mtl/{token}",status="302""#),
        "{text}"
    );
    assert!(text.contains(r#"route="unmatched",status="404""#), "{text}");
    assert!(!text.contains("secret"), "raw paths leaked into metrics");
    // Invented methods are one series, not one each.
    assert!(!text.contains("XMETHOD"), "{text}");
    assert!(
        text.contains(
            r#"meldewerk_http_requests_total{method="other",route="unmatched",status="404"} 2"#
        ),
        "{text}"
    );
    assert!(text.contains("meldewerk_http_request_duration_seconds_bucket"));
    for actor in [
        "outbox",
        "retention",
        "module:birthdata",
        "module:birthnotice",
        "module:deathnotice",
        "inbox:xpersonenstand",
    ] {
        assert!(
            text.contains(&format!(
                r#"meldewerk_actor_restarts_total{{actor="{actor}"}} 0"#
            )),
            "{actor}: {text}"
        );
    }
    assert!(
        text.contains(r#"meldewerk_actor_processed_total{actor="module:birthnotice"} 1"#),
        "{text}"
    );
    // Reports by module and outcome, with the time from submission to acknowledgement.
    assert!(
        text.contains(r#"meldewerk_reports_total{module="birthnotice",outcome="success"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"meldewerk_report_duration_seconds_count{module="birthnotice"} 1"#));
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn health_probes_stay_out_of_the_info_log() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    for path in ["/healthz", "/readyz", "/healthz"] {
        server.client().get(server.url(path)).send().unwrap();
    }
    let log = server.settled_log();
    assert!(!log.contains("/healthz"), "{log}");
    assert!(!log.contains("/readyz"), "{log}");
}

/// The server's standard error goes to a file here, as under a service manager: plain text, no
/// terminal colour codes.
#[test]
fn a_log_written_to_a_file_has_no_colour_codes() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let log = server.settled_log();
    assert!(log.contains("INFO"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "escape sequences in the log: {log:?}"
    );
}

#[test]
fn the_operator_login_has_the_failed_login_limit() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let attempt = |password: &str| {
        server
            .client()
            .get(server.url("/admin/api/v1/actors"))
            .basic_auth(OPERATOR.0, Some(password))
            .send()
            .unwrap()
    };
    for i in 0..10 {
        assert_eq!(attempt("wrong").status(), 401, "attempt {}", i + 1);
    }
    let blocked = attempt("wrong");
    assert_eq!(blocked.status(), 429);
    let wait: u64 = blocked.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(wait >= 1);
    // Even the right password is refused until the allowance refills.
    assert_eq!(attempt(OPERATOR.1).status(), 429);
}

#[test]
fn rust_log_takes_the_place_of_the_configured_level() {
    let dir = DataDir::new();
    // `log.level` says info; RUST_LOG asks for debug, which shows the probes.
    let server = Server::start(&dir, &[("RUST_LOG", "debug")]);
    server.client().get(server.url("/healthz")).send().unwrap();
    let log = server.settled_log();
    assert!(log.contains("/healthz"), "{log}");
    assert!(log.contains("DEBUG"), "{log}");
}
