//! A crash in the middle of hydrating: the server is killed (SIGKILL) while it fetches and
//! archives 500 court messages, then started again. Every message ends hydrated, indexed once,
//! with exactly one whole archive; no temporary file and no orphan archive is left.

mod common;

use std::collections::HashSet;
use std::process::Command;

use common::court::*;
use common::*;

const MESSAGES: usize = 500;

fn hydrated_count(server: &Server) -> usize {
    let (status, listing) = list(server, "betreuung", "");
    assert_eq!(status, 200);
    listing
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["hydratedAt"].is_null())
        .count()
}

#[test]
fn a_kill_during_hydration_leaves_every_message_hydrated_once_and_no_stray_file() {
    let (dir, mut server) = quick_server(
        &["betreuung"],
        &[
            // Slow enough that the kill meets fetches and archive writes under way.
            ("MELDEWERK_TRANSPORTS__EGVP__LATENCY_MS", "15"),
            ("MELDEWERK_MODULES__GUARDIANSHIP__HYDRATION_WORKERS", "8"),
        ],
    );
    let attachment = vec![b'a'; 20_000];
    let mut dropped = HashSet::new();
    for _ in 0..MESSAGES {
        dropped.insert(drop_court_message(
            &server,
            &[
                ("xjustiz_nachricht.xml", BESCHLUSS),
                ("anlage.pdf", &attachment),
            ],
        ));
    }
    // Configured once every message waits: the sync finds them all at once.
    configure_account(&server, "betreuung");
    wait_until("some hydrated, not all", || {
        let done = hydrated_count(&server);
        assert!(done < MESSAGES, "hydrated before the kill could meet it");
        (done >= 50).then_some(())
    });
    server.kill();
    server.start_again();

    wait_until("every message hydrated after the restart", || {
        (hydrated_count(&server) == MESSAGES).then_some(())
    });
    let (_, listing) = list(&server, "betreuung", "");
    let listing = listing.as_array().unwrap();
    assert_eq!(listing.len(), MESSAGES, "each message indexed once");
    let message_ids: HashSet<String> = listing
        .iter()
        .map(|m| m["messageId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(message_ids, dropped);
    let ids: HashSet<String> = listing.iter().map(|m| format!("{}.zip", m["id"])).collect();
    assert!(listing.iter().all(|m| m["aktenzeichen"] == "BV-2026/0815"));

    // The folder holds exactly one archive per message, each whole.
    let folder = dir.path().join("court-messages");
    let files: HashSet<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, ids, "no temporary file, no orphan archive");
    let check = r#"
import sys, zipfile, pathlib
bad = []
for path in sorted(pathlib.Path(sys.argv[1]).iterdir()):
    with zipfile.ZipFile(path) as archive:
        if archive.testzip() is not None or len(archive.namelist()) != 3:
            bad.append(path.name)
print(" ".join(bad))
"#;
    let output = Command::new("python3")
        .args(["-c", check])
        .arg(&folder)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "",
        "damaged archives"
    );
    let view = operator_view(&server);
    let states: HashSet<&str> = view["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["hydration"].as_str().unwrap())
        .collect();
    assert_eq!(states, HashSet::from(["hydrated"]));
}
