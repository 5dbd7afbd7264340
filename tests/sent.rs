//! After sending, against the real server: a link of a report already sent opens a page with
//! its state in words (in delivery, delivered, refused with the reason the integrator reads) and
//! when it was sent, never the form again, and never for another user's report; the
//! confirmation page shows what was sent (section headings, labels, values as a clerk reads
//! them, rows one by one), the report id and type, the time in local time and UTC, the delivery
//! state as it is now, a print stylesheet, and a 404 page for an id that is not the user's
//! report of the module; once retention removed the payload it says so; receipts name the
//! report type in words with its code, the sender, and every time in local time beside UTC.

mod common;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use common::*;
use meldewerk_xml::local_time::LocalZone;
use serde_json::{json, Value};

const USER: &str = "klinik";
const REFUSAL: &str = "Standesamt: nicht zuständig";

fn start(users: &[&str], env: &[(&str, &str)]) -> (DataDir, Server) {
    let dir = DataDir::new();
    for user in users {
        dir.add_user(user);
    }
    let server = Server::start(&dir, env);
    (dir, server)
}

/// The text a person reads on a page: tags removed, entities decoded, white space collapsed.
fn visible(html: &str) -> String {
    let body = &html[html.find("<body").unwrap_or(0)..];
    let mut text = String::new();
    let mut in_tag = false;
    for c in body.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let text = text
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Status and HTML of a page as `browser` sees it.
fn page(server: &Server, browser: &Browser, path: &str) -> (u16, String) {
    let response = browser.get(&server.url(path));
    (response.status().as_u16(), response.text().unwrap())
}

/// When the report was sent, from its result (`submittedAt`).
fn submitted_at(server: &Server, module: &str, id: &str) -> DateTime<Utc> {
    let result: Value = server
        .get_as(USER, &format!("/api/{module}/v1/reports/{id}?peek=true"))
        .json()
        .unwrap();
    result["submittedAt"].as_str().unwrap().parse().unwrap()
}

#[test]
fn a_link_of_a_sent_report_opens_a_page_with_its_state() {
    let (_dir, server) = start(&[USER], &[]);
    server.script_rule(&json!({"kind": "ack_lost", "report_id": "geb-s-wait"}));
    server.script_rule(&json!({"kind": "reject", "reason": REFUSAL, "report_id": "geb-s-refused"}));
    let mut links = Vec::new();
    for id in ["geb-s-wait", "geb-s-ok", "geb-s-refused"] {
        let link = magic_link(&server, USER, &complete_notice(id));
        send_link(&server, &link);
        links.push((id, link));
    }
    server.wait_for_status("klinik", "geb-s-ok", "SUCCESS");
    let refused = server.wait_for_status("klinik", "geb-s-refused", "FAILURE");
    assert_eq!(refused["failureReason"], REFUSAL);

    for (id, link) in links {
        // The link again, in another browser: a page saying so, no form to fill in.
        let browser = Browser::new();
        let opened = browser.open_magic_link(&server, &link);
        assert_eq!(opened.status, 200, "{id}");
        assert!(
            !opened.html.contains("name=\"m\""),
            "{id}: a form:\n{}",
            opened.html
        );
        let text = visible(&opened.html);
        let sent = LocalZone::BERLIN.show(submitted_at(&server, "birthnotice", id));
        assert!(
            text.contains(&format!(
                "Geburtsanzeige: bereits abgesendet Die Meldung {id} wurde am {sent} abgesendet."
            )),
            "{text}"
        );
        let state = match id {
            "geb-s-wait" => {
                "Stand: in Zustellung – die Behörde hat den Empfang noch nicht bestätigt.".into()
            }
            "geb-s-ok" => "Stand: zugestellt – Empfang bestätigt am ".to_string(),
            _ => format!(": {REFUSAL}"),
        };
        assert!(text.contains(&state), "{id}: {text}");
        if id == "geb-s-refused" {
            assert!(text.contains("Stand: abgelehnt am "), "{text}");
        }
        assert!(
            opened
                .html
                .contains(&format!("href=\"/forms/birthnotice/sent?id={id}\"")),
            "{}",
            opened.html
        );
    }
    // Still the one delivery each: the page sent nothing.
    assert_eq!(received(&server, "geb-s-ok").len(), 1);
}

#[test]
fn another_user_s_report_is_never_shown() {
    let (_dir, server) = start(&[USER, "andere"], &[]);
    let (own, confirmation) = send_in(&server, "birthnotice", USER, &complete_notice("geb-s-own"));
    assert_eq!(confirmation, "/forms/birthnotice/sent?id=geb-s-own");
    assert_eq!(page(&server, &own, &confirmation).0, 200);

    // Another user's link with the same id opens that user's form: nothing is sent under it.
    let link = magic_link(&server, "andere", &complete_notice("geb-s-own"));
    let other = Browser::new();
    let form = other.open_magic_link(&server, &link);
    assert_eq!(form.status, 200);
    assert!(form.html.contains("name=\"m\""), "{}", form.html);
    assert!(!visible(&form.html).contains("bereits abgesendet"));

    // Nor does that user see the report's confirmation page; unknown ids, a missing id and
    // another module's page are the same 404.
    let not_found = "Meldung nicht gefunden Unter Ihrem Zugang gibt es keine abgesendete Meldung \
                     mit dieser Kennung. Bitte prüfen Sie den Link.";
    for (browser, path) in [
        (&other, confirmation.as_str()),
        (&own, "/forms/birthnotice/sent?id=geb-s-unknown"),
        (&own, "/forms/birthnotice/sent"),
        (&own, "/forms/birthdata/sent?id=geb-s-own"),
    ] {
        let (status, html) = page(&server, browser, path);
        assert_eq!(status, 404, "{path}");
        let text = visible(&html);
        assert!(text.contains(not_found), "{path}: {text}");
        assert!(!text.contains("Lina"), "{path}: {text}");
    }
}

#[test]
fn the_confirmation_page_shows_what_was_sent_and_prints() {
    let (_dir, server) = start(&[USER], &[]);
    // The office holds its answer back until the script is reset.
    server.script_rule(&json!({"kind": "ack_lost", "report_id": "geb-s-sum"}));
    let (browser, confirmation) =
        send_in(&server, "birthnotice", USER, &complete_notice("geb-s-sum"));
    let (status, html) = page(&server, &browser, &confirmation);
    assert_eq!(status, 200);
    let text = visible(&html);
    let sent = LocalZone::BERLIN.show_with_utc(submitted_at(&server, "birthnotice", "geb-s-sum"));
    assert!(
        text.contains(&format!(
            "Meldung geb-s-sum Meldungsart Geburtsanzeige (081020) Abgesendet {sent} \
             Unterschrieben von Dr. Erika Beispiel Stand in Zustellung – die Behörde hat den \
             Empfang noch nicht bestätigt."
        )),
        "{text}"
    );
    // The summary: section headings, labels, values as a clerk reads them; empty fields left out.
    for shown in [
        "<h2>Gesendete Angaben</h2>",
        "<h3>Einrichtung</h3>",
        "<dt>Name der Einrichtung</dt><dd>Klinikum Süd</dd>",
        "<dt>Postleitzahl der Einrichtung</dt><dd>10117</dd>",
        "<h3>Geburt</h3>",
        "<dt>Tag der Geburt</dt><dd>20.11.2026</dd>",
        "<dt>Uhrzeit der Geburt</dt><dd>10:15</dd>",
        "<dt>Geschlecht des Kindes</dt><dd>weiblich</dd>",
        "<dt>Geburtsdatum der Mutter</dt><dd>01.04.1990</dd>",
    ] {
        assert!(html.contains(shown), "{shown} missing:\n{html}");
    }
    for left_out in ["Ansprechpartner", "Standort-ID", "name=\"m\""] {
        assert!(!html.contains(left_out), "{left_out}:\n{html}");
    }
    // Printable: a print stylesheet without the buttons and forms, sections kept whole.
    assert!(html.contains("@media print{"), "{html}");
    assert!(
        html.contains("form,button,.screen-only{display:none}"),
        "{html}"
    );
    assert!(
        html.contains("section,fieldset,dl.facts,dl>div{break-inside:avoid}"),
        "{html}"
    );

    // The state is read anew: once the office answers, the page says so.
    server.reset_script();
    server.wait_for_status(USER, "geb-s-sum", "SUCCESS");
    let text = visible(&page(&server, &browser, &confirmation).1);
    assert!(
        text.contains("Stand zugestellt – Empfang bestätigt am "),
        "{text}"
    );
}

#[test]
fn a_death_notice_is_summarised_row_by_row_under_its_own_form() {
    let (_dir, server) = start(&[USER], &[]);
    let (browser, confirmation) = send_in(
        &server,
        "deathnotice",
        USER,
        &complete_death_notice("tod-s-1"),
    );
    assert_eq!(confirmation, "/forms/deathnotice/084020/sent?id=tod-s-1");
    // Asked for under another form of the module, the report is shown under its own.
    for path in [
        confirmation.as_str(),
        "/forms/deathnotice/084021/sent?id=tod-s-1",
    ] {
        let (status, html) = page(&server, &browser, path);
        assert_eq!(status, 200, "{path}");
        let text = visible(&html);
        assert!(
            text.starts_with("Sterbefallanzeige der Einrichtung abgesendet"),
            "{text}"
        );
        assert!(
            text.contains("Meldungsart Sterbefallanzeige der Einrichtung (084020)"),
            "{text}"
        );
        for shown in [
            "(1)</dt><dd>station3@klinikum.example</dd>",
            "(2)</dt><dd>030 123456</dd>",
            // A code by its list's label, beside the code.
            "(2)</dt><dd>Telefon (Festnetz) (02)</dd>",
            // A date-time in local time.
            "<dd>20.11.2026, 14:30:00 Uhr (UTC+01:00)</dd>",
            "<dd>03.02.1940</dd>",
        ] {
            assert!(html.contains(shown), "{shown} missing:\n{html}");
        }
    }
}

#[test]
fn after_retention_the_pages_keep_the_state_but_not_the_details() {
    let (_dir, server) = start(
        &[USER],
        &[
            ("MELDEWERK_MODULES__BIRTHNOTICE__RETENTION_SECS", "1"),
            ("MELDEWERK_ENGINE__RETENTION_SWEEP_INTERVAL_SECS", "1"),
        ],
    );
    let link = magic_link(&server, USER, &complete_notice("geb-s-old"));
    let (browser, confirmation) = send_link(&server, &link);
    server.wait_for_status(USER, "geb-s-old", "SUCCESS");
    wait_until("the report expired", || {
        let read = server.get_as(USER, "/api/birthnotice/v1/reports/geb-s-old?peek=true");
        (read.status() == 410).then_some(())
    });
    let (status, html) = page(&server, &browser, &confirmation);
    assert_eq!(status, 200);
    let text = visible(&html);
    assert!(
        text.contains("Stand zugestellt – Empfang bestätigt am "),
        "{text}"
    );
    assert!(
        text.contains(
            "Die gesendeten Angaben wurden nach Ablauf der Aufbewahrungsfrist gelöscht ("
        ),
        "{text}"
    );
    assert!(
        text.contains(") und können nicht mehr angezeigt werden."),
        "{text}"
    );
    assert!(
        !html.contains("Gesendete Angaben") && !html.contains("Klinikum"),
        "{html}"
    );
    // The link still says it was sent.
    let opened = Browser::new().open_magic_link(&server, &link);
    assert!(visible(&opened.html).contains("Geburtsanzeige: bereits abgesendet"));
}

/// The receipt's text without white space (`pdftotext`, after `qpdf --check`).
fn receipt_text(result: &Value) -> String {
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(result["receiptPdf"].as_str().unwrap())
        .unwrap();
    checked_receipt_text(&pdf)
}

fn squeezed(text: &str) -> String {
    text.split_whitespace().collect()
}

#[test]
fn the_civil_registry_header_comes_from_the_section_its_modules_share() {
    let (_dir, server) = start(
        &[USER],
        &[
            (
                "MELDEWERK_MODULES__XPERSONENSTAND__PORTAL_NAME",
                "Klinikportal",
            ),
            (
                "MELDEWERK_MODULES__XPERSONENSTAND__PORTAL_KENNUNG",
                "sap:000000042",
            ),
        ],
    );
    let id = dispatch(&server, USER, &complete_notice("geb-s-header"));
    let text = receipt_text(&server.wait_for_status(USER, &id, "SUCCESS"));
    let line = squeezed("Absender Klinikportal (sap:000000042)");
    assert!(text.contains(&line), "{line} missing:\n{text}");
}

#[test]
fn receipts_name_the_report_type_the_sender_and_local_times() {
    let (_dir, server) = start(&[USER], &[]);
    let id = dispatch(&server, USER, &complete_notice("geb-s-receipt"));
    let text = receipt_text(&server.wait_for_status(USER, &id, "SUCCESS"));

    // The office read the type and the sender from the message's header.
    let xml = server
        .admin_get("/admin/api/v1/reports/birthnotice/geb-s-receipt/message")
        .text()
        .unwrap();
    let created = xml.split("<erstellungszeitpunkt>").nth(1).unwrap();
    let created: DateTime<Utc> = created[..created.find('<').unwrap()].parse().unwrap();
    let arrived: DateTime<Utc> = received(&server, &id)[0]["received_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let berlin = LocalZone::BERLIN;
    for line in [
        "Zeiten in Ortszeit (Europe/Berlin) und in UTC".to_owned(),
        "Meldungsart Geburtsanzeige (081020)".to_owned(),
        "Absender meldewerk (sap:000000001)".to_owned(),
        format!("Übermittelt {}", berlin.show_with_utc(created)),
        format!("Eingegangen {}", berlin.show_with_utc(arrived)),
        "Bestätigt".to_owned(),
    ] {
        assert!(text.contains(&squeezed(&line)), "{line} missing:\n{text}");
    }

    // The test receipts of the mock ids too, with the type of the form a memento opens.
    for (module, id, kind) in [
        (
            "birthnotice",
            "BIRTHNOTICE-TEST-SUCCESS",
            "Geburtsanzeige (081020)",
        ),
        (
            "deathnotice",
            "DEATHNOTICE-TEST-SUCCESS",
            "Sterbefallanzeige der Einrichtung (084020)",
        ),
    ] {
        let result: Value = server
            .get_as(USER, &format!("/api/{module}/v1/reports/{id}"))
            .json()
            .unwrap();
        let at: DateTime<Utc> = result["submittedAt"].as_str().unwrap().parse().unwrap();
        let text = receipt_text(&result);
        for line in [
            format!("Meldungsart {kind}"),
            format!("Übermittelt {}", berlin.show_with_utc(at)),
        ] {
            assert!(text.contains(&squeezed(&line)), "{line} missing:\n{text}");
        }
    }
}
