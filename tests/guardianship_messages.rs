//! Court messages end to end over HTTP: dropped into the simulated court mailbox, synced
//! (Indexed), fetched and archived (Hydrated), listed with the contract's fields and filters,
//! downloaded as a ZIP that Python's `zipfile` opens, acknowledged with per-id statuses, and
//! kept from users who are not granted their account.

mod common;

use common::court::*;
use serde_json::{json, Value};

const PDF: &[u8] = b"%PDF-1.7 Beschluss des Amtsgerichts";

#[test]
fn a_court_message_is_indexed_hydrated_listed_and_downloaded() {
    let (dir, server) = court_server(&["betreuung"], &[]);
    let message_id = drop_court_message(
        &server,
        &[("xjustiz_nachricht.xml", BESCHLUSS), ("beschluss.pdf", PDF)],
    );
    let listed = wait_hydrated(&server, "betreuung", &message_id);
    let id = listed["id"].as_u64().unwrap();
    assert_eq!(listed["direction"], "INCOMING");
    assert_eq!(listed["aktenzeichen"], "BV-2026/0815");
    assert_eq!(
        listed["jobId"],
        Value::Null,
        "nobody sent it through the service"
    );
    assert_eq!(listed["url"], format!("{API}/download/{id}"));
    for member in ["createdAt", "receivedAt", "hydratedAt"] {
        let at = listed[member]
            .as_str()
            .unwrap_or_else(|| panic!("{member}: {listed}"));
        assert!(
            at.len() == 20 && at.ends_with('Z'),
            "{member} is UTC with whole seconds: {at}"
        );
    }
    let object = listed.as_object().unwrap();
    let mut members: Vec<&str> = object.keys().map(String::as_str).collect();
    members.sort_unstable();
    assert_eq!(
        members,
        [
            "aktenzeichen",
            "createdAt",
            "direction",
            "hydratedAt",
            "id",
            "jobId",
            "messageId",
            "receivedAt",
            "url"
        ]
    );

    let response = server.get_as("betreuung", &format!("{API}/download/{id}"));
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        disposition.starts_with("attachment")
            && disposition.contains(&format!("court-message-{id}.zip")),
        "{disposition}"
    );
    let headers = response.headers().clone();
    let zip = response.bytes().unwrap();
    let read = open_zip(&zip);
    assert_eq!(
        read["names"],
        json!(["xjustiz_nachricht.xml", "beschluss.pdf", "meldewerk.json"])
    );
    assert_eq!(entry(&read, "xjustiz_nachricht.xml"), BESCHLUSS);
    assert_eq!(entry(&read, "beschluss.pdf"), PDF);
    let metadata = &read["metadata"];
    assert_eq!(metadata["messageId"], message_id.as_str());
    assert_eq!(metadata["accountSafeId"], SAFE_ID);
    assert_eq!(metadata["xjustiz"]["aktenzeichen"], "BV-2026/0815");
    assert_eq!(metadata["readError"], Value::Null);

    // The archive is a file of the data directory, named by the index id.
    let file = dir.path().join(format!("court-messages/{id}.zip"));
    assert_eq!(std::fs::read(&file).unwrap(), zip.as_ref());
    assert_eq!(headers["content-length"], zip.len().to_string().as_str());
    assert_eq!(headers["accept-ranges"], "bytes");
    assert_eq!(headers["cache-control"], "no-store");

    // A part of it, as a download that resumes asks for it.
    let part = server
        .client()
        .get(server.url(&format!("{API}/download/{id}")))
        .basic_auth("betreuung", Some(common::PASSWORD))
        .header("Range", "bytes=2-9")
        .send()
        .unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(
        part.headers()["content-range"],
        format!("bytes 2-9/{}", zip.len()).as_str()
    );
    assert_eq!(part.headers()["content-type"], "application/zip");
    assert_eq!(part.headers()["cache-control"], "no-store");
    assert_eq!(part.bytes().unwrap().as_ref(), &zip[2..10]);

    // Operators see its handling, and the sync and hydration actors in the actor health.
    let view = operator_view(&server);
    assert_eq!(view["messages"][0]["hydration"], "hydrated");
    assert_eq!(view["messages"][0]["error"], Value::Null);
    for actor in [
        "mailbox:egvp",
        &format!("sync:egvp:{ACCOUNT}"),
        "hydration:egvp",
    ] {
        let health = server.actor(actor);
        assert_eq!(health["state"], "running", "{actor}: {health}");
    }
    assert!(
        server.actor("hydration:egvp")["processed"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

#[test]
fn the_listing_filters_by_job_safe_id_and_time_and_refuses_bad_filters() {
    let (_dir, server) = court_server(&["betreuung"], &[]);
    let first = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let first = wait_hydrated(&server, "betreuung", &first);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let second = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let second = wait_hydrated(&server, "betreuung", &second);

    let ids = |query: &str| -> Vec<u64> {
        let (status, listing) = list(&server, "betreuung", query);
        assert_eq!(status, 200, "{query}: {listing}");
        listing
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_u64().unwrap())
            .collect()
    };
    let (a, b) = (
        first["id"].as_u64().unwrap(),
        second["id"].as_u64().unwrap(),
    );
    assert_eq!(ids(""), [a, b]);
    // Rule 1: only messages created after `since` (any offset). `createdAt` is shown to the
    // second and compared as stored: a poll from the last one shown lists that second again.
    let since = first["createdAt"].as_str().unwrap();
    assert_eq!(ids(&format!("?since={since}")), [a, b]);
    let next_second =
        chrono::DateTime::parse_from_rfc3339(since).unwrap() + chrono::Duration::seconds(1);
    let next_second = next_second.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(ids(&format!("?since={next_second}")), [b]);
    assert_eq!(ids("?since=2000-01-01T01:00:00%2B01:00"), [a, b]);
    // The account's SAFE-ID filters; another one (or one of no account) finds nothing.
    assert_eq!(ids(&format!("?safeId={SAFE_ID}")), [a, b]);
    assert_eq!(
        ids(&format!("?safeId={SAFE_ID}&safeId=DE.Justiz.other")),
        [a, b]
    );
    assert_eq!(ids("?safeId=DE.Justiz.other"), Vec::<u64>::new());
    // Rule 3: a job filter lists only messages mapped to the job; these are mapped to none.
    assert_eq!(ids("?jobId=job-1&jobId=job-2"), Vec::<u64>::new());

    for (query, pointer_message) in [
        ("?since=yesterday", "since must be an ISO 8601 date-time"),
        (
            "?since=2026-11-26T08:00:00",
            "since must be an ISO 8601 date-time",
        ),
        ("?safeId=not-a-safe-id", "safeId must be a SAFE-ID"),
        ("?jobId=", "jobId must have 1 to 128 characters"),
        ("?colour=red", "unknown query parameter"),
    ] {
        let (status, body) = list(&server, "betreuung", query);
        assert_eq!(status, 400, "{query}");
        assert_eq!(
            body["error"], "the request is invalid; see errors",
            "{body}"
        );
        let errors = body["errors"].as_array().unwrap();
        assert!(
            errors
                .iter()
                .any(|e| e.as_str().unwrap().starts_with(pointer_message)),
            "{query}: {body}"
        );
    }
}

#[test]
fn acknowledging_deletes_per_id_and_users_see_only_their_accounts() {
    let (dir, server) = court_server(&["betreuung", "fremd"], &[]);
    let one = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let two = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let one = wait_hydrated(&server, "betreuung", &one)["id"]
        .as_u64()
        .unwrap();
    let two = wait_hydrated(&server, "betreuung", &two)["id"]
        .as_u64()
        .unwrap();

    // A user without a grant sees nothing of the account.
    assert_eq!(list(&server, "fremd", ""), (200, json!([])));
    let forbidden = server.get_as("fremd", &format!("{API}/download/{one}"));
    assert_eq!(forbidden.status(), 403);
    let body: Value = forbidden.json().unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("not granted"),
        "{body}"
    );
    let refused = acknowledge(&server, "fremd", &json!({"messageIds": [one]}));
    assert_eq!(refused.status(), 200);
    let refused: Value = refused.json().unwrap();
    assert_eq!(refused["results"][0]["status"], "FORBIDDEN");
    // Without credentials: 401; an id of no message: 404.
    let anonymous = server
        .client()
        .get(server.url(&format!("{API}/messages")))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    for path in ["999999", "abc", "-1"] {
        let missing = server.get_as("betreuung", &format!("{API}/download/{path}"));
        assert_eq!(missing.status(), 404, "{path}");
    }

    // Partial success, each id with its status; the same id twice is deleted once.
    let answer = acknowledge(
        &server,
        "betreuung",
        &json!({"messageIds": [one, 999999, one]}),
    );
    assert_eq!(answer.status(), 200);
    let answer: Value = answer.json().unwrap();
    let statuses: Vec<(&Value, &str)> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (&r["id"], r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            (&json!(one), "DELETED"),
            (&json!(999999), "NOT_FOUND"),
            (&json!(one), "ALREADY_DELETED")
        ]
    );
    assert!(answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| !r["message"].as_str().unwrap().is_empty()));
    // Idempotent: again, already deleted.
    let again: Value = acknowledge(&server, "betreuung", &json!({"messageIds": [one]}))
        .json()
        .unwrap();
    assert_eq!(again["results"][0]["status"], "ALREADY_DELETED");

    // Its files are gone at once; the listing and the download no longer know it.
    assert!(!dir
        .path()
        .join(format!("court-messages/{one}.zip"))
        .exists());
    assert!(dir
        .path()
        .join(format!("court-messages/{two}.zip"))
        .exists());
    let (_, listing) = list(&server, "betreuung", "");
    let listed: Vec<u64> = listing
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(listed, [two]);
    assert_eq!(
        server
            .get_as("betreuung", &format!("{API}/download/{one}"))
            .status(),
        404
    );
    // The index keeps it, soft-deleted, with who acknowledged it; the audit log has it too.
    let view = operator_view(&server);
    let entry = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == one)
        .unwrap()
        .clone();
    assert_eq!(entry["deleted"]["cause"], "acknowledged");
    assert_eq!(entry["deleted"]["user"], "betreuung");
    let audit = common::operator::audit_entries(&server);
    assert!(
        audit
            .iter()
            .any(|(who, action, target)| who == "api-user betreuung"
                && action == "court-message-acknowledged"
                && target.starts_with(&format!("court message {one} "))),
        "{audit:?}"
    );

    // 1 to 100 ids; anything else is 400 with a clear body.
    let hundred_and_one: Vec<u64> = (1..=101).collect();
    for (body, error) in [
        (
            json!({"messageIds": []}),
            "messageIds must hold 1 to 100 ids; it holds 0",
        ),
        (
            json!({ "messageIds": hundred_and_one }),
            "messageIds must hold 1 to 100 ids; it holds 101",
        ),
        (json!({}), "messageIds is required"),
        (
            json!({"messageIds": ["1"]}),
            "messageIds[0] must be a message id, a whole number from 1",
        ),
    ] {
        let response = acknowledge(&server, "betreuung", &body);
        assert_eq!(response.status(), 400, "{body}");
        let answer: Value = response.json().unwrap();
        assert_eq!(
            answer,
            json!({"error": "the request is invalid; see errors", "errors": [error]})
        );
    }
}

/// `[modules.guardianship] archive_dir`: the archives go into the folder named (a volume the
/// nodes share), not the data directory, and are downloaded from there; a file in its place
/// stops the start.
#[test]
fn archives_go_into_the_configured_folder_and_are_downloaded_from_it() {
    let shared = tempfile::tempdir().unwrap();
    let folder = shared.path().join("archives");
    let folder_setting = folder.display().to_string();
    let (dir, server) = court_server(
        &["betreuung"],
        &[(
            "MELDEWERK_MODULES__GUARDIANSHIP__ARCHIVE_DIR",
            &folder_setting,
        )],
    );
    let message_id = drop_court_message(
        &server,
        &[("xjustiz_nachricht.xml", BESCHLUSS), ("beschluss.pdf", PDF)],
    );
    let id = wait_hydrated(&server, "betreuung", &message_id)["id"]
        .as_u64()
        .unwrap();
    let archive = folder.join(format!("{id}.zip"));
    assert!(archive.is_file(), "no archive in {}", folder.display());
    assert!(!dir.path().join("court-messages").exists());
    let response = server.get_as("betreuung", &format!("{API}/download/{id}"));
    assert_eq!(response.status(), 200);
    let zip = response.bytes().unwrap();
    assert_eq!(std::fs::read(&archive).unwrap(), zip.as_ref());
    assert_eq!(entry(&open_zip(&zip), "beschluss.pdf"), PDF);

    let file = shared.path().join("a-file");
    std::fs::write(&file, b"not a folder").unwrap();
    let refused = common::refused_start(&[(
        "MELDEWERK_MODULES__GUARDIANSHIP__ARCHIVE_DIR",
        file.to_str().unwrap(),
    )]);
    assert!(
        refused.contains("archive_dir") && refused.contains("is not a folder"),
        "{refused}"
    );
}
