//! Writing a message's ZIP archive: read back with Python's `zipfile` (a reader nobody here
//! wrote), hostile and duplicate attachment names, atomic replacement, and a property test of the
//! naming rule.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use chrono::{TimeZone, Utc};
use meldewerk_xml::xjustiz::*;
use proptest::prelude::*;
use serde_json::Value;

/// Python reads the archive: every entry's name, size and SHA-256, the metadata file parsed,
/// `testzip()` (CRCs), and `extractall` into `extract_to`.
fn python_reads(archive: &Path, extract_to: &Path) -> Value {
    let script = r#"
import hashlib, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    entries = [{"name": i.filename, "size": i.file_size,
                "sha256": hashlib.sha256(z.read(i)).hexdigest()} for i in z.infolist()]
    bad = z.testzip()
    meta = json.loads(z.read("meldewerk.json"))
    z.extractall(sys.argv[2])
print(json.dumps({"entries": entries, "bad": bad, "meta": meta}))
"#;
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(archive)
        .arg(extract_to)
        .output()
        .expect("python3 is not installed");
    assert!(
        output.status.success(),
        "python could not read the archive: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    let output = Command::new("python3")
        .args([
            "-c",
            "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn xml() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/xjustiz/betreuung_beschluss.xml"),
    )
    .unwrap()
}

fn input<'a>(
    xml: &'a [u8],
    summary: Option<&'a MessageSummary>,
    attachments: &'a [Attachment<'a>],
) -> ArchiveInput<'a> {
    ArchiveInput {
        message_id: "egvp-4711",
        account_safe_id: "DE.Justiz.1a2b3c4d-0000-4000-8000-000000000001.0815",
        direction: Direction::Incoming,
        created_at: Utc.with_ymd_and_hms(2026, 11, 20, 8, 30, 0).unwrap(),
        received_at: Some(Utc.with_ymd_and_hms(2026, 11, 20, 8, 31, 5).unwrap()),
        hydrated_at: Utc.with_ymd_and_hms(2026, 11, 20, 8, 31, 6).unwrap(),
        xml,
        summary,
        read_error: None,
        attachments,
    }
}

/// The names in `folder`, sorted.
fn listing(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// Every file below `root`, as paths relative to it.
fn files_below(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_archive_holds_the_xml_the_attachments_and_the_metadata() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("archives");
    std::fs::create_dir(&folder).unwrap();
    let xml = xml();
    let summary = read_message(&xml).unwrap();
    let pdf = b"%PDF-1.7\n\xe2\xe3\xcf\xd3 Beschluss".repeat(500);
    let attachments = [
        Attachment {
            name: "Beschluss_50_XVII_123-26.pdf",
            content: &pdf,
        },
        Attachment {
            name: "leer.txt",
            content: b"",
        },
    ];
    let path = write_archive(&folder, 42, &input(&xml, Some(&summary), &attachments)).unwrap();
    assert_eq!(path, folder.join("42.zip"));
    assert_eq!(listing(&folder), ["42.zip"]);

    let extract = root.path().join("extract");
    let read = python_reads(&path, &extract);
    assert_eq!(read["bad"], Value::Null, "a CRC did not match");
    let entries: Vec<(String, u64, String)> = read["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["size"].as_u64().unwrap(),
                e["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(entries.len(), 4);
    assert_eq!(
        entries[0],
        (MESSAGE_FILE.into(), xml.len() as u64, sha256_hex(&xml))
    );
    assert_eq!(
        entries[1],
        (
            "Beschluss_50_XVII_123-26.pdf".into(),
            pdf.len() as u64,
            sha256_hex(&pdf)
        )
    );
    assert_eq!(entries[2], ("leer.txt".into(), 0, sha256_hex(b"")));
    assert_eq!(entries[3].0, METADATA_FILE);
    assert_eq!(std::fs::read(extract.join(MESSAGE_FILE)).unwrap(), xml);
    assert_eq!(
        std::fs::read(extract.join("Beschluss_50_XVII_123-26.pdf")).unwrap(),
        pdf
    );
    assert_eq!(std::fs::read(extract.join("leer.txt")).unwrap(), b"");

    let meta = &read["meta"];
    assert_eq!(meta["format"], 1);
    assert_eq!(meta["messageId"], "egvp-4711");
    assert_eq!(
        meta["accountSafeId"],
        "DE.Justiz.1a2b3c4d-0000-4000-8000-000000000001.0815"
    );
    assert_eq!(meta["direction"], "INCOMING");
    assert_eq!(meta["createdAt"], "2026-11-20T08:30:00Z");
    assert_eq!(meta["receivedAt"], "2026-11-20T08:31:05Z");
    assert_eq!(meta["hydratedAt"], "2026-11-20T08:31:06Z");
    assert_eq!(meta["readError"], Value::Null);
    assert_eq!(meta["xjustiz"]["aktenzeichen"], "BV-2026/0815");
    assert_eq!(meta["xjustiz"]["aktenzeichenSource"], "empfaenger");
    assert_eq!(meta["xjustiz"]["beteiligte"][0]["name"], "Jörg Müller-Weiß");
    assert_eq!(meta["xjustiz"]["beteiligte"][0]["rolle"], "Betroffener");
    assert_eq!(
        meta["xjustiz"]["dokumente"][0]["dateinamen"][0],
        "Beschluss_50_XVII_123-26.pdf"
    );
    let files = meta["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["storedName"], MESSAGE_FILE);
    assert_eq!(files[0]["originalName"], Value::Null);
    assert_eq!(files[0]["sha256"], sha256_hex(&xml));
    assert_eq!(files[1]["storedName"], "Beschluss_50_XVII_123-26.pdf");
    assert_eq!(files[1]["originalName"], "Beschluss_50_XVII_123-26.pdf");
    assert_eq!(files[1]["size"], pdf.len());
    assert_eq!(files[1]["sha256"], sha256_hex(&pdf));
    assert_eq!(files[2]["size"], 0);
    assert_eq!(files[2]["sha256"], sha256_hex(b""));
}

#[test]
fn hostile_and_duplicate_names_stay_inside_the_archive() {
    let root = tempfile::tempdir().unwrap();
    let folder = root.path().join("archives");
    std::fs::create_dir(&folder).unwrap();
    let hostile = [
        "../../escaped.txt",
        "/tmp/absolute.txt",
        "C:\\Windows\\system32\\drive.txt",
        "D:relative.txt",
        "..\\..\\back.txt",
        "ctrl\u{0}\u{1b}[31m\r\n.txt",
        "",
        "..",
        ".",
        "   ",
        "xjustiz_nachricht.xml",
        "Meldewerk.json",
        "Brief.pdf",
        "BRIEF.pdf",
        "brief.pdf",
        &format!("{}.pdf", "x".repeat(5000)),
        "NUL",
    ];
    let contents: Vec<Vec<u8>> = (0..hostile.len())
        .map(|i| format!("file {i}").into_bytes())
        .collect();
    let attachments: Vec<Attachment> = hostile
        .iter()
        .zip(&contents)
        .map(|(name, content)| Attachment { name, content })
        .collect();
    let xml = xml();
    let path = write_archive(&folder, 7, &input(&xml, None, &attachments)).unwrap();

    let extract = root.path().join("extract");
    let read = python_reads(&path, &extract);
    let names: Vec<String> = read["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    let long = format!("{}.pdf", "x".repeat(96));
    assert_eq!(
        names,
        [
            MESSAGE_FILE,
            "escaped.txt",
            "absolute.txt",
            "drive.txt",
            "D_relative.txt",
            "back.txt",
            "ctrl__[31m__.txt",
            "attachment",
            "attachment (2)",
            "attachment (3)",
            "attachment (4)",
            "xjustiz_nachricht (2).xml",
            "Meldewerk (2).json",
            "Brief.pdf",
            "BRIEF (2).pdf",
            "brief (3).pdf",
            long.as_str(),
            "_NUL",
            METADATA_FILE,
        ]
    );
    // Python wrote every entry flat inside its extraction folder, nothing beside it.
    let mut expected: Vec<String> = names.clone();
    expected.sort();
    assert_eq!(files_below(&extract), expected);
    assert_eq!(listing(root.path()), ["archives", "extract"]);
    assert_eq!(listing(&folder), ["7.zip"]);
    // Each attachment's bytes under its stored name, its original recorded beside it.
    let files = read["meta"]["files"].as_array().unwrap();
    for (i, original) in hostile.iter().enumerate() {
        let stored = files[i + 1]["storedName"].as_str().unwrap();
        assert_eq!(files[i + 1]["originalName"], *original);
        assert_eq!(std::fs::read(extract.join(stored)).unwrap(), contents[i]);
    }
}

#[test]
fn an_unreadable_message_is_archived_with_its_read_error() {
    let folder = tempfile::tempdir().unwrap();
    let broken =
        b"<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><nachricht.x>&e;</nachricht.x>";
    let error = read_message(broken).unwrap_err().to_string();
    let mut archive_input = input(broken, None, &[]);
    archive_input.read_error = Some(&error);
    archive_input.received_at = None;
    let path = write_archive(folder.path(), 9, &archive_input).unwrap();
    let extract = tempfile::tempdir().unwrap();
    let read = python_reads(&path, extract.path());
    assert_eq!(read["meta"]["xjustiz"], Value::Null);
    assert_eq!(read["meta"]["receivedAt"], Value::Null);
    assert!(read["meta"]["readError"]
        .as_str()
        .unwrap()
        .contains("DOCTYPE"));
    assert_eq!(
        std::fs::read(extract.path().join(MESSAGE_FILE)).unwrap(),
        broken
    );
}

#[test]
fn writing_again_replaces_the_archive_and_leaves_no_temporary_file() {
    let folder = tempfile::tempdir().unwrap();
    let xml = xml();
    let first = [Attachment {
        name: "a.pdf",
        content: b"first",
    }];
    let second = [Attachment {
        name: "b.pdf",
        content: b"second",
    }];
    write_archive(folder.path(), 3, &input(&xml, None, &first)).unwrap();
    let path = write_archive(folder.path(), 3, &input(&xml, None, &second)).unwrap();
    assert_eq!(listing(folder.path()), ["3.zip"]);
    let extract = tempfile::tempdir().unwrap();
    let read = python_reads(&path, extract.path());
    assert_eq!(read["entries"][1]["name"], "b.pdf");
    assert!(!extract.path().join("a.pdf").exists());
}

#[test]
fn a_failed_write_leaves_nothing_and_temporary_files_are_recognisable() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("no-such-folder");
    let xml = xml();
    let err = write_archive(&missing, 5, &input(&xml, None, &[])).unwrap_err();
    assert!(matches!(err, ArchiveError::Io(_)), "{err:?}");
    assert_eq!(listing(root.path()), Vec::<String>::new());

    assert!(is_leftover_temp_file(".partial-5-0123456789abcdef.zip"));
    assert!(!is_leftover_temp_file("5.zip"));
}

proptest! {
    #[test]
    fn arbitrary_names_give_safe_unique_stored_names(
        originals in proptest::collection::vec(any::<String>(), 0..24)
    ) {
        let stored = safe_stored_names(&originals);
        prop_assert_eq!(stored.len(), originals.len());
        let mut seen: HashSet<String> = [MESSAGE_FILE, METADATA_FILE]
            .iter()
            .map(|n| n.to_lowercase())
            .collect();
        for name in &stored {
            prop_assert!(!name.is_empty());
            prop_assert!(name.chars().count() <= 120, "{:?}", name);
            prop_assert!(!name.contains(['/', '\\', ':', '<', '>', '"', '|', '?', '*']), "{:?}", name);
            prop_assert!(!name.chars().any(char::is_control), "{:?}", name);
            prop_assert!(!name.starts_with('.') && !name.ends_with('.'), "{:?}", name);
            prop_assert!(name.trim() == name, "{:?}", name);
            prop_assert!(seen.insert(name.to_lowercase()), "not unique: {:?}", name);
        }
    }

    #[test]
    fn repeated_names_stay_unique(name in "[a-zA-Z.]{0,6}", count in 1usize..40) {
        let originals = vec![name; count];
        let stored = safe_stored_names(&originals);
        let lower: HashSet<String> = stored.iter().map(|n| n.to_lowercase()).collect();
        prop_assert_eq!(lower.len(), count);
    }
}
