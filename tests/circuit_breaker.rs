//! A dead authority opens the transport's circuit breaker: only the breaker's probes reach it
//! while it is down, no report fails for it, operators see the breaker, and once the authority
//! answers again the backlog drains.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const SCRIPT: &str = "/admin/api/v1/transports/xpersonenstand/script";

fn operator(server: &Server, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut request = server
        .client()
        .request(method, server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().unwrap();
    assert_eq!(response.status(), 200, "{path}");
    response.json().unwrap()
}

fn breaker(server: &Server) -> Value {
    let transports = operator(
        server,
        reqwest::Method::GET,
        "/admin/api/v1/transports",
        None,
    );
    transports
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "xpersonenstand")
        .cloned()
        .unwrap()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_dead_authority_opens_the_breaker_and_the_backlog_drains_on_recovery() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_ENGINE__BREAKER_FAILURES", "3"),
            ("MELDEWERK_ENGINE__BREAKER_OPEN_SECS", "2"),
            ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "20"),
            ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "50"),
            ("MELDEWERK_ENGINE__MAX_ATTEMPTS", "4"),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
        ],
    );
    assert_eq!(breaker(&server)["breaker"], "closed");
    // The office is down: every delivery answers a transient fault.
    let down = json!({"rules": [{"kind": "transient", "message": "Wartung", "count": 1000}]});
    operator(&server, reqwest::Method::PUT, SCRIPT, Some(down));

    let ids: Vec<String> = (0..6)
        .map(|i| dispatch(&server, "klinik", &complete_notice(&format!("geb-cb-{i}"))))
        .collect();
    wait_until("the breaker to open", || {
        breaker(&server)["breaker"] != "closed"
    });
    let opened = breaker(&server);
    assert!(opened["opened_at"].is_string(), "{opened}");
    assert_eq!(opened["last_error"], "Wartung");

    // While it is down, only probes reach the office: one per open period (2 s), not one per
    // report and retry. Watch two periods and count what the office was asked.
    let calls_then = breaker(&server)["calls"].as_u64().unwrap();
    std::thread::sleep(Duration::from_secs(5));
    let calls_later = breaker(&server)["calls"].as_u64().unwrap();
    assert!(
        calls_later - calls_then <= 3,
        "{} calls in 5 s with the breaker open",
        calls_later - calls_then
    );
    // With 4 attempts allowed, six reports would long have failed had every retry counted.
    for id in &ids {
        let report: Value = server
            .get_as(
                "klinik",
                &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
            )
            .json()
            .unwrap();
        assert_eq!(report["status"], "PENDING", "{id}");
    }
    let metrics = server.admin_get("/metrics").text().unwrap();
    assert!(
        metrics.contains(r#"meldewerk_transport_breaker_open{transport="xpersonenstand"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"meldewerk_delivery_retries_total{module="birthnotice"}"#),
        "{metrics}"
    );
    assert!(server.log().contains("circuit breaker opened"));

    // The office answers again: the next probe closes the breaker and the backlog drains.
    operator(&server, reqwest::Method::DELETE, SCRIPT, None);
    for id in &ids {
        server.wait_for_status("klinik", id, "SUCCESS");
        assert_eq!(received(&server, id).len(), 1, "{id} delivered once");
    }
    assert_eq!(breaker(&server)["breaker"], "closed");
}
