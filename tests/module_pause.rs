//! An operator pauses a module's deliveries and resumes them: submissions still land, nothing
//! reaches the authority while paused, other modules go on, and everything is delivered after,
//! as it was built and signed at dispatch.

mod common;

use common::*;
use serde_json::{json, Value};

fn actor(server: &Server, name: &str) -> Value {
    let actors: Vec<Value> = server.admin_get("/admin/api/v1/actors").json().unwrap();
    actors.into_iter().find(|a| a["name"] == name).unwrap()
}

#[test]
fn a_paused_module_keeps_its_reports_until_resumed() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "100")],
    );
    let paused = server.admin_post("/admin/api/v1/modules/birthnotice/pause");
    assert_eq!(paused.status(), 200);
    assert_eq!(
        paused.json::<Value>().unwrap(),
        json!({"module": "birthnotice", "paused": true})
    );
    assert_eq!(actor(&server, "module:birthnotice")["paused"], true);
    assert_eq!(actor(&server, "module:deathnotice")["paused"], false);

    // The form still takes the notice.
    dispatch(&server, "klinik", &complete_notice("geb-paused"));
    // Another module is delivered meanwhile, so the engine has scanned past the paused job.
    let body = json!({
        "id": "gd-running",
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "vorgangsidentifikation": {"ereignis": {"zeitpunkt": "2026-11-20T10:30:00+01:00", "zeichen": "E"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "10:15"},
        "kind": {"geschlecht": "w", "name": {"familienname": {"name": "M"}, "vornamen": {"name": "L"}}},
        "mutter": {"namen": {"vornamen": "A", "familienname": "M"}, "geburt": {"tag": "1990-04-01"},
                   "geschlecht": "w", "staatsangehoerigkeit": {"code": "000"}},
        "kontaktdaten": [{"kanal": "01", "kennung": "a@example.org"}],
        "auftragsnummer": "EG-1"
    });
    dispatch_in(&server, "birthdata", "klinik", &body);
    server.wait_for_status_in("birthdata", "klinik", "gd-running", "SUCCESS");

    let waiting = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-paused?peek=true");
    assert_eq!(waiting.json::<Value>().unwrap()["status"], "PENDING");
    assert!(
        received(&server, "geb-paused").is_empty(),
        "delivered while paused"
    );
    // Its message was built and signed at dispatch and waits with it; nothing was attempted.
    let message_path = "/admin/api/v1/reports/birthnotice/geb-paused/message";
    let message = server.admin_get(message_path);
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "end-user");
    let sha = message.headers()["x-message-sha256"].clone();
    assert!(message.text().unwrap().contains("portal2StA.Geburt.081020"));
    // A seal deposited now changes nothing of the report already sent.
    let sealed = server
        .client()
        .post(server.url("/admin/api/v1/users/klinik/seal"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .send()
        .unwrap();
    assert_eq!(sealed.status(), 201);
    let jobs: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
    let job = &jobs["jobs"][0];
    assert_eq!(
        (&job["report"], &job["waitingFor"], &job["attempts"]),
        (&json!("geb-paused"), &json!("deliver"), &json!(0)),
        "{jobs}"
    );

    let resumed = server.admin_post("/admin/api/v1/modules/birthnotice/resume");
    assert_eq!(resumed.status(), 200);
    assert_eq!(resumed.json::<Value>().unwrap()["paused"], false);
    server.wait_for_status("klinik", "geb-paused", "SUCCESS");
    assert_eq!(received(&server, "geb-paused").len(), 1);
    let delivered = server.admin_get(message_path);
    assert_eq!(delivered.headers()["x-signature-kind"], "end-user");
    assert_eq!(
        delivered.headers()["x-message-sha256"],
        sha,
        "the bytes of the dispatch"
    );
}

#[test]
fn pausing_needs_an_operator_and_a_known_module() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let anonymous = server
        .client()
        .post(server.url("/admin/api/v1/modules/birthnotice/pause"))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let unknown = server.admin_post("/admin/api/v1/modules/nosuchmodule/pause");
    assert_eq!(unknown.status(), 404);
    assert_eq!(
        unknown.json::<Value>().unwrap(),
        json!({"errors": ["no module nosuchmodule"]})
    );
    // Pausing twice and resuming twice are harmless.
    for _ in 0..2 {
        assert_eq!(
            server
                .admin_post("/admin/api/v1/modules/birthdata/pause")
                .status(),
            200
        );
    }
    for _ in 0..2 {
        assert_eq!(
            server
                .admin_post("/admin/api/v1/modules/birthdata/resume")
                .status(),
            200
        );
    }
}
