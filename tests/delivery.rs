//! Delivery guarantees, seen from outside: a report survives a kill at any point and reaches the
//! civil registry office exactly once; transport failures end in FAILURE with a reason;
//! retention turns old results into 410 report-expired; SIGTERM shuts down cleanly.

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn killed_after_delivery_before_acknowledgement_delivers_exactly_once() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let slow_ack = [("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "3000")];
    let mut server = Server::start(&dir, &slow_ack);
    let id = dispatch(&server, "klinik", &complete_notice("geb-kill-1"));
    wait_until("the office to receive the notice", || {
        received(&server, &id).len() == 1
    });
    assert_eq!(
        server
            .get_as(
                "klinik",
                &format!("/api/birthnotice/v1/reports/{id}?peek=true")
            )
            .json::<Value>()
            .unwrap()["status"],
        "PENDING"
    );

    server.kill();
    server.start_again();

    let result = server.wait_for_status("klinik", &id, "SUCCESS");
    assert!(result["receiptPdf"].is_string());
    let messages = received(&server, &id);
    assert_eq!(messages.len(), 1, "delivered exactly once: {messages:?}");
    assert_eq!(messages[0]["outcome"]["status"], "acknowledged");
}

#[test]
fn killed_right_after_dispatch_resumes_from_the_outbox() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    // Deliveries take a minute before the office records anything, so the kill lands while
    // every notice is only in the outbox.
    const LATENCY: &str = "MELDEWERK_TRANSPORTS__XPERSONENSTAND__LATENCY_MS";
    let slow = [
        (LATENCY, "60000"),
        ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "100"),
    ];
    let mut server = Server::start(&dir, &slow);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            dispatch(
                &server,
                "klinik",
                &complete_notice(&format!("geb-kill-2-{i}")),
            )
        })
        .collect();
    for id in &ids {
        assert_eq!(
            received(&server, id),
            Vec::<Value>::new(),
            "{id} before the kill"
        );
        let peek = server.get_as(
            "klinik",
            &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
        );
        assert_eq!(peek.json::<Value>().unwrap()["status"], "PENDING");
    }
    server.kill();
    // After the restart the office answers at once: only the outbox can bring the notices there.
    server.set_env(LATENCY, "0");
    server.start_again();
    for id in &ids {
        server.wait_for_status("klinik", id, "SUCCESS");
        assert_eq!(
            received(&server, id).len(),
            1,
            "{id} delivered exactly once"
        );
    }
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3);
}

#[test]
fn a_refused_notice_ends_in_failure_with_a_reason() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__FAILURE_RATE", "1.0")],
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-fail"));
    let result = server.wait_for_status("klinik", &id, "FAILURE");
    assert!(
        result["failureReason"]
            .as_str()
            .is_some_and(|r| !r.is_empty()),
        "{result}"
    );
    assert!(result["receiptPdf"].is_null());
    // A final FAILURE is consumed like a SUCCESS.
    assert_eq!(
        server
            .get_as("klinik", &format!("/api/birthnotice/v1/reports/{id}"))
            .status(),
        200
    );
    assert_eq!(
        server
            .get_as("klinik", &format!("/api/birthnotice/v1/reports/{id}"))
            .status(),
        410
    );
}

#[test]
fn retention_turns_results_into_report_expired() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_MODULES__BIRTHNOTICE__RETENTION_SECS", "1"),
            ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
        ],
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-old"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let path = format!("/api/birthnotice/v1/reports/{id}");
    let peek_path = format!("{path}?peek=true");
    wait_until("retention to remove the result", || {
        server.get_as("klinik", &peek_path).status() == 410
    });
    let body: Value = server.get_as("klinik", &path).json().unwrap();
    assert!(
        body["errors"][0].as_str().unwrap().contains("expired"),
        "{body}"
    );
    let peek: Value = server.get_as("klinik", &peek_path).json().unwrap();
    assert!(
        peek["errors"][0].as_str().unwrap().contains("expired"),
        "{peek}"
    );
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, serde_json::json!([]));
    // The payload is gone for operators too.
    assert_eq!(
        server
            .admin_get(&format!("/admin/api/v1/reports/birthnotice/{id}/message"))
            .status(),
        404
    );
}

#[test]
fn sigterm_stops_cleanly_and_keeps_everything() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    // The delivery takes a minute, longer than the one second of grace: SIGTERM lands while the
    // notice is only in the outbox, and the server must still stop cleanly.
    const LATENCY: &str = "MELDEWERK_TRANSPORTS__XPERSONENSTAND__LATENCY_MS";
    let mut server = Server::start(
        &dir,
        &[
            (LATENCY, "60000"),
            ("MELDEWERK_SHUTDOWN_GRACE_SECS", "1"),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "100"),
        ],
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-term"));
    assert_eq!(
        received(&server, &id),
        Vec::<Value>::new(),
        "before SIGTERM"
    );
    assert!(server.terminate(), "exit status after SIGTERM");
    let log = server.log();
    assert!(log.contains("meldewerk stopped"), "{log}");
    // Every database (the store, unless it is PostgreSQL's, and the journals of the simulators
    // running in the process) is checkpointed once let go of, even with a delivery cut off by
    // the grace time, so that the next start replays no log.
    let journals: usize = meldewerk_transports::TRANSPORTS
        .iter()
        .map(|kind| kind.journals.len())
        .sum();
    let databases = usize::from(dir.sled()) + journals;
    assert_eq!(
        log.matches("checkpoint written").count(),
        databases,
        "{log}"
    );
    assert!(!log.contains("no checkpoint"), "{log}");
    server.set_env(LATENCY, "0");
    server.start_again();
    server.wait_for_status("klinik", &id, "SUCCESS");
    assert_eq!(received(&server, &id).len(), 1);
}

#[test]
fn operators_see_actor_health() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    assert_eq!(
        server
            .client()
            .get(server.url("/admin/api/v1/actors"))
            .send()
            .unwrap()
            .status(),
        401
    );
    let actors: Vec<Value> = server.admin_get("/admin/api/v1/actors").json().unwrap();
    let names: Vec<&str> = actors.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"module:birthnotice"), "{names:?}");
    assert!(
        actors
            .iter()
            .all(|a| a["state"] == "running" && a["restarts"] == 0),
        "{actors:?}"
    );
}

/// Repeat submissions the office has answered, over every message it holds.
fn repeats_at_the_office(server: &Server) -> u64 {
    let (messages, _) = received_page(
        server,
        "/admin/api/v1/transports/xpersonenstand/received?limit=1000",
    );
    messages
        .iter()
        .map(|m| m["repeat_submissions"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_new_report_does_not_queue_behind_overdue_acknowledgements() {
    // The office never decides and takes 200 ms per call; every acknowledgement is overdue after
    // a second, so 40 waiting reports are delivered again and again, two at a time (half of the
    // four slots). A new report takes one of the other two at once.
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[
            (
                "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS",
                "86400000",
            ),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__LATENCY_MS", "200"),
            ("MELDEWERK_ENGINE__ACK_TIMEOUT_SECS", "1"),
            ("MELDEWERK_ENGINE__MAX_IN_FLIGHT", "4"),
        ],
    );
    let waiting: Vec<String> = (0..40)
        .map(|i| {
            dispatch(
                &server,
                "klinik",
                &complete_notice(&format!("geb-wartet-{i}")),
            )
        })
        .collect();
    wait_until("the office to receive the 40 notices", || {
        waiting.iter().all(|id| !received(&server, id).is_empty())
    });
    wait_until("redeliveries to be under way", || {
        repeats_at_the_office(&server) >= 4
    });

    let before = repeats_at_the_office(&server);
    let id = dispatch(&server, "klinik", &complete_notice("geb-neu"));
    wait_until("the office to receive the new notice", || {
        !received(&server, &id).is_empty()
    });
    // Behind the overdue ones it would have waited for some 40 redeliveries; beside them it
    // waits for its own call only (and the calls in flight as it came).
    let meanwhile = repeats_at_the_office(&server) - before;
    assert!(
        meanwhile <= 8,
        "{meanwhile} redeliveries went ahead of the new report"
    );
}
