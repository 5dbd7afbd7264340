//! The court forms end to end: a memento (validated, errors as `{error, errors}`) opens the
//! form index and each of the three forms pre-filled; a submit sends an XJustiz 0005005 with the
//! completed form as a PDF through the sending mailbox account to the court, where `xmllint`
//! validates it and pyxjustiz reads it; the outgoing copy is listed under its job, and a court's
//! reply (built with pyxjustiz) quoting the case reference too.

mod common;

use common::court::*;
use common::*;
use serde_json::{json, Value};

fn post_memento(server: &Server, body: &Value) -> (u16, Value) {
    let response = server.memento_in("guardianship", "betreuung", body);
    (response.status().as_u16(), response.json().unwrap())
}

#[test]
fn the_three_forms_send_valid_xjustiz_to_the_court_and_replies_find_their_job() {
    let (_dir, server) = court_server(&["betreuung"], &[]);
    let forms = [
        ("BetreuungAnregung", "vorgang-1", Some("SD-2026-17"), None),
        ("UnterbringungAntrag", "vorgang-2", None, None),
        (
            "FreiheitsentzugAntrag",
            "vorgang-3",
            None,
            Some("50 XVII 99/26"),
        ),
    ];
    for (form, job, own, court) in forms {
        let mut body = memento_body(job);
        if let Some(own) = own {
            body["absender"]["aktenzeichen"] = json!(own);
        }
        if let Some(court) = court {
            body["empfaenger"]["aktenzeichen"] = json!(court);
        }
        let (status, answer) = post_memento(&server, &body);
        assert_eq!(status, 200, "{answer}");
        let browser = Browser::new();
        // The magic link lands on the index of the three forms.
        let landing = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
        assert_eq!(landing.status(), 302);
        let index = landing.headers()["location"].to_str().unwrap().to_owned();
        assert!(index.starts_with("/guardianship/?m="), "{index}");
        let page = browser.get(&server.url(&index)).text().unwrap();
        for name in [
            "BetreuungAnregung",
            "UnterbringungAntrag",
            "FreiheitsentzugAntrag",
        ] {
            assert!(page.contains(&format!("/guardianship/{name}?m=")), "{page}");
        }
        let m = answer["memento"].as_str().unwrap();
        let mut opened = browser.form(&server.url(&format!("/guardianship/{form}?m={m}")));
        assert_eq!(opened.status, 200);
        assert_eq!(opened.get("betroffener.name.nachname"), Some("Müller"));
        assert_eq!(opened.get("empfaenger.safeId"), Some(COURT));
        // The clerk completes the form.
        opened.set(
            "betroffener.gegenwaertigerAufenthalt",
            "Station 4B, Zimmer 12",
        );
        let sent = browser.submit(&server, &opened);
        assert_eq!(sent.status(), 303, "{}", sent.text().unwrap_or_default());
        server.wait_for_status_in("guardianship", "betreuung", job, "SUCCESS");

        // At the court: schema-valid XJustiz, read back by pyxjustiz, with the form's PDF.
        let reference = own.unwrap_or(job);
        let (xml, pdf_name, pdf) = at_the_court(&server, reference);
        xmllint_xjustiz(&xml).unwrap_or_else(|e| panic!("{form}: {e}"));
        let read = pyxjustiz_read(&xml);
        assert_eq!(read["absender"]["aktenzeichen"], reference, "{read}");
        let persons: Vec<&Value> = read["beteiligte"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["art"] == "natuerlichePerson")
            .collect();
        assert_eq!(persons[0]["nachname"], "Müller", "{read}");
        assert_eq!(persons[0]["geburtsdatum"], "1941-03-02");
        assert_eq!(
            read["dokumente"][0]["dateinamen"],
            json!([format!("{form}.pdf")])
        );
        assert_eq!(pdf_name, format!("{form}.pdf"));
        let text = pdf_text(&pdf);
        assert!(text.contains("Müller") && text.contains(job), "{text}");
        assert!(
            text.contains("Station 4B, Zimmer 12"),
            "the clerk's entry: {text}"
        );
        // As a court reads them: the time in words, the sending mailbox by its SAFE-ID.
        assert!(text.contains("26.11.2026, 09:30 Uhr (UTC+01:00)"), "{text}");
        assert!(
            text.contains(SAFE_ID) && !text.contains("Konto-Nr."),
            "{text}"
        );

        // The outgoing copy in the account is listed under the job.
        let outgoing = wait_until(&format!("{job} listed"), || {
            let (_, listing) = list(&server, "betreuung", &format!("?jobId={job}"));
            listing.as_array().unwrap().first().cloned()
        });
        assert_eq!(outgoing["direction"], "OUTGOING");
        assert_eq!(outgoing["jobId"], job);
    }

    // A court's reply, built by pyxjustiz, quoting the sender's reference: listed under its job.
    let reply = pyxjustiz_court_message(&[
        "--aktenzeichen",
        "50 XVII 123/26",
        "--absender",
        "Amtsgericht Musterstadt",
        "--empfaenger",
        "Klinikum Nord",
        "--empfaenger-aktenzeichen",
        "SD-2026-17",
        "--beteiligter",
        "Jörg Müller",
        "--dokument",
        "Beschluss.pdf=Beschluss über die Betreuung",
    ]);
    let reply_id = drop_court_message(
        &server,
        &[
            ("xjustiz_nachricht.xml", &reply),
            ("Beschluss.pdf", b"%PDF-1.7"),
        ],
    );
    let listed = wait_hydrated(&server, "betreuung", &reply_id);
    assert_eq!(listed["aktenzeichen"], "SD-2026-17");
    assert_eq!(listed["jobId"], "vorgang-1");
    let (_, job) = list(&server, "betreuung", "?jobId=vorgang-1");
    let directions: Vec<&Value> = job
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["direction"])
        .collect();
    assert_eq!(directions, [&json!("OUTGOING"), &json!("INCOMING")]);
    // The court quoting its own reference finds the job that named it.
    let (_, job3) = list(&server, "betreuung", "?jobId=vorgang-3");
    assert_eq!(job3.as_array().unwrap().len(), 1);
}

#[test]
fn mementos_are_validated_and_a_job_id_is_used_once() {
    let (_dir, server) = court_server(&["betreuung", "fremd"], &[]);
    let invalid = |body: Value, errors: &[&str]| {
        let (status, answer) = post_memento(&server, &body);
        assert_eq!(status, 400, "{body}");
        assert_eq!(
            answer,
            json!({"error": "the request is invalid; see errors", "errors": errors}),
            "{body}"
        );
    };
    invalid(json!({}), &["jobId must not be null"]);
    invalid(json!({"jobId": 5}), &["jobId must be a string"]);
    let mut body = memento_body("v-1");
    body["empfaenger"]["type"] = json!("Notar");
    body["betroffener"]["familienstand"] = json!("ledig");
    body["absender"]["egvp_account_id"] = json!("7");
    body["betroffener"]["geburtsdatum"] = json!("02.03.1941");
    body["meldeZeitpunkt"] = json!("2026-11-26T09:30:00");
    let (status, answer) = post_memento(&server, &body);
    assert_eq!(status, 400);
    let errors = answer["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 5, "{answer}");
    for member in [
        "empfaenger.type",
        "betroffener.familienstand",
        "absender.egvp_account_id",
        "betroffener.geburtsdatum",
        "meldeZeitpunkt",
    ] {
        assert!(
            errors
                .iter()
                .any(|e| e.as_str().unwrap().starts_with(member)),
            "{member}: {answer}"
        );
    }
    // Only the job id is required; a memento needs no sending account yet.
    let (status, answer) = post_memento(&server, &json!({"jobId": "nur-die-id"}));
    assert_eq!(status, 200, "{answer}");
    assert!(answer["memento"].is_string() && answer["magicLink"].is_string());
    // An account the user may not send through is refused at once.
    let mut foreign = memento_body("v-2");
    foreign["absender"]["egvp_account_id"] = json!(99);
    invalid(
        foreign,
        &["absender.egvp_account_id 99 is not a mailbox account this user may send through"],
    );
    // The reserved test job id is always used already.
    invalid(
        memento_body("00000000-0000-0000-0000-000000000001"),
        &["jobId 00000000-0000-0000-0000-000000000001 has been used already; a job id is used once"],
    );

    // Sent once; the next memento for the job is refused, the form too.
    let (_, answer) = post_memento(&server, &memento_body("v-3"));
    let m = answer["memento"].as_str().unwrap().to_owned();
    let browser = Browser::new();
    browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    let form = browser.form(&server.url(&format!("/guardianship/BetreuungAnregung?m={m}")));
    assert_eq!(browser.submit(&server, &form).status(), 303);
    invalid(
        memento_body("v-3"),
        &["jobId v-3 has been used already; a job id is used once"],
    );
    let again = browser.submit(&server, &form);
    assert_ne!(again.status(), 303, "a job sends once");

    // Without a sending account the form cannot be sent; it says so at the field.
    let (_, answer) = post_memento(
        &server,
        &json!({"jobId": "v-4", "betroffener": {"name": {"nachname": "Müller"}}}),
    );
    let browser = Browser::new();
    browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    let m = answer["memento"].as_str().unwrap();
    let form = browser.form(&server.url(&format!("/guardianship/UnterbringungAntrag?m={m}")));
    let refused = browser.submit_expecting_form(&server, &form);
    assert_eq!(refused.status, 422);
    let errors = refused.errors().join(" | ");
    assert!(
        errors.contains("Absendendes Postfach (Konto-Nr.): Pflichtangabe"),
        "{errors}"
    );
    assert!(errors.contains("SAFE-ID des Empfängers"), "{errors}");
}

#[test]
fn a_send_retried_after_transient_faults_reaches_the_court_once() {
    let (_dir, server) = court_server(
        &["betreuung"],
        &[
            ("MELDEWERK_ENGINE__BACKOFF_BASE_MS", "10"),
            ("MELDEWERK_ENGINE__BACKOFF_MAX_MS", "50"),
        ],
    );
    let script = "/admin/api/v1/transports/egvp/script/rules";
    for kind in ["transient", "reset"] {
        let rule = json!({"kind": kind, "call": "deliver", "count": 1});
        let added = common::operator::operator(&server, reqwest::Method::POST, script, Some(&rule));
        assert_eq!(added.status(), 200);
    }
    let mut body = memento_body("vorgang-retry");
    body["absender"]["aktenzeichen"] = json!("SD-RETRY-1");
    let (_, answer) = post_memento(&server, &body);
    let browser = Browser::new();
    browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    let m = answer["memento"].as_str().unwrap();
    let form = browser.form(&server.url(&format!("/guardianship/BetreuungAnregung?m={m}")));
    assert_eq!(browser.submit(&server, &form).status(), 303);
    server.wait_for_status_in("guardianship", "betreuung", "vorgang-retry", "SUCCESS");
    at_the_court(&server, "SD-RETRY-1");
    // Both faults met the send (their counts are used up), and the court holds one message.
    let left: Value = server
        .admin_get("/admin/api/v1/transports/egvp/script")
        .json()
        .unwrap();
    assert_eq!(left["rules"], json!([]), "{left}");
    let listing: Value =
        common::operator::operator(&server, reqwest::Method::GET, COURT_MAILBOX, None)
            .json()
            .unwrap();
    assert_eq!(
        listing["messages"].as_array().unwrap().len(),
        1,
        "{listing}"
    );
    let job = server
        .admin_get("/admin/api/v1/actors")
        .json::<Value>()
        .unwrap();
    let module = job
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "module:guardianship")
        .unwrap()
        .clone();
    assert_eq!(module["processed"], 1, "{module}");
}
