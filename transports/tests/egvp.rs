//! The simulated court mailbox (EGVP) through the `Transport` and `Mailbox` traits, as the
//! engine and the sync will use them: a send stored once per idempotency key as OUTGOING and
//! INCOMING, refusals with their reasons, listing since a cursor, the first retrieval recorded
//! once, deletion, the script's mailbox faults, and what survives a restart.

mod common;

use meldewerk_transports::egvp::{EgvpConfig, MessagePackage, Simulator, MEDIA_TYPE};
use meldewerk_transports::mailbox::{Direction, MailboxFile, XJUSTIZ_FILE};
use meldewerk_transports::received::ReceivedQuery;
use meldewerk_transports::script::json::rule_from_json;
use meldewerk_transports::{
    Answer, Delivery, Mailbox, MailboxServer, Outcome, Simulated, Transport, TransportError,
};
use serde_json::json;

const US: &str = "DE.Justiz.meldewerk-test";
const COURT: &str = "DE.Justiz.ag-musterstadt";

fn open(dir: &tempfile::TempDir) -> Simulator {
    common::open_retrying(|| Simulator::open(dir.path(), EgvpConfig::default()))
}

fn file(name: &str, content: &[u8]) -> MailboxFile {
    MailboxFile {
        name: name.into(),
        content: content.to_vec(),
    }
}

fn delivery(key: &str, body: Vec<u8>) -> Delivery {
    Delivery {
        idempotency_key: key.into(),
        module: "guardianship".into(),
        report_id: format!("job-{key}"),
        message_uuid: format!("uuid-{key}"),
        content_type: MEDIA_TYPE.into(),
        body,
        signature: None,
        sender: None,
    }
}

fn package(to: &str) -> Vec<u8> {
    MessagePackage::new(
        US,
        to,
        b"<nachricht/>".to_vec(),
        vec![file("antrag.pdf", b"%PDF-1.7")],
    )
    .unwrap()
    .to_bytes()
}

/// The message id of an accepted send, and whether it was a repeat.
fn accepted(answer: Answer) -> (String, bool) {
    let finished = answer.finished().expect("decided at once").clone();
    assert!(
        matches!(&finished.outcome, Outcome::Success { receipt, .. } if receipt.bytes.starts_with(b"%PDF-")),
        "{:?}",
        finished.outcome
    );
    (finished.transport_ref.unwrap(), finished.duplicate)
}

fn refusal(answer: Answer) -> String {
    match answer.finished().map(|f| f.outcome.clone()) {
        Some(Outcome::Failure { reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_send_is_stored_once_as_outgoing_and_incoming() {
    let dir = tempfile::tempdir().unwrap();
    let egvp = open(&dir);
    let (id, duplicate) = accepted(egvp.submit(delivery("k1", package(COURT))).await.unwrap());
    assert!(!duplicate);
    let (again, duplicate) = accepted(egvp.submit(delivery("k1", package(COURT))).await.unwrap());
    assert_eq!((again.as_str(), duplicate), (id.as_str(), true));

    let ours = egvp.list(US, None, 10).await.unwrap();
    assert_eq!(ours.entries.len(), 1, "stored once");
    assert_eq!(ours.entries[0].direction, Direction::Outgoing);
    assert_eq!(ours.entries[0].message_id, id);
    assert_eq!(ours.entries[0].size, 12 + 8);
    let theirs = egvp.list(COURT, None, 10).await.unwrap();
    assert_eq!(theirs.entries[0].direction, Direction::Incoming);
    assert_eq!(theirs.entries[0].message_id, id);

    // The received log holds the send once, with its repeat counted.
    let log = egvp.received_page(&ReceivedQuery::default()).unwrap();
    assert_eq!(log.messages.len(), 1);
    assert_eq!(log.messages[0].1.delivered.repeat_submissions, 1);
    assert_eq!(log.messages[0].1.delivered.body, package(COURT));

    // The court fetches it: the first retrieval shows in both copies, set once.
    let fetched = egvp.fetch(COURT, &id).await.unwrap().unwrap();
    assert_eq!(fetched.files[0], file(XJUSTIZ_FILE, b"<nachricht/>"));
    assert_eq!(
        (fetched.sender.as_str(), fetched.recipient.as_str()),
        (US, COURT)
    );
    let first = fetched.entry.received_at.expect("retrieval recorded");
    let later = egvp.fetch(COURT, &id).await.unwrap().unwrap();
    assert_eq!(later.entry.received_at, Some(first));
    let ours = egvp.list(US, None, 10).await.unwrap();
    assert_eq!(ours.entries[0].received_at, Some(first));
}

#[tokio::test]
async fn refusals_say_why_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let egvp = open(&dir);
    let unknown = refusal(
        egvp.submit(delivery("a", package("DE.Justiz.niemand")))
            .await
            .unwrap(),
    );
    assert!(unknown.contains("unknown recipient SAFE-ID"), "{unknown}");
    let stranger = MessagePackage::new("DE.Justiz.fremd", COURT, vec![], vec![]).unwrap();
    let sender = refusal(
        egvp.submit(delivery("b", stranger.to_bytes()))
            .await
            .unwrap(),
    );
    assert!(sender.contains("unknown sender account"), "{sender}");
    let malformed = refusal(
        egvp.submit(delivery("c", b"{\"from\": 1}".to_vec()))
            .await
            .unwrap(),
    );
    assert!(malformed.contains("not readable"), "{malformed}");
    let to_itself = refusal(egvp.submit(delivery("e", package(US))).await.unwrap());
    assert!(to_itself.contains("sending account itself"), "{to_itself}");
    let mut typed = delivery("d", package(COURT));
    typed.content_type = "application/xml".into();
    assert!(refusal(egvp.submit(typed).await.unwrap()).contains("Content-Type"));
    // A repeat of a refused key is refused again, the same way.
    let again = refusal(egvp.submit(delivery("a", package(COURT))).await.unwrap());
    assert_eq!(again, unknown);
    assert!(egvp.list(COURT, None, 10).await.unwrap().entries.is_empty());
    assert!(egvp.list(US, None, 10).await.unwrap().entries.is_empty());
}

#[tokio::test]
async fn listing_pages_from_a_cursor_that_outlives_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let egvp = open(&dir);
    let ids: Vec<String> = (0..3)
        .map(|i| {
            let files = vec![file(XJUSTIZ_FILE, format!("<n{i}/>").as_bytes())];
            egvp.drop_incoming(US, COURT, files).unwrap().message_id
        })
        .collect();
    let first = egvp.list(US, None, 2).await.unwrap();
    assert!(first.more);
    let listed: Vec<&str> = first
        .entries
        .iter()
        .map(|e| e.message_id.as_str())
        .collect();
    assert_eq!(listed, [ids[0].as_str(), ids[1].as_str()]);
    // The message the cursor came after is deleted: the cursor still works.
    assert!(egvp.delete(US, &ids[1]).await.unwrap());
    assert!(!egvp.delete(US, &ids[1]).await.unwrap(), "gone already");
    assert!(egvp.fetch(US, &ids[1]).await.unwrap().is_none());
    let rest = egvp.list(US, first.cursor.as_deref(), 2).await.unwrap();
    assert_eq!(rest.entries.len(), 1);
    assert_eq!(rest.entries[0].message_id, ids[2]);
    assert!(!rest.more);
    // Listing does not consume; an empty page hands the cursor back.
    let empty = egvp.list(US, rest.cursor.as_deref(), 2).await.unwrap();
    assert!(empty.entries.is_empty());
    assert_eq!(empty.cursor, rest.cursor);
    // A full listing shows what is left.
    let all = egvp.list(US, None, 10).await.unwrap();
    assert_eq!(all.entries.len(), 2);

    for cursor in ["x", "999999"] {
        let unknown = egvp.list(US, Some(cursor), 2).await.unwrap_err();
        assert!(
            matches!(unknown, TransportError::UnknownCursor(_)),
            "{unknown:?}"
        );
    }
    let account = egvp.list("DE.Justiz.niemand", None, 2).await.unwrap_err();
    assert!(matches!(account, TransportError::Refused(_)), "{account:?}");
    // A drop into a new account creates it.
    egvp.drop_incoming("DE.Justiz.neu", COURT, vec![file("../x", b"")])
        .unwrap();
    assert_eq!(
        egvp.list("DE.Justiz.neu", None, 2)
            .await
            .unwrap()
            .entries
            .len(),
        1
    );
}

#[tokio::test]
async fn the_script_makes_fetches_fail_and_cuts_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let egvp = open(&dir);
    let drop = |content: &[u8]| {
        egvp.drop_incoming(US, COURT, vec![file(XJUSTIZ_FILE, content)])
            .unwrap()
            .message_id
    };
    let (stuck, fine) = (drop(b"<stuck/>"), drop(b"12345678"));
    let script = egvp.scriptable();
    let rule = |value| rule_from_json(&value).unwrap();
    script
        .push_rule(rule(json!({"kind": "unfetchable", "message_id": stuck})))
        .unwrap();
    script
        .push_rule(rule(json!({"kind": "truncated", "count": 1})))
        .unwrap();
    script
        .push_rule(rule(
            json!({"kind": "transient", "call": "list", "count": 1}),
        ))
        .unwrap();

    for _ in 0..2 {
        let fault = egvp.fetch(US, &stuck).await.unwrap_err();
        assert!(
            matches!(fault, TransportError::Transient(ref m) if m.contains("cannot be fetched"))
        );
    }
    let cut = egvp.fetch(US, &fine).await.unwrap().unwrap();
    assert_eq!(cut.files[0].content, b"1234");
    assert_eq!(cut.entry.size, 8, "the listing's size tells the cut");
    let whole = egvp.fetch(US, &fine).await.unwrap().unwrap();
    assert_eq!(whole.files[0].content, b"12345678");
    assert!(matches!(
        egvp.list(US, None, 5).await,
        Err(TransportError::Transient(_))
    ));
    assert_eq!(egvp.list(US, None, 5).await.unwrap().entries.len(), 2);
    // The stuck message was never fetched.
    let listed = egvp.list(US, None, 5).await.unwrap();
    assert_eq!(listed.entries[0].received_at, None);
}

#[tokio::test]
async fn a_restart_keeps_the_mailboxes_and_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (id, dropped) = {
        let egvp = open(&dir);
        let (id, _) = accepted(egvp.submit(delivery("k", package(COURT))).await.unwrap());
        let dropped = egvp
            .drop_incoming(US, COURT, vec![file(XJUSTIZ_FILE, b"<a/>")])
            .unwrap();
        egvp.fetch(US, &dropped.message_id).await.unwrap();
        (id, dropped.message_id)
    };
    let egvp = open(&dir);
    let (again, duplicate) = accepted(egvp.submit(delivery("k", package(COURT))).await.unwrap());
    assert_eq!((again, duplicate), (id, true));
    let ours = egvp.list(US, None, 10).await.unwrap();
    assert_eq!(ours.entries.len(), 2);
    assert_eq!(ours.entries[1].message_id, dropped);
    assert!(ours.entries[1].received_at.is_some());
}

/// Sends checked side by side are logged in the order of their times (`since` pages by them):
/// each is stamped as the received log numbers it, after its checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sends_checked_side_by_side_are_logged_in_the_order_of_their_times() {
    let dir = tempfile::tempdir().unwrap();
    common::assert_logged_in_time_order(open(&dir), 48, |i| {
        delivery(&format!("order-{i}"), package(COURT))
    })
    .await;
}
