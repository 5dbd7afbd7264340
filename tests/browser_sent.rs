//! After sending, in a real headless Chromium: the magic link of a report already sent opens a
//! page saying so (no form), its link leads to the confirmation page, whose summary is
//! screenshotted on a desktop and a phone, and again rendered for print (the page's print
//! stylesheet through print media emulation): no buttons or forms, black on white.

mod common;

use common::browser::Chromium;
use common::*;
use serde_json::json;

const USER: &str = "klinik";

#[test]
fn the_already_sent_page_leads_to_a_printable_summary() {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(&dir, &[]);
    let link = magic_link(&server, USER, &complete_notice("geb-b-sent"));
    send_link(&server, &link);
    server.wait_for_status(USER, "geb-b-sent", "SUCCESS");

    for browser in [
        Chromium::desktop("sent-desktop"),
        Chromium::phone("sent-phone"),
    ] {
        // The link again: a page saying it was sent, with its state, and no form to fill in.
        browser.goto(&server.url(&link));
        browser.wait_for_page("/forms/birthnotice");
        assert_eq!(browser.text("h1"), "Geburtsanzeige: bereits abgesendet");
        let text = browser.page_text();
        assert!(text.contains("Stand: zugestellt"), "{text}");
        assert!(browser.find_all("[name=m]").is_empty());
        browser.screenshot("already-sent");

        browser.click("a[href^='/forms/birthnotice/sent']");
        browser.wait_for_page("/forms/birthnotice/sent");
        assert_eq!(browser.text("h1"), "Geburtsanzeige abgesendet");
        let text = browser.page_text();
        for shown in [
            "Geburtsanzeige (081020)",
            "Gesendete Angaben",
            "Klinikum Süd",
            "20.11.2026",
            "zugestellt",
        ] {
            assert!(text.contains(shown), "{shown} missing:\n{text}");
        }
        browser.screenshot("summary");

        // On paper: the print stylesheet, as the browser applies it.
        browser.dev_tools("Emulation.setEmulatedMedia", json!({"media": "print"}));
        assert_eq!(browser.css("form", "display"), "none");
        assert_eq!(browser.css("p.screen-only", "display"), "none");
        assert_eq!(browser.css("body", "color"), "rgba(0, 0, 0, 1)");
        assert_eq!(browser.css("section.summary", "break-inside"), "avoid");
        browser.screenshot("summary-print");
    }
}
