//! The end user's side: a browser that keeps its cookies, the forms it reads and sends, and the
//! whole way from a memento through the magic link to a sent report.

use reqwest::blocking::{Client, Response};
use serde_json::Value;

use super::{loopback_client, Server};

/// A browser: keeps cookies, does not follow redirects by itself.
pub struct Browser {
    client: Client,
}

/// A form as the browser received it.
pub struct Form {
    /// Status of the page.
    pub status: u16,
    /// The HTML.
    pub html: String,
    /// Every `name → value` of the form's inputs (checkboxes only when checked, selects: the
    /// selected option).
    pub fields: Vec<(String, String)>,
}

impl Form {
    /// The `action` of the page's first `method="post"` form (the report form; the logout form
    /// comes after it); the birth-notice form for pages that have none (tests that post forged
    /// or stale forms).
    pub fn action(&self) -> String {
        const OPEN: &str = "<form method=\"post\" action=\"";
        let Some(start) = self.html.find(OPEN).map(|at| at + OPEN.len()) else {
            return "/forms/birthnotice".into();
        };
        let end = self.html[start..].find('"').unwrap() + start;
        self.html[start..end].to_string()
    }
}

impl Form {
    /// The page `response` answered, read as a form.
    pub fn read(response: Response) -> Form {
        let status = response.status().as_u16();
        let html = response.text().unwrap();
        Form {
            status,
            fields: parse_form(&html),
            html,
        }
    }

    /// The value of a field.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets (or adds) a field.
    pub fn set(&mut self, name: &str, value: &str) {
        self.fields.retain(|(k, _)| k != name);
        self.fields.push((name.to_string(), value.to_string()));
    }

    /// The error messages the page lists (their text, without the links to their places).
    pub fn errors(&self) -> Vec<String> {
        let Some(start) = self.html.find("class=\"errors\"") else {
            return Vec::new();
        };
        let section = &self.html[start..];
        let section = &section[..section.find("</div>").unwrap_or(section.len())];
        section
            .split("<li>")
            .skip(1)
            .map(|li| unescape(&without_tags(&li[..li.find("</li>").unwrap_or(li.len())])))
            .collect()
    }
}

/// The text of an HTML fragment.
pub fn without_tags(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The value of the attribute `name` of an HTML tag's text (after its name), unescaped.
pub fn attribute(tag: &str, name: &str) -> Option<String> {
    let needle = format!(" {name}=\"");
    let start = tag.find(&needle)? + needle.len();
    let end = tag[start..].find('"')? + start;
    Some(unescape(&tag[start..end]))
}

/// Reads the inputs of the first form on a page.
pub fn parse_form(html: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    for tag in html.split('<').skip(1) {
        let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
        if let Some(rest) = tag.strip_prefix("input") {
            let (Some(name), kind) = (attribute(rest, "name"), attribute(rest, "type")) else {
                continue;
            };
            let value = attribute(rest, "value").unwrap_or_default();
            if kind.as_deref() == Some("checkbox") {
                if rest.contains(" checked") {
                    fields.push((name, value));
                }
            } else {
                fields.push((name, value));
            }
        }
    }
    // selects: name, then the selected option
    let mut rest = html;
    while let Some(start) = rest.find("<select ") {
        let block = &rest[start..];
        let end = block.find("</select>").unwrap_or(block.len());
        let select = &block[..end];
        if let Some(name) = attribute(&select[7..select.find('>').unwrap_or(0)], "name") {
            let selected = select
                .split("<option ")
                .skip(1)
                .find(|o| {
                    o[..o.find('>').unwrap_or(0)].contains(" selected") || o.starts_with("selected")
                })
                .and_then(|o| attribute(&format!(" {o}"), "value"))
                .unwrap_or_default();
            fields.push((name, selected));
        }
        rest = &block[end..];
    }
    fields
}

impl Browser {
    /// A fresh browser with an empty cookie jar.
    pub fn new() -> Self {
        Browser {
            client: loopback_client().cookie_store(true).build().unwrap(),
        }
    }

    /// A browser whose cookies live in `jar`, so that one client (its thread and its
    /// connection) can serve many users in turn, its jar emptied between them.
    pub fn with_cookies<C: reqwest::cookie::CookieStore + 'static>(jar: std::sync::Arc<C>) -> Self {
        Browser {
            client: loopback_client().cookie_provider(jar).build().unwrap(),
        }
    }

    /// GET without following redirects.
    pub fn get(&self, url: &str) -> Response {
        self.client.get(url).send().unwrap()
    }

    /// Opens a magic link (absolute URL) and follows the redirect to the form.
    pub fn open_magic_link(&self, server: &Server, magic_link: &str) -> Form {
        let response = self.get(&server.url(magic_link));
        assert_eq!(response.status(), 302, "magic link must redirect");
        let location = response.headers()["location"].to_str().unwrap().to_string();
        assert!(
            location.starts_with("/forms/"),
            "redirect target {location}"
        );
        self.form(&server.url(&location))
    }

    /// GETs a form page.
    pub fn form(&self, url: &str) -> Form {
        Form::read(self.get(url))
    }

    /// POSTs a form to its `action`; returns the response (redirects are not followed).
    pub fn submit(&self, server: &Server, form: &Form) -> Response {
        self.submit_to(server, &form.action(), form)
    }

    /// POSTs a form to the form at `path`; returns the response (redirects are not followed).
    pub fn submit_to(&self, server: &Server, path: &str, form: &Form) -> Response {
        self.client
            .post(server.url(path))
            .form(&form.fields)
            .send()
            .unwrap()
    }

    /// [`Browser::submit`], with a connection failure returned rather than a panic.
    pub fn try_submit(&self, server: &Server, form: &Form) -> reqwest::Result<Response> {
        self.client
            .post(server.url(&form.action()))
            .form(&form.fields)
            .send()
    }

    /// POSTs a form and parses the page that comes back.
    pub fn submit_expecting_form(&self, server: &Server, form: &Form) -> Form {
        Form::read(self.submit(server, form))
    }
}

/// Creates a birth-notice memento for `notice` and returns the magic link.
pub fn magic_link(server: &Server, user: &str, notice: &Value) -> String {
    magic_link_in(server, "birthnotice", user, notice)
}

/// Creates a memento of `module` for `notice` and returns the magic link.
pub fn magic_link_in(server: &Server, module: &str, user: &str, notice: &Value) -> String {
    let response = server.memento_in(module, user, notice);
    assert_eq!(response.status(), 200);
    let body: Value = response.json().unwrap();
    body["magicLink"].as_str().unwrap().to_string()
}

/// The whole form for `notice` of `module`, opened in a fresh browser: memento, magic link, form.
pub fn open_form_in(server: &Server, module: &str, user: &str, notice: &Value) -> (Browser, Form) {
    let link = magic_link_in(server, module, user, notice);
    let browser = Browser::new();
    let form = browser.open_magic_link(server, &link);
    assert_eq!(form.status, 200);
    (browser, form)
}

/// The whole end-user part of a birth notice: memento, magic link, form, signature, submit.
/// Returns the id.
pub fn dispatch(server: &Server, user: &str, notice: &Value) -> String {
    dispatch_in(server, "birthnotice", user, notice)
}

/// The whole end-user part for a report of `module`: memento, magic link, form, signature where
/// the form asks for one, submit. Returns the id.
pub fn dispatch_in(server: &Server, module: &str, user: &str, notice: &Value) -> String {
    send_in(server, module, user, notice);
    notice["id"].as_str().unwrap().to_string()
}

/// [`dispatch_in`], returning the browser that sent the report (its session can read the
/// confirmation page) and where the dispatch redirected it (the confirmation page).
pub fn send_in(server: &Server, module: &str, user: &str, notice: &Value) -> (Browser, String) {
    send_link(server, &magic_link_in(server, module, user, notice))
}

/// Opens the magic link `link` in a fresh browser, signs where the form asks for it and sends
/// the form; returns the browser and the confirmation page it was redirected to.
pub fn send_link(server: &Server, link: &str) -> (Browser, String) {
    let browser = Browser::new();
    let mut form = browser.open_magic_link(server, link);
    assert_eq!(form.status, 200);
    if form.html.contains("name=\"signatur.name\"") {
        form.set("signatur.name", "Dr. Erika Beispiel");
        form.set("signatur.bestaetigt", "true");
    }
    let response = browser.submit(server, &form);
    if response.status() != 303 {
        panic!("dispatch failed: {:?}", page_errors(response));
    }
    let location = response.headers()["location"].to_str().unwrap().to_string();
    (browser, location)
}

/// The error list of a form page that came back instead of a dispatch.
pub fn page_errors(response: Response) -> Vec<String> {
    let html = response.text().unwrap_or_default();
    Form {
        status: 0,
        fields: parse_form(&html),
        html,
    }
    .errors()
}
