//! The operators' dashboard in a real headless Chromium (tests/common/browser.rs), at desktop
//! (1280×900) and phone (390×844) size: pausing and resuming a module, retrying and discarding a
//! job, looking up a report, reading the audit log and the chart, all with the buttons and forms
//! of the pages and without a script of the page's own. Screenshots land in
//! `target/browser-screenshots/dashboard-*.png`. Needs `chromium` and `chromedriver` (Debian's
//! `chromium`, `chromium-driver`): scripts/test.sh installs them.

mod common;

use common::browser::Chromium;
use common::*;
use serde_json::{json, Value};

/// A server with the user `klinik`, acknowledging at once.
fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(
        &dir,
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0")],
    );
    (dir, server)
}

/// `path` of the server with the operator's credentials in the URL, which the browser turns into
/// the Basic header of this and every later request to the dashboard.
fn as_operator(server: &Server, path: &str) -> String {
    server.url(path).replacen(
        "http://",
        &format!("http://{}:{}@", OPERATOR.0, OPERATOR.1),
        1,
    )
}

/// The office holds the acknowledgement of `report` back: its job waits.
fn hold_acknowledgement(server: &Server, report: &str) {
    let answer = server
        .client()
        .post(server.url("/admin/api/v1/transports/xpersonenstand/script/rules"))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .json(&json!({"kind": "ack_lost", "report_id": report}))
        .send()
        .unwrap();
    assert_eq!(answer.status(), 200);
}

/// Waits until the outbox holds `count` jobs awaiting their acknowledgement.
fn wait_for_waiting_jobs(server: &Server, count: usize) {
    wait_until("the jobs to await their acknowledgement", || {
        let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
        let jobs = page["jobs"].as_array().unwrap();
        (jobs.len() == count && jobs.iter().all(|j| j["waitingFor"] == "acknowledgement"))
            .then_some(())
    });
}

/// The audit log's actions, oldest first.
fn audited(server: &Server) -> Vec<String> {
    let audit: Value = server.admin_get("/admin/api/v1/audit").json().unwrap();
    audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether the page is no wider than the window (nothing to scroll sideways).
fn fits_the_width(browser: &Chromium) -> bool {
    browser.execute(
        "return document.documentElement.scrollWidth <= window.innerWidth",
        vec![],
    ) == json!(true)
}

#[test]
fn browser_acts_from_the_dashboard_on_a_desktop() {
    let (_dir, server) = server();
    dispatch(&server, "klinik", &complete_notice("geb-b-done"));
    server.wait_for_status("klinik", "geb-b-done", "SUCCESS");
    hold_acknowledgement(&server, "geb-b-1");
    hold_acknowledgement(&server, "geb-b-2");
    dispatch(&server, "klinik", &complete_notice("geb-b-1"));
    dispatch(&server, "klinik", &complete_notice("geb-b-2"));
    wait_for_waiting_jobs(&server, 2);
    let browser = Chromium::desktop("dashboard-desktop");

    // Overview: the chart of the last hour, and a module paused with its button.
    browser.goto(&as_operator(&server, "/admin/"));
    browser.wait_for_page("/admin/");
    let series = browser.find_all("figure.chart > svg polyline.series");
    assert_eq!(series.len(), 1, "birthnotice success");
    browser.click("#module-birthnotice button");
    let source = browser.wait_for_page("/admin/");
    assert!(
        browser
            .text("#done")
            .starts_with("Module birthnotice paused"),
        "{source}"
    );
    assert_eq!(browser.text("#module-birthnotice .state-paused"), "paused");
    assert_eq!(browser.text("#paused"), "1");
    browser.screenshot("overview-paused");
    browser.click("#module-birthnotice button");
    browser.wait_for_page("/admin/");
    assert!(browser
        .text("#done")
        .starts_with("Module birthnotice resumed"));

    // Queue: retry one job, then discard the other after saying the authority has it.
    browser.click("nav a[href=\"/admin/jobs\"]");
    browser.wait_for_page("/admin/jobs");
    assert_eq!(browser.find_all("#jobs tbody tr").len(), 2);
    browser.screenshot("queue");
    browser.click("#jobs tbody tr:first-child button");
    browser.wait_for_page("/admin/jobs");
    assert!(browser.text("#done").contains("is due now"));
    // The discard button of an accepted job asks for the tick first; the browser refuses to
    // send the form without it.
    let second = "#jobs tbody tr:nth-child(2)";
    browser.click(&format!("{second} form[action$=\"/discard\"] button"));
    assert_eq!(browser.find_all("#done").len(), 1, "still the retry's page");
    assert!(browser.text("#done").contains("is due now"));
    browser.click(&format!("{second} input[name=\"force\"]"));
    browser.click(&format!("{second} form[action$=\"/discard\"] button"));
    browser.wait_for_page("/admin/jobs");
    assert!(browser.text("#done").contains("was discarded"));
    let failed = server.wait_for_status("klinik", "geb-b-2", "FAILURE");
    assert_eq!(failed["failureReason"], "discarded by the operator");
    assert!(browser
        .text("#failures")
        .contains("birthnotice / geb-b-2 (klinik)"));
    browser.screenshot("queue-after-actions");

    // Look-up: the report's history and its delivered message.
    browser.click("nav a[href=\"/admin/reports\"]");
    browser.wait_for_page("/admin/reports");
    browser.select("module", "birthnotice");
    browser.fill("id", "geb-b-done");
    browser.click_button("Look up");
    browser.wait_for_page("/admin/reports");
    assert_eq!(
        browser.text("#report"),
        "birthnotice / geb-b-done of klinik"
    );
    assert!(browser
        .text("#history")
        .contains("SUCCESS, receipt received"));
    assert!(browser
        .text("#message")
        .contains("portal2StA.Geburt.081020"));
    browser.screenshot("lookup");

    // The audit log has every action, in order.
    browser.click("nav a[href=\"/admin/audit\"]");
    browser.wait_for_page("/admin/audit");
    let actions: Vec<String> = browser
        .find_all("#audit td[data-label=\"Action\"]")
        .iter()
        .map(|cell| browser.block_on(cell.text()).unwrap())
        .collect();
    assert_eq!(actions, audited(&server));
    assert_eq!(
        actions[2..],
        ["pause", "resume", "retry-now", "discard"].map(String::from)
    );
    browser.screenshot("audit");
    assert!(fits_the_width(&browser));
}

#[test]
fn browser_shows_the_dashboard_pages_as_cards_on_a_phone() {
    let (_dir, server) = server();
    dispatch(&server, "klinik", &complete_notice("geb-m-done"));
    server.wait_for_status("klinik", "geb-m-done", "SUCCESS");
    hold_acknowledgement(&server, "geb-m-1");
    dispatch(&server, "klinik", &complete_notice("geb-m-1"));
    wait_for_waiting_jobs(&server, 1);
    let browser = Chromium::phone("dashboard-phone");

    browser.goto(&as_operator(&server, "/admin/jobs"));
    browser.wait_for_page("/admin/jobs");
    assert_eq!(browser.css("#jobs thead", "display"), "none");
    assert_eq!(browser.css("#jobs tbody tr", "display"), "block");
    assert!(fits_the_width(&browser), "the queue fits the phone");
    browser.screenshot("queue");
    browser.click_button("Retry now");
    browser.wait_for_page("/admin/jobs");
    assert!(browser.text("#done").contains("is due now"));

    browser.click("nav a[href=\"/admin/\"]");
    browser.wait_for_page("/admin/");
    // The chart scales to the phone's width, its labels with it.
    let width = browser.execute(
        "return document.querySelector('figure.chart > svg').getBoundingClientRect().width",
        vec![],
    );
    let width = width.as_f64().unwrap();
    assert!((300.0..=390.0).contains(&width), "{width}");
    assert!(fits_the_width(&browser), "the overview fits the phone");
    browser.screenshot("overview");

    browser.goto(&as_operator(
        &server,
        "/admin/reports?module=birthnotice&id=geb-m-done",
    ));
    browser.wait_for_page("/admin/reports");
    assert!(browser.text("#history").contains("SUCCESS"));
    // The message scrolls inside its box; the page itself does not.
    assert!(fits_the_width(&browser), "the look-up fits the phone");
    browser.screenshot("lookup");
    assert_eq!(audited(&server), ["add-script-rule", "retry-now"]);
}
