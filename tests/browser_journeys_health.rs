//! The health reporting forms, each on its whole way in a real headless Chromium
//! (tests/common/browser.rs): the laboratory report through its disease choice (two diseases,
//! two different forms), the hospitalisation report to its success page, the bed occupancy
//! report through the `/bal/` login. Each journey opens the magic link (or the login link), sees
//! the pre-filled values, is shown a problem next to its field with every value kept, corrects
//! it, sends, and reads the outcome through the API as the integrator does. Screenshots of each
//! final page land in `target/browser-screenshots/journey-{labreport,hospreport,bedreport}-*.png`.

mod common;
mod hospreport_common;
mod labreport_support;

use common::browser::Chromium;
use common::*;
use serde_json::{json, Value};

/// Opens a labreport memento's magic link, picks `disease` on the index page and waits for its
/// form; returns the form's path.
fn choose_disease(server: &Server, browser: &Chromium, body: &Value, disease: &str) -> String {
    let (status, answer) = labreport_support::memento(server, body);
    assert_eq!(status, 200, "{answer}");
    browser.goto(&server.url(answer["magicLink"].as_str().unwrap()));
    browser.wait_for_page("/labreport/");
    assert_eq!(browser.text("h1"), "Erregernachweis melden");
    let offered: Vec<String> = labreport_support::DISEASES
        .iter()
        .filter(|d| !browser.find_all(&format!("a[data-key=\"{d}\"]")).is_empty())
        .map(|d| d.to_string())
        .collect();
    assert_eq!(
        offered,
        labreport_support::DISEASES,
        "every disease offered"
    );
    browser.screenshot(&format!("index-{disease}"));
    browser.click(&format!("a[data-key=\"{disease}\"]"));
    let path = format!("/labreport/{disease}/");
    browser.wait_for_page(&path);
    path
}

/// Chooses the first code of each finding and `ergebnis`.
fn fill_findings(browser: &Chromium, ergebnis: &str) {
    for name in ["Befund.Test", "Befund.Methode", "Befund.Material"] {
        browser.select(name, &browser.first_choice(name));
    }
    browser.select("Befund.Ergebnis", ergebnis);
}

/// The DiagnosticReport profile of the one notification the reporting system received for `id`.
fn reported_profile(server: &Server, id: &str) -> String {
    let records = labreport_support::notifications(server, id);
    assert_eq!(records.len(), 1, "{records:?}");
    let bundle = labreport_support::bundle_of(&records[0]);
    let report = labreport_support::resource(&bundle, "DiagnosticReport");
    report["meta"]["profile"][0].as_str().unwrap().to_owned()
}

#[test]
fn journey_of_the_laboratory_report_through_its_disease_choice() {
    let (_dir, server) = labreport_support::start(&[]);
    let browser = Chromium::desktop("journey-labreport");

    // Influenza: the memento lacks the facility's telephone.
    let mut body = labreport_support::standard("lab-bj-1");
    body["MeldendeEinrichtung"]
        .as_object_mut()
        .unwrap()
        .remove("Telefon");
    let path = choose_disease(&server, &browser, &body, "Influenza");
    let influenza_title = browser.text("h1");
    assert_eq!(
        browser.value("Patient.Standard.Name.Nachname"),
        "Mustermann"
    );
    assert_eq!(
        browser.value("MeldendeEinrichtung.BSNR"),
        labreport_support::BSNR
    );
    assert_eq!(browser.value("MeldendeEinrichtung.Telefon"), "");
    let influenza_test = browser.first_choice("Befund.Test");

    browser.select("Befund.Ergebnis", "POSITIVE");
    browser.click("button.send");
    browser.wait_for("div.errors");
    assert_eq!(browser.location().0, path);
    assert_eq!(
        browser.problem_at("MeldendeEinrichtung.Telefon"),
        "Telefon: Pflichtangabe"
    );
    assert_eq!(
        browser.problem_at("Befund.Test"),
        "Untersuchung: Pflichtangabe"
    );
    assert_eq!(browser.value("Befund.Ergebnis"), "POSITIVE");
    assert_eq!(
        browser.value("Patient.Standard.Name.Nachname"),
        "Mustermann"
    );
    browser.screenshot("problems");

    browser.fill("MeldendeEinrichtung.Telefon", "030 1234567");
    fill_findings(&browser, "POSITIVE");
    browser.click("button.send");
    browser.wait_for_page(&format!("{path}sent"));
    assert_eq!(browser.location().1, "id=lab-bj-1");
    browser.screenshot("influenza-sent");
    let result = labreport_support::final_result(&server, "lab-bj-1", "SUCCESS");
    assert_eq!(result["diseaseCode"], "Influenza", "{result}");
    assert!(reported_profile(&server, "lab-bj-1").ends_with("LaboratoryReportINVP"));

    // Norovirus, chosen on the index of a second report: another form, other codes.
    let body = labreport_support::standard("lab-bj-2");
    let path = choose_disease(&server, &browser, &body, "Norovirus");
    assert_ne!(browser.text("h1"), influenza_title);
    assert_ne!(browser.first_choice("Befund.Test"), influenza_test);
    assert_eq!(browser.value("MeldendeEinrichtung.Telefon"), "030 1234567");
    fill_findings(&browser, "NEGATIVE");
    browser.click("button.send");
    browser.wait_for_page(&format!("{path}sent"));
    browser.screenshot("norovirus-sent");
    let result = labreport_support::final_result(&server, "lab-bj-2", "SUCCESS");
    assert_eq!(result["diseaseCode"], "Norovirus", "{result}");
    assert!(reported_profile(&server, "lab-bj-2").ends_with("LaboratoryReportNOVP"));
}

#[test]
fn journey_of_the_hospitalisation_report_to_its_success_page() {
    use hospreport_common::*;
    let (_dir, server) = start(&[]);
    deposit_certificate(&server, KNOWN_BSNR);
    let id = "HOSP-BJ-1";
    let mut body = complete(Some(id), KNOWN_BSNR);
    body["Patient"].as_object_mut().unwrap().remove("Name");
    let answer = memento(&server, &body);
    assert_eq!(answer.status(), 200);
    let link: Value = answer.json().unwrap();
    let browser = Chromium::desktop("journey-hospreport");
    browser.goto(&server.url(link["magicLink"].as_str().unwrap()));
    browser.wait_for_page(FORM);

    assert_eq!(browser.value("Patient.Vorname"), "Bertha");
    assert_eq!(browser.value("Patient.Name"), "");
    assert_eq!(browser.value("KlinischeAngaben.Hospitalisiert"), "JA");
    assert_eq!(
        browser.value("KlinischeAngaben.Hospitalisierung.AufnahmeAm"),
        "2026-11-21"
    );
    assert!(browser.is_checked("MedizinischeInformationen.Symptome.FIEBER"));

    // A death date without a death: two problems, each at its field; nothing sent.
    browser.enter("KlinischeAngaben.Todesdatum", "2026-11-25");
    browser.click("button.send");
    browser.wait_for("div.errors");
    assert_eq!(browser.location().0, FORM);
    assert_eq!(browser.problem_at("Patient.Name"), "Name: Pflichtangabe");
    let problem = browser.problem_at("KlinischeAngaben.Todesdatum");
    assert!(problem.starts_with("Todesdatum: "), "{problem}");
    assert_eq!(browser.value("Patient.Vorname"), "Bertha");
    assert_eq!(browser.value("KlinischeAngaben.Todesdatum"), "2026-11-25");
    browser.screenshot("problems");
    assert!(received(&server, id).is_empty());

    browser.clear("KlinischeAngaben.Todesdatum");
    browser.fill("Patient.Name", "Betroffen");
    browser.click("button.send");
    browser.wait_for_page(SUCCESS);
    assert_eq!(
        browser.location().1,
        "",
        "the success page takes no parameters"
    );
    assert_eq!(browser.text("h1"), "Hospitalisierungsmeldung übermittelt");
    browser.screenshot("success");

    // The integrator's view: the result is there at once, and listed.
    let peeked = api_get(&server, &format!("reports/{id}?peek=true"));
    assert_eq!(peeked.status(), 200);
    let result: Value = peeked.json().unwrap();
    assert_eq!(result["status"], "SUCCESS", "{result}");
    assert_eq!(result["reportId"], id);
    assert_eq!(pending(&server), [id]);
    let records = received(&server, id);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["notification_id"], json!(id));
}

#[test]
fn journey_of_the_bed_occupancy_report_through_the_bal_login() {
    const FORM: &str = "/bedreport/pm/De/Bettenbelegung";
    let dir = DataDir::new();
    dir.add_user("klinikum");
    let server = Server::start(&dir, &[]);
    let id = "BED-BJ-1";
    let answer = server.memento_in(
        "bedreport",
        "klinikum",
        &json!({"reportId": id, "StandortId": "987654",
                "Standortname": "Klinikum Mitte, Standort Nord",
                "numbers": {"erwachsenen_betten_belegt": 221}}),
    );
    assert_eq!(answer.status(), 200);
    let memento = answer.json::<Value>().unwrap()["memento"]
        .as_str()
        .unwrap()
        .to_owned();
    let browser = Chromium::desktop("journey-bedreport");
    // The integration's link: the user's credentials in the URL, which the browser sends on
    // the login's challenge.
    let login = server.url(&format!("/bal{FORM}?m={memento}")).replacen(
        "http://",
        "http://klinikum:correct%20horse%20battery@",
        1,
    );
    browser.goto(&login);
    browser.wait_for_page(FORM);
    assert_eq!(browser.value("StandortId"), "987654");
    assert_eq!(
        browser.value("Standortname"),
        "Klinikum Mitte, Standort Nord"
    );
    assert_eq!(browser.value("numbers.erwachsenen_betten_belegt"), "221");

    for (name, value) in [
        ("Strasse", "Chausseestraße"),
        ("Hausnummer", "12"),
        ("PLZ", "10115"),
        ("Ort", "Berlin"),
        ("numbers.kinder_betten_belegt", "-3"),
        ("numbers.kinder_betten_betrieben", "40"),
    ] {
        browser.enter(name, value);
    }
    browser.click("button.send");
    browser.wait_for("div.errors");
    assert_eq!(browser.location().0, FORM);
    assert_eq!(
        browser.problem_at("IK_Nummer"),
        "Institutionskennzeichen (IK): Pflichtangabe"
    );
    let problem = browser.problem_at("numbers.kinder_betten_belegt");
    assert!(problem.starts_with("Belegte Betten, Kinder: "), "{problem}");
    assert_eq!(browser.value("numbers.kinder_betten_belegt"), "-3");
    assert_eq!(browser.value("Strasse"), "Chausseestraße");
    browser.screenshot("problems");

    browser.fill("IK_Nummer", "261101015");
    browser.fill("numbers.kinder_betten_belegt", "37");
    browser.click("button.send");
    browser.wait_for_page(&format!("{FORM}/sent"));
    assert_eq!(browser.location().1, format!("id={id}"));
    assert_eq!(browser.text("h1"), "Bettenbelegung abgesendet");
    browser.screenshot("sent");

    // The integrator polls the status until the reporting system decided.
    let status = wait_until("the report is decided", || {
        let response = server.get_as(
            "klinikum",
            &format!("/api/bedreport/v1/status/{id}?peek=true"),
        );
        (response.status() == 200).then(|| response.json::<Value>().unwrap())
    });
    assert_eq!(status["succeeded"], true, "{status}");
    let records = common::demis::received_notifications(&server, "bedreport");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["report_id"], id);
}
