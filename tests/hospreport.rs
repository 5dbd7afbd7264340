//! `hospreport` over real HTTP and through its form: the memento (`{}` is valid, the form makes
//! the `MeldeId`), the synchronous submit (302 to the success page and the result at once; a
//! refusal is the form again with 400, every value kept and no report; a corrected submit
//! works), the certificate the facility needs, results (§2.4, consume and peek, 410) and the
//! API's errors. Every bundle the simulated reporting system received is validated with Python's
//! `fhir.resources` and against the DEMIS hospitalisation example.

mod common;
mod hospreport_common;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::{checked_receipt_text, PASSWORD};
use hospreport_common::*;
use serde_json::{json, Value};

#[test]
fn an_empty_memento_opens_a_form_whose_generated_melde_id_the_report_and_its_result_keep() {
    let (_dir, server) = start(&[]);
    deposit_certificate(&server, KNOWN_BSNR);

    // `{}` is a valid request; the form gives the report a UUID when it opens.
    let (browser, mut form) = open(&server, &json!({}));
    let id = form
        .get("_id")
        .expect("the generated id rides along")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    assert!(form.html.contains(&id), "the form shows its id");
    // Nothing exists under it before the submit.
    assert_eq!(api_get(&server, &format!("reports/{id}")).status(), 404);

    form.set("Patient.Vorname", "Bertha");
    form.set("Patient.Name", "Betroffen");
    form.set("KlinischeAngaben.Hospitalisiert", "JA");
    form.set("KlinischeAngaben.Hospitalisierung.AufnahmeAm", "2026-11-21");
    form.set("MeldendeEinrichtung.Name", "Klinikum Mitte");
    form.set("MeldendeEinrichtung.BSNR", KNOWN_BSNR);
    // Only a UUID is taken as the carried id: a post cannot name a report of its choosing.
    for forged in ["HOSP-OTHER", "", "../reports"] {
        form.set("_id", forged);
        let (status, _, page) = post(&server, &browser, &form);
        assert_eq!(status, 400, "{forged:?}");
        assert!(page.html.contains("Link ungültig"), "{forged:?}");
    }
    assert!(received_all(&server).is_empty());
    form.set("_id", &id);
    send(&server, &browser, &form);

    // The success page is the module's own, and the result is there at once.
    let page = browser.get(&server.url(SUCCESS));
    assert_eq!(page.status(), 200);
    assert!(page.text().unwrap().contains("übermittelt"));
    assert_eq!(pending(&server), [id.as_str()]);
    let records = received(&server, &id);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["notification_id"], json!(id));
    assert_valid_fhir(&records);
}

#[test]
fn a_report_sent_through_the_form_is_read_as_the_contract_shapes_it_then_consumed() {
    let (_dir, server) = start(&[]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-2026-0001";
    let (browser, form) = open(&server, &complete(Some(id), KNOWN_BSNR));
    // The memento pre-fills the form; its MeldeId needs no hidden input.
    assert_eq!(form.get("Patient.Vorname"), Some("Bertha"));
    assert_eq!(
        form.get("MedizinischeInformationen.Symptome.FIEBER"),
        Some("true")
    );
    assert_eq!(form.get("_id"), None);
    send(&server, &browser, &form);

    let peeked = api_get(&server, &format!("reports/{id}?peek=true"));
    assert_eq!(peeked.status(), 200);
    let result: Value = peeked.json().unwrap();
    let members: Vec<&str> = result
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        members,
        [
            "description",
            "diseaseCode",
            "module",
            "receiptPdf",
            "reportId",
            "status",
            "submittedAt"
        ]
    );
    assert_eq!(result["reportId"], id);
    assert_eq!(result["status"], "SUCCESS");
    assert_eq!(result["module"], "hospreport");
    assert_eq!(result["diseaseCode"], "COVID-19");
    assert!(result["description"]
        .as_str()
        .unwrap()
        .contains("Hospitalisierung"));
    assert!(chrono::DateTime::parse_from_rfc3339(result["submittedAt"].as_str().unwrap()).is_ok());
    let pdf = STANDARD
        .decode(result["receiptPdf"].as_str().unwrap())
        .unwrap();
    assert!(checked_receipt_text(&pdf).contains(id));

    // peek repeats; a read without it consumes: then 410, and the list is empty.
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        200
    );
    assert_eq!(pending(&server), [id]);
    assert_eq!(api_get(&server, &format!("reports/{id}")).status(), 200);
    let gone = api_get(&server, &format!("reports/{id}"));
    assert_eq!(gone.status(), 410);
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        410
    );
    assert!(pending(&server).is_empty());
    // Another user's report is not found.
    let other = server.get_as(OTHER, &format!("/api/hospreport/v1/reports/{id}?peek=true"));
    assert_eq!(other.status(), 404);

    // After SUCCESS the same MeldeId is refused: the form posted again, and a new memento's.
    let (status, _, page) = post(&server, &browser, &form);
    assert_eq!(status, 409, "{}", common::without_tags(&page.html));
    assert!(page.html.contains("Bereits gemeldet"));
    // A new memento of the id opens no form but the page saying it was sent; its values posted
    // all the same (with that session's memento and token) are refused alike.
    let (again, sent_page) = open(&server, &complete(Some(id), KNOWN_BSNR));
    assert!(
        sent_page.html.contains("bereits abgesendet"),
        "{}",
        sent_page.html
    );
    let mut forged = common::Form {
        status: 200,
        html: form.html.clone(),
        fields: form.fields.clone(),
    };
    let new_link = memento(&server, &complete(Some(id), KNOWN_BSNR));
    let new_link: Value = new_link.json().unwrap();
    forged.set("m", new_link["memento"].as_str().unwrap());
    forged.set("csrf", sent_page.get("csrf").unwrap());
    assert_eq!(post(&server, &again, &forged).0, 409);
    let records = received(&server, id);
    assert_eq!(records.len(), 1, "registered once");
    assert_valid_fhir(&records);
}

#[test]
fn a_refusal_is_the_form_again_with_400_and_no_report_and_a_corrected_submit_goes_through() {
    let (_dir, server) = start(&[]);
    deposit_certificate(&server, KNOWN_BSNR);
    deposit_certificate(&server, UNKNOWN_BSNR);
    let id = "HOSP-REFUSED";
    let (browser, form) = open(&server, &complete(Some(id), UNKNOWN_BSNR));
    let (status, location, mut page) = post(&server, &browser, &form);
    assert_eq!((status, location), (400, None));
    let errors = page.errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("abgelehnt") && e.contains(UNKNOWN_BSNR)),
        "{errors:?}"
    );
    // Every value kept, the form posts to the same URL.
    assert_eq!(page.action(), FORM);
    for (name, value) in [
        ("Patient.Vorname", "Bertha"),
        ("Patient.Kontakt.Email", "bertha@betroffen.de"),
        ("MeldendeEinrichtung.BSNR", UNKNOWN_BSNR),
        (
            "KlinischeAngaben.Hospitalisierung.IntensivBehandlungVon",
            "2026-11-23",
        ),
    ] {
        assert_eq!(page.get(name), Some(value), "{name}");
    }
    // No report: 404, and not listed.
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        404
    );
    assert_eq!(api_get(&server, &format!("reports/{id}")).status(), 404);
    assert!(pending(&server).is_empty());

    // Corrected and sent again with the same MeldeId: accepted.
    page.set("MeldendeEinrichtung.BSNR", KNOWN_BSNR);
    send(&server, &browser, &page);
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        200
    );
    let records = received(&server, id);
    assert_eq!(
        records.len(),
        2,
        "the refused notification and the accepted one"
    );
    assert_eq!(
        records[0]["decision"]["status"], "refused",
        "{}",
        records[0]
    );
    assert_eq!(
        records[1]["decision"]["status"], "accepted",
        "{}",
        records[1]
    );
    assert_valid_fhir(&records);
}

#[test]
fn a_scripted_refusal_shows_its_reason_and_checks_of_the_form_answer_400_too() {
    let (_dir, server) = start(&[]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-SCRIPTED";
    script(
        &server,
        &json!({"kind": "reject", "reason": "Meldung unvollständig (Test)", "report_id": id,
                "count": 1}),
    );
    let (browser, mut form) = open(&server, &complete(Some(id), KNOWN_BSNR));
    let (status, _, page) = post(&server, &browser, &form);
    assert_eq!(status, 400);
    assert!(
        page.errors()
            .iter()
            .any(|e| e.contains("Meldung unvollständig (Test)")),
        "{:?}",
        page.errors()
    );
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        404
    );

    // A problem the form finds itself is a 400 as well, named at its field; nothing is sent.
    form.set("KlinischeAngaben.Todesdatum", "2026-11-25");
    form.set("Patient.Name", "");
    let (status, _, page) = post(&server, &browser, &form);
    assert_eq!(status, 400);
    let errors = page.errors();
    assert!(
        errors.iter().any(|e| e.starts_with("Name: Pflichtangabe")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("Todesdatum:")),
        "{errors:?}"
    );
    assert!(
        received(&server, id).is_empty(),
        "a scripted refusal records nothing"
    );

    // The script was used up: the same report, completed, goes through.
    send(&server, &browser, &complete_form(form));
    assert_valid_fhir(&received(&server, id));
}

/// `form` with the values the last test removed or added put right again.
fn complete_form(mut form: common::Form) -> common::Form {
    form.set("KlinischeAngaben.Todesdatum", "");
    form.set("Patient.Name", "Betroffen");
    form
}

#[test]
fn without_the_facilitys_certificate_the_form_says_so_and_sends_nothing() {
    let (_dir, server) = start(&[]);
    let id = "HOSP-NO-CERT";
    let (browser, form) = open(&server, &complete(Some(id), KNOWN_BSNR));
    let (status, _, page) = post(&server, &browser, &form);
    assert_eq!(status, 400);
    let errors = page.errors();
    assert!(
        errors.iter().any(|e| e.contains("kein Zertifikat")
            && e.contains(KNOWN_BSNR)
            && e.contains("Testsystem")),
        "{errors:?}"
    );
    assert_eq!(page.get("Patient.Vorname"), Some("Bertha"));
    assert!(
        received_all(&server).is_empty(),
        "nothing reached the reporting system"
    );
    assert_eq!(
        api_get(&server, &format!("reports/{id}?peek=true")).status(),
        404
    );

    // Deposited, the same form goes through.
    deposit_certificate(&server, KNOWN_BSNR);
    send(&server, &browser, &page);
    assert_eq!(received(&server, id).len(), 1);
}

#[test]
fn the_api_answers_401_and_400_with_the_fields_named() {
    let (_dir, server) = start(&[]);
    let anonymous = server
        .client()
        .post(server.url("/api/hospreport/v1/memento"))
        .json(&json!({}))
        .send()
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let wrong = server
        .client()
        .get(server.url("/api/hospreport/v1/reports"))
        .basic_auth(USER, Some("falsch"))
        .send()
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let right = server
        .client()
        .get(server.url("/api/hospreport/v1/reports"))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(right.status(), 200);

    let refused = memento(
        &server,
        &json!({
            "MeldeId": 7,
            "MeldeDatum": "24.11.2026",
            "Patient": {"Geschlecht": "female", "Kontakt": {"Email": "keine-adresse"}},
            "KlinischeAngaben": {"Hospitalisiert": "vielleicht"},
            "MeldendeEinrichtung": {"BSNR": "12345678"},
            "Verlegung": {}
        }),
    );
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().unwrap();
    let errors: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for expected in [
        "MeldeId must be a string",
        "MeldeDatum must be a date YYYY-MM-DD",
        "Patient.Geschlecht must be one of NASK, ASKU, MAENNLICH, WEIBLICH, DIVERS, UNBESTIMMT",
        "Patient.Kontakt.Email must be a well-formed email address (send null or omit it)",
        "KlinischeAngaben.Hospitalisiert must be one of JA, NEIN, NICHT_ERMITTELBAR, NICHT_ERHOBEN",
        "MeldendeEinrichtung.BSNR must be exactly 9 digits",
        "Verlegung is not a known field",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{expected}: {errors:?}"
        );
    }
    assert_eq!(memento(&server, &json!([])).status(), 400);
    // An email of null is fine (spec/02 §7: send null or omit it).
    let fine = memento(&server, &json!({"Patient": {"Kontakt": {"Email": null}}}));
    assert_eq!(fine.status(), 200);
    assert_eq!(api_get(&server, "reports/UNBEKANNT").status(), 404);
}
