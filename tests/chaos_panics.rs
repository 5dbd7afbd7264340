//! Supervision seen from outside: the simulated office panics inside the service's transport call
//! again and again (the script's `panic` kind) while reports come in. The API answers throughout,
//! the module actor restarts, and no report is lost: every one ends SUCCESS and reaches the office
//! exactly once. A report fails only once its panics use up `engine.max_attempts`, with the panic
//! as its reason.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const SCRIPT: &str = "/admin/api/v1/transports/xpersonenstand/script";

/// Reports dispatched while the office panics.
const REPORTS: usize = 40;
/// Panics injected, one rule of count 1 after every other report.
const PANICS: usize = REPORTS / 2;

fn push_rule(server: &Server, rule: Value) {
    let response = server
        .client()
        .post(server.url(&format!("{SCRIPT}/rules")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&rule)
        .send()
        .unwrap();
    assert_eq!(response.status(), 200, "{rule}");
}

fn script(server: &Server) -> Value {
    let response = server.admin_get(SCRIPT);
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

fn module_actor(server: &Server) -> Value {
    let actors: Vec<Value> = server.admin_get("/admin/api/v1/actors").json().unwrap();
    actors
        .into_iter()
        .find(|a| a["name"] == "module:birthnotice")
        .expect("module actor listed")
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Quick retries, and restarts that never count as too many: the actor must keep working at full
/// speed through every panic instead of pausing as a degraded actor does.
fn start(max_attempts: &str) -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "10"),
            ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "100"),
            ("MELDEWERK_ENGINE__MAX_RESTARTS", "100000"),
            ("MELDEWERK_ENGINE__MAX_ATTEMPTS", max_attempts),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
        ],
    );
    (dir, server)
}

#[test]
fn panics_in_a_loop_lose_no_report_and_the_api_answers_throughout() {
    // A panic restarts the module actor, and the restart interrupts every delivery in flight at
    // that moment; each interruption costs that report one counted attempt. With more attempts
    // than panics, no report can run out of attempts whichever deliveries the panics hit.
    let max_attempts = (PANICS + 2).to_string();
    let (_dir, server) = start(&max_attempts);

    let done = AtomicBool::new(false);
    let answered = AtomicUsize::new(0);
    let ids: Vec<String> = std::thread::scope(|scope| {
        // An integrator keeps using the API while the engine panics: liveness and memento
        // creation answer every time.
        let poller = scope.spawn(|| {
            let mut n = 0;
            while !done.load(Ordering::SeqCst) {
                let health = server.client().get(server.url("/healthz")).send().unwrap();
                assert_eq!(health.status(), 200, "/healthz during the panics");
                let notice = complete_notice(&format!("geb-chaos-poll-{n}"));
                let memento = server.memento("klinik", &notice);
                assert_eq!(memento.status(), 200, "memento during the panics");
                let body: Value = memento.json().unwrap();
                assert!(body["magicLink"].is_string(), "{body}");
                n += 1;
                answered.store(n, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(10));
            }
        });

        let mut ids = Vec::new();
        for i in 0..REPORTS {
            if i % 2 == 1 {
                let message = format!("Fehler im Adapter #{i}");
                push_rule(
                    &server,
                    json!({"kind": "panic", "count": 1, "message": message}),
                );
            }
            ids.push(dispatch(
                &server,
                "klinik",
                &complete_notice(&format!("geb-chaos-{i}")),
            ));
        }
        for id in &ids {
            server.wait_for_status("klinik", id, "SUCCESS");
        }
        done.store(true, Ordering::SeqCst);
        poller.join().expect("the API answered throughout");
        ids
    });
    assert!(answered.load(Ordering::SeqCst) > 0, "the poller ran");

    // Every rule was used up: each panic hit a delivery (a retry takes the next rule if no new
    // report comes), and still every report arrived exactly once.
    assert_eq!(script(&server)["rules"], json!([]));
    for id in &ids {
        let messages = received(&server, id);
        assert_eq!(messages.len(), 1, "{id} received once: {messages:?}");
        assert_eq!(messages[0]["outcome"]["status"], "acknowledged", "{id}");
    }
    let (all, _) = received_page(
        &server,
        "/admin/api/v1/transports/xpersonenstand/received?limit=1000",
    );
    assert_eq!(all.len(), REPORTS, "nothing else reached the office");

    let actor = module_actor(&server);
    let restarts = actor["restarts"].as_u64().unwrap();
    assert!((1..=PANICS as u64).contains(&restarts), "{actor}");
    assert!(
        actor["last_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("panic: Fehler im Adapter #")),
        "{actor}"
    );
    assert_eq!(actor["failed"], 0, "{actor}");
    wait_until("the actor to read as running", || {
        module_actor(&server)["state"] == "running"
    });
    // Each rule made one real panic; two panics can share a restart.
    let log = server.log();
    assert_eq!(
        log.matches("simulated Standesamt: scripted panic").count(),
        PANICS,
        "{log}"
    );
    assert!(log.contains("actor panicked; restarting it"), "{log}");
}

#[test]
fn fewer_panics_than_attempts_never_fail_a_report_and_as_many_fail_it_with_the_panic() {
    let (_dir, server) = start("3");
    let rule = |report: &str, count: u32| json!({"kind": "panic", "count": count, "report_id": report, "message": "Adapter kaputt"});

    // Two panics and a third attempt that gets through.
    push_rule(&server, rule("geb-panic-2", 2));
    let survivor = dispatch(&server, "klinik", &complete_notice("geb-panic-2"));
    server.wait_for_status("klinik", &survivor, "SUCCESS");
    let messages = received(&server, &survivor);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(
        messages[0]["repeat_submissions"], 0,
        "panics record nothing"
    );

    // Three panics use up the three attempts: FAILURE, and the panic is the reason.
    push_rule(&server, rule("geb-panic-3", 3));
    let failed = dispatch(&server, "klinik", &complete_notice("geb-panic-3"));
    let result = server.wait_for_status("klinik", &failed, "FAILURE");
    assert_eq!(
        result["failureReason"],
        "delivery failed after 3 attempts: panic: Adapter kaputt"
    );
    assert!(received(&server, &failed).is_empty(), "nothing recorded");
    assert_eq!(script(&server)["rules"], json!([]));

    let actor = module_actor(&server);
    assert_eq!(actor["restarts"], 5, "{actor}");
    assert_eq!(actor["last_error"], "panic: Adapter kaputt", "{actor}");
}
