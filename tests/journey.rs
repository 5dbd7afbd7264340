//! The whole birth-notice journey against the real server: memento → magic link → form →
//! submit → PENDING → SUCCESS → consume → 410, with the delivered XML and the receipt checked by
//! outside tools.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::Value;

#[test]
fn full_journey_from_memento_to_consumed_result() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "3000")],
    );

    // Before dispatch the report does not exist.
    let before = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-1?peek=true");
    assert_eq!(before.status(), 404);

    let notice = complete_notice("geb-1");
    let response = server.memento("klinik", &notice);
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    let memento = body["memento"].as_str().unwrap();
    let link = body["magicLink"].as_str().unwrap();
    assert!(link.starts_with("/mtl/"), "{link}");
    assert!(
        memento.len() >= 100 && memento.len() <= 2000,
        "memento length {}",
        memento.len()
    );
    assert!(memento
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    // Creating a memento submits nothing.
    assert_eq!(
        server
            .get_as("klinik", "/api/birthnotice/v1/reports")
            .json::<Value>()
            .unwrap(),
        serde_json::json!([])
    );

    // The magic link alone opens the pre-filled form.
    let browser = Browser::new();
    let mut form = browser.open_magic_link(&server, link);
    assert_eq!(form.status, 200);
    assert_eq!(form.get("nameEinrichtung"), Some("Klinikum Süd"));
    assert_eq!(
        form.get("mutter.standard.name.familienname"),
        Some("Muster")
    );
    assert_eq!(form.get("kind.geschlecht"), Some("WEIBLICH"));
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    let submitted = browser.submit(&server, &form);
    assert_eq!(submitted.status(), 303);

    // Dispatched: PENDING, listed, and a read of a pending report does not consume it.
    let pending = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-1");
    assert_eq!(pending.status(), 200);
    let pending: Value = pending.json().unwrap();
    // The office acknowledges only after 3 s, so this read, right after the dispatch, sees the
    // report before its result.
    assert_eq!(pending["status"], "PENDING", "{pending}");
    assert!(pending["receiptPdf"].is_null() && pending["failureReason"].is_null());
    assert!(pending["portal"].is_null(), "{pending}");
    assert_eq!(pending["module"], "birthnotice");
    assert_eq!(pending["clientReference"], "KIS-geb-1");
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, serde_json::json!(["geb-1"]));

    let success = server.wait_for_status("klinik", "geb-1", "SUCCESS");
    assert_eq!(success["portal"], "meldewerk-sim-xpersonenstand");
    assert!(success["failureReason"].is_null());
    // peek keeps it listed and readable
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, serde_json::json!(["geb-1"]));

    // The receipt is a sound PDF naming the report, the message UUID and the XML's SHA-256.
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(success["receiptPdf"].as_str().unwrap())
        .unwrap();
    let text = checked_receipt_text(&pdf);

    // The delivered message is valid xPersonenstand 26.11 and matches the receipt.
    let message = server.admin_get("/admin/api/v1/reports/birthnotice/geb-1/message");
    assert_eq!(message.status(), 200);
    let uuid = message.headers()["x-message-uuid"]
        .to_str()
        .unwrap()
        .to_string();
    let sha = message.headers()["x-message-sha256"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(message.headers()["x-signature-kind"], "end-user");
    let xml = message.bytes().unwrap();
    xmllint_xpersonenstand(&xml).expect("delivered XML is schema-valid");
    let xml_text = String::from_utf8(xml.to_vec()).unwrap();
    assert!(xml_text.contains("portal2StA.Geburt.081020") && xml_text.contains("Klinikum Süd"));
    assert!(xml_text.contains(&uuid));
    assert!(text.contains("geb-1"), "{text}");
    assert!(text.contains(&uuid), "{text}");
    assert!(text.contains(&sha), "{text}");

    // Consume: 200 once, then 410; it leaves the pending list.
    let consumed = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-1");
    assert_eq!(consumed.status(), 200);
    assert_eq!(consumed.json::<Value>().unwrap()["status"], "SUCCESS");
    let again = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-1");
    assert_eq!(again.status(), 410);
    let body: Value = again.json().unwrap();
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .contains("already retrieved"),
        "{body}"
    );
    let peek_again = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-1?peek=true");
    assert_eq!(peek_again.status(), 410);
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, serde_json::json!([]));
}

#[test]
fn state_survives_a_restart() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let mut server = Server::start(&dir, &[]);
    let id = dispatch(&server, "klinik", &complete_notice("geb-restart"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    // an old magic link keeps working across a restart (keys are in the data directory)
    let link = magic_link(&server, "klinik", &complete_notice("geb-later"));

    server.restart();

    let body = server.wait_for_status("klinik", &id, "SUCCESS");
    assert_eq!(body["clientReference"], "KIS-geb-restart");
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, serde_json::json!(["geb-restart"]));
    let form = Browser::new().open_magic_link(&server, &link);
    assert_eq!(form.status, 200);
}

#[test]
fn two_concurrent_consumers_get_one_result() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    for round in 0..3 {
        let id = dispatch(
            &server,
            "klinik",
            &complete_notice(&format!("geb-race-{round}")),
        );
        server.wait_for_status("klinik", &id, "SUCCESS");
        let statuses: Vec<u16> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let path = format!("/api/birthnotice/v1/reports/{id}");
                    let server = &server;
                    scope.spawn(move || server.get_as("klinik", &path).status().as_u16())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut sorted = statuses.clone();
        sorted.sort();
        assert_eq!(sorted, vec![200, 410], "round {round}: {statuses:?}");
    }
}
