//! The three court forms of guardianship, each on its whole way in a real headless Chromium
//! (tests/common/browser.rs): the magic link lands on the index of the forms, the clerk picks
//! one and sees the memento's values; a submit with one mistake (a missing surname, a mistyped
//! SAFE-ID, a mailbox account the user was not granted) shows the problem next to its field with
//! every value kept; corrected, the form sends, the confirmation page follows, the integrator
//! reads SUCCESS and finds the outgoing message listed under the job, and the simulated court's
//! mailbox holds the schema-valid XJustiz message with the form's PDF. Screenshots of each final
//! page land in `target/browser-screenshots/journey-court-*.png`.

mod common;

use common::browser::Chromium;
use common::court::*;
use common::*;
use serde_json::{json, Value};

const USER: &str = "betreuung";

/// One court form's journey: the memento `body` of job `job`, `form` picked on the index,
/// `field` wrong at first (as the memento left it, or typed `wrong` over it), then `right`.
struct Journey<'a> {
    form: &'a str,
    title: &'a str,
    job: &'a str,
    body: Value,
    field: &'a str,
    wrong: Option<&'a str>,
    right: &'a str,
    /// How the problem at `field` begins.
    problem: &'a str,
}

fn run(journey: Journey) {
    let (_dir, server) = court_server(&[USER], &[]);
    let browser = Chromium::desktop(&format!("journey-court-{}", journey.form));
    let answer = server.memento_in("guardianship", USER, &journey.body);
    assert_eq!(answer.status(), 200);
    let answer: Value = answer.json().unwrap();

    // The link lands on the index of the three forms; the clerk picks one.
    browser.goto(&server.url(answer["magicLink"].as_str().unwrap()));
    browser.wait_for_page("/guardianship/");
    assert_eq!(browser.text("h1"), "Nachricht an das Gericht");
    for form in [
        "BetreuungAnregung",
        "UnterbringungAntrag",
        "FreiheitsentzugAntrag",
    ] {
        assert_eq!(
            browser.find_all(&format!("a[data-key=\"{form}\"]")).len(),
            1
        );
    }
    browser.click(&format!("a[data-key=\"{}\"]", journey.form));
    let path = format!("/guardianship/{}", journey.form);
    browser.wait_for_page(&path);
    assert_eq!(browser.text("h1"), journey.title);
    assert_eq!(browser.value("betroffener.name.vorname"), "Jörg");
    assert_eq!(browser.value("betroffener.geburtsdatum"), "1941-03-02");
    assert_eq!(browser.value("betroffener.familienstand"), "Verwitwet");
    assert_eq!(
        browser.value("absender.egvp_account_id"),
        journey.body["absender"]["egvp_account_id"].to_string()
    );
    assert_eq!(browser.value("meldeZeitpunkt.datum"), "2026-11-26");

    // The clerk completes the form, with one mistake: shown at its field, nothing sent.
    browser.fill(
        "betroffener.gegenwaertigerAufenthalt",
        "Station 4B, Zimmer 12",
    );
    if let Some(wrong) = journey.wrong {
        browser.fill(journey.field, wrong);
    }
    let before = browser.value(journey.field);
    browser.click("button.send");
    browser.wait_for("div.errors");
    assert_eq!(browser.location().0, path);
    let problem = browser.problem_at(journey.field);
    assert!(problem.starts_with(journey.problem), "{problem}");
    // Listed above the form once: one mistake, one problem.
    let listed: Vec<String> = browser
        .find_all("div.errors li")
        .iter()
        .map(|item| browser.block_on(item.text()).unwrap())
        .collect();
    assert_eq!(listed, std::slice::from_ref(&problem));
    assert_eq!(browser.value(journey.field), before);
    assert_eq!(
        browser.value("betroffener.gegenwaertigerAufenthalt"),
        "Station 4B, Zimmer 12"
    );
    assert_eq!(browser.value("betroffener.name.vorname"), "Jörg");
    browser.screenshot("problem");
    let (_, listed) = list(&server, USER, &format!("?jobId={}", journey.job));
    assert_eq!(listed, json!([]), "nothing sent");

    // Corrected, it is sent.
    browser.fill(journey.field, journey.right);
    browser.click("button.send");
    browser.wait_for_page(&format!("{path}/sent"));
    assert_eq!(browser.location().1, format!("id={}", journey.job));
    browser.screenshot("sent");

    // The integrator's view: SUCCESS, and the outgoing message listed under the job.
    let result = server.wait_for_status_in("guardianship", USER, journey.job, "SUCCESS");
    assert_eq!(result["module"], "guardianship", "{result}");
    let outgoing = wait_until(&format!("{} listed", journey.job), || {
        let (_, listing) = list(&server, USER, &format!("?jobId={}", journey.job));
        listing.as_array().unwrap().first().cloned()
    });
    assert_eq!(outgoing["direction"], "OUTGOING");

    // At the court: valid XJustiz with the form's PDF, the clerk's entries in it.
    let (xml, pdf_name, pdf) = at_the_court(&server, journey.job);
    xmllint_xjustiz(&xml).unwrap_or_else(|e| panic!("{}: {e}", journey.form));
    assert_eq!(pdf_name, format!("{}.pdf", journey.form));
    let text = pdf_text(&pdf);
    for expected in ["Station 4B, Zimmer 12", journey.job] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
}

#[test]
fn journey_of_the_suggestion_of_a_guardianship_in_the_browser() {
    let mut body = memento_body("vorgang-bj-1");
    body["betroffener"]["name"]
        .as_object_mut()
        .unwrap()
        .remove("nachname");
    run(Journey {
        form: "BetreuungAnregung",
        title: "Anregung einer Betreuung",
        job: "vorgang-bj-1",
        body,
        field: "betroffener.name.nachname",
        wrong: None,
        right: "Müller",
        problem: "Nachname: Pflichtangabe",
    });
}

#[test]
fn journey_of_the_application_for_placement_in_the_browser() {
    run(Journey {
        form: "UnterbringungAntrag",
        title: "Antrag auf Unterbringung",
        job: "vorgang-bj-2",
        body: memento_body("vorgang-bj-2"),
        field: "empfaenger.safeId",
        wrong: Some("Amtsgericht Musterstadt"),
        right: COURT,
        problem: "SAFE-ID des Empfängers: ",
    });
}

#[test]
fn journey_of_the_application_for_deprivation_of_liberty_in_the_browser() {
    // A mailbox account the user was not granted: refused at the submit, at its field.
    let other = (ACCOUNT + 1).to_string();
    run(Journey {
        form: "FreiheitsentzugAntrag",
        title: "Antrag auf Freiheitsentziehung",
        job: "vorgang-bj-3",
        body: memento_body("vorgang-bj-3"),
        field: "absender.egvp_account_id",
        wrong: Some(&other),
        right: &ACCOUNT.to_string(),
        problem: "Absendendes Postfach (Konto-Nr.): ",
    });
}
