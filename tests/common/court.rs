//! What the guardianship tests share: a server whose mailbox is read quickly, a mailbox account
//! granted to a user, court messages dropped into the simulated court mailbox as a tester's court
//! drops them, the guardianship API as an integrator calls it, what reached the simulated court's
//! own mailbox (with the form's PDF read by `pdftotext`), and archives opened with Python's
//! `zipfile`.

use std::io::Write;
use std::process::{Command, Stdio};

use base64::Engine as _;
use reqwest::blocking::Response;
use reqwest::Method;
use serde_json::{json, Value};

use super::operator::operator;
use super::{wait_until, DataDir, Server};

/// The mailbox account the tests read, and its SAFE-ID.
pub const ACCOUNT: i64 = 7;
/// Its SAFE-ID.
pub const SAFE_ID: &str = "DE.Justiz.meldewerk-test";
/// The court that writes.
pub const COURT: &str = "DE.Justiz.ag-musterstadt";
/// The guardianship API.
pub const API: &str = "/api/guardianship/v1";

/// A court's message whose case reference (the recipient's) is `BV-2026/0815`.
pub const BESCHLUSS: &[u8] =
    include_bytes!("../../xml/tests/fixtures/xjustiz/betreuung_beschluss.xml");

/// The environment of a server that syncs every 100 ms and lists whole every second.
pub fn quick_reading() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MELDEWERK_MODULES__GUARDIANSHIP__SYNC_INTERVAL_MS", "100"),
        (
            "MELDEWERK_MODULES__GUARDIANSHIP__FULL_SYNC_INTERVAL_SECS",
            "1",
        ),
    ]
}

/// A server reading quickly (plus `env`), with `users` and account [`ACCOUNT`] granted to the
/// first of them.
pub fn court_server(users: &[&str], env: &[(&str, &str)]) -> (DataDir, Server) {
    let (dir, server) = quick_server(users, env);
    configure_account(&server, users[0]);
    (dir, server)
}

/// A server reading quickly (plus `env`) with `users`, and no mailbox account yet.
pub fn quick_server(users: &[&str], env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    for user in users {
        dir.add_user(user);
    }
    let mut all = quick_reading();
    all.extend_from_slice(env);
    let server = Server::start(&dir, &all);
    (dir, server)
}

/// Configures account [`ACCOUNT`] ([`SAFE_ID`]) and grants it to `user`: from now on the
/// service reads its mailbox.
pub fn configure_account(server: &Server, user: &str) {
    let accounts = "/admin/api/v1/mailbox-accounts";
    let put = operator(
        server,
        Method::PUT,
        &format!("{accounts}/{ACCOUNT}"),
        Some(&json!({"safeId": SAFE_ID, "name": "Betreuungsstelle Süd"})),
    );
    assert!(put.status().is_success(), "{:?}", put.text());
    let granted = operator(
        server,
        Method::PUT,
        &format!("{accounts}/{ACCOUNT}/users/{user}"),
        None,
    );
    assert!(granted.status().is_success(), "{:?}", granted.text());
}

/// Standard base64.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Drops a court message with `files` (name, content) into `safe_id`'s mailbox; answers its
/// transport message id.
pub fn drop_into(server: &Server, safe_id: &str, files: &[(&str, &[u8])]) -> String {
    let files: Vec<Value> = files
        .iter()
        .map(|(name, content)| json!({"name": name, "content": b64(content)}))
        .collect();
    let path = format!("/admin/api/v1/transports/egvp/mailboxes/{safe_id}/messages");
    let response = operator(
        server,
        Method::POST,
        &path,
        Some(&json!({"sender": COURT, "files": files})),
    );
    assert_eq!(response.status(), 201);
    let body: Value = response.json().unwrap();
    body["message_id"].as_str().unwrap().to_owned()
}

/// Drops a court message into the account's mailbox.
pub fn drop_court_message(server: &Server, files: &[(&str, &[u8])]) -> String {
    drop_into(server, SAFE_ID, files)
}

/// `GET /messages{query}` as `user`: status and body.
pub fn list(server: &Server, user: &str, query: &str) -> (u16, Value) {
    let response = server.get_as(user, &format!("{API}/messages{query}"));
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// The listed message whose transport id is `message_id`, once `ready` holds of it.
pub fn wait_for_message(
    server: &Server,
    user: &str,
    message_id: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    wait_until(&format!("message {message_id} listed as expected"), || {
        let (status, listing) = list(server, user, "");
        assert_eq!(status, 200, "{listing}");
        listing
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["messageId"] == message_id)
            .filter(|m| ready(m))
            .cloned()
    })
}

/// The listed message once it is hydrated.
pub fn wait_hydrated(server: &Server, user: &str, message_id: &str) -> Value {
    wait_for_message(server, user, message_id, |m| !m["hydratedAt"].is_null())
}

/// `POST /messages/ack` as `user`.
pub fn acknowledge(server: &Server, user: &str, body: &Value) -> Response {
    server.post_as(user, &format!("{API}/messages/ack"), body)
}

/// The operator's view of the account's court messages (errors included).
pub fn operator_view(server: &Server) -> Value {
    let response = server.admin_get(&format!(
        "/admin/api/v1/mailbox-accounts/{ACCOUNT}/messages"
    ));
    assert_eq!(response.status(), 200);
    response.json().unwrap()
}

/// What Python's `zipfile` reads from `zip`: the entry names in order, each entry's bytes
/// (base64), and the metadata file parsed; `testzip` must find no bad entry.
pub fn open_zip(zip: &[u8]) -> Value {
    let script = r#"
import base64, io, json, sys, zipfile
archive = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))
bad = archive.testzip()
names = archive.namelist()
print(json.dumps({
    "bad": bad,
    "names": names,
    "entries": {n: base64.b64encode(archive.read(n)).decode() for n in names},
    "metadata": json.loads(archive.read("meldewerk.json")) if "meldewerk.json" in names else None,
}))
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(zip).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "zipfile refused the archive: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(read["bad"], Value::Null, "a damaged entry");
    read
}

/// The bytes of an entry [`open_zip`] read.
pub fn entry(read: &Value, name: &str) -> Vec<u8> {
    let encoded = read["entries"][name]
        .as_str()
        .unwrap_or_else(|| panic!("no entry {name}: {read}"));
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap()
}

/// Validates an XJustiz message against the XJustiz 3.6.2 schemas (`xjustiz_0005_nachrichten`)
/// with `xmllint`; its output on failure.
pub fn xmllint_xjustiz(xml: &[u8]) -> Result<(), String> {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), xml).unwrap();
    let output = Command::new("xmllint")
        .current_dir(super::reference_dir().join("xjustiz-3.6.2"))
        .args([
            "--noout",
            "--nonet",
            "--schema",
            "xjustiz_0005_nachrichten_3_2.xsd",
        ])
        .arg(file.path())
        .output()
        .expect("xmllint is not installed (scripts/test.sh installs it)");
    match output.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
    }
}

/// Runs one of the pyxjustiz scripts of `xml/tests/pyxjustiz/` (pyxjustiz's models, generated
/// from the official XSDs; pinned in scripts/test.sh); its standard output.
fn pyxjustiz(script: &str, args: &[&str]) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("xml/tests/pyxjustiz")
        .join(script);
    let output = Command::new("python3")
        .arg(path)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "pyxjustiz {script} failed (scripts/test.sh installs pyxjustiz==1.1.0): {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// What pyxjustiz reads from a 0005005 message (`read_uebermittlung.py`).
pub fn pyxjustiz_read(xml: &[u8]) -> Value {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), xml).unwrap();
    let read: Value = serde_json::from_slice(&pyxjustiz(
        "read_uebermittlung.py",
        &[file.path().to_str().unwrap()],
    ))
    .unwrap();
    read[0]["message"].clone()
}

/// A court's message built by pyxjustiz (`court_message.py`), not by our writer.
pub fn pyxjustiz_court_message(args: &[&str]) -> Vec<u8> {
    pyxjustiz("court_message.py", args)
}

/// A complete guardianship memento request for the job `job`, sending through [`ACCOUNT`] to
/// [`COURT`].
pub fn memento_body(job: &str) -> Value {
    json!({
        "jobId": job,
        "meldeZeitpunkt": "2026-11-26T09:30:00+01:00",
        "absender": {"name": "Klinikum Nord, Sozialdienst", "egvp_account_id": ACCOUNT},
        "empfaenger": {
            "name": "Amtsgericht Musterstadt, Betreuungsgericht",
            "type": "Gericht",
            "safeId": COURT,
            "adresse": {"strasse": "Gerichtsplatz 1", "plz": "12345", "stadt": "Musterstadt"}
        },
        "betroffener": {
            "name": {"vorname": "Jörg", "nachname": "Müller"},
            "geburtsdatum": "1941-03-02",
            "familienstand": "Verwitwet",
            "anschrift": {"strasse": "Lindenweg 3", "plz": "12345", "stadt": "Musterstadt"},
            "anschriftTelefon": "030 1234567",
            "gegenwaertigerAufenthalt": "Klinikum Nord, Station 4B, Zimmer 12"
        }
    })
}

/// The simulated court's own mailbox, as the operator API lists it.
pub const COURT_MAILBOX: &str =
    "/admin/api/v1/transports/egvp/mailboxes/DE.Justiz.ag-musterstadt/messages";

/// The files of the court's copy of the message whose sender's case reference is `reference`.
pub fn at_the_court(server: &Server, reference: &str) -> (Vec<u8>, String, Vec<u8>) {
    wait_until(&format!("the court received {reference}"), || {
        let listing: Value = operator(server, Method::GET, COURT_MAILBOX, None)
            .json()
            .unwrap();
        listing["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|entry| {
                let path = format!("{COURT_MAILBOX}/{}", entry["message_id"].as_str().unwrap());
                let message: Value = operator(server, Method::GET, &path, None).json().unwrap();
                let file = |i: usize| {
                    base64::engine::general_purpose::STANDARD
                        .decode(message["files"][i]["content"].as_str().unwrap())
                        .unwrap()
                };
                let xml = file(0);
                let text = String::from_utf8_lossy(&xml);
                text.contains(&format!(">{reference}<")).then(|| {
                    let pdf_name = message["files"][1]["name"].as_str().unwrap().to_owned();
                    (xml, pdf_name, file(1))
                })
            })
    })
}

/// The text of `pdf` as `pdftotext` reads it, once `qpdf --check` found the file sound.
pub fn pdf_text(pdf: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), pdf).unwrap();
    let check = Command::new("qpdf")
        .arg("--check")
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let text = Command::new("pdftotext")
        .arg(file.path())
        .arg("-")
        .output()
        .unwrap();
    String::from_utf8(text.stdout).unwrap()
}
