//! The birth-notice form in a real headless Chromium, driven through chromedriver with the W3C
//! WebDriver protocol: magic link → pre-filled form → typing, signing, submitting → confirmation
//! page and delivery; validation errors shown in the browser with the values kept; a broken
//! magic link ending on the login error page. Screenshots land in `target/browser-screenshots/`.
//! Needs `chromium` and `chromedriver` (Debian's `chromium`, `chromium-driver`): scripts/test.sh
//! installs them; without them these tests fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use reqwest::blocking::Client;
use serde_json::{json, Value};

const CHROMIUM: &str = "/usr/bin/chromium";
/// The key under which WebDriver returns an element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long a page may take to appear.
const PAGE_DEADLINE: Duration = Duration::from_secs(30);

/// A chromedriver process with one browser session; both end on drop, also when a test fails.
struct Driver {
    child: Child,
    http: Client,
    /// `http://127.0.0.1:PORT` of chromedriver.
    base: String,
    /// The session's id.
    session: String,
    /// Names the screenshots.
    test: String,
    /// The browser's fresh profile directory.
    profile: tempfile::TempDir,
}

fn missing_tool(what: &str, detail: &str) -> ! {
    panic!(
        "{what} is needed by the browser tests ({detail}); run scripts/test.sh, which installs \
         Debian's chromium and chromium-driver"
    )
}

impl Driver {
    /// Starts chromedriver on a free port and opens a headless Chromium session.
    fn start(test: &str) -> Driver {
        if !Path::new(CHROMIUM).exists() {
            missing_tool("chromium", &format!("{CHROMIUM} does not exist"));
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| missing_tool("chromedriver", &e.to_string()));
        let profile = tempfile::tempdir().unwrap();
        let mut driver = Driver {
            child,
            http: loopback_client()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            base: format!("http://127.0.0.1:{port}"),
            session: String::new(),
            test: test.to_string(),
            profile,
        };
        driver.wait_ready();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                format!("--user-data-dir={}", driver.profile.path().display()),
            ]}
        }}});
        let created = driver.call("POST", "/session", Some(capabilities));
        driver.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {created}"))
            .to_string();
        // Tall enough that the screenshots show most of the form.
        driver.cmd(
            "POST",
            "/window/rect",
            json!({"x": 0, "y": 0, "width": 1000, "height": 2400}),
        );
        driver
    }

    /// Polls `GET /status` until chromedriver is ready.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + PAGE_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                missing_tool("a working chromedriver", &format!("it exited: {status}"));
            }
            if let Ok(response) = self.http.get(format!("{}/status", self.base)).send() {
                if let Ok(body) = response.json::<Value>() {
                    if body["value"]["ready"] == true {
                        return;
                    }
                }
            }
            assert!(Instant::now() < deadline, "chromedriver never became ready");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One WebDriver request to an absolute path; returns `value`, panics on a WebDriver error.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let request = match method {
            "GET" => self.http.get(url),
            "DELETE" => self.http.delete(url),
            _ => self.http.post(url).json(&body.unwrap_or_else(|| json!({}))),
        };
        let response = request
            .send()
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status();
        let body: Value = response.json().unwrap_or(Value::Null);
        assert!(status.is_success(), "{method} {path}: {status} {body}");
        body["value"].clone()
    }

    /// A request within the session (`path` relative to `/session/{id}`).
    fn cmd(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(
            method,
            &format!("/session/{}{path}", self.session),
            Some(body),
        )
    }

    fn get(&self, path: &str) -> Value {
        self.cmd("GET", path, Value::Null)
    }

    fn navigate(&self, url: &str) {
        self.cmd("POST", "/url", json!({ "url": url }));
    }

    /// The current URL's path and query, without the server part.
    fn location(&self) -> (String, String) {
        let url = self.get("/url").as_str().unwrap().to_string();
        let rest = url.splitn(4, '/').nth(3).unwrap_or("");
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        (format!("/{path}"), query.to_string())
    }

    /// Waits until the browser shows `path` (and `h1` exists); returns the page source.
    fn wait_for_page(&self, path: &str) -> String {
        let deadline = Instant::now() + PAGE_DEADLINE;
        loop {
            if self.location().0 == path && self.find_all("h1").len() == 1 {
                return self.get("/source").as_str().unwrap().to_string();
            }
            if Instant::now() > deadline {
                self.screenshot("timeout");
                panic!(
                    "the browser never reached {path}; it is at {:?} with title {}",
                    self.location(),
                    self.get("/title")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        let found = self.cmd(
            "POST",
            "/elements",
            json!({"using": "css selector", "value": css}),
        );
        found
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[ELEMENT_KEY].as_str().unwrap().to_string())
            .collect()
    }

    /// The one element matching `css`.
    fn find(&self, css: &str) -> String {
        let found = self.cmd(
            "POST",
            "/element",
            json!({"using": "css selector", "value": css}),
        );
        found[ELEMENT_KEY].as_str().unwrap().to_string()
    }

    /// The input named `name` (a dotted JSON path).
    fn field(&self, name: &str) -> String {
        self.find(&format!("[name=\"{name}\"]"))
    }

    fn value(&self, name: &str) -> String {
        let element = self.field(name);
        let value = self.get(&format!("/element/{element}/property/value"));
        value.as_str().unwrap_or_default().to_string()
    }

    fn text(&self, css: &str) -> String {
        let element = self.find(css);
        let text = self.get(&format!("/element/{element}/text"));
        text.as_str().unwrap().to_string()
    }

    fn clear(&self, name: &str) {
        let element = self.field(name);
        self.cmd("POST", &format!("/element/{element}/clear"), json!({}));
    }

    fn type_into(&self, name: &str, text: &str) {
        let element = self.field(name);
        let body = json!({ "text": text });
        self.cmd("POST", &format!("/element/{element}/value"), body);
    }

    fn click(&self, css: &str) {
        let element = self.find(css);
        self.cmd("POST", &format!("/element/{element}/click"), json!({}));
    }

    fn is_checked(&self, name: &str) -> bool {
        let element = self.field(name);
        self.get(&format!("/element/{element}/property/checked")) == true
    }

    /// Saves a PNG of the viewport as `target/browser-screenshots/<test>-<step>.png`.
    fn screenshot(&self, step: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}-{step}.png", self.test));
        let png = self.get("/screenshot");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "screenshot is no PNG");
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Best effort: a picture of where the test failed.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.screenshot("failure");
            }));
        }
        if !self.session.is_empty() {
            let _ = self
                .http
                .delete(format!("{}/session/{}", self.base, self.session))
                .send();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server with the user `klinik`.
fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let server = Server::start(&dir, &[]);
    (dir, server)
}

/// Opens the magic link of `notice` in the browser and waits for the form.
fn open_form(server: &Server, driver: &Driver, notice: &Value) {
    let link = magic_link(server, "klinik", notice);
    driver.navigate(&server.url(&link));
    let source = driver.wait_for_page("/forms/birthnotice");
    assert!(source.contains("Geburtsanzeige"), "{source}");
    assert_eq!(driver.text("h1"), "Geburtsanzeige");
}

fn sign(driver: &Driver) {
    driver.clear("signatur.name");
    driver.type_into("signatur.name", "Dr. Erika Beispiel");
    assert!(!driver.is_checked("signatur.bestaetigt"));
    driver.click("[name=\"signatur.bestaetigt\"]");
    assert!(driver.is_checked("signatur.bestaetigt"), "checkbox ticked");
}

#[test]
fn browser_fills_in_signs_and_dispatches_the_notice() {
    let (_dir, server) = server();
    let id = "geb-browser-1";
    let mut notice = complete_notice(id);
    notice["mutter"]["standard"]
        .as_object_mut()
        .unwrap()
        .remove("geburtsdatum");
    let driver = Driver::start("journey");
    open_form(&server, &driver, &notice);

    // What the memento carried is in the inputs, umlauts intact; the missing date is empty.
    assert_eq!(driver.value("nameEinrichtung"), "Klinikum Süd");
    assert_eq!(
        driver.value("anschriftAutor.gebaeude.strasse"),
        "Hauptstraße"
    );
    assert_eq!(driver.value("mutter.standard.name.familienname"), "Muster");
    assert_eq!(driver.value("geburtsangaben.tag"), "2026-11-20");
    assert_eq!(driver.value("mutter.standard.geburtsdatum"), "");

    // Typed as a person would, in the order of the browser's locale (month, day, year for the
    // en-US default of headless Chromium; day, month, year for German).
    driver.click("[name=\"mutter.standard.geburtsdatum\"]");
    let order = driver.cmd(
        "POST",
        "/execute/sync",
        json!({"script": "return new Intl.DateTimeFormat().formatToParts(new Date(1990, 3, 1))\
                          .map(p => p.type).filter(t => t !== 'literal')", "args": []}),
    );
    let keys: String = order
        .as_array()
        .unwrap()
        .iter()
        .map(|part| match part.as_str().unwrap() {
            "day" => "01",
            "month" => "04",
            _ => "1990",
        })
        .collect();
    driver.type_into("mutter.standard.geburtsdatum", &keys);
    assert_eq!(
        driver.value("mutter.standard.geburtsdatum"),
        "1990-04-01",
        "typing {keys} in the locale order {order}"
    );
    sign(&driver);
    driver.screenshot("filled");

    driver.click("button.send");
    driver.wait_for_page("/forms/birthnotice/sent");
    assert_eq!(driver.location().1, format!("id={id}"));
    assert_eq!(driver.text("h1"), "Geburtsanzeige abgesendet");
    assert!(driver.text("main, body").contains(id));
    driver.screenshot("sent");

    // The API has the report: PENDING (unless the office already acknowledged), then SUCCESS.
    let first = server.get_as(
        "klinik",
        &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
    );
    assert_eq!(first.status(), 200);
    let first: Value = first.json().unwrap();
    assert!(
        first["status"] == "PENDING" || first["status"] == "SUCCESS",
        "{first}"
    );
    let report = server.wait_for_status("klinik", id, "SUCCESS");
    assert_eq!(report["id"], id, "{report}");
}

#[test]
fn browser_shows_validation_errors_and_keeps_the_values() {
    let (_dir, server) = server();
    let driver = Driver::start("validation");
    open_form(&server, &driver, &complete_notice("geb-browser-2"));

    driver.clear("mutter.standard.name.familienname");
    assert_eq!(driver.value("mutter.standard.name.familienname"), "");
    driver.clear("kind.name.vornamen");
    driver.type_into("kind.name.vornamen", "Lina <&\"> Ülla");
    sign(&driver);
    driver.click("button.send");

    let deadline = Instant::now() + PAGE_DEADLINE;
    while driver.find_all("div.errors").is_empty() {
        assert!(Instant::now() < deadline, "no error list appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    driver.screenshot("errors");
    assert_eq!(driver.location().0, "/forms/birthnotice");
    let errors = driver.text("div.errors");
    assert!(
        errors.contains("Familienname der Mutter: Pflichtangabe"),
        "{errors}"
    );
    // Everything else is still there, the signature included; the cleared field stays empty.
    assert_eq!(driver.value("mutter.standard.name.familienname"), "");
    assert_eq!(driver.value("nameEinrichtung"), "Klinikum Süd");
    assert_eq!(driver.value("mutter.standard.name.vornamen"), "Anna");
    assert_eq!(driver.value("mutter.standard.geburtsdatum"), "1990-04-01");
    assert_eq!(driver.value("kind.name.vornamen"), "Lina <&\"> Ülla");
    assert_eq!(driver.value("signatur.name"), "Dr. Erika Beispiel");
    assert!(driver.is_checked("signatur.bestaetigt"));

    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    assert_eq!(listed, json!([]), "nothing dispatched");
}

#[test]
fn browser_with_a_broken_magic_link_ends_at_the_login_error() {
    let (_dir, server) = server();
    let link = magic_link(&server, "klinik", &complete_notice("geb-browser-3"));
    // Break the token: change the character before the query.
    let at = link.find('?').unwrap_or(link.len()) - 1;
    let replacement = if link.as_bytes()[at] == b'A' {
        "B"
    } else {
        "A"
    };
    let broken = format!("{}{replacement}{}", &link[..at], &link[at + 1..]);
    assert_ne!(broken, link);

    let driver = Driver::start("broken-link");
    driver.navigate(&server.url(&broken));
    driver.wait_for_page("/login");
    assert_eq!(driver.location().1, "error");
    assert_eq!(driver.text("h1"), "Anmeldung");
    let message = driver.text("[role=alert]");
    assert!(message.contains("ungültig"), "{message}");
    driver.screenshot("login-error");
    // And no form opens without a session.
    driver.navigate(&server.url("/forms/birthnotice"));
    driver.wait_for_page("/login");
}

#[test]
fn browser_adds_contact_rows_and_enter_sends_the_birthdata_form() {
    let (_dir, server) = server();
    let driver = Driver::start("birthdata-rows");
    let data = json!({
        "id": "gd-browser-1",
        "anschriftAutor": {"gebaeude": {"strasse": "Hauptstraße", "postleitzahl": "10117", "wohnort": "Berlin"}},
        "vorgangsidentifikation": {"ereignis": {"zeitpunkt": "2026-11-20T10:30:00+01:00", "zeichen": "ELT-7"}},
        "geburtsangaben": {"tag": "2026-11-20", "uhrzeit": "10:15"},
        "kind": {"geschlecht": "w", "name": {"familienname": {"name": "Muster"}, "vornamen": {"name": "Lina"}}},
        "mutter": {"namen": {"vornamen": "Anna", "familienname": "Muster"}, "geburt": {"tag": "1990-04-01"},
                   "geschlecht": "w", "staatsangehoerigkeit": {"code": "000"}}
    });
    let response = server.memento_in("birthdata", "klinik", &data);
    assert_eq!(response.status(), 200);
    let link = response.json::<Value>().unwrap()["magicLink"]
        .as_str()
        .unwrap()
        .to_owned();
    driver.navigate(&server.url(&link));
    driver.wait_for_page("/forms/birthdata");
    assert_eq!(driver.text("h1"), "Geburtsdaten der Eltern");

    // One empty contact row; "Weitere Zeile" adds a second and keeps what was typed.
    driver.type_into("kontaktdaten[0].kanal", "01");
    driver.type_into("kontaktdaten[0].kennung", "anna@example.org");
    assert!(driver
        .find_all("[name=\"kontaktdaten[1].kanal\"]")
        .is_empty());
    driver.click("button.more[value=\"kontaktdaten\"]");
    let deadline = Instant::now() + PAGE_DEADLINE;
    while driver
        .find_all("[name=\"kontaktdaten[1].kanal\"]")
        .is_empty()
    {
        assert!(Instant::now() < deadline, "no second contact row appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(driver.value("kontaktdaten[0].kennung"), "anna@example.org");
    driver.type_into("kontaktdaten[1].kanal", "02");
    driver.type_into("kontaktdaten[1].kennung", "030 1234567");
    driver.screenshot("rows");

    // Enter in a text field sends the form with its first submit button: the one that sends.
    driver.type_into("auftragsnummer", "EG-2026-1\u{E007}");
    driver.wait_for_page("/forms/birthdata/sent");
    assert_eq!(driver.text("h1"), "Geburtsdaten der Eltern abgesendet");
    driver.screenshot("sent");

    let done = server.wait_for_status_in("birthdata", "klinik", "gd-browser-1", "SUCCESS");
    assert_eq!(done["module"], "birthdata");
    let message = server
        .admin_get("/admin/api/v1/reports/birthdata/gd-browser-1/message")
        .text()
        .unwrap();
    assert!(message.contains("030 1234567"), "{message}");
    assert!(message.contains("EG-2026-1"));
}

/// The text of `<strong id="{id}">…</strong>` in a page's source.
fn strong_text<'a>(source: &'a str, id: &str) -> &'a str {
    let open = format!("<strong id=\"{id}\">");
    let start = source.find(&open).map(|at| at + open.len()).unwrap_or(0);
    let end = source[start..].find('<').map_or(start, |at| start + at);
    &source[start..end]
}

#[test]
fn browser_shows_the_operator_dashboard_on_a_phone_sized_screen() {
    let (_dir, server) = server();
    dispatch(&server, "klinik", &complete_notice("geb-dashboard"));
    server.wait_for_status("klinik", "geb-dashboard", "SUCCESS");
    let driver = Driver::start("dashboard");
    driver.cmd("POST", "/window/rect", json!({"width": 390, "height": 844}));
    // Credentials in the URL are what a browser turns into the Basic header.
    let base = server.url("/admin/");
    let with_credentials = base.replacen(
        "http://",
        &format!("http://{}:{}@", OPERATOR.0, OPERATOR.1),
        1,
    );
    driver.navigate(&with_credentials);
    // The page reloads itself every few seconds, so it is read from its source (one snapshot)
    // rather than element by element, which a reload in between would make stale.
    let source = driver.wait_for_page("/admin/");
    assert!(
        source.contains("<h1>meldewerk – operations</h1>"),
        "{source}"
    );
    assert_eq!(strong_text(&source, "degraded"), "0");
    assert_eq!(strong_text(&source, "processed"), "1");
    let start = source.find("<tbody>").unwrap();
    let body = &source[start..start + source[start..].find("</tbody>").unwrap()];
    assert_eq!(
        body.matches("<tr>").count(),
        7,
        "outbox, the store, three modules, the inbox, retention"
    );
    assert!(
        body.contains("<td data-label=\"Actor\">store</td>"),
        "{body}"
    );
    assert!(source.contains("<td data-label=\"Transport\">xpersonenstand</td>"));
    assert!(body.contains("module:birthnotice") && body.contains("running"));
    assert!(body.contains("inbox:xpersonenstand"));
    // On a narrow screen the header row is hidden and each row is a card of its own. Layout is
    // read right after a load; a reload in between only means another try.
    let deadline = Instant::now() + PAGE_DEADLINE;
    let layout = loop {
        let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let header = driver.find("thead");
            let row = driver.find("tbody tr");
            (
                driver.get(&format!("/element/{header}/css/display")),
                driver.get(&format!("/element/{row}/css/display")),
            )
        }));
        match read {
            Ok(layout) => break layout,
            Err(_) => assert!(Instant::now() < deadline, "the layout was never readable"),
        }
    };
    assert_eq!(layout, (json!("none"), json!("block")));
    driver.screenshot("phone");

    // The page refreshes itself: a report finished after the first load shows up.
    dispatch(&server, "klinik", &complete_notice("geb-dashboard-2"));
    server.wait_for_status("klinik", "geb-dashboard-2", "SUCCESS");
    let deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let source = driver
            .get("/source")
            .as_str()
            .unwrap_or_default()
            .to_string();
        if strong_text(&source, "processed") == "2" {
            break;
        }
        assert!(Instant::now() < deadline, "the dashboard did not refresh");
        std::thread::sleep(Duration::from_millis(200));
    }
}
