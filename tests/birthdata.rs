//! The `birthdata` module against the real server: the RFC 9457 problem details of every error,
//! the request rules of spec/01 §2.2, and the whole journey from memento to consumed result with
//! the delivered 081021 message checked by `xmllint`.

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};

const BASE: &str = "https://problems.example.org/meldewerk";

fn server(dir: &DataDir, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("MELDEWERK_MODULES__BIRTHDATA__PROBLEMS_BASE", BASE),
        ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "200"),
    ];
    env.extend_from_slice(extra);
    Server::start(dir, &env)
}

fn started() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("eltern");
    let server = server(&dir, &[]);
    (dir, server)
}

/// Everything the 081021 message needs.
fn complete(id: &str) -> Value {
    complete_birth_data(id)
}

/// Posts `body` (raw) as a birthdata memento request.
fn post_raw(server: &Server, body: &str, content_type: &str) -> reqwest::blocking::Response {
    server
        .client()
        .post(server.url("/api/birthdata/v1/memento"))
        .basic_auth("eltern", Some(PASSWORD))
        .header("Content-Type", content_type)
        .body(body.to_string())
        .send()
        .unwrap()
}

/// Asserts a problem-details answer and returns its body.
fn problem(response: reqwest::blocking::Response, status: u16, kind: &str) -> Value {
    assert_eq!(response.status(), status);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let body: Value = response.json().unwrap();
    let expected = match kind.starts_with("about:") {
        true => kind.to_owned(),
        false => format!("{BASE}{kind}"),
    };
    assert_eq!(body["type"], expected, "{body}");
    assert_eq!(body["status"], status);
    assert!(body["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(body["detail"].as_str().is_some_and(|t| !t.is_empty()));
    body
}

/// The `errors` of a validation problem as (pointer, detail) pairs.
fn violations(body: &Value) -> Vec<(Option<String>, String)> {
    body["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            assert!(
                e.as_object()
                    .unwrap()
                    .keys()
                    .all(|k| k == "detail" || k == "pointer"),
                "{e}"
            );
            (
                e["pointer"].as_str().map(str::to_owned),
                e["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn only_id_is_required() {
    let (_dir, server) = started();
    let response = server.memento_in("birthdata", "eltern", &json!({"id": "gd-1"}));
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    assert!(body["memento"].as_str().is_some());
    assert!(body["magicLink"].as_str().unwrap().starts_with("/mtl/"));
    let full = server.memento_in("birthdata", "eltern", &complete("gd-2"));
    assert_eq!(full.status(), 200);
}

#[test]
fn validation_errors_are_problem_details_with_a_pointer_per_violation() {
    let (_dir, server) = started();
    let response = server.memento_in(
        "birthdata",
        "eltern",
        &json!({
            "geburtsangaben": {"uhrzeit": "30:00", "tag": "2026-02-30"},
            "kind": {"geschlecht": "WEIBLICH"},
            "mutter": {"anzahlKinder": 0, "anschrift": {"postleitzahl": "1011a"}},
            "elternVerheiratet": false,
            "kontaktdaten": [{"kanal": "01"}, {"kanal": 7}],
            "urkundenbestellung": {"anzahlCIEC16": -1},
            "unbekannt": 1
        }),
    );
    let body = problem(response, 400, "/problems/validation-error");
    assert_eq!(body["instance"], "/api/birthdata/v1/memento");
    let found = violations(&body);
    let pointers: Vec<&str> = found.iter().filter_map(|(p, _)| p.as_deref()).collect();
    for expected in [
        "/id",
        "/geburtsangaben/uhrzeit",
        "/geburtsangaben/tag",
        "/kind/geschlecht",
        "/mutter/anzahlKinder",
        "/mutter/anschrift/postleitzahl",
        "/elternVerheiratet",
        "/kontaktdaten/1/kanal",
        "/urkundenbestellung/anzahlCIEC16",
        "/unbekannt",
    ] {
        assert!(
            pointers.contains(&expected),
            "{expected} missing in {found:?}"
        );
    }
    assert_eq!(found.len(), 10, "one entry per violated rule: {found:?}");
    assert!(found.contains(&(Some("/id".into()), "id must not be null".into())));
}

#[test]
fn the_time_pattern_admits_a_and_b_in_the_hour() {
    let (_dir, server) = started();
    for good in ["1A:30", "0B:00", "23:59", "29:59"] {
        let body = json!({"id": "t", "geburtsangaben": {"uhrzeit": good}});
        assert_eq!(
            server.memento_in("birthdata", "eltern", &body).status(),
            200,
            "{good}"
        );
    }
    for bad in ["30:00", "1C:00", "12:60", "9:00", "12:5"] {
        let body = json!({"id": "t", "geburtsangaben": {"uhrzeit": bad}});
        let found = violations(&problem(
            server.memento_in("birthdata", "eltern", &body),
            400,
            "/problems/validation-error",
        ));
        assert_eq!(
            found[0].0.as_deref(),
            Some("/geburtsangaben/uhrzeit"),
            "{bad}"
        );
    }
}

#[test]
fn rules_across_members_carry_no_pointer() {
    let (_dir, server) = started();
    let body = json!({
        "id": "x",
        "ehe": {"kinderDerEhe": 1},
        "anschriftAutor": {
            "gebaeude": {"strasse": "A"},
            "postfach": {"postfach": "12"}
        },
        "mutter": {"staatsangehoerigkeit": {"code": "000", "nichtGelisteterWert": "Atlantis"}},
        "kind": {"name": {"vornamen": {"name": "Lina", "nichtVorhanden": true}}}
    });
    let found = violations(&problem(
        server.memento_in("birthdata", "eltern", &body),
        400,
        "/problems/validation-error",
    ));
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(
        found.iter().all(|(pointer, _)| pointer.is_none()),
        "{found:?}"
    );
    let details: Vec<&str> = found.iter().map(|(_, d)| d.as_str()).collect();
    assert!(details.contains(&"ehe may only be given together with elternVerheiratet: true"));
    assert!(details.contains(
        &"anschriftAutor must have only one of gebaeude, postfach, got gebaeude and postfach"
    ));
    // With the parents married, `ehe` is fine.
    let married = json!({"id": "y", "elternVerheiratet": true, "ehe": {"kinderDerEhe": 1}});
    assert_eq!(
        server.memento_in("birthdata", "eltern", &married).status(),
        200
    );
}

#[test]
fn unreadable_bodies_are_problems_without_pointer() {
    let (_dir, server) = started();
    for (body, expected) in [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "the body must be a JSON object"),
        (
            r#"{"id": "a", "id": "b"}"#,
            "invalid JSON: duplicate member \"id\"",
        ),
    ] {
        let found = violations(&problem(
            post_raw(&server, body, "application/json"),
            400,
            "/problems/validation-error",
        ));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, None, "{body}");
        assert!(found[0].1.starts_with(expected), "{body}: {}", found[0].1);
    }
    let body = problem(
        post_raw(&server, r#"{"id": "a"}"#, "text/plain"),
        415,
        "/problems/unsupported-media-type",
    );
    assert!(body.get("errors").is_none());
    // Parameters and case of the media type do not matter.
    assert_eq!(
        post_raw(&server, r#"{"id": "a"}"#, "Application/JSON; charset=utf-8").status(),
        200
    );
}

#[test]
fn missing_credentials_get_401_with_an_empty_body() {
    let (_dir, server) = started();
    for path in ["/api/birthdata/v1/reports", "/api/birthdata/v1/reports/x"] {
        let response = server.client().get(server.url(path)).send().unwrap();
        assert_eq!(response.status(), 401);
        assert!(response.headers().contains_key("www-authenticate"));
        assert_eq!(response.text().unwrap(), "");
    }
    let response = server
        .client()
        .post(server.url("/api/birthdata/v1/memento"))
        .basic_auth("eltern", Some("wrong"))
        .json(&json!({"id": "x"}))
        .send()
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.text().unwrap(), "");
}

#[test]
fn unknown_reports_are_report_not_found_and_no_mock_ids_exist() {
    let (_dir, server) = started();
    for id in ["nope", "BIRTHDATA-TEST-SUCCESS", "BIRTHNOTICE-TEST-SUCCESS"] {
        let body = problem(
            server.get_as("eltern", &format!("/api/birthdata/v1/reports/{id}")),
            404,
            "/Products/birthdata/problems/report-not-found",
        );
        assert_eq!(body["instance"], format!("/api/birthdata/v1/reports/{id}"));
    }
    assert_eq!(
        server
            .get_as("eltern", "/api/birthdata/v1/reports")
            .json::<Value>()
            .unwrap(),
        json!([])
    );
}

#[test]
fn full_journey_with_already_retrieved_and_a_valid_081021() {
    let (_dir, server) = started();
    let link = {
        let response = server.memento_in("birthdata", "eltern", &complete("gd-j"));
        assert_eq!(response.status(), 200);
        response.json::<Value>().unwrap()["magicLink"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let browser = Browser::new();
    let form = browser.open_magic_link(&server, &link);
    assert_eq!(form.status, 200);
    assert!(form.html.contains("<h1>Geburtsdaten der Eltern</h1>"));
    assert_eq!(form.action(), "/forms/birthdata");
    assert_eq!(form.get("geburtsangaben.uhrzeit"), Some("1A:15"));
    assert_eq!(
        form.get("kontaktdaten[0].kennung"),
        Some("anna@example.org")
    );
    // One empty row waits for another contact; no signature is asked for.
    assert_eq!(form.get("kontaktdaten[1].kennung"), Some(""));
    assert!(!form.html.contains("signatur.name"));

    let response = browser.submit(&server, &form);
    assert_eq!(response.status(), 303, "{:?}", page_errors(response));
    let pending = server.get_as("eltern", "/api/birthdata/v1/reports/gd-j?peek=true");
    assert_eq!(pending.status(), 200);
    assert_eq!(pending.json::<Value>().unwrap()["module"], "birthdata");

    let done = server.wait_for_status_in("birthdata", "eltern", "gd-j", "SUCCESS");
    assert!(done.get("clientReference").is_none(), "{done}");
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(done["receiptPdf"].as_str().unwrap())
        .unwrap();
    assert!(checked_receipt_text(&pdf).contains("gd-j"));

    let message = server.admin_get("/admin/api/v1/reports/birthdata/gd-j/message");
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "portal");
    let xml = message.bytes().unwrap();
    xmllint_xpersonenstand(&xml).unwrap();
    let text = String::from_utf8(xml.to_vec()).unwrap();
    assert!(text.contains("portal2StA.Geburt.081021"));
    assert!(text.contains("ZU-2026-0001"));
    assert_eq!(received_in(&server, "birthdata", "gd-j").len(), 1);

    // Consumed once, then gone for good.
    let first = server.get_as("eltern", "/api/birthdata/v1/reports/gd-j");
    assert_eq!(first.status(), 200);
    assert_eq!(first.json::<Value>().unwrap()["status"], "SUCCESS");
    problem(
        server.get_as("eltern", "/api/birthdata/v1/reports/gd-j"),
        410,
        "/Products/birthdata/problems/report-already-retrieved",
    );
}

#[test]
fn the_form_refuses_what_the_message_cannot_carry() {
    let (_dir, server) = started();
    let response = server.memento_in("birthdata", "eltern", &json!({"id": "gd-f"}));
    let link = response.json::<Value>().unwrap()["magicLink"]
        .as_str()
        .unwrap()
        .to_owned();
    let browser = Browser::new();
    let mut form = browser.open_magic_link(&server, &link);
    form.set("mutter.namen.vornamen", "Anna");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422);
    let errors = page.errors();
    assert!(
        errors
            .iter()
            .any(|e| e == "Familienname der Mutter: Pflichtangabe"),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("Kontakt")),
        "{errors:?}"
    );
    // Nothing entered is lost.
    assert_eq!(page.get("mutter.namen.vornamen"), Some("Anna"));
    // Nothing was dispatched.
    assert_eq!(
        server
            .get_as("eltern", "/api/birthdata/v1/reports/gd-f?peek=true")
            .status(),
        404
    );

    // "Weitere Zeile" adds a contact row and keeps everything.
    assert_eq!(page.get("kontaktdaten[0].kanal"), Some(""));
    assert_eq!(page.get("kontaktdaten[1].kanal"), None);
    let mut more = page;
    more.set("kontaktdaten[0].kanal", "01");
    more.fields.push(("_zeile".into(), "kontaktdaten".into()));
    let again = browser.submit_expecting_form(&server, &more);
    assert_eq!(again.status, 200);
    assert_eq!(again.get("kontaktdaten[0].kanal"), Some("01"));
    assert_eq!(again.get("kontaktdaten[1].kanal"), Some(""));
    assert_eq!(again.get("kontaktdaten[2].kanal"), None);
}

#[test]
fn retention_turns_reads_into_report_expired_even_after_retrieval() {
    let dir = DataDir::new();
    dir.add_user("eltern");
    let server = server(
        &dir,
        &[
            ("MELDEWERK_MODULES__BIRTHDATA__RETENTION_SECS", "3"),
            ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
        ],
    );
    dispatch_in(&server, "birthdata", "eltern", &complete("gd-r"));
    dispatch_in(&server, "birthdata", "eltern", &complete("gd-r2"));
    server.wait_for_status_in("birthdata", "eltern", "gd-r", "SUCCESS");
    server.wait_for_status_in("birthdata", "eltern", "gd-r2", "SUCCESS");
    // One is consumed before retention comes; expired beats already-retrieved afterwards.
    let consumed = server.get_as("eltern", "/api/birthdata/v1/reports/gd-r2");
    assert_eq!(consumed.status(), 200);
    // Each report expires at the first sweep after its own end plus the retention: gd-r2,
    // finished a little later, may expire one sweep after gd-r.
    let expired = format!("{BASE}/Products/birthdata/problems/report-expired");
    for report in ["gd-r", "gd-r2"] {
        wait_until(&format!("{report} to expire"), || {
            let path = format!("/api/birthdata/v1/reports/{report}?peek=true");
            let body: Value = server.get_as("eltern", &path).json().ok()?;
            (body["type"] == expired).then_some(())
        });
    }
    for path in [
        "/api/birthdata/v1/reports/gd-r2",
        "/api/birthdata/v1/reports/gd-r2?peek=true",
        "/api/birthdata/v1/reports/gd-r",
    ] {
        problem(
            server.get_as("eltern", path),
            410,
            "/Products/birthdata/problems/report-expired",
        );
    }
}

#[test]
fn a_memento_opens_only_its_own_module_s_form() {
    let (_dir, server) = started();
    // birthdata reserves no mock ids, so this id is fine here, and must stay here.
    let response = server.memento_in(
        "birthdata",
        "eltern",
        &json!({"id": "BIRTHNOTICE-TEST-SUCCESS"}),
    );
    assert_eq!(response.status(), 200);
    let memento = response.json::<Value>().unwrap()["memento"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = server.memento_in("birthdata", "eltern", &json!({"id": "gd-x"}));
    let link = link.json::<Value>().unwrap()["magicLink"]
        .as_str()
        .unwrap()
        .to_owned();
    let browser = Browser::new();
    browser.open_magic_link(&server, &link);
    for form in ["/forms/birthnotice", "/forms/deathnotice/084020"] {
        let page = browser.form(&server.url(&format!("{form}?m={memento}")));
        assert_eq!(page.status, 400, "{form}");
        assert!(page.html.contains("Link ungültig"));
    }
    assert_eq!(
        server
            .get_as("eltern", "/api/birthnotice/v1/reports")
            .json::<Value>()
            .unwrap(),
        json!([])
    );
}

#[test]
fn path_like_names_and_long_lists_are_refused() {
    let (_dir, server) = started();
    let rows: Vec<Value> = (0..51)
        .map(|i| json!({"kanal": "01", "kennung": format!("a{i}@example.org")}))
        .collect();
    let body = json!({
        "id": "gd-p",
        "mutter": {"namen.vornamen": "Anna"},
        "kontaktdaten[]": {"kanal": "01"},
        "zustaendigeElterngeldstelle": {"erreichbarkeit": rows}
    });
    let found = violations(&problem(
        server.memento_in("birthdata", "eltern", &body),
        400,
        "/problems/validation-error",
    ));
    assert_eq!(
        found,
        vec![
            (
                Some("/kontaktdaten[]".into()),
                "kontaktdaten[] is not a known field".into()
            ),
            (
                Some("/mutter/namen.vornamen".into()),
                "mutter.namen.vornamen is not a known field".into()
            ),
            (
                Some("/zustaendigeElterngeldstelle/erreichbarkeit".into()),
                "zustaendigeElterngeldstelle.erreichbarkeit must have at most 50 entries".into()
            ),
        ]
    );
}

#[test]
fn unknown_paths_and_methods_answer_as_problems() {
    let (_dir, server) = started();
    let response = server
        .client()
        .put(server.url("/api/birthdata/v1/memento"))
        .basic_auth("eltern", Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(response.headers()["allow"], "POST");
    let body = problem(response, 405, "about:blank");
    assert_eq!(body["title"], "Method Not Allowed");
    let response = server.get_as("eltern", "/api/birthdata/v1/no-such-thing");
    let body = problem(response, 404, "about:blank");
    assert_eq!(body["instance"], "/api/birthdata/v1/no-such-thing");
    // The plain modules answer the same cases in their own style.
    let response = server
        .client()
        .delete(server.url("/api/birthnotice/v1/reports/x"))
        .basic_auth("eltern", Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({"errors": ["method not allowed; use GET"]})
    );
}

#[test]
fn the_portal_signs_birth_data_even_for_a_sealed_user() {
    let dir = DataDir::new();
    dir.add_user("eltern");
    let (ok, _, err) = dir.cli(&["seal", "deposit", "eltern"], None);
    assert!(ok, "{err}");
    let server = server(&dir, &[]);
    dispatch_in(&server, "birthdata", "eltern", &complete("gd-s"));
    server.wait_for_status_in("birthdata", "eltern", "gd-s", "SUCCESS");
    let message = server.admin_get("/admin/api/v1/reports/birthdata/gd-s/message");
    assert_eq!(message.headers()["x-signature-kind"], "portal");
}
