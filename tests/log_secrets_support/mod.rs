//! What the log-secrets tests share: markers planted in every string a module's memento request
//! takes and in every input of its form, the secrets a journey hands around (mementos, tokens,
//! passwords, passphrases), and the final reading of the server's log, which must show none of
//! them while it does show debug lines.
#![allow(dead_code)] // each test binary uses a different subset

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use reqwest::blocking::Response;
use serde_json::Value;

use super::common::{attribute, Browser, DataDir, Form, Server, OPERATOR, PASSWORD};

/// What every marker starts with; the log must not hold it anywhere.
pub const PREFIX: &str = "SECRET-";

/// The environment of the servers here: every crate's debug lines in the log.
pub const DEBUG: [(&str, &str); 1] = [("RUST_LOG", "debug")];

/// The markers and secrets of one journey.
pub struct Secrets {
    module: &'static str,
    planted: usize,
    /// `(what, value)` of everything the log must not show besides the markers.
    values: Vec<(String, String)>,
}

impl Secrets {
    /// None yet, for the journey of `module`; the test servers' passwords count from the start
    /// (a journey adds its users' logins with [`Secrets::keep_login`]).
    pub fn new(module: &'static str) -> Self {
        let mut secrets = Secrets {
            module,
            planted: 0,
            values: Vec::new(),
        };
        secrets.keep("the API users' password", PASSWORD);
        secrets.keep_login(OPERATOR.0, OPERATOR.1);
        secrets
    }

    /// Records the password of `user` as a secret, in the clear and as Basic credentials.
    pub fn keep_login(&mut self, user: &str, password: &str) {
        self.keep(&format!("the password of {user}"), password);
        let basic = STANDARD.encode(format!("{user}:{password}"));
        self.keep(&format!("the Basic credentials of {user}"), &basic);
    }

    /// A new marker, `SECRET-<module>-<n>`.
    pub fn marker(&mut self) -> String {
        self.planted += 1;
        format!("{PREFIX}{}-{}", self.module, self.planted)
    }

    /// Records `value` as a secret the log must not show.
    pub fn keep(&mut self, what: &str, value: &str) {
        self.values.push((what.to_owned(), value.to_owned()));
    }
}

/// A server on `dir` logging at debug, with `env` added.
pub fn debug_server(dir: &DataDir, env: &[(&str, &str)]) -> Server {
    let mut all = DEBUG.to_vec();
    all.extend_from_slice(env);
    Server::start(dir, &all)
}

/// Every string leaf of `value` with its path (keys and array indexes).
fn string_paths(value: &Value, path: &mut Vec<PathStep>, found: &mut Vec<Vec<PathStep>>) {
    match value {
        Value::String(_) => found.push(path.clone()),
        Value::Object(members) => {
            for (key, member) in members {
                path.push(PathStep::Key(key.clone()));
                string_paths(member, path, found);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(PathStep::Index(index));
                string_paths(item, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// One step of a path into JSON.
#[derive(Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// The value at `path` in `value`.
fn at<'a>(value: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(value, |value, step| match step {
        PathStep::Key(key) => &mut value[key.as_str()],
        PathStep::Index(index) => &mut value[*index],
    })
}

/// `sample` (a request of `module` that dispatches) with a marker in every string member the
/// memento takes one in: each member in turn gets a marker, and keeps it when the memento
/// request with it is answered 200 (a refused one puts the old value back; its refusal is
/// logged too). Members named in `keep` (report ids, routing addresses) stay as they are.
/// Returns the request and how many members carry a marker.
pub fn marked_request(
    server: &Server,
    user: &str,
    module: &str,
    sample: &Value,
    keep: &[&str],
    secrets: &mut Secrets,
) -> (Value, usize) {
    let mut paths = Vec::new();
    string_paths(sample, &mut Vec::new(), &mut paths);
    let mut request = sample.clone();
    let mut marked = 0;
    for path in paths {
        if let Some(PathStep::Key(key)) = path.last() {
            if keep.contains(&key.as_str()) {
                continue;
            }
        }
        let old = at(&mut request, &path).clone();
        *at(&mut request, &path) = Value::String(secrets.marker());
        let answer = server.memento_in(module, user, &request);
        match answer.status().as_u16() {
            200 => marked += 1,
            400 => *at(&mut request, &path) = old,
            other => panic!(
                "a marked memento request answered {other}: {:?}",
                answer.text()
            ),
        }
    }
    let answer = server.memento_in(module, user, &request);
    assert_eq!(answer.status(), 200, "{:?}", answer.text());
    (request, marked)
}

/// A memento's answer, its memento and magic-link token recorded as secrets; the token is also
/// sent back tampered with (`302 /login?error`).
pub fn issue(
    server: &Server,
    user: &str,
    module: &str,
    request: &Value,
    secrets: &mut Secrets,
) -> Value {
    let answer = server.memento_in(module, user, request);
    assert_eq!(answer.status(), 200);
    let answer: Value = answer.json().unwrap();
    let memento = answer["memento"].as_str().unwrap();
    secrets.keep("a memento", memento);
    if let Some(link) = answer["magicLink"].as_str() {
        let token = link
            .strip_prefix("/mtl/")
            .unwrap()
            .split('?')
            .next()
            .unwrap();
        secrets.keep("a magic-link token", token);
        let tampered = Browser::new().get(&server.url(&format!("/mtl/{token}x?m={memento}")));
        assert_eq!(tampered.status(), 302);
        assert_eq!(tampered.headers()["location"], "/login?error");
    }
    answer
}

/// Opens the magic link of `answer` in a fresh browser and follows redirects to the page it
/// leads to (a form, or an index of forms); returns the browser and where it landed.
pub fn open_link(server: &Server, answer: &Value, secrets: &mut Secrets) -> (Browser, String) {
    let browser = Browser::new();
    let landing = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    keep_session(&landing, secrets);
    assert_eq!(landing.status(), 302);
    let location = landing.headers()["location"].to_str().unwrap().to_owned();
    assert!(!location.starts_with("/login"), "{location}");
    (browser, location)
}

/// Records the session cookie a login answered with as a secret.
pub fn keep_session(login: &Response, secrets: &mut Secrets) {
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    let value = cookie.split(';').next().unwrap().split_once('=').unwrap().1;
    secrets.keep("a session cookie", value);
}

/// The inputs of a form's page a person types into (not hidden, not check boxes) and its
/// choices: name, whether it is a choice, and whether the page marks it invalid.
fn elements(html: &str) -> Vec<(String, bool, bool)> {
    let mut found = Vec::new();
    for (open, choice) in [("<input", false), ("<select", true)] {
        for tag in html.split(open).skip(1) {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            let kind = attribute(tag, "type").unwrap_or_default();
            let Some(name) = attribute(tag, "name") else {
                continue;
            };
            if !matches!(kind.as_str(), "hidden" | "checkbox" | "submit") {
                let invalid = attribute(tag, "aria-invalid").as_deref() == Some("true");
                found.push((name, choice, invalid));
            }
        }
    }
    found
}

/// The group an input's name belongs to (`a.b[1].c` → `a.b[1]`).
fn parent(name: &str) -> &str {
    name.rsplit_once('.').map_or("", |(parent, _)| parent)
}

/// Whether the input `name` is one of the members `keep` names.
fn kept(name: &str, keep: &[&str]) -> bool {
    keep.iter()
        .any(|key| name == *key || name.ends_with(&format!(".{key}")))
}

/// Puts a marker into every input of `form` a person types into (dates and numbers too) that
/// holds none yet, members named in `keep` aside, signs where the form asks for it, and submits
/// it: the first answer must be the form again with problems (422, or 400). Then the markers the
/// page refuses are taken back until the form is taken: an input marked invalid that holds a
/// marker (put there here or by the memento) gets its value of
/// `plain` (the same form opened for the unmarked request) back; a problem at an element not
/// marked (a choice a filled row now needs) takes back the markers put into empty inputs of its
/// group, and a problem at no element the markers put into empty inputs at all. Returns the
/// last answer and the form sent.
pub fn send_marked(
    server: &Server,
    browser: &Browser,
    mut form: Form,
    plain: &Form,
    keep: &[&str],
    secrets: &mut Secrets,
) -> (Response, Form) {
    // Each input marked, and whether it was empty before.
    let mut marked: Vec<(String, bool)> = Vec::new();
    for (name, choice, _) in elements(&form.html) {
        let value = form.get(&name).unwrap_or("").to_owned();
        if !choice && !value.contains(PREFIX) && !kept(&name, keep) {
            let marker = secrets.marker();
            form.set(&name, &marker);
            marked.push((name, value.is_empty()));
        }
    }
    // The end user's name under the signature takes any text: its marker stays.
    if form.html.contains("name=\"signatur.bestaetigt\"") {
        marked.retain(|(name, _)| name != "signatur.name");
        form.set("signatur.bestaetigt", "true");
    }
    secrets.keep(
        "a CSRF token",
        form.get("csrf").expect("the form's CSRF token"),
    );
    let action = form.action();
    let mut answer = browser.submit_to(server, &action, &form);
    assert!(refused(&answer), "the marked form was taken at once");
    for _ in 0..6 {
        let shown = Form::read(answer);
        let mut back: Vec<String> = Vec::new();
        for (name, _, invalid) in elements(&shown.html) {
            if !invalid {
                continue;
            }
            if form.get(&name).is_some_and(|v| v.contains(PREFIX)) {
                back.push(name);
            } else {
                let group = parent(&name);
                back.extend(
                    marked
                        .iter()
                        .filter(|(m, empty)| *empty && parent(m) == group)
                        .map(|(m, _)| m.clone()),
                );
            }
        }
        if back.is_empty() {
            back = marked
                .iter()
                .filter(|(_, empty)| *empty)
                .map(|(m, _)| m.clone())
                .collect();
        }
        assert!(!back.is_empty(), "refused: {:?}", shown.errors());
        for name in back {
            form.set(&name, plain.get(&name).unwrap_or(""));
            marked.retain(|(m, _)| *m != name);
        }
        answer = browser.submit_to(server, &action, &form);
        if !refused(&answer) {
            return (answer, form);
        }
    }
    panic!("still refused: {:?}", Form::read(answer).errors());
}

/// Whether `answer` is the form again with its problems: 422, or 400 where a module answers a
/// refused submit so (`hospreport`).
fn refused(answer: &Response) -> bool {
    matches!(answer.status().as_u16(), 400 | 422)
}

/// How many different markers `text` holds.
pub fn markers_in(text: &str) -> usize {
    let mut found: Vec<&str> = text
        .match_indices(PREFIX)
        .map(|(at, _)| {
            let rest = &text[at..];
            let end = rest
                .char_indices()
                .skip(PREFIX.len())
                .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-'))
                .map_or(rest.len(), |(end, _)| end);
            &rest[..end]
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found.len()
}

/// The message report `id` of `module` delivered, as the operator reads it (lossy text).
pub fn delivered(server: &Server, module: &str, id: &str) -> String {
    let answer = server.admin_get(&format!("/admin/api/v1/reports/{module}/{id}/message"));
    assert_eq!(answer.status(), 200, "{module}/{id}");
    String::from_utf8_lossy(&answer.bytes().unwrap()).into_owned()
}

/// Reads the server's whole log once everything before is in it, and asserts that it holds
/// debug lines (the service's own too) and no marker and none of `secrets`' values (in the clear or as Basic
/// credentials).
pub fn assert_log_keeps_secrets(server: &Server, secrets: &Secrets) {
    // A health probe is logged at debug only: its line shows the service's own debug lines are
    // in the log, whatever the journey logged.
    let probe = server.client().get(server.url("/healthz")).send().unwrap();
    assert_eq!(probe.status(), 200);
    let log = server.settled_log();
    let debug: Vec<&str> = log.lines().filter(|l| l.contains(" DEBUG ")).collect();
    assert!(debug.len() > 10, "the log has few debug lines:\n{log}");
    assert!(
        debug
            .iter()
            .any(|l| l.contains(": meldewerk::telemetry: request done")),
        "the log has no debug line of the service's own:\n{log}"
    );
    let mut found = Vec::new();
    let markers = std::iter::once(("a marker", PREFIX));
    let values = secrets.values.iter().map(|(w, v)| (w.as_str(), v.as_str()));
    for (what, value) in markers.chain(values) {
        if let Some(line) = log.lines().find(|l| l.contains(value)) {
            found.push(format!("{what} in the log: {line}"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
