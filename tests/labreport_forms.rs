//! The browser side of `labreport` against the real server: the magic link lands on the disease
//! index, each of the four disease forms sends a laboratory notification that the simulated
//! reporting system accepts (receipt checked with qpdf and pdftotext, every bundle validated
//! with the FHIR validator and compared with the DEMIS example), the anonymous patient, the
//! reporting facility checked again at the submit, `MeldendeEinrichtung.Telefon` required at
//! the submit, and 409 for a second submission of a used `reportId`.

mod common;
mod labreport_support;

use base64::Engine as _;
use common::*;
use labreport_support::*;
use serde_json::{json, Value};

#[test]
fn the_index_lists_the_four_diseases_each_linking_to_its_form_with_the_memento() {
    let (_dir, server) = start(&[]);
    let (_, answer) = memento(&server, &standard("lab-i-1"));
    let m = answer["memento"].as_str().unwrap();
    let browser = Browser::new();
    browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    let page = browser.get(&server.url(&format!("/labreport/?m={m}")));
    assert_eq!(page.status(), 200);
    let html = page.text().unwrap();
    for disease in DISEASES {
        assert_eq!(
            disease_link(&html, disease),
            format!("/labreport/{disease}/?m={m}")
        );
    }
    // A memento that does not open under this session is refused, also on the index.
    let forged = browser.get(&server.url("/labreport/?m=AAAA"));
    assert_eq!(forged.status(), 400);
    // Without a session the index is not shown.
    let stranger = Browser::new().get(&server.url(&format!("/labreport/?m={m}")));
    assert_ne!(stranger.status(), 200);
}

#[test]
fn every_disease_form_sends_a_valid_laboratory_notification_with_a_receipt() {
    let (_dir, server) = start(&[]);
    let mut validated = Vec::new();
    for disease in DISEASES {
        let id = send(&server, &standard(&format!("lab-{disease}")), disease);
        let result = final_result(&server, &id, "SUCCESS");
        assert_eq!(result["diseaseCode"], disease, "{result}");
        assert_eq!(result["module"], "labreport");
        let pdf = base64::engine::general_purpose::STANDARD
            .decode(result["receiptPdf"].as_str().unwrap())
            .unwrap();
        let text = checked_receipt_text(&pdf);
        assert!(text.contains(&id), "{text}");

        let records = notifications(&server, &id);
        assert_eq!(records.len(), 1, "{records:?}");
        let bundle = bundle_of(&records[0]);
        let report = resource(&bundle, "DiagnosticReport");
        assert!(
            report["meta"]["profile"][0]
                .as_str()
                .unwrap()
                .ends_with(&format!("LaboratoryReport{}", suffix(disease))),
            "{report}"
        );
        // The notifier's name and address are the registry's; its contact the memento's.
        let notifier = bundle["entry"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["resource"])
            .find(|r| r["resourceType"] == "Organization" && r["name"] == "Labor Berlin Mitte")
            .unwrap_or_else(|| panic!("the registry's facility in {bundle}"));
        assert_eq!(notifier["address"][0]["line"][0], "Chausseestraße 12");
        assert_eq!(notifier["address"][0]["postalCode"], "10115");
        assert_eq!(notifier["identifier"][0]["value"], BSNR);
        let phones: Vec<&Value> = notifier["telecom"].as_array().unwrap().iter().collect();
        assert!(
            phones.iter().any(|t| t["value"] == "030 1234567"),
            "{notifier}"
        );
        let patient = resource(&bundle, "Patient");
        assert_eq!(patient["name"][0]["family"], "Mustermann");
        assert_eq!(patient["birthDate"], "1950-02-11");
        validated.push((records[0].clone(), suffix(disease)));
    }
    assert_valid_laboratory_notifications(&validated);
}

#[test]
fn an_anonymous_patient_is_notified_not_by_name() {
    let (_dir, server) = start(&[]);
    let (browser, path, mut form) = open_disease_form(&server, &anonymous("lab-a-1"), "Rsv");
    assert_eq!(form.get("Patient.Anonym.GeburtsmonatJahr"), Some("1975-04"));
    fill_findings(&mut form, "NEGATIVE");
    let response = browser.submit_to(&server, &path, &form);
    assert_eq!(response.status(), 303, "{:?}", page_errors(response));
    final_result(&server, "lab-a-1", "SUCCESS");
    let records = notifications(&server, "lab-a-1");
    let bundle = bundle_of(&records[0]);
    let patient = resource(&bundle, "Patient");
    assert!(
        patient["meta"]["profile"][0]
            .as_str()
            .unwrap()
            .ends_with("NotifiedPersonNotByName"),
        "{patient}"
    );
    assert_eq!(patient["birthDate"], "1975-04");
    assert!(patient.get("name").is_none() && patient.get("telecom").is_none());
    assert_eq!(
        patient["address"][0]["postalCode"], "101",
        "DEMIS keeps three digits"
    );
    assert_valid_laboratory_notifications(&[(records[0].clone(), "RSVP")]);

    // Both patients at once are refused in the form too, at the box that decides.
    let (browser, path, mut form) = open_disease_form(&server, &anonymous("lab-a-2"), "Rsv");
    fill_findings(&mut form, "POSITIVE");
    form.set("Patient.Standard.Name.Nachname", "Mustermann");
    let page = browser.submit_to(&server, &path, &form);
    assert_eq!(page.status(), 422);
    let errors = page_errors(page);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Nichtnamentliche Meldung")),
        "{errors:?}"
    );
}

#[test]
fn the_submit_needs_the_facilitys_telephone_and_every_finding_each_problem_at_its_field() {
    let (_dir, server) = start(&[]);
    let mut body = standard("lab-t-1");
    body["MeldendeEinrichtung"]
        .as_object_mut()
        .unwrap()
        .remove("Telefon");
    let (browser, _, mut form) = open_disease_form(&server, &body, "Influenza");
    form.set("Befund.Ergebnis", "POSITIVE");
    let page = browser.submit_expecting_form(&server, &form);
    assert_eq!(page.status, 422);
    let errors = page.errors();
    for expected in [
        "Telefon: Pflichtangabe",
        "Untersuchung: Pflichtangabe",
        "Methode: Pflichtangabe",
        "Material: Pflichtangabe",
    ] {
        assert!(
            errors.iter().any(|e| e == expected),
            "{expected} in {errors:?}"
        );
    }
    // Every value is kept; with the telephone and the findings the report goes.
    assert_eq!(page.get("MeldendeEinrichtung.BSNR"), Some(BSNR));
    let mut again = page;
    again.set("MeldendeEinrichtung.Telefon", "030 1234567");
    fill_findings(&mut again, "POSITIVE");
    let sent = browser.submit(&server, &again);
    assert_eq!(sent.status(), 303, "{:?}", page_errors(sent));
    final_result(&server, "lab-t-1", "SUCCESS");
    assert_registered_once_and_valid(&server, "lab-t-1", "Influenza");
}

#[test]
fn the_reporting_facility_is_checked_again_at_the_submit() {
    let (_dir, server) = start(&[]);
    for (bsnr, words) in [
        (UNKNOWN, "555555555 is not a registered facility"),
        (INACTIVE, "012345678 is a deactivated facility"),
        (
            OUT_OF_SCOPE,
            "987654321 is not a facility this account may report for",
        ),
    ] {
        let (browser, path, mut form) =
            open_disease_form(&server, &standard(&format!("lab-s-{bsnr}")), "Norovirus");
        fill_findings(&mut form, "POSITIVE");
        form.set("MeldendeEinrichtung.BSNR", bsnr);
        let page = browser.submit_to(&server, &path, &form);
        assert_eq!(page.status(), 422);
        let html = page.text().unwrap();
        assert!(html.contains(words), "{words}");
        assert!(html.contains("Betriebsstättennummer (BSNR): Für diese Einrichtung"));
    }
    // A facility deactivated between the memento and the submit stops the report.
    let (browser, path, mut form) = open_disease_form(&server, &standard("lab-s-late"), "Rsv");
    fill_findings(&mut form, "POSITIVE");
    let deactivated = server
        .client()
        .put(server.url(&format!("/admin/api/v1/facilities/{BSNR}")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(
            &json!({"name": "Labor Berlin Mitte", "ik": "260326822", "active": false,
            "address": {"street": "Chausseestraße 12", "postalCode": "10115",
                "city": "Berlin", "country": "DE"}}),
        )
        .send()
        .unwrap();
    assert_eq!(deactivated.status(), 200);
    let page = browser.submit_to(&server, &path, &form);
    assert_eq!(page.status(), 422);
    assert!(page
        .text()
        .unwrap()
        .contains("123456789 is a deactivated facility"));
    let read = server.get_as(USER, &format!("{API}/reports/lab-s-late?peek=true"));
    assert_eq!(read.status(), 404, "nothing was sent");
    assert!(notifications(&server, "lab-s-late").is_empty());
}

#[test]
fn a_second_submission_of_a_used_report_id_is_409_report_id_duplicate() {
    let (_dir, server) = start(&[]);
    // Two forms opened before either is sent, as two clerks might.
    let (first, first_path, mut first_form) =
        open_disease_form(&server, &standard("lab-d-1"), "Influenza");
    let (second, second_path, mut second_form) =
        open_disease_form(&server, &standard("lab-d-1"), "Sarscov2");
    fill_findings(&mut first_form, "POSITIVE");
    fill_findings(&mut second_form, "POSITIVE");
    let sent = first.submit_to(&server, &first_path, &first_form);
    assert_eq!(sent.status(), 303);
    // The confirmation page of the disease form, and the form's link now says it was sent.
    let location = sent.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, "/labreport/Influenza/sent?id=lab-d-1");
    let confirmation = first.get(&server.url(&location));
    assert_eq!(confirmation.status(), 200);
    let html = confirmation.text().unwrap();
    assert!(
        html.contains("Erregernachweis Influenza abgesendet"),
        "{html}"
    );
    assert!(
        html.contains("Mustermann"),
        "the summary shows what was sent"
    );
    let again = second.submit_to(&server, &second_path, &second_form);
    assert_eq!(again.status(), 409);
    assert_eq!(
        again.headers()["content-type"].to_str().unwrap(),
        "application/problem+json"
    );
    let problem: Value = again.json().unwrap();
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/problems/report-id-duplicate"),
        "{problem}"
    );
    assert_eq!(problem["status"], 409);
    assert_eq!(problem["instance"], "/labreport/Sarscov2/");
    // The first report stands, with its disease; the reporting system got one notification.
    let result = final_result(&server, "lab-d-1", "SUCCESS");
    assert_eq!(result["diseaseCode"], "Influenza");
    assert_registered_once_and_valid(&server, "lab-d-1", "Influenza");
}
