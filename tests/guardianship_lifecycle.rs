//! The life of court messages beyond one request: messages another system took from the mailbox
//! are cleaned up, the retention backstop deletes old ones, a restart keeps the index and lists
//! nothing twice, an account removed stops its sync, and a user's contact address is mailed
//! (over a real SMTP server) when a court message arrives.

mod common;

use common::court::*;
use common::smtp::*;
use common::*;
use reqwest::Method;
use serde_json::{json, Value};

fn listed_ids(server: &Server, user: &str) -> Vec<String> {
    let (status, listing) = list(server, user, "");
    assert_eq!(status, 200);
    listing
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messageId"].as_str().unwrap().to_owned())
        .collect()
}

fn deletion_of(server: &Server, message_id: &str) -> Option<Value> {
    operator_view(server)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["messageId"] == message_id)
        .and_then(|m| (!m["deleted"].is_null()).then(|| m["deleted"].clone()))
}

#[test]
fn messages_gone_from_the_server_are_cleaned_up_and_a_restart_lists_nothing_twice() {
    let (dir, mut server) = court_server(&["betreuung"], &[]);
    let kept = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let taken = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let kept_id = wait_hydrated(&server, "betreuung", &kept)["id"]
        .as_u64()
        .unwrap();
    let taken_id = wait_hydrated(&server, "betreuung", &taken)["id"]
        .as_u64()
        .unwrap();

    // Another system sharing the account takes the message off the server.
    let path = format!("/admin/api/v1/transports/egvp/mailboxes/{SAFE_ID}/messages/{taken}");
    let deleted = common::operator::operator(&server, Method::DELETE, &path, None);
    assert_eq!(deleted.status(), 200);
    let deletion = wait_until("the taken message cleaned up", || {
        deletion_of(&server, &taken)
    });
    assert_eq!(deletion["cause"], "gone-from-server");
    assert_eq!(listed_ids(&server, "betreuung"), [kept.as_str()]);
    assert!(!dir
        .path()
        .join(format!("court-messages/{taken_id}.zip"))
        .exists());
    assert!(dir
        .path()
        .join(format!("court-messages/{kept_id}.zip"))
        .exists());

    // A restart keeps the index: the same ids, nothing indexed twice, nothing fetched again.
    let processed = server.actor("hydration:egvp")["processed"]
        .as_u64()
        .unwrap();
    assert!(processed >= 2);
    server.restart();
    let later = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let later_id = wait_hydrated(&server, "betreuung", &later)["id"]
        .as_u64()
        .unwrap();
    assert!(later_id > taken_id, "ids are never reused");
    assert_eq!(
        listed_ids(&server, "betreuung"),
        [kept.clone(), later.clone()]
    );
    assert_eq!(
        server.actor("hydration:egvp")["processed"],
        1,
        "only the new message was fetched after the restart"
    );
    let (_, listing) = list(&server, "betreuung", "");
    assert_eq!(listing[0]["id"], kept_id);

    // An account removed (its grant first) is no longer synced.
    let accounts = format!("/admin/api/v1/mailbox-accounts/{ACCOUNT}");
    let revoke = common::operator::operator(
        &server,
        Method::DELETE,
        &format!("{accounts}/users/betreuung"),
        None,
    );
    assert!(revoke.status().is_success());
    let removed = common::operator::operator(&server, Method::DELETE, &accounts, None);
    assert!(removed.status().is_success());
    wait_until("the account's sync stopped", || {
        (server.actor(&format!("sync:egvp:{ACCOUNT}"))["state"] == "stopped").then_some(())
    });
}

#[test]
fn the_retention_backstop_deletes_old_messages_acknowledged_or_not() {
    let (dir, server) = court_server(
        &["betreuung"],
        &[
            (
                "MELDEWERK_MODULES__GUARDIANSHIP__MESSAGE_RETENTION_SECS",
                "2",
            ),
            ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
        ],
    );
    let old = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let id = wait_hydrated(&server, "betreuung", &old)["id"]
        .as_u64()
        .unwrap();
    let deletion = wait_until("the old message deleted by retention", || {
        deletion_of(&server, &old)
    });
    assert_eq!(deletion["cause"], "retention");
    assert!(listed_ids(&server, "betreuung").is_empty());
    assert!(!dir.path().join(format!("court-messages/{id}.zip")).exists());
    // Still on the mailbox server: deleted in the index, never indexed again.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(listed_ids(&server, "betreuung").is_empty());
    assert_eq!(
        operator_view(&server)["messages"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn a_court_message_is_mailed_to_the_contacts_of_the_accounts_users() {
    let port = free_port();
    let smtp = SmtpServer::start(port);
    let port = port.to_string();
    let (_dir, server) = court_server(
        &["betreuung", "fremd"],
        &[
            ("MELDEWERK_MAIL__SMTP_HOST", "127.0.0.1"),
            ("MELDEWERK_MAIL__SMTP_PORT", &port),
            ("MELDEWERK_MAIL__TLS", "none"),
            ("MELDEWERK_MAIL__FROM", "meldewerk <post@meldewerk.example>"),
            ("MELDEWERK_MAIL__GROUP_WINDOW_SECS", "1"),
        ],
    );
    let contact = format!("{API}/contact");
    let get = |user: &str| -> Value { server.get_as(user, &contact).json().unwrap() };
    assert_eq!(get("betreuung"), json!({"email": null}));
    let put = |user: &str, body: &Value| {
        server
            .client()
            .put(server.url(&contact))
            .basic_auth(user, Some(PASSWORD))
            .json(body)
            .send()
            .unwrap()
    };
    let refused = put("betreuung", &json!({"email": "kein-name"}));
    assert_eq!(refused.status(), 400);
    assert_eq!(
        refused.json::<Value>().unwrap(),
        json!({"error": "the request is invalid; see errors", "errors": ["email must be a mail address"]})
    );
    let set = put("betreuung", &json!({"email": "post@betreuung.example"}));
    assert_eq!(set.status(), 200);
    assert_eq!(get("betreuung"), json!({"email": "post@betreuung.example"}));
    // A user not granted the account registers too, and hears nothing of it.
    assert_eq!(
        put("fremd", &json!({"email": "post@fremd.example"})).status(),
        200
    );

    let message_id = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let id = wait_hydrated(&server, "betreuung", &message_id)["id"]
        .as_u64()
        .unwrap();
    let mails = wait_until("the arrival mailed", || {
        let mails = mails_to(&smtp, "post@betreuung.example");
        (!mails.is_empty()).then_some(mails)
    });
    let mail = &mails[0];
    assert!(
        mail.subject.contains("court message arrived"),
        "{}",
        mail.subject
    );
    assert!(
        mail.body
            .contains(&format!("message {id} in mailbox account {ACCOUNT}")),
        "{}",
        mail.body
    );
    assert!(
        !mail.body.contains("BV-2026/0815"),
        "no content leaves by mail"
    );
    assert!(mails_to(&smtp, "post@fremd.example").is_empty());

    // Removed: no further mail.
    let removed = server
        .client()
        .delete(server.url(&contact))
        .basic_auth("betreuung", Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(removed.json::<Value>().unwrap(), json!({"email": null}));
    let second = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    wait_hydrated(&server, "betreuung", &second);
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(mails_to(&smtp, "post@betreuung.example").len(), 1);
}
