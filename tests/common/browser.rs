//! A real headless Chromium for the tests, driven through chromedriver with the `fantoccini`
//! WebDriver client. Each [`Chromium`] has its own chromedriver (on a port the driver picks
//! itself) and its own fresh profile, so the tests of a binary can run in parallel; both end on
//! drop, also when a test fails, and a failing test leaves a screenshot of where it stood.
//!
//! The tests and the rest of the harness are synchronous (blocking HTTP clients), so each
//! [`Chromium`] owns a small tokio runtime and its methods block on it; [`Chromium::block_on`]
//! and [`Chromium::client`] give the whole fantoccini API for what the helpers do not cover.
//!
//! Needs Debian's `chromium` and `chromium-driver` (scripts/test.sh installs them); without them
//! the first [`Chromium::start`] fails saying which one is missing.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

use super::wait_until;
use driver::start_driver;

mod driver;

/// The browser Debian's `chromium` package installs.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// The tallest screenshot taken, in pixels: Chromium draws nothing beyond its largest texture
/// (16,384 pixels), so a longer page is cut there.
const SCREENSHOT_MAX_PIXELS: f64 = 16_000.0;
/// The user agent of the phone screen: a current iPhone's Safari, so that a page sees what a
/// clerk's phone would send.
const PHONE_USER_AGENT: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) \
    AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/// The screen a test looks at the pages on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// A desktop window of 1280×900.
    Desktop,
    /// A phone of 390×844 CSS pixels at a device pixel ratio of 3, with touch and a phone's
    /// user agent (chromedriver's mobile emulation).
    Phone,
}

/// A headless Chromium session under its own chromedriver.
pub struct Chromium {
    /// `None` only while [`Drop`] closes the session.
    client: Option<Client>,
    runtime: tokio::runtime::Runtime,
    driver: Child,
    /// Names the screenshots: `target/browser-screenshots/<test>-<name>.png`.
    test: String,
    /// The browser's fresh profile; removed after the browser has ended.
    _profile: tempfile::TempDir,
}

fn missing_tool(what: &str, detail: &str) -> ! {
    panic!(
        "{what} is needed by the browser tests ({detail}); run scripts/test.sh, which installs \
         Debian's chromium and chromium-driver"
    )
}

/// What chromedriver is asked for: headless Chromium with a fresh profile in `profile` and
/// nothing that reaches beyond the machine; the phone through chromedriver's mobile emulation.
fn capabilities(screen: Screen, profile: &Path) -> serde_json::Map<String, Value> {
    let mut options = json!({"binary": CHROMIUM, "args": [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync",
        format!("--user-data-dir={}", profile.display()),
    ]});
    match screen {
        // A flag rather than a WebDriver resize after the start, which waits for the window to
        // be redrawn: some 0.7 s per test.
        Screen::Desktop => options["args"]
            .as_array_mut()
            .unwrap()
            .push("--window-size=1280,900".into()),
        Screen::Phone => {
            options["mobileEmulation"] = json!({
                "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "mobile": true, "touch": true},
                "userAgent": PHONE_USER_AGENT,
            })
        }
    }
    let capabilities = json!({"browserName": "chrome", "goog:chromeOptions": options});
    capabilities.as_object().unwrap().clone()
}

/// A Chrome DevTools command through chromedriver's `goog/cdp/execute` (for what WebDriver has
/// no command: a screenshot of the whole page).
#[derive(Debug)]
struct DevTools {
    command: &'static str,
    params: Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for DevTools {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({"cmd": self.command, "params": self.params});
        (http::Method::POST, Some(body.to_string()))
    }
}

impl Chromium {
    /// Starts chromedriver and a headless Chromium session on `screen`; `test` names the
    /// screenshots.
    pub fn start(test: &str, screen: Screen) -> Chromium {
        if !Path::new(CHROMIUM).exists() {
            missing_tool("chromium", &format!("{CHROMIUM} does not exist"));
        }
        let profile = tempfile::tempdir().unwrap();
        let (mut driver, address) = start_driver();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // chromedriver is on loopback and speaks plain HTTP: no TLS connector needed.
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let connected = runtime.block_on(
            ClientBuilder::new(connector)
                .capabilities(capabilities(screen, profile.path()))
                .connect(&address),
        );
        let client = match connected {
            Ok(client) => client,
            Err(e) => {
                let _ = driver.kill();
                let _ = driver.wait();
                missing_tool("a Chromium that chromedriver can start", &e.to_string())
            }
        };
        Chromium {
            client: Some(client),
            runtime,
            driver,
            test: test.to_string(),
            _profile: profile,
        }
    }

    /// [`Chromium::start`] on a desktop screen.
    pub fn desktop(test: &str) -> Chromium {
        Chromium::start(test, Screen::Desktop)
    }

    /// [`Chromium::start`] on a phone screen.
    pub fn phone(test: &str) -> Chromium {
        Chromium::start(test, Screen::Phone)
    }

    /// The fantoccini client, for [`Chromium::block_on`].
    pub fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    /// Runs a future of the fantoccini API (on an [`Element`], or with [`Chromium::client`]) to
    /// its end.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// Runs a fantoccini command to its end; a WebDriver error fails the test, saying `what`
    /// was tried.
    fn perform<T>(
        &self,
        what: &str,
        command: impl std::future::Future<Output = Result<T, fantoccini::error::CmdError>>,
    ) -> T {
        self.block_on(command)
            .unwrap_or_else(|e| panic!("browser: cannot {what}: {e}"))
    }

    /// Opens `url` (absolute) and waits for it to load.
    pub fn goto(&self, url: &str) {
        self.perform(&format!("open {url}"), self.client().goto(url));
    }

    /// The current URL's path and query (empty without one).
    pub fn location(&self) -> (String, String) {
        let url = self.perform("read the URL", self.client().current_url());
        (
            url.path().to_string(),
            url.query().unwrap_or_default().to_string(),
        )
    }

    /// Waits until the browser shows `path` with its one `h1`; returns the page's source.
    pub fn wait_for_page(&self, path: &str) -> String {
        wait_until(&format!("the browser shows {path}"), || {
            (self.location().0 == path && self.find_all("h1").len() == 1).then(|| self.source())
        })
    }

    /// Waits until an element matches `css` and returns the first.
    pub fn wait_for(&self, css: &str) -> Element {
        wait_until(&format!("the page has {css}"), || {
            self.find_all(css).into_iter().next()
        })
    }

    /// The page's HTML as the browser holds it now.
    pub fn source(&self) -> String {
        self.perform("read the page source", self.client().source())
    }

    /// The visible text of the whole page.
    pub fn page_text(&self) -> String {
        self.text("body")
    }

    /// Every element matching `css` (none is no error).
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        self.perform(
            &format!("look for {css}"),
            self.client().find_all(Locator::Css(css)),
        )
    }

    /// The first element matching `css`; fails the test when there is none.
    pub fn find(&self, css: &str) -> Element {
        self.perform(
            &format!("find {css}"),
            self.client().find(Locator::Css(css)),
        )
    }

    /// The form control named `name` (a dotted JSON path of the form layer).
    pub fn field(&self, name: &str) -> Element {
        self.find(&format!("[name=\"{name}\"]"))
    }

    /// The `value` property of the control named `name` (for a select: the chosen option's).
    pub fn value(&self, name: &str) -> String {
        let field = self.field(name);
        self.perform(&format!("read {name}"), field.prop("value"))
            .unwrap_or_default()
    }

    /// Whether the checkbox or radio button named `name` is ticked.
    pub fn is_checked(&self, name: &str) -> bool {
        let field = self.field(name);
        self.perform(&format!("read {name}"), field.is_selected())
    }

    /// Empties the control named `name`.
    pub fn clear(&self, name: &str) {
        let field = self.field(name);
        self.perform(&format!("clear {name}"), field.clear());
    }

    /// Types `keys` into the control named `name` after what it holds (`\u{E007}` is Enter).
    pub fn type_into(&self, name: &str, keys: &str) {
        let field = self.field(name);
        self.perform(&format!("type into {name}"), field.send_keys(keys));
    }

    /// Types `date` (`YYYY-MM-DD`) into the date input named `name` as a person would: its parts
    /// in the order of the browser's locale (month, day, year for the en-US default of headless
    /// Chromium; day, month, year for German). Returns the order typed in, for messages.
    pub fn type_date(&self, name: &str, date: &str) -> Value {
        let mut parts = date.splitn(3, '-');
        let (year, month, day) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let order = self.execute(
            "return new Intl.DateTimeFormat().formatToParts(new Date(1990, 3, 1))\
             .map(p => p.type).filter(t => t !== 'literal')",
            vec![],
        );
        let keys: String = order
            .as_array()
            .unwrap()
            .iter()
            .map(|part| match part.as_str().unwrap() {
                "day" => day,
                "month" => month,
                _ => year,
            })
            .collect();
        self.clear(name);
        self.type_into(name, &keys);
        order
    }

    /// Types `time` (`HH:MM`) into the time input named `name` as a person would: with AM or PM
    /// where the browser's locale has a 12-hour clock.
    pub fn type_time(&self, name: &str, time: &str) {
        let (hour, minute) = time.split_once(':').unwrap();
        let twelve = self.execute(
            "return new Intl.DateTimeFormat(undefined, {hour: 'numeric'}).resolvedOptions().hour12 === true",
            vec![],
        ) == Value::Bool(true);
        let keys = match (twelve, hour.parse::<u32>().unwrap()) {
            (false, _) => format!("{hour}{minute}"),
            (true, 0) => format!("12{minute}A"),
            (true, h @ 1..=11) => format!("{h:02}{minute}A"),
            (true, 12) => format!("12{minute}P"),
            (true, h) => format!("{:02}{minute}P", h - 12),
        };
        self.clear(name);
        self.type_into(name, &keys);
    }

    /// Replaces what the control named `name` holds by `text`, typed.
    pub fn fill(&self, name: &str, text: &str) {
        self.clear(name);
        self.type_into(name, text);
    }

    /// Chooses the option with the value `value` in the select named `name`.
    pub fn select(&self, name: &str, value: &str) {
        let field = self.field(name);
        self.perform(
            &format!("choose {value} in {name}"),
            field.select_by_value(value),
        );
    }

    /// Sets the control named `name` to `value` as a person would, by its kind: chooses the
    /// option in a select, types a date or a time in the locale's order, ticks or unticks a
    /// checkbox (`"true"` ticks), types into any other input.
    pub fn enter(&self, name: &str, value: &str) {
        let kind = self.execute(
            "const c = document.getElementsByName(arguments[0])[0]; \
             return c ? (c.tagName === 'SELECT' ? 'select' : c.type) : null;",
            vec![json!(name)],
        );
        match kind.as_str() {
            Some("select") => self.select(name, value),
            Some("date") => {
                self.type_date(name, value);
            }
            Some("time") => self.type_time(name, value),
            Some("checkbox") => {
                if self.is_checked(name) != (value == "true") {
                    self.click(&format!("[name=\"{name}\"]"));
                }
            }
            Some(_) => self.fill(name, value),
            None => panic!("browser: no control named {name}"),
        }
    }

    /// Signs the form as its end user does: types `signer` and ticks the confirmation.
    pub fn sign(&self, signer: &str) {
        self.fill("signatur.name", signer);
        self.enter("signatur.bestaetigt", "true");
        assert!(
            self.is_checked("signatur.bestaetigt"),
            "signature confirmed"
        );
    }

    /// The value of the first option of the select named `name` that is a choice (not the
    /// empty "please choose").
    pub fn first_choice(&self, name: &str) -> String {
        let value = self.execute(
            "const s = document.getElementsByName(arguments[0])[0]; \
             const o = s && [...s.options].find(o => o.value !== ''); \
             return o ? o.value : null;",
            vec![json!(name)],
        );
        value
            .as_str()
            .unwrap_or_else(|| panic!("browser: {name} is no select with a choice"))
            .to_owned()
    }

    /// The problem shown next to the control named `name`, which fails the test unless the
    /// page shows it where a person looks for it: the control is marked `aria-invalid`, names
    /// the problem in its `aria-describedby`, and the problem is visible, follows the control,
    /// and no other control stands between them (a date-time's time input, which names the same
    /// problem, may).
    pub fn problem_at(&self, name: &str) -> String {
        let found = self.execute(
            "const name = arguments[0]; \
             const field = document.getElementsByName(name)[0]; \
             if (!field) return {fault: 'no control named ' + name}; \
             if (field.getAttribute('aria-invalid') !== 'true') \
                 return {fault: name + ' is not marked aria-invalid'}; \
             const ids = (field.getAttribute('aria-describedby') || '').split(' '); \
             const error = ids.map(id => document.getElementById(id)) \
                 .find(e => e && e.classList.contains('error')); \
             if (!error) return {fault: name + ' names no problem in aria-describedby'}; \
             const after = (a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0; \
             if (!after(field, error)) return {fault: 'the problem of ' + name + ' stands before it'}; \
             const between = [...document.querySelectorAll('input, select, textarea, button')] \
                 .filter(c => c !== field && c.type !== 'hidden' && after(field, c) && after(c, error) \
                     && !(c.getAttribute('aria-describedby') || '').split(' ').includes(error.id)) \
                 .map(c => c.name || c.tagName); \
             if (between.length) return {fault: 'between ' + name + ' and its problem: ' + between}; \
             if (error.getClientRects().length === 0) return {fault: 'the problem of ' + name + ' is hidden'}; \
             return {text: error.innerText.trim()};",
            vec![json!(name)],
        );
        match found["text"].as_str() {
            Some(text) => text.to_owned(),
            None => panic!("browser: {}", found["fault"]),
        }
    }

    /// Clicks the first element matching `css`.
    pub fn click(&self, css: &str) {
        let element = self.find(css);
        self.perform(&format!("click {css}"), element.click());
    }

    /// Clicks the button whose visible text is `text` (spaces at the ends ignored).
    pub fn click_button(&self, text: &str) {
        let buttons = self.find_all("button, input[type=submit]");
        let button = buttons
            .iter()
            .find(|b| {
                // A submit input shows its value; a button, its content.
                let label = if self.perform("read a button", b.tag_name()) == "input" {
                    self.perform("read a button", b.prop("value"))
                        .unwrap_or_default()
                } else {
                    self.perform("read a button", b.text())
                };
                label.trim() == text
            })
            .unwrap_or_else(|| panic!("browser: no button says {text:?}"));
        self.perform(&format!("click {text:?}"), button.click());
    }

    /// The visible text of the first element matching `css`.
    pub fn text(&self, css: &str) -> String {
        let element = self.find(css);
        self.perform(&format!("read {css}"), element.text())
    }

    /// The computed CSS `property` of the first element matching `css`.
    pub fn css(&self, css: &str, property: &str) -> String {
        let element = self.find(css);
        self.perform(
            &format!("read {property} of {css}"),
            element.css_value(property),
        )
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page; returns what it
    /// returns.
    pub fn execute(&self, script: &str, args: Vec<Value>) -> Value {
        self.perform("run a script", self.client().execute(script, args))
    }

    /// Runs the Chrome DevTools `command` with `params` (for what WebDriver has no command:
    /// `Emulation.setEmulatedMedia` to see the print stylesheet, say); returns its result.
    pub fn dev_tools(&self, command: &'static str, params: Value) -> Value {
        let what = format!("run {command}");
        self.perform(&what, self.client().issue_cmd(DevTools { command, params }))
    }

    /// Saves a PNG of the whole page (up to [`SCREENSHOT_MAX_PIXELS`] tall) as
    /// `target/browser-screenshots/<test>-<name>.png`, where it stays as a test artefact.
    pub fn screenshot(&self, name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}-{name}.png", self.test));
        let size = self.execute(
            "const page = document.documentElement; \
             return [page.scrollWidth, page.scrollHeight, window.devicePixelRatio];",
            vec![],
        );
        let [width, height, ratio] = [0, 1, 2].map(|i| size[i].as_f64().unwrap_or(1.0));
        // One image pixel per CSS pixel, also on the phone's dense screen: a third of the
        // pixels to draw and compress, and pictures of the same scale side by side.
        let clip = json!({"x": 0, "y": 0, "width": width,
                          "height": height.min(SCREENSHOT_MAX_PIXELS), "scale": 1.0 / ratio});
        let shot = self.dev_tools(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true, "clip": clip}),
        );
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "the screenshot is no PNG");
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Best effort: a picture of where the test failed.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.screenshot("failure");
            }));
        }
        if let Some(client) = self.client.take() {
            // Ends the session, and with it the browser; bounded, so that a hung driver cannot
            // hold the test.
            let _ = self.runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), client.close()).await
            });
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
