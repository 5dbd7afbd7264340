//! The simulated court mailbox (`egvp`) in the service's process, played over the operator API
//! as testers play the courts: court messages dropped as JSON and as multipart (hostile file
//! names kept as sent), listed since a cursor, fetched (first retrieval recorded once), deleted,
//! the script's mailbox faults, strict bodies with clear errors, the audit log, and a restart
//! that keeps every mailbox.

mod common;

use base64::Engine as _;
use common::*;
use reqwest::blocking::Response;
use serde_json::{json, Value};

const MAILBOX: &str = "/admin/api/v1/transports/egvp/mailboxes/DE.Justiz.meldewerk-test/messages";
const COURT: &str = "DE.Justiz.ag-musterstadt";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn operator(server: &Server, method: &str, path: &str) -> reqwest::blocking::RequestBuilder {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    server
        .client()
        .request(method, server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
}

/// Sends and expects `status`; answers the JSON body.
fn expect(response: Response, status: u16) -> Value {
    let got = response.status();
    let body: Value = response.json().unwrap_or(Value::Null);
    assert_eq!(got, status, "{body}");
    body
}

fn drop_json(server: &Server, path: &str, body: &Value) -> Response {
    operator(server, "POST", path).json(body).send().unwrap()
}

/// A multipart drop as a browser's form sends it (with the service's own origin, as the
/// operator API asks of form bodies).
fn drop_multipart(server: &Server, path: &str, body: Vec<u8>) -> Response {
    operator(server, "POST", path)
        .header("Content-Type", "multipart/form-data; boundary=grenze")
        .header("Origin", &server.base)
        .body(body)
        .send()
        .unwrap()
}

fn multipart(sender: Option<&str>, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some(sender) = sender {
        body.extend_from_slice(
            format!(
                "--grenze\r\nContent-Disposition: form-data; name=\"sender\"\r\n\r\n{sender}\r\n"
            )
            .as_bytes(),
        );
    }
    for (name, content) in files {
        let encoded: String = name.bytes().map(|b| format!("%{b:02X}")).collect();
        body.extend_from_slice(
            format!(
                "--grenze\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"; \
                 filename*=UTF-8''{encoded}\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--grenze--\r\n");
    body
}

fn ids(listing: &Value) -> Vec<String> {
    listing["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message_id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn court_messages_are_dropped_listed_fetched_and_deleted() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let mut server = Server::start(&dir, &[]);
    let xml = b"<nachricht.gds.uebermittlungSchriftgutobjekte.0005005/>";
    let dropped = drop_json(
        &server,
        MAILBOX,
        &json!({"sender": COURT, "files": [
            {"name": "xjustiz_nachricht.xml", "content": b64(xml)},
            {"name": "beschluss.pdf", "content": b64(b"%PDF-1.7 beschluss")}]}),
    );
    let location = dropped.headers()["location"].to_str().unwrap().to_owned();
    let first = expect(dropped, 201);
    assert_eq!(first["direction"], "INCOMING");
    assert_eq!(first["received_at"], Value::Null);
    assert_eq!(first["size"], xml.len() + 18);
    let first_id = first["message_id"].as_str().unwrap().to_owned();
    assert_eq!(location, format!("{MAILBOX}/{first_id}"));

    // Multipart: file names as the court sent them, hostile and repeated ones included.
    let hostile: [(&str, &[u8]); 3] = [
        ("xjustiz_nachricht.xml", b"<a/>"),
        ("../../etc/passwd", b"x"),
        ("../../etc/passwd", b"y"),
    ];
    let second = expect(
        drop_multipart(&server, MAILBOX, multipart(Some(COURT), &hostile)),
        201,
    );
    let second_id = second["message_id"].as_str().unwrap().to_owned();

    // Paged: one at a time, the cursor leads on.
    let page = expect(
        operator(&server, "GET", &format!("{MAILBOX}?limit=1"))
            .send()
            .unwrap(),
        200,
    );
    assert_eq!(ids(&page), [first_id.as_str()]);
    assert_eq!(page["more"], true);
    let cursor = page["cursor"].as_str().unwrap();
    let next = format!("{MAILBOX}?limit=1&cursor={cursor}");
    let page = expect(operator(&server, "GET", &next).send().unwrap(), 200);
    assert_eq!(ids(&page), [second_id.as_str()]);
    assert_eq!(page["more"], false);

    // Fetched: the files as dropped; the first retrieval is recorded once.
    let one = format!("{MAILBOX}/{second_id}");
    let message = expect(operator(&server, "GET", &one).send().unwrap(), 200);
    assert_eq!(message["sender"], COURT);
    let names: Vec<&str> = message["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "xjustiz_nachricht.xml",
            "../../etc/passwd",
            "../../etc/passwd"
        ]
    );
    assert_eq!(message["files"][2]["content"], b64(b"y"));
    let received_at = message["received_at"]
        .as_str()
        .expect("retrieval recorded")
        .to_owned();
    let again = expect(operator(&server, "GET", &one).send().unwrap(), 200);
    assert_eq!(again["received_at"], received_at.as_str());

    // Deleted once; gone afterwards.
    let deleted = expect(operator(&server, "DELETE", &one).send().unwrap(), 200);
    assert_eq!(deleted, json!({"deleted": true}));
    let deleted = expect(operator(&server, "DELETE", &one).send().unwrap(), 200);
    assert_eq!(deleted, json!({"deleted": false}));
    expect(operator(&server, "GET", &one).send().unwrap(), 404);

    let audit = audited(&server);
    let actions: Vec<&str> = audit.iter().map(|(action, _)| action.as_str()).collect();
    assert_eq!(
        actions,
        [
            "drop-mailbox-message",
            "drop-mailbox-message",
            "delete-mailbox-message",
            "delete-mailbox-message"
        ]
    );
    assert!(audit[2].1.contains(&second_id), "{audit:?}");

    // A restart keeps the mailbox as it was.
    server.restart();
    let all = expect(operator(&server, "GET", MAILBOX).send().unwrap(), 200);
    assert_eq!(ids(&all), [first_id]);
    assert_eq!(all["messages"][0]["received_at"], Value::Null);
    expect(operator(&server, "GET", &one).send().unwrap(), 404);

    assert_operators_only(
        "a drop",
        || server.client().post(server.url(MAILBOX)).json(&json!({})),
        "klinik",
    );
    assert_operators_only(
        "a listing",
        || server.client().get(server.url(MAILBOX)),
        "klinik",
    );
}

#[test]
fn bad_requests_get_clear_errors() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let xml = json!({"name": "xjustiz_nachricht.xml", "content": b64(b"<a/>")});
    let error = |response: Response, status: u16| -> String {
        let body = expect(response, status);
        body["errors"][0].as_str().unwrap_or_default().to_owned()
    };
    let cases = [
        (
            json!({"sender": COURT, "files": [xml], "cc": 1}),
            "unknown field `cc`",
        ),
        (
            json!({"sender": COURT, "files": [{"name": "a", "content": "!!"}]}),
            "the body must be",
        ),
        (json!({"files": [xml]}), "missing field `sender`"),
        (json!({"sender": COURT, "files": []}), "1 to 100 files"),
        (
            json!({"sender": "kein safe", "files": [xml]}),
            "sender: must be a SAFE-ID",
        ),
        (
            json!({"sender": COURT, "files": [{"name": "", "content": ""}]}),
            "files[0].name must have",
        ),
    ];
    for (body, said) in cases {
        let got = error(drop_json(&server, MAILBOX, &body), 400);
        assert!(got.contains(said), "{body}: {got}");
    }
    let bad_account = "/admin/api/v1/transports/egvp/mailboxes/kein%20safe/messages";
    let got = error(
        drop_json(
            &server,
            bad_account,
            &json!({"sender": COURT, "files": [xml]}),
        ),
        400,
    );
    assert!(got.contains("safeId: must be a SAFE-ID"), "{got}");
    let duplicated = operator(&server, "POST", MAILBOX)
        .header("Content-Type", "application/json")
        .body(format!(
            r#"{{"sender": "{COURT}", "sender": "x", "files": []}}"#
        ))
        .send()
        .unwrap();
    assert!(error(duplicated, 400).contains("sender"));
    let text = operator(&server, "POST", MAILBOX)
        .header("Content-Type", "text/csv")
        .body("a")
        .send()
        .unwrap();
    assert_eq!(text.status(), 415);
    // Just over the 10 MiB a message may carry: read, and refused for its size.
    let big = b64(&vec![b'x'; 10 * 1024 * 1024 + 1]);
    let over = json!({"sender": COURT, "files": [{"name": "a.pdf", "content": big}]});
    let got = error(drop_json(&server, MAILBOX, &over), 400);
    assert!(
        got.contains("more than the 10485760 a message may carry"),
        "{got}"
    );
    let huge = vec![b'a'; 14 * 1024 * 1024];
    let too_large = operator(&server, "POST", MAILBOX)
        .header("Content-Type", "application/json")
        .body(huge)
        .send()
        .unwrap();
    assert_eq!(too_large.status(), 413);

    // Multipart: a sender is required, other fields are refused, a broken body is said so.
    let no_sender = drop_multipart(&server, MAILBOX, multipart(None, &[("a.xml", b"<a/>")]));
    assert!(error(no_sender, 400).contains("the field sender (a SAFE-ID) is required"));
    let field =
        b"--grenze\r\nContent-Disposition: form-data; name=\"cc\"\r\n\r\nx\r\n--grenze--".to_vec();
    assert!(error(drop_multipart(&server, MAILBOX, field), 400).contains("unknown field \"cc\""));
    let cut = b"--grenze\r\nContent-Disposition: form-data; name=\"sender\"\r\n\r\nx".to_vec();
    assert!(error(drop_multipart(&server, MAILBOX, cut), 400).contains("cut short"));
    // A form body from nowhere is refused as another site's (the operator API's CSRF guard).
    let unproven = operator(&server, "POST", MAILBOX)
        .header("Content-Type", "multipart/form-data; boundary=grenze")
        .body(multipart(Some(COURT), &[("a.xml", b"<a/>")]))
        .send()
        .unwrap();
    assert_eq!(unproven.status(), 403);

    // Listing and reading.
    for (query, said) in [
        ("limit=0", "limit must be"),
        ("cursor=1&cursor=2", "more than once"),
        ("since=1", "unknown query parameter"),
    ] {
        let got = error(
            operator(&server, "GET", &format!("{MAILBOX}?{query}"))
                .send()
                .unwrap(),
            400,
        );
        assert!(got.contains(said), "{query}: {got}");
    }
    let got = error(
        operator(&server, "GET", &format!("{MAILBOX}?cursor=abc"))
            .send()
            .unwrap(),
        410,
    );
    assert!(got.contains("no cursor"), "{got}");
    let unknown = "/admin/api/v1/transports/egvp/mailboxes/DE.Justiz.niemand/messages";
    assert!(
        error(operator(&server, "GET", unknown).send().unwrap(), 403)
            .contains("no account of this mailbox server")
    );
    assert!(error(
        operator(&server, "GET", &format!("{MAILBOX}/nichts"))
            .send()
            .unwrap(),
        404
    )
    .contains("no such message"));
    for transport in ["demis", "xpersonenstand", "nope"] {
        let path = format!("/admin/api/v1/transports/{transport}/mailboxes/{COURT}/messages");
        let got = error(operator(&server, "GET", &path).send().unwrap(), 404);
        assert!(got.contains("keeps no mailboxes"), "{transport}: {got}");
    }
}

#[test]
fn scripted_faults_reach_the_mailbox_calls() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let script = "/admin/api/v1/transports/egvp/script/rules";
    let drop = |content: &[u8]| {
        let body = json!({"sender": COURT, "files": [{"name": "xjustiz_nachricht.xml", "content": b64(content)}]});
        expect(drop_json(&server, MAILBOX, &body), 201)["message_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (stuck, fine) = (drop(b"<stuck/>"), drop(b"<vollstaendig/>"));
    for rule in [
        json!({"kind": "unfetchable", "message_id": stuck}),
        json!({"kind": "truncated", "count": 1}),
        json!({"kind": "transient", "call": "list", "count": 1, "message": "Wartung"}),
        json!({"kind": "reset", "call": "delete", "count": 1}),
        json!({"kind": "latency", "call": "fetch", "ms": 1, "count": 1}),
    ] {
        expect(
            operator(&server, "POST", script)
                .json(&rule)
                .send()
                .unwrap(),
            200,
        );
    }
    let body = expect(operator(&server, "GET", MAILBOX).send().unwrap(), 503);
    assert_eq!(body, json!({"errors": ["Wartung"]}));
    assert_eq!(
        ids(&expect(
            operator(&server, "GET", MAILBOX).send().unwrap(),
            200
        ))
        .len(),
        2
    );
    for _ in 0..2 {
        let body = expect(
            operator(&server, "GET", &format!("{MAILBOX}/{stuck}"))
                .send()
                .unwrap(),
            503,
        );
        assert!(
            body["errors"][0]
                .as_str()
                .unwrap()
                .contains("cannot be fetched"),
            "{body}"
        );
    }
    let cut = expect(
        operator(&server, "GET", &format!("{MAILBOX}/{fine}"))
            .send()
            .unwrap(),
        200,
    );
    assert_eq!(cut["files"][0]["content"], b64(b"<vollst"));
    assert_eq!(cut["size"], 15);
    let whole = expect(
        operator(&server, "GET", &format!("{MAILBOX}/{fine}"))
            .send()
            .unwrap(),
        200,
    );
    assert_eq!(whole["files"][0]["content"], b64(b"<vollstaendig/>"));
    let reset = expect(
        operator(&server, "DELETE", &format!("{MAILBOX}/{fine}"))
            .send()
            .unwrap(),
        503,
    );
    assert!(
        reset["errors"][0]
            .as_str()
            .unwrap()
            .contains("connection reset"),
        "{reset}"
    );
    expect(
        operator(&server, "DELETE", &format!("{MAILBOX}/{fine}"))
            .send()
            .unwrap(),
        200,
    );
    // Counted rules are used up; the standing one stays.
    let left = expect(
        operator(&server, "GET", "/admin/api/v1/transports/egvp/script")
            .send()
            .unwrap(),
        200,
    );
    assert_eq!(
        left["rules"],
        json!([{"kind": "unfetchable", "message_id": stuck}])
    );
}
