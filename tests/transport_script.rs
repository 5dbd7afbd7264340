//! Scripting the simulated civil registry office over the operator API, as an integrator's tester
//! does: transient faults the engine retries, rejections for one report, lost acknowledgements,
//! latency, the received log paged and filtered, and the exact answers to bad scripts.

mod common;

use std::time::{Duration, Instant};

use common::*;
use reqwest::blocking::Response;
use serde_json::{json, Value};

const SCRIPT: &str = "/admin/api/v1/transports/xpersonenstand/script";
const RECEIVED: &str = "/admin/api/v1/transports/xpersonenstand/received";

/// Quick retries, so that scripted transient faults cost little time.
const QUICK_RETRIES: [(&str, &str); 2] = [
    ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "50"),
    ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "200"),
];

fn start() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &QUICK_RETRIES);
    (dir, server)
}

fn send(server: &Server, method: reqwest::Method, path: &str, body: Option<String>) -> Response {
    let mut request = server
        .client()
        .request(method, server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1));
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body);
    }
    request.send().unwrap()
}

/// Sends `body` and expects `status`; answers the JSON body.
fn expect(server: &Server, method: &str, path: &str, body: Option<Value>, status: u16) -> Value {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let response = send(server, method, path, body.map(|b| b.to_string()));
    assert_eq!(response.status(), status, "{path}");
    response.json().unwrap()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status_of(server: &Server, id: &str) -> Value {
    server
        .get_as(
            "klinik",
            &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
        )
        .json::<Value>()
        .unwrap()["status"]
        .clone()
}

#[test]
fn transient_faults_for_the_next_two_deliveries_are_retried_to_success() {
    let (_dir, server) = start();
    let script =
        json!({"rules": [{"kind": "transient", "message": "Wartungsfenster", "count": 2}]});
    let answer = expect(&server, "PUT", SCRIPT, Some(script), 200);
    assert_eq!(
        answer,
        json!({"rules": [{"kind": "transient", "message": "Wartungsfenster", "count": 2}],
               "transient_rate": 0.0})
    );

    let id = dispatch(&server, "klinik", &complete_notice("geb-transient"));
    server.wait_for_status("klinik", &id, "SUCCESS");

    // Both faults were answered to deliveries of this report (the only one), and the retry got
    // through: the office holds the report once, without a repeat submission.
    assert_eq!(
        expect(&server, "GET", SCRIPT, None, 200),
        json!({"rules": [], "transient_rate": 0.0})
    );
    let messages = received(&server, &id);
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["repeat_submissions"], 0);
    let log = server.log();
    assert_eq!(log.matches("scripted transient fault").count(), 2, "{log}");
    assert_eq!(log.matches("transient error; retrying later").count(), 2);
}

#[test]
fn a_timeout_and_a_reset_are_retried_like_any_transient_fault() {
    let (_dir, server) = start();
    expect(
        &server,
        "POST",
        &format!("{SCRIPT}/rules"),
        Some(json!({"kind": "reset", "count": 1})),
        200,
    );
    let answer = expect(
        &server,
        "POST",
        &format!("{SCRIPT}/rules"),
        Some(json!({"kind": "timeout", "after_ms": 100, "count": 1})),
        200,
    );
    assert_eq!(
        answer["rules"],
        json!([{"kind": "reset", "count": 1}, {"kind": "timeout", "after_ms": 100, "count": 1}])
    );
    let id = dispatch(&server, "klinik", &complete_notice("geb-flaky"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let log = server.log();
    assert!(log.contains("connection reset by peer (scripted)"), "{log}");
    assert!(log.contains("timeout after 100 ms (scripted)"), "{log}");
    assert_eq!(received(&server, &id).len(), 1);
}

#[test]
fn a_rejection_for_one_report_fails_it_with_that_reason_while_another_succeeds() {
    let (_dir, server) = start();
    let reason = "Standesamt: für den Geburtsort nicht zuständig";
    let rule = json!({"kind": "reject", "reason": reason, "module": "birthnotice",
                      "report_id": "geb-refused"});
    expect(&server, "POST", &format!("{SCRIPT}/rules"), Some(rule), 200);

    let refused = dispatch(&server, "klinik", &complete_notice("geb-refused"));
    let fine = dispatch(&server, "klinik", &complete_notice("geb-fine"));
    let result = server.wait_for_status("klinik", &refused, "FAILURE");
    assert_eq!(result["failureReason"], reason);
    server.wait_for_status("klinik", &fine, "SUCCESS");
    // Refused at the door: nothing recorded, like a refused signature.
    assert!(received(&server, &refused).is_empty());
    assert_eq!(received(&server, &fine).len(), 1);
}

#[test]
fn a_lost_acknowledgement_keeps_the_report_pending_until_the_script_is_reset() {
    let (_dir, server) = start();
    expect(
        &server,
        "POST",
        &format!("{SCRIPT}/rules"),
        Some(json!({"kind": "ack_lost", "count": 1})),
        200,
    );

    let lost = dispatch(&server, "klinik", &complete_notice("geb-lost"));
    wait_until("the office to receive it", || {
        received(&server, &lost).len() == 1
    });
    // A report sent later, acknowledged after the same delay, overtakes it.
    let later = dispatch(&server, "klinik", &complete_notice("geb-later"));
    server.wait_for_status("klinik", &later, "SUCCESS");
    assert_eq!(status_of(&server, &lost), "PENDING");
    assert_eq!(received(&server, &lost)[0]["outcome"], Value::Null);

    // The engine keeps fetching the inbox; once the script is reset, the acknowledgement comes.
    assert_eq!(
        expect(&server, "DELETE", SCRIPT, None, 200),
        json!({"rules": [], "transient_rate": 0.0})
    );
    server.wait_for_status("klinik", &lost, "SUCCESS");
}

#[test]
fn latency_for_one_report_lets_a_later_one_arrive_first() {
    let (_dir, server) = start();
    let rule = json!({"kind": "latency", "ms": 5000, "report_id": "geb-slow"});
    expect(&server, "POST", &format!("{SCRIPT}/rules"), Some(rule), 200);

    let slow = dispatch(&server, "klinik", &complete_notice("geb-slow"));
    let quick = dispatch(&server, "klinik", &complete_notice("geb-quick"));
    server.wait_for_status("klinik", &slow, "SUCCESS");
    server.wait_for_status("klinik", &quick, "SUCCESS");
    let (messages, _) = received_page(&server, RECEIVED);
    let order: Vec<&str> = messages
        .iter()
        .map(|m| m["report_id"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["geb-quick", "geb-slow"]);
}

#[test]
fn the_received_log_is_paged_and_filtered() {
    let (_dir, server) = start();
    let ids = ["geb-log-1", "geb-log-2", "geb-log-3"];
    for id in ids {
        dispatch(&server, "klinik", &complete_notice(id));
        // One at a time, so that the log's order is the order of dispatch.
        server.wait_for_status("klinik", id, "SUCCESS");
    }

    let (first, next) = received_page(&server, &format!("{RECEIVED}?limit=2"));
    let reports = |page: &[Value]| -> Vec<String> {
        page.iter()
            .map(|m| m["report_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(reports(&first), ["geb-log-1", "geb-log-2"]);
    assert_eq!(first[0]["seq"], 0);
    assert_eq!(next, Some(1));
    let (rest, next) = received_page(&server, &format!("{RECEIVED}?limit=2&after=1"));
    assert_eq!(reports(&rest), ["geb-log-3"]);
    assert_eq!(next, None);
    assert!(rest[0]["body"].is_string(), "bodies stay base64");

    let (one, next) = received_page(&server, &format!("{RECEIVED}?report=geb-log-2"));
    assert_eq!((reports(&one), next), (vec!["geb-log-2".to_owned()], None));
    let (none, _) = received_page(&server, &format!("{RECEIVED}?module=deathnotice"));
    assert!(none.is_empty());

    let since = first[1]["received_at"].as_str().unwrap().to_owned();
    let (later, _) = received_page(
        &server,
        &format!("{RECEIVED}?since={}", since.replace('+', "%2B")),
    );
    assert_eq!(reports(&later), ["geb-log-2", "geb-log-3"]);
    let (future, next) = received_page(&server, &format!("{RECEIVED}?since=2999-01-01T00:00:00Z"));
    assert_eq!((future.len(), next), (0, None));
}

#[test]
fn bad_scripts_and_queries_are_refused_with_every_problem() {
    let (_dir, server) = start();
    let bad = json!({"rules": [{"kind": "transient", "count": 0, "colour": "red"},
                               {"kind": "latency", "min_ms": 900, "max_ms": 100}],
                     "transient_rate": 1.5});
    assert_eq!(
        expect(&server, "PUT", SCRIPT, Some(bad), 400),
        json!({"errors": [
            "rules[0]: unknown field \"colour\"",
            "rules[0]: count must be an integer from 1 to 1000000",
            "rules[1]: min_ms must not exceed max_ms",
            "transient_rate must be a number from 0 to 1",
        ]})
    );
    assert_eq!(
        expect(
            &server,
            "POST",
            &format!("{SCRIPT}/rules"),
            Some(json!({"kind": "reject"})),
            400
        ),
        json!({"errors": ["reason is required for kind \"reject\""]})
    );
    assert_eq!(
        expect(
            &server,
            "POST",
            &format!("{SCRIPT}/rules"),
            Some(json!({"kind": "ack_delay", "delay_ms": 600001})),
            400
        ),
        json!({"errors": ["delay_ms must be an integer from 0 to 600000"]})
    );
    let response = send(
        &server,
        reqwest::Method::PUT,
        SCRIPT,
        Some("{\"rules\": [".into()),
    );
    assert_eq!(response.status(), 400);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({"errors": ["invalid JSON: EOF while parsing a list at line 1 column 11"]})
    );
    // Nothing of it took effect.
    assert_eq!(
        expect(&server, "GET", SCRIPT, None, 200),
        json!({"rules": [], "transient_rate": 0.0})
    );
    assert_eq!(
        expect(
            &server,
            "GET",
            "/admin/api/v1/transports/courtmail/script",
            None,
            404
        ),
        json!({"errors": ["no simulated transport named courtmail"]})
    );
    // Every operator route of the transports is generic over the name.
    for (method, path) in [
        ("GET", "/admin/api/v1/transports/courtmail/received"),
        ("DELETE", "/admin/api/v1/transports/courtmail/script"),
    ] {
        assert_eq!(
            expect(&server, method, path, None, 404),
            json!({"errors": ["no simulated transport named courtmail"]}),
            "{method} {path}"
        );
    }
    assert_eq!(
        expect(
            &server,
            "GET",
            &format!("{RECEIVED}?limit=0&since=yesterday&colour=red"),
            None,
            400
        ),
        json!({"errors": [
            "limit must be an integer from 1 to 1000",
            "since must be an RFC 3339 time such as 2026-11-20T10:15:00Z, not \"yesterday\"",
            "unknown query parameter \"colour\"",
        ]})
    );
}

#[test]
fn the_script_api_needs_operator_credentials() {
    let (_dir, server) = start();
    let calls = [
        (reqwest::Method::GET, SCRIPT.to_owned()),
        (reqwest::Method::PUT, SCRIPT.to_owned()),
        (reqwest::Method::DELETE, SCRIPT.to_owned()),
        (reqwest::Method::POST, format!("{SCRIPT}/rules")),
        (reqwest::Method::GET, format!("{RECEIVED}?limit=1")),
    ];
    for (method, path) in calls {
        let response = server
            .client()
            .request(method.clone(), server.url(&path))
            .header("Content-Type", "application/json")
            .body(r#"{"rules": [{"kind": "reset"}]}"#)
            .send()
            .unwrap();
        assert_eq!(response.status(), 401, "{method} {path}");
        assert_eq!(
            response.json::<Value>().unwrap(),
            json!({"errors": ["operator credentials required"]})
        );
    }
    assert_eq!(
        expect(&server, "GET", SCRIPT, None, 200),
        json!({"rules": [], "transient_rate": 0.0})
    );
}

#[test]
fn rules_are_bounded_and_refuse_control_characters() {
    let (_dir, server) = start();
    let rules = format!("{SCRIPT}/rules");
    let long_id = "x".repeat(100_000);
    for (rule, errors) in [
        (
            json!({"kind": "reset", "count": u64::MAX}),
            json!(["count must be an integer from 1 to 1000000"]),
        ),
        (
            json!({"kind": "reset", "count": 4_294_967_295_u64}),
            json!(["count must be an integer from 1 to 1000000"]),
        ),
        (
            json!({"kind": "reset", "count": 1_000_001}),
            json!(["count must be an integer from 1 to 1000000"]),
        ),
        (
            json!({"kind": "reject", "reason": "nein\u{0}\nStatus: ok"}),
            json!(["reason must not contain control characters"]),
        ),
        (
            json!({"kind": "transient", "message": "a\u{1b}[31m"}),
            json!(["message must not contain control characters"]),
        ),
        (
            json!({"kind": "reset", "report_id": long_id}),
            json!(["report_id must have 1 to 128 characters"]),
        ),
        (
            json!({"kind": "reset", "report_id": "geb\r\n1"}),
            json!(["report_id must not contain control characters"]),
        ),
        (
            json!({"kind": "reset", "module": "../../x"}),
            json!(["module must be a module's name: a lowercase letter, then up to 31 lowercase letters or digits"]),
        ),
        (
            json!({"kind": "reset", "module": "Birthnotice"}),
            json!(["module must be a module's name: a lowercase letter, then up to 31 lowercase letters or digits"]),
        ),
    ] {
        assert_eq!(
            expect(&server, "POST", &rules, Some(rule.clone()), 400),
            json!({ "errors": errors }),
            "{rule}"
        );
    }
    // The same rules inside a whole script, named by their place.
    assert_eq!(
        expect(
            &server,
            "PUT",
            SCRIPT,
            Some(json!({"rules": [{"kind": "ack_lost", "module": "../../x", "count": 1_000_001}]})),
            400
        ),
        json!({"errors": [
            "rules[0]: count must be an integer from 1 to 1000000",
            "rules[0]: module must be a module's name: a lowercase letter, then up to 31 lowercase letters or digits",
        ]})
    );
    assert_eq!(
        expect(&server, "GET", SCRIPT, None, 200),
        json!({"rules": [], "transient_rate": 0.0})
    );
    // The bounds themselves are fine.
    let fine = json!({"kind": "reject", "reason": "Ä ü – ok", "count": 1_000_000,
                      "module": "birthnotice", "report_id": "y".repeat(128)});
    assert_eq!(
        expect(&server, "POST", &rules, Some(fine.clone()), 200)["rules"][0],
        fine
    );
}
