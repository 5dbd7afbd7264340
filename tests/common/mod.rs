//! Test harness: runs the real `meldewerk` binary on a free port with a temporary data directory,
//! and drives it over HTTP like an integrator (Basic auth) or a browser (cookies, forms).
#![allow(dead_code)]

pub mod browser;
pub mod burst;
pub mod court;
mod data_dir;
pub mod demis;
pub mod deposited;
mod end_user;
pub mod operator;
pub mod pkcs12;
pub mod raw;
mod registry;
pub mod remote;
pub mod smtp;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::blocking::{Client, Response};
use serde_json::{json, Value};

pub use data_dir::DataDir;
#[allow(unused_imports)] // only the tests of several nodes share a database
pub use data_dir::{on_database, owned};
#[allow(unused_imports)] // not every test drives a browser
pub use end_user::*;
#[allow(unused_imports)] // not every test sends to the civil registry
pub use registry::*;

/// What every test client of a loopback server starts from: no redirects followed, a 30 s
/// timeout, and no certificate store. The servers speak plain HTTP, and loading the system's
/// root certificates costs milliseconds per client, which a benchmark that opens a browser per
/// report would otherwise measure in place of the server.
pub fn loopback_client() -> reqwest::blocking::ClientBuilder {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .tls_built_in_root_certs(false)
}

/// Password of the users the tests create.
pub const PASSWORD: &str = "correct horse battery";
/// Operator credentials the test servers run with.
pub const OPERATOR: (&str, &str) = ("operator", "operator-secret-1");

/// Every module the service serves, the civil registry's first.
pub const MODULES: [&str; 7] = [
    "birthnotice",
    "birthdata",
    "deathnotice",
    "labreport",
    "hospreport",
    "bedreport",
    "guardianship",
];

/// The binary under test: this build's, or the one `BENCH_SERVER_BINARY` names, so that a
/// benchmark can compare two builds' servers in one run with the same client
/// (docs/performance.md, "Comparing two builds").
pub fn binary() -> &'static str {
    static BINARY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        std::env::var("BENCH_SERVER_BINARY")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_meldewerk").to_owned())
    })
}

/// Starts the server on a fresh data directory with `env` added, expecting the start to stop:
/// its standard error, which says why.
pub fn refused_start(env: &[(&str, &str)]) -> String {
    let data = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(binary())
        .arg("--data-dir")
        .arg(data.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env_remove("MELDEWERK_DATA_DIR")
        .env("MELDEWERK_OPERATOR__PASSWORD", OPERATOR.1)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(!output.status.success(), "the start went on with {env:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// One server per data directory of `dirs`, all with `env`, named `node-0`, `node-1`, …
/// (`node.name`): nodes that share the store `env` names.
pub fn start_nodes(dirs: &[DataDir], env: &[(&str, &str)]) -> Vec<Server> {
    dirs.iter()
        .enumerate()
        .map(|(n, dir)| {
            let name = format!("node-{n}");
            let mut env = env.to_vec();
            env.push(("MELDEWERK_NODE__NAME", &name));
            Server::start(dir, &env)
        })
        .collect()
}

/// A running server.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    data_dir: PathBuf,
    env: Vec<(String, String)>,
    log: PathBuf,
}

/// Environment every test server gets unless the test overrides it.
fn default_env() -> Vec<(String, String)> {
    vec![
        ("MELDEWERK_OPERATOR__PASSWORD".into(), OPERATOR.1.into()),
        (
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS".into(),
            "200".into(),
        ),
        ("MELDEWERK_ENGINE__SCAN_INTERVAL_MS".into(), "50".into()),
        ("MELDEWERK_ENGINE__INBOX_INTERVAL_MS".into(), "100".into()),
        ("MELDEWERK_LOG__LEVEL".into(), "info".into()),
    ]
}

/// Starts `command` with its standard error and output appended to `log` and waits (up to 30 s) for the
/// "… listening on http://ADDR" line on its standard output; returns the child and the address.
pub fn spawn_listening(mut command: Command, log: &Path) -> (Child, String) {
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    // Standard output goes to the log too (after its lines were read here), so that a test
    // reading the log reads everything the process wrote.
    let mut stdout_copy = log_file.try_clone().unwrap();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        while let Some(Ok(line)) = lines.next() {
            use std::io::Write;
            let _ = writeln!(stdout_copy, "{line}");
            if let Some((_, address)) = line.split_once(" listening on ") {
                let _ = tx.send(address.to_string());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| {
            panic!(
                "{command:?} did not start; log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            )
        });
    (child, base)
}

impl Server {
    /// Starts the server on `dir` with the default test environment plus `env`.
    pub fn start(dir: &DataDir, env: &[(&str, &str)]) -> Server {
        let mut all = default_env();
        all.extend(dir.store.iter().cloned());
        for (k, v) in env {
            all.retain(|(key, _)| key != k);
            all.push((k.to_string(), v.to_string()));
        }
        let mut server = Server {
            child: None,
            base: String::new(),
            data_dir: dir.path().to_path_buf(),
            env: all,
            log: dir.log_path(),
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let mut command = Command::new(binary());
        command
            .arg("--data-dir")
            .arg(&self.data_dir)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env_remove("MELDEWERK_DATA_DIR");
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let (child, base) = spawn_listening(command, &self.log);
        self.base = base;
        self.child = Some(child);
    }

    /// Full URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The server's log once everything asked before is in it: sends one more request that is
    /// logged (`GET /login`) and waits (up to 10 s) for its line.
    pub fn settled_log(&self) -> String {
        let logged = |log: &str| log.matches("/login").count();
        let before = logged(&self.log());
        self.client().get(self.url("/login")).send().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.log();
            if logged(&log) > before {
                return log;
            }
            assert!(Instant::now() < deadline, "{log}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: no shutdown at all.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Sends the signal `name` (`TERM`, `HUP`) to the server process. A process that has
    /// already exited is not an error here: its exit status tells the caller what happened.
    pub fn signal(&self, name: &str) {
        let child = self.child.as_ref().expect("the server was started");
        Command::new("kill")
            .arg(format!("-{name}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
    }

    /// SIGTERM and wait for the process to exit; returns whether it exited successfully.
    pub fn terminate(&mut self) -> bool {
        if self.child.is_none() {
            return true;
        }
        self.signal("TERM");
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.success();
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("server ignored SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts the server again on the same data directory and environment.
    pub fn restart(&mut self) {
        self.terminate();
        self.spawn();
    }

    /// Sets an environment variable for the next start (`restart`, `start_again`).
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }

    /// The server process's id, while it runs (benchmarks read its CPU time).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts the server again after a kill.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "still running");
        self.spawn();
    }

    /// An HTTP client without cookies that does not follow redirects.
    pub fn client(&self) -> Client {
        loopback_client().build().unwrap()
    }

    /// POST a birthnotice memento request as `user`.
    pub fn memento(&self, user: &str, body: &Value) -> Response {
        self.memento_in("birthnotice", user, body)
    }

    /// POST a memento request of `module` as `user`.
    pub fn memento_in(&self, module: &str, user: &str, body: &Value) -> Response {
        self.client()
            .post(self.url(&format!("/api/{module}/v1/memento")))
            .basic_auth(user, Some(PASSWORD))
            .json(body)
            .send()
            .unwrap()
    }

    /// POST a JSON body to an API path as `user`.
    pub fn post_as(&self, user: &str, path: &str, body: &Value) -> Response {
        self.client()
            .post(self.url(path))
            .basic_auth(user, Some(PASSWORD))
            .json(body)
            .send()
            .unwrap()
    }

    /// GET an API path as `user`.
    pub fn get_as(&self, user: &str, path: &str) -> Response {
        self.client()
            .get(self.url(path))
            .basic_auth(user, Some(PASSWORD))
            .send()
            .unwrap()
    }

    /// GET an operator API path.
    pub fn admin_get(&self, path: &str) -> Response {
        self.client()
            .get(self.url(path))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .send()
            .unwrap()
    }

    /// POST to an operator API path without a body (actions: pause, resume, retry, ...).
    pub fn admin_post(&self, path: &str) -> Response {
        self.client()
            .post(self.url(path))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .send()
            .unwrap()
    }

    /// POST a JSON body to an operator API path.
    pub fn admin_post_json(&self, path: &str, body: &Value) -> Response {
        self.client()
            .post(self.url(path))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .json(body)
            .send()
            .unwrap()
    }

    /// Appends `rule` to the simulated office's script (`POST …/script/rules`); panics unless
    /// it is taken.
    pub fn script_rule(&self, rule: &Value) {
        let answer =
            self.admin_post_json("/admin/api/v1/transports/xpersonenstand/script/rules", rule);
        assert_eq!(answer.status(), 200, "{rule}");
    }

    /// Clears the simulated office's script (`DELETE …/script`): it behaves as configured again.
    pub fn reset_script(&self) {
        let answer = self
            .client()
            .delete(self.url("/admin/api/v1/transports/xpersonenstand/script"))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .send()
            .unwrap();
        assert_eq!(answer.status(), 200);
    }

    /// The operator's health entry of actor `name` (`GET /admin/api/v1/actors`).
    pub fn actor(&self, name: &str) -> Value {
        let actors: Vec<Value> = self.admin_get("/admin/api/v1/actors").json().unwrap();
        actors
            .into_iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("actor {name} not listed"))
    }

    /// Polls a birthnotice `GET /reports/{id}?peek=true` until the status is `status`.
    pub fn wait_for_status(&self, user: &str, id: &str, status: &str) -> Value {
        self.wait_for_status_in("birthnotice", user, id, status)
    }

    /// Polls `GET /api/{module}/v1/reports/{id}?peek=true` until the status is `status` (30 s at
    /// most).
    pub fn wait_for_status_in(&self, module: &str, user: &str, id: &str, status: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let response = self.get_as(user, &format!("/api/{module}/v1/reports/{id}?peek=true"));
            if response.status() == 200 {
                let body: Value = response.json().unwrap();
                if body["status"] == status {
                    return body;
                }
            }
            assert!(
                Instant::now() < deadline,
                "report {id} never reached {status}; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Calls `check` every 50 ms until it gives a value (30 s at most, then the test fails naming
/// `what`), and returns that value.
pub fn wait_until<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The outbox job of report `report` (operator API, `GET /admin/api/v1/jobs`), while it has one.
pub fn job_of_report(server: &Server, report: &str) -> Option<Value> {
    let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
    page["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|job| job["report"] == report)
        .cloned()
}

/// Asserts that each `(key, value, message)` set in `[modules.<module>]` stops the start, the
/// error output containing `message`.
pub fn assert_module_settings_refused(module: &str, cases: &[(&str, &str, &str)]) {
    for (key, value, message) in cases {
        let var = format!("MELDEWERK_MODULES__{}__{key}", module.to_uppercase());
        let stderr = refused_start(&[(var.as_str(), value)]);
        assert!(stderr.contains(message), "{key}: {stderr}");
    }
}

/// What the simulated office recorded for a birthnotice report, oldest first.
pub fn received(server: &Server, id: &str) -> Vec<Value> {
    received_in(server, "birthnotice", id)
}

/// What the simulated office recorded for a report of `module`, oldest first (the first page,
/// which holds every delivery of one report by far).
pub fn received_in(server: &Server, module: &str, id: &str) -> Vec<Value> {
    received_page(
        server,
        &format!("/admin/api/v1/transports/xpersonenstand/received?module={module}&report={id}"),
    )
    .0
}

/// The actions of the audit log (`GET /admin/api/v1/audit`) as (action, target), oldest first;
/// each by the test servers' operator.
pub fn audited(server: &Server) -> Vec<(String, String)> {
    operator::audit_entries(server)
        .into_iter()
        .map(|(who, action, target)| {
            assert_eq!(who, OPERATOR.0);
            (action, target)
        })
        .collect()
}

/// Asserts that the operator API refuses `request` (made afresh for each try) with 401 without
/// credentials (with `WWW-Authenticate` and the API's message), with a wrong operator password,
/// and with the credentials of the API user `api_user`; `what` names the request in failures.
pub fn assert_operators_only(
    what: &str,
    request: impl Fn() -> reqwest::blocking::RequestBuilder,
    api_user: &str,
) {
    let anonymous = request().send().unwrap();
    assert_eq!(anonymous.status(), 401, "{what} anonymous");
    assert!(
        anonymous.headers().contains_key("www-authenticate"),
        "{what}"
    );
    assert_eq!(
        anonymous.json::<Value>().unwrap(),
        json!({"errors": ["operator credentials required"]}),
        "{what}"
    );
    let wrong = request()
        .basic_auth(OPERATOR.0, Some("guess"))
        .send()
        .unwrap();
    assert_eq!(wrong.status(), 401, "{what} with a wrong operator password");
    let api_user = request()
        .basic_auth(api_user, Some(PASSWORD))
        .send()
        .unwrap();
    assert_eq!(api_user.status(), 401, "{what}: an API user is no operator");
}

/// One page of the received log at `path` (with its query): the messages and `next`.
pub fn received_page(server: &Server, path: &str) -> (Vec<Value>, Option<u64>) {
    let response = server.admin_get(path);
    assert_eq!(response.status(), 200, "{path}");
    let page: Value = response.json().unwrap();
    let messages = page["messages"].as_array().expect("messages").clone();
    (messages, page["next"].as_u64())
}

/// Checks a receipt PDF with `qpdf --check` and returns its text (`pdftotext`) without white space,
/// so that long values broken across lines can be searched for whole.
pub fn checked_receipt_text(pdf: &[u8]) -> String {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), pdf).unwrap();
    let check = run_tool("qpdf", &["--check", file.path().to_str().unwrap()], &[]);
    assert!(
        check.status.success(),
        "qpdf: {}",
        String::from_utf8_lossy(&check.stdout)
    );
    let text = run_tool("pdftotext", &[file.path().to_str().unwrap(), "-"], &[]);
    String::from_utf8_lossy(&text.stdout)
        .split_whitespace()
        .collect()
}

/// Runs an external checking tool; fails the test with a clear message when it is missing.
pub fn run_tool(program: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(program);
    command.args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap_or_else(|e| {
        panic!("{program} is needed by this test ({e}); run scripts/test.sh, which installs it")
    })
}

/// The shared reference material beside the project.
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference")
}

/// Validates XML against the xPersonenstand 26.11 schema with `xmllint`; returns its output on failure.
pub fn xmllint_xpersonenstand(xml: &[u8]) -> Result<(), String> {
    let dir = reference_dir().join("xpersonenstand-26.11");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), xml).unwrap();
    let catalog = dir.join("local-catalog.xml");
    let schema = dir.join("schemas/xpsw.domap.de/xpsw2611/xpersonenstand-nachrichten-portale.xsd");
    let out = run_tool(
        "xmllint",
        &[
            "--noout",
            "--nonet",
            "--schema",
            schema.to_str().unwrap(),
            file.path().to_str().unwrap(),
        ],
        &[("XML_CATALOG_FILES", catalog.to_str().unwrap())],
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
