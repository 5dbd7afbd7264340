//! `meldewerk simulate egvp`: the court mailbox as its own process, reached through the wire
//! protocol's client (what `[transports.egvp] url` opens): sends stored once per idempotency key,
//! the mailbox face (list since a cursor, fetch, delete, and every answer's meaning), testers'
//! drops and script at the process, a kill that keeps the mailboxes, and the service's operator
//! API pointing there.

mod common;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use common::remote::Peer;
use common::*;
use meldewerk_transports::egvp::{MessagePackage, MEDIA_TYPE};
use meldewerk_transports::mailbox::{Direction, MailboxFile};
use meldewerk_transports::wire::{HttpTransport, HttpTransportSettings};
use meldewerk_transports::{Delivery, Outcome, Transport, TransportError};
use serde_json::{json, Value};

const US: &str = "DE.Justiz.meldewerk-test";
const COURT: &str = "DE.Justiz.ag-musterstadt";

/// The wire protocol's client as `[transports.egvp] url` opens it (the registry says the
/// authority keeps mailboxes).
fn connect(peer: &Peer) -> Arc<dyn Transport> {
    assert!(meldewerk_transports::kind("egvp").unwrap().mailbox);
    let settings = HttpTransportSettings {
        url: peer.base.clone(),
        connect_timeout: Duration::from_secs(5),
        request_timeout: Duration::from_secs(10),
    };
    Arc::new(
        HttpTransport::new("egvp", &settings, false)
            .unwrap()
            .with_mailbox(),
    )
}

fn delivery(key: &str, to: &str) -> Delivery {
    let files = vec![MailboxFile {
        name: "anregung.pdf".into(),
        content: b"%PDF-1.7".to_vec(),
    }];
    Delivery {
        idempotency_key: key.into(),
        module: "guardianship".into(),
        report_id: format!("job-{key}"),
        message_uuid: format!("uuid-{key}"),
        content_type: MEDIA_TYPE.into(),
        body: MessagePackage::new(US, to, b"<nachricht/>".to_vec(), files)
            .unwrap()
            .to_bytes(),
        signature: None,
        sender: None,
    }
}

/// The message id of a send the mailbox accepted, and whether it was a repeat.
fn sent(
    transport: &dyn Transport,
    runtime: &tokio::runtime::Runtime,
    key: &str,
    to: &str,
) -> Result<(String, bool), String> {
    let answer = runtime
        .block_on(transport.submit(delivery(key, to)))
        .unwrap();
    let finished = answer.finished().unwrap().clone();
    match finished.outcome {
        Outcome::Success { receipt, .. } => {
            assert!(receipt.bytes.starts_with(b"%PDF-"));
            Ok((finished.transport_ref.unwrap(), finished.duplicate))
        }
        Outcome::Failure { reason } => Err(reason),
    }
}

#[test]
fn the_process_stores_sends_once_and_serves_the_mailbox_face() {
    let dir = DataDir::new();
    let mut peer = Peer::simulate(dir.path(), "egvp", &[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let transport = connect(&peer);
    let mailbox = transport
        .mailbox()
        .expect("the egvp transport reads mailboxes");

    let (id, duplicate) = sent(&*transport, &runtime, "k1", COURT).unwrap();
    assert!(!duplicate);
    assert_eq!(
        sent(&*transport, &runtime, "k1", COURT).unwrap(),
        (id.clone(), true)
    );
    let refused = sent(&*transport, &runtime, "k2", "DE.Justiz.niemand").unwrap_err();
    assert!(refused.contains("unknown recipient SAFE-ID"), "{refused}");
    let log = peer.received(&peer.client(), "job-k1");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["repeat_submissions"], 1);
    assert_eq!(
        log[0]["decision"],
        json!({"status": "accepted", "message_id": id})
    );

    // A tester's drop at the process, as multipart.
    let body = "--g\r\nContent-Disposition: form-data; name=\"sender\"\r\n\r\nDE.Justiz.lg\r\n\
                --g\r\nContent-Disposition: form-data; name=\"f\"; filename=\"xjustiz_nachricht.xml\"\r\n\r\n<n/>\r\n--g--";
    let dropped = peer
        .client()
        .post(peer.url(&format!("/mailboxes/{COURT}/messages")))
        .header("Content-Type", "multipart/form-data; boundary=g")
        .body(body)
        .send()
        .unwrap();
    assert_eq!(dropped.status(), 201);
    let dropped: Value = dropped.json().unwrap();

    // The court's account: the send (INCOMING), then the drop; one at a time.
    let first = runtime.block_on(mailbox.list(COURT, None, 1)).unwrap();
    assert_eq!(first.entries[0].message_id, id);
    assert_eq!(first.entries[0].direction, Direction::Incoming);
    assert!(first.more);
    let second = runtime
        .block_on(mailbox.list(COURT, first.cursor.as_deref(), 1))
        .unwrap();
    assert_eq!(
        second.entries[0].message_id,
        dropped["message_id"].as_str().unwrap()
    );
    assert!(!second.more);
    let ours = runtime.block_on(mailbox.list(US, None, 10)).unwrap();
    assert_eq!(ours.entries[0].direction, Direction::Outgoing);

    // The court fetches the send: recorded once, in both copies.
    let message = runtime
        .block_on(mailbox.fetch(COURT, &id))
        .unwrap()
        .unwrap();
    assert_eq!(message.files[1].content, b"%PDF-1.7");
    let retrieved = message.entry.received_at.unwrap();
    let again = runtime
        .block_on(mailbox.fetch(COURT, &id))
        .unwrap()
        .unwrap();
    assert_eq!(again.entry.received_at, Some(retrieved));
    let ours = runtime.block_on(mailbox.list(US, None, 10)).unwrap();
    assert_eq!(ours.entries[0].received_at, Some(retrieved));

    // Every answer of the face means what the Mailbox trait says.
    assert!(runtime.block_on(mailbox.delete(COURT, &id)).unwrap());
    assert!(!runtime.block_on(mailbox.delete(COURT, &id)).unwrap());
    assert_eq!(runtime.block_on(mailbox.fetch(COURT, &id)).unwrap(), None);
    let cursor = runtime
        .block_on(mailbox.list(COURT, Some("nonsense"), 5))
        .unwrap_err();
    assert!(
        matches!(cursor, TransportError::UnknownCursor(_)),
        "{cursor:?}"
    );
    let account = runtime
        .block_on(mailbox.list("DE.Justiz.niemand", None, 5))
        .unwrap_err();
    assert!(matches!(account, TransportError::Refused(_)), "{account:?}");
    let odd = runtime.block_on(mailbox.fetch(COURT, "a/b?c#d")).unwrap();
    assert_eq!(
        odd, None,
        "an id with reserved characters is one path segment"
    );

    // Scripted at the process: the fetch fails, then comes cut short.
    for rule in [
        json!({"kind": "unfetchable", "count": 1}),
        json!({"kind": "truncated", "count": 1}),
    ] {
        let taken = peer
            .client()
            .post(peer.url("/script/rules"))
            .json(&rule)
            .send()
            .unwrap();
        assert_eq!(taken.status(), 200);
    }
    let drop_id = dropped["message_id"].as_str().unwrap();
    let fault = runtime.block_on(mailbox.fetch(COURT, drop_id)).unwrap_err();
    assert!(
        matches!(fault, TransportError::Transient(ref m) if m.contains("HTTP 503") && m.contains("cannot be fetched")),
        "{fault:?}"
    );
    let cut = runtime
        .block_on(mailbox.fetch(COURT, drop_id))
        .unwrap()
        .unwrap();
    assert_eq!(cut.files[0].content, b"<n");

    // Killed and started again: the mailboxes are as they were, sends still answered once.
    peer.kill();
    let down = runtime.block_on(mailbox.list(COURT, None, 5)).unwrap_err();
    assert!(matches!(down, TransportError::Transient(_)), "{down:?}");
    peer.start_again();
    let after = runtime.block_on(mailbox.list(COURT, None, 5)).unwrap();
    assert_eq!(after.entries.len(), 1);
    assert_eq!(
        sent(&*transport, &runtime, "k1", COURT).unwrap(),
        (id, true)
    );
}

#[test]
fn the_service_points_operators_at_the_process() {
    let dir = DataDir::new();
    let peer = Peer::simulate(dir.path(), "egvp", &[]);
    let server = Server::start(&dir, &[("MELDEWERK_TRANSPORTS__EGVP__URL", &peer.base)]);
    let path = format!("/admin/api/v1/transports/egvp/mailboxes/{COURT}/messages");
    let answer = server.admin_get(&path);
    assert_eq!(answer.status(), 409);
    let body: Value = answer.json().unwrap();
    let said = body["errors"][0].as_str().unwrap();
    assert!(said.contains(&format!("{}/mailboxes", peer.base)), "{said}");
    let content = base64::engine::general_purpose::STANDARD.encode(b"<n/>");
    let drop = server.admin_post_json(
        &path,
        &json!({"sender": COURT, "files": [{"name": "a", "content": content}]}),
    );
    assert_eq!(drop.status(), 409);
}

#[test]
fn a_python_mock_plays_a_court_through_the_same_face() {
    let mock_dir = tempfile::tempdir().unwrap();
    let mock = Peer::python_mock(mock_dir.path(), "127.0.0.1:0");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let transport = connect(&mock);
    let mailbox = transport.mailbox().unwrap();
    let content = base64::engine::general_purpose::STANDARD.encode(b"<n/>");
    let drop = |n: usize| -> String {
        let files = json!([{"name": format!("nachricht-{n}.xml"), "content": content}]);
        let answer = mock
            .client()
            .post(mock.url(&format!("/mailboxes/{US}/messages")))
            .json(&json!({"sender": COURT, "files": files}))
            .send()
            .unwrap();
        assert_eq!(answer.status(), 201);
        answer.json::<Value>().unwrap()["message_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (first, second) = (drop(1), drop(2));
    let page = runtime.block_on(mailbox.list(US, None, 1)).unwrap();
    assert_eq!(
        (page.entries[0].message_id.as_str(), page.more),
        (first.as_str(), true)
    );
    let rest = runtime
        .block_on(mailbox.list(US, page.cursor.as_deref(), 5))
        .unwrap();
    assert_eq!(rest.entries[0].message_id, second);
    let message = runtime
        .block_on(mailbox.fetch(US, &first))
        .unwrap()
        .unwrap();
    assert_eq!(message.files[0].content, b"<n/>");
    assert!(message.entry.received_at.is_some());
    assert!(runtime.block_on(mailbox.delete(US, &first)).unwrap());
    assert!(!runtime.block_on(mailbox.delete(US, &first)).unwrap());
    assert_eq!(runtime.block_on(mailbox.fetch(US, &first)).unwrap(), None);
    let all = runtime.block_on(mailbox.list(US, None, 5)).unwrap();
    assert_eq!(all.entries.len(), 1);
    let cursor = runtime
        .block_on(mailbox.list(US, Some("x"), 5))
        .unwrap_err();
    assert!(
        matches!(cursor, TransportError::UnknownCursor(_)),
        "{cursor:?}"
    );
    let account = runtime.block_on(mailbox.list(COURT, None, 5)).unwrap_err();
    assert!(matches!(account, TransportError::Refused(_)), "{account:?}");
}
