//! Hostile and broken court messages: entity declarations (expansion, external references),
//! deep nesting, attachment names that try to leave the archive folder, duplicate names, a
//! message without its XML, and answers cut short by the mailbox server. Each stays listed
//! with no case reference and an error operators see; no actor stops; nothing is written
//! outside the archive folder.

mod common;

use std::path::Path;

use common::court::*;
use common::*;
use reqwest::Method;
use serde_json::{json, Value};

const BILLION_LAUGHS: &str = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005 xmlns:tns="http://www.xjustiz.de">&lol4;</tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005>"#;

const EXTERNAL_ENTITY: &str = r#"<?xml version="1.0"?>
<!DOCTYPE n [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005 xmlns:tns="http://www.xjustiz.de">&xxe;</tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005>"#;

/// A message's files: name and content.
type Files<'a> = Vec<(&'a str, &'a [u8])>;

/// Every file below `dir`, as paths relative to it.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

#[test]
fn hostile_content_is_archived_unread_and_nothing_leaves_the_archive_folder() {
    let (dir, server) = court_server(&["betreuung"], &[]);
    let root = "tns:nachricht.gds.uebermittlungSchriftgutobjekte.0005005";
    let nested = format!(
        r#"<{root} xmlns:tns="http://www.xjustiz.de">{}{}</{root}>"#,
        "<a>".repeat(100_000),
        "</a>".repeat(100_000)
    );
    let truncated_xml = &BESCHLUSS[..BESCHLUSS.len() / 2];
    let cases: Vec<(&str, Files, &str)> = vec![
        (
            "entity expansion",
            vec![("xjustiz_nachricht.xml", BILLION_LAUGHS.as_bytes())],
            "DOCTYPE",
        ),
        (
            "external entity",
            vec![("xjustiz_nachricht.xml", EXTERNAL_ENTITY.as_bytes())],
            "DOCTYPE",
        ),
        (
            "deep nesting",
            vec![("xjustiz_nachricht.xml", nested.as_bytes())],
            "deep",
        ),
        (
            "truncated XML",
            vec![("xjustiz_nachricht.xml", truncated_xml)],
            "",
        ),
        (
            "no XJustiz file",
            vec![("brief.pdf", b"%PDF-1.7".as_slice())],
            "has no xjustiz_nachricht.xml",
        ),
    ];
    let mut dropped = Vec::new();
    for (what, files, _) in &cases {
        dropped.push((*what, drop_court_message(&server, files)));
    }
    // Hostile names beside a readable message: read, and stored under safe names.
    let names = drop_court_message(
        &server,
        &[
            ("xjustiz_nachricht.xml", BESCHLUSS),
            ("../../../escaped.txt", b"1"),
            ("/etc/escaped-absolute.txt", b"2"),
            ("C:\\Windows\\escaped-drive.txt", b"3"),
            ("kontroll\u{1}zeichen.txt", b"4"),
            ("anlage.pdf", b"5"),
            ("anlage.pdf", b"6"),
        ],
    );

    for ((what, message_id), (_, _, error)) in dropped.iter().zip(&cases) {
        let view = wait_until(&format!("{what} handled"), || {
            operator_view(&server)["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["messageId"] == message_id.as_str() && m["hydration"] == "unreadable")
                .cloned()
        });
        let shown = view["error"].as_str().unwrap();
        assert!(shown.contains(error), "{what}: {shown}");
        let listed = wait_for_message(&server, "betreuung", message_id, |_| true);
        assert_eq!(listed["aktenzeichen"], Value::Null, "{what}");
        assert_eq!(listed["hydratedAt"], Value::Null, "{what}");
        // Archived as it came, for a human to look at.
        let id = listed["id"].as_u64().unwrap();
        let response = server.get_as("betreuung", &format!("{API}/download/{id}"));
        assert_eq!(response.status(), 200, "{what}");
        let read = open_zip(&response.bytes().unwrap());
        assert!(read["metadata"]["readError"].is_string(), "{what}");
    }

    let listed = wait_hydrated(&server, "betreuung", &names);
    assert_eq!(listed["aktenzeichen"], "BV-2026/0815");
    let id = listed["id"].as_u64().unwrap();
    let read = open_zip(
        &server
            .get_as("betreuung", &format!("{API}/download/{id}"))
            .bytes()
            .unwrap(),
    );
    let stored: Vec<&str> = read["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), 8, "{stored:?}");
    let unique: std::collections::HashSet<&&str> = stored.iter().collect();
    assert_eq!(unique.len(), stored.len(), "names are unique: {stored:?}");
    for name in &stored {
        assert!(
            !name.contains('/')
                && !name.contains('\\')
                && !name.contains("..")
                && !name.contains(':')
                && !name.chars().any(char::is_control),
            "{name}"
        );
    }
    let originals: Vec<&Value> = read["metadata"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["originalName"])
        .collect();
    assert!(
        originals.contains(&&json!("../../../escaped.txt")),
        "{originals:?}"
    );

    // Nothing but archives in the archive folder, and nothing escaped beside it.
    for file in files_below(dir.path()) {
        assert!(!file.contains("escaped"), "{file}");
    }
    for file in files_below(&dir.path().join("court-messages")) {
        assert!(file.ends_with(".zip") && !file.starts_with('.'), "{file}");
    }
    assert!(!Path::new("/etc/escaped-absolute.txt").exists());
    assert_eq!(server.actor("hydration:egvp")["state"], "running");
}

#[test]
fn answers_cut_short_are_retried_then_given_up_with_the_reason() {
    let (_dir, server) = court_server(
        &["betreuung"],
        &[
            ("MELDEWERK_MODULES__GUARDIANSHIP__HYDRATION_ATTEMPTS", "3"),
            ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "10"),
            ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "50"),
        ],
    );
    let script = "/admin/api/v1/transports/egvp/script/rules";
    // Cut once: the second fetch brings it whole.
    let rule = common::operator::operator(
        &server,
        Method::POST,
        script,
        Some(&json!({"kind": "truncated", "count": 1})),
    );
    assert_eq!(rule.status(), 200);
    let once = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let listed = wait_hydrated(&server, "betreuung", &once);
    assert_eq!(listed["aktenzeichen"], "BV-2026/0815");

    // Cut every time: given up after three fetches, listed with the reason.
    let rule = common::operator::operator(
        &server,
        Method::POST,
        script,
        Some(&json!({"kind": "truncated"})),
    );
    assert_eq!(rule.status(), 200);
    let always = drop_court_message(&server, &[("xjustiz_nachricht.xml", BESCHLUSS)]);
    let view = wait_until("the cut message given up", || {
        operator_view(&server)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["messageId"] == always.as_str() && m["hydration"] == "failed")
            .cloned()
    });
    assert!(
        view["error"].as_str().unwrap().contains("cut short"),
        "{view}"
    );
    let listed = wait_for_message(&server, "betreuung", &always, |_| true);
    assert_eq!(listed["aktenzeichen"], Value::Null);
    assert_eq!(listed["hydratedAt"], Value::Null);
    let id = listed["id"].as_u64().unwrap();
    let response = server.get_as("betreuung", &format!("{API}/download/{id}"));
    assert_eq!(response.status(), 404);
    let body: Value = response.json().unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("not downloadable yet"),
        "{body}"
    );
    assert_eq!(server.actor("hydration:egvp")["state"], "running");
    assert!(server.actor("hydration:egvp")["failed"].as_u64().unwrap() >= 1);
}
