//! The authority as its own process, reached over HTTP (`transports.xpersonenstand.url`): the
//! simulator run by `meldewerk simulate`, killed mid-delivery and started again, and a mock
//! authority written in Python from the documented protocol alone.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::remote::Peer;
use common::*;
use serde_json::{json, Value};

const URL: &str = "MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL";

/// Quick retries and a breaker that probes again quickly, so that an outage of a few seconds
/// costs a few seconds. Attempts stay as configured by default: an outage must fail no report.
const PATIENT: [(&str, &str); 3] = [
    ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "50"),
    ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "300"),
    ("MELDEWERK_ENGINE__BREAKER_OPEN_SECS", "1"),
];

fn service(dir: &DataDir, url: &str, env: &[(&str, &str)]) -> Server {
    let mut all: Vec<(&str, &str)> = PATIENT.to_vec();
    all.push((URL, url));
    all.extend_from_slice(env);
    Server::start(dir, &all)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn peek(server: &Server, id: &str) -> Value {
    let response = server.get_as(
        "klinik",
        &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
    );
    assert_eq!(response.status(), 200, "{id}");
    response.json().unwrap()
}

fn receipt(report: &Value) -> Vec<u8> {
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(report["receiptPdf"].as_str().expect("receiptPdf"))
        .unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "{report}");
    pdf
}

/// What the simulator process received for a report (its own `/received`, no credentials).
fn received_by(simulator: &Peer, id: &str) -> Vec<Value> {
    let response = simulator
        .client()
        .get(simulator.url(&format!("/received?report={id}")))
        .send()
        .unwrap();
    assert_eq!(response.status(), 200);
    let page: Value = response.json().unwrap();
    page["messages"].as_array().unwrap().clone()
}

/// Appends a rule to the simulator process's script (`/script/rules`, as the operator API's).
fn rule(simulator: &Peer, rule: Value) {
    let response = simulator
        .client()
        .post(simulator.url("/script/rules"))
        .json(&rule)
        .send()
        .unwrap();
    assert_eq!(response.status(), 200, "{rule}");
}

/// The `xpersonenstand` entry of the operator's transport health.
fn transport_health(server: &Server) -> Value {
    let transports: Value = server.admin_get("/admin/api/v1/transports").json().unwrap();
    transports
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "xpersonenstand")
        .cloned()
        .expect("xpersonenstand in the transport health")
}

#[test]
fn reports_travel_through_a_simulator_process() {
    let sim_dir = DataDir::new();
    let mut simulator = Peer::simulator(sim_dir.path(), &[]);
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = service(&dir, &simulator.base, &[]);

    let ids = ["geb-remote-1", "geb-remote-2"];
    for id in ids {
        dispatch(&server, "klinik", &complete_notice(id));
    }
    for id in ids {
        let report = server.wait_for_status("klinik", id, "SUCCESS");
        assert_eq!(report["portal"], "meldewerk-sim-xpersonenstand");
        let text = checked_receipt_text(&receipt(&report));
        assert!(text.contains(id), "{text}");
        let received = received_by(&simulator, id);
        assert_eq!(received.len(), 1, "{id}: {received:?}");
        assert_eq!(received[0]["module"], "birthnotice");
        assert_eq!(received[0]["repeat_submissions"], 0);
        assert_eq!(received[0]["outcome"]["status"], "acknowledged");
    }
    // The transport keeps its channel's name, whichever way the office is reached.
    let health = transport_health(&server);
    assert_eq!(health["breaker"], "closed", "{health}");

    // The service has no simulator of its own to script or read: it says where the one is.
    for (path, there) in [
        ("/admin/api/v1/transports/xpersonenstand/script", "/script"),
        (
            "/admin/api/v1/transports/xpersonenstand/received",
            "/received",
        ),
    ] {
        let response = server.admin_get(path);
        assert_eq!(response.status(), 409, "{path}");
        let body: Value = response.json().unwrap();
        let message = body["errors"][0].as_str().unwrap();
        assert!(
            message.contains(&format!("runs as its own process at {}", simulator.base))
                && message.contains(&simulator.url(there)),
            "{message}"
        );
    }

    // SIGTERM stops the simulator cleanly.
    assert!(simulator.terminate(), "{}", simulator.log());
    assert!(simulator.log().contains("simulator stopped"));
}

#[test]
fn a_simulator_killed_mid_delivery_loses_nothing() {
    let sim_dir = DataDir::new();
    let mut simulator = Peer::simulator(sim_dir.path(), &[]);
    let dir = DataDir::new();
    dir.add_user("klinik");
    // Accepted messages waiting for their acknowledgement are delivered again after 2 s: the
    // resends meet the office before and after its restart, and must stay repeats.
    let server = service(
        &dir,
        &simulator.base,
        &[("MELDEWERK_ENGINE__ACK_TIMEOUT_SECS", "2")],
    );

    // One report the office accepted and has not decided yet when it dies.
    rule(
        &simulator,
        json!({"kind": "ack_lost", "report_id": "geb-kill-0"}),
    );
    dispatch(&server, "klinik", &complete_notice("geb-kill-0"));
    wait_until("the office to accept geb-kill-0", || {
        received_by(&simulator, "geb-kill-0").len() == 1
    });
    // Three deliveries held in flight by the office when it dies.
    rule(&simulator, json!({"kind": "latency", "ms": 60000}));
    let in_flight = ["geb-kill-1", "geb-kill-2", "geb-kill-3"];
    for id in in_flight {
        dispatch(&server, "klinik", &complete_notice(id));
    }
    wait_until("the deliveries to be in flight", || {
        let log = simulator.log();
        in_flight.iter().all(|id| {
            log.lines()
                .any(|line| line.contains("delivery arrived") && line.contains(id))
        })
    });

    simulator.kill();

    // The service keeps answering; nothing is decided while the office is away.
    let all = ["geb-kill-0", "geb-kill-1", "geb-kill-2", "geb-kill-3"];
    for id in all {
        assert_eq!(peek(&server, id)["status"], "PENDING", "{id}");
    }
    assert_eq!(
        server
            .client()
            .get(server.url("/healthz"))
            .send()
            .unwrap()
            .status(),
        200
    );
    wait_until("the transport to report the outage", || {
        transport_health(&server)["last_error"]
            .as_str()
            .is_some_and(|e| e.contains(&simulator.base))
    });

    // Back on the same journal and port (its script is gone with the process).
    simulator.start_again();
    for id in all {
        let report = server.wait_for_status("klinik", id, "SUCCESS");
        receipt(&report);
        let received = received_by(&simulator, id);
        assert_eq!(received.len(), 1, "{id} received once: {received:?}");
    }
    assert_eq!(
        transport_health(&server)["breaker"],
        "closed",
        "{}",
        server.log()
    );
}

/// Deliveries the Python mock was sent, by report id: (attempts, accepted).
fn mock_deliveries(mock: &Peer) -> Vec<Value> {
    let response = mock.client().get(mock.url("/deliveries")).send().unwrap();
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

fn attempts(mock: &Peer, id: &str) -> u64 {
    mock_deliveries(mock)
        .iter()
        .find(|d| d["report_id"] == id)
        .map_or(0, |d| d["attempts"].as_u64().unwrap())
}

#[test]
fn a_python_mock_speaking_the_protocol_decides_the_reports() {
    let mock_dir = DataDir::new();
    let mock = Peer::python_mock(mock_dir.path(), "127.0.0.1:0");
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = service(&dir, &mock.base, &[]);

    let ids = [
        "geb-mock-ok",
        "geb-mock-final",
        "geb-mock-refuse",
        "geb-mock-flaky",
    ];
    for id in ids {
        dispatch(&server, "klinik", &complete_notice(id));
    }

    // Acknowledged with the mock's own receipt.
    let ok = server.wait_for_status("klinik", "geb-mock-ok", "SUCCESS");
    assert_eq!(ok["portal"], "python-mock-standesamt");
    let text = checked_receipt_text(&receipt(&ok));
    assert!(
        text.contains("Empfangsbestaetigung(Mock)geb-mock-ok"),
        "{text}"
    );

    // 422 at delivery: a final rejection, the mock's reason word for word, no retry.
    let final_ = server.wait_for_status("klinik", "geb-mock-final", "FAILURE");
    assert_eq!(final_["failureReason"], "Mock-Standesamt: nicht zuständig");
    assert_eq!(attempts(&mock, "geb-mock-final"), 1);

    // Accepted, then refused in the acknowledgement.
    let refused = server.wait_for_status("klinik", "geb-mock-refuse", "FAILURE");
    assert_eq!(
        refused["failureReason"],
        "Mock-Standesamt: Angaben unvollständig"
    );

    // 503 is transient: retried, then acknowledged.
    server.wait_for_status("klinik", "geb-mock-flaky", "SUCCESS");
    assert_eq!(attempts(&mock, "geb-mock-flaky"), 2);
    assert_eq!(attempts(&mock, "geb-mock-ok"), 1);
}

#[test]
fn a_python_mock_deciding_at_once_ends_the_reports_with_its_answer() {
    let mock_dir = DataDir::new();
    let mock = Peer::python_mock_with(mock_dir.path(), "127.0.0.1:0", &["--decide-at-once"]);
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = service(&dir, &mock.base, &[]);

    let ids = [
        "geb-now-ok",
        "geb-now-final",
        "geb-now-refuse",
        "geb-now-flaky",
    ];
    for id in ids {
        dispatch(&server, "klinik", &complete_notice(id));
    }

    // The receipt came in the answer to the delivery, with its media type.
    let ok = server.wait_for_status("klinik", "geb-now-ok", "SUCCESS");
    assert_eq!(ok["portal"], "python-mock-standesamt");
    let text = checked_receipt_text(&receipt(&ok));
    assert!(
        text.contains("Empfangsbestaetigung(Mock)geb-now-ok"),
        "{text}"
    );

    // A refusal in the answer, and a 422: both end the report at once, no retry.
    let refused = server.wait_for_status("klinik", "geb-now-refuse", "FAILURE");
    assert_eq!(
        refused["failureReason"],
        "Mock-Standesamt: Angaben unvollständig"
    );
    let final_ = server.wait_for_status("klinik", "geb-now-final", "FAILURE");
    assert_eq!(final_["failureReason"], "Mock-Standesamt: nicht zuständig");

    // A transient fault first, then the decision.
    server.wait_for_status("klinik", "geb-now-flaky", "SUCCESS");
    assert_eq!(attempts(&mock, "geb-now-flaky"), 2);
    for id in ["geb-now-ok", "geb-now-refuse", "geb-now-final"] {
        assert_eq!(attempts(&mock, id), 1, "{id} delivered once");
    }
}

#[test]
fn an_authority_that_refuses_connections_is_retried_until_it_answers() {
    // A port nobody listens on (yet).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = service(&dir, &format!("http://{listen}"), &[]);

    dispatch(&server, "klinik", &complete_notice("geb-mock-late"));
    wait_until("the refused connection to show", || {
        transport_health(&server)["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("Connection refused"))
    });
    assert_eq!(peek(&server, "geb-mock-late")["status"], "PENDING");

    let mock_dir = DataDir::new();
    let mock = Peer::python_mock(mock_dir.path(), &listen);
    server.wait_for_status("klinik", "geb-mock-late", "SUCCESS");
    assert!(attempts(&mock, "geb-mock-late") >= 1);
}

/// Runs `meldewerk` with `args` and `env`; answers (success, stderr).
fn meldewerk(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let dir = DataDir::new();
    let mut command = Command::new(binary());
    command
        .arg("--data-dir")
        .arg(dir.path())
        .args(args)
        .env_remove("MELDEWERK_DATA_DIR");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_urls_misspelt_keys_and_unknown_simulators_are_refused_at_start() {
    let serve = ["serve", "--listen", "127.0.0.1:0"];
    let (ok, err) = meldewerk(&serve, &[(URL, "127.0.0.1:9001")]);
    assert!(!ok);
    assert!(
        err.contains("transports.xpersonenstand.url: \"127.0.0.1:9001\" is not an absolute url"),
        "{err}"
    );
    let (ok, err) = meldewerk(&serve, &[(URL, "ftp://127.0.0.1:9001")]);
    assert!(!ok);
    assert!(err.contains("must start with http:// or https://"), "{err}");
    let (ok, err) = meldewerk(
        &serve,
        &[(
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ULR",
            "http://127.0.0.1:9001",
        )],
    );
    assert!(!ok);
    assert!(
        err.contains("transports.xpersonenstand: unknown key \"ulr\" (known: url, "),
        "{err}"
    );

    let (ok, err) = meldewerk(&["simulate", "standesamt"], &[]);
    assert!(!ok);
    assert!(
        err.contains("invalid value 'standesamt'") && err.contains("xpersonenstand"),
        "{err}"
    );
}

/// `GET /script` of `simulator` with `Host: host`.
fn script_for_host(simulator: &Peer, host: &str) -> common::raw::RawAnswer {
    common::raw::exchange(
        &simulator.base,
        &format!("GET /script HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

#[test]
fn the_simulator_answers_only_the_host_names_it_knows() {
    let dir = DataDir::new();
    let simulator = Peer::simulator(
        dir.path(),
        &[(
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ALLOWED_HOSTS",
            "sim.internal,Sim2.Internal",
        )],
    );
    let port = simulator.base.rsplit_once(':').unwrap().1.to_owned();
    // What a page would send after its own name was rebound to 127.0.0.1.
    for host in [
        format!("rebind.example:{port}"),
        "127.0.0.1.rebind.example".into(),
    ] {
        let answer = script_for_host(&simulator, &host);
        assert_eq!(answer.status, 421, "{host}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(
            answer.json(),
            json!({"error": format!(
                "this simulator does not answer for host {host}; add the name to allowed_hosts"
            )})
        );
    }
    let without_host = common::raw::exchange(
        &simulator.base,
        "GET /script HTTP/1.0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(without_host.status, 421);
    assert_eq!(
        without_host.json(),
        json!({"error": "this simulator does not answer for host (none); add the name to allowed_hosts"})
    );
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        "sim.internal".into(),
        "sim2.internal:80".into(),
    ] {
        let answer = script_for_host(&simulator, &host);
        assert_eq!(answer.status, 200, "{host}: {answer:?}");
        assert_eq!(answer.json(), json!({"rules": [], "transient_rate": 0.0}));
    }
}

#[test]
fn the_simulator_cuts_off_a_body_that_trickles_in() {
    let dir = DataDir::new();
    let simulator = Peer::simulator(dir.path(), &[("MELDEWERK_BODY_TIMEOUT_SECS", "2")]);
    let head = "POST /deliveries HTTP/1.1\r\nHost: localhost\r\n\
                Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n";
    let (answer, closed) = common::raw::trickle(&simulator.base, head);
    assert_eq!(answer.status, 408);
    assert_eq!(
        answer.json(),
        json!({"error": "the request body did not arrive within 2 seconds"})
    );
    assert!(closed, "the connection stays open");
}
