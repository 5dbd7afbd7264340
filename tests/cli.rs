//! The command line as an operator uses it: `meldewerk user add|list|passwd|remove`,
//! `meldewerk seal deposit` and `meldewerk serve` — exit status, messages, and the effect of each
//! change on the HTTP API of a server started afterwards; plus the guard rails (missing data
//! directory, a data directory in use by a running server, invalid configuration).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use serde_json::Value;

const NEW_PASSWORD: &str = "a brand new password";
const REPORTS: &str = "/api/birthnotice/v1/reports";

/// Runs `meldewerk args…` (no `--data-dir` added) with extra environment and `stdin`; gives up
/// after 30 s. Returns (success, stdout, stderr).
fn meldewerk_with(args: &[&str], env: &[(&str, &str)], stdin: &str) -> (bool, String, String) {
    let mut command = Command::new(binary());
    command
        .args(args)
        .env_remove("MELDEWERK_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("run meldewerk");
    {
        use std::io::Write;
        // A command that fails before reading its input closes the pipe: not an error here.
        let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        assert!(
            written.is_ok()
                || written.as_ref().unwrap_err().kind() == std::io::ErrorKind::BrokenPipe,
            "{written:?}"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("meldewerk {args:?} did not exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`meldewerk_with`] with empty standard input.
fn meldewerk(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    meldewerk_with(args, env, "")
}

/// `meldewerk --data-dir DIR args…` with `stdin`, like [`DataDir::cli`] but tolerant of commands
/// that exit before reading their input.
fn cli(dir: &DataDir, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut all = vec!["--data-dir", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    meldewerk_with(&all, &[], stdin.unwrap_or(""))
}

/// Asserts a CLI run failed and its stderr mentions `needle`.
fn assert_fails_with(result: (bool, String, String), needle: &str) {
    let (ok, out, err) = result;
    assert!(!ok, "expected failure mentioning {needle:?}; stdout: {out}");
    assert!(
        err.contains(needle),
        "stderr should mention {needle:?}: {err}"
    );
}

/// Asserts a CLI run succeeded; returns its stdout.
fn assert_ok(result: (bool, String, String)) -> String {
    let (ok, out, err) = result;
    assert!(ok, "command failed: {out} {err}");
    out
}

/// Status of `GET /reports` as `user` with `password`.
fn api_status(server: &Server, user: &str, password: &str) -> u16 {
    server
        .client()
        .get(server.url(REPORTS))
        .basic_auth(user, Some(password))
        .send()
        .unwrap()
        .status()
        .as_u16()
}

/// `user list --json`, parsed.
fn users_json(dir: &DataDir) -> Vec<Value> {
    let out = assert_ok(cli(dir, &["user", "list", "--json"], None));
    let value: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {out}"))
        .clone()
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn user_add_refuses_duplicates_missing_stdin_short_passwords_and_bad_names() {
    let dir = DataDir::new();
    let out = assert_ok(cli(
        &dir,
        &["user", "add", "klinik", "--password-stdin"],
        Some(PASSWORD),
    ));
    assert!(out.contains("klinik"), "{out}");
    assert_fails_with(
        cli(
            &dir,
            &["user", "add", "klinik", "--password-stdin"],
            Some(NEW_PASSWORD),
        ),
        "exists already",
    );
    assert_fails_with(
        cli(&dir, &["user", "add", "other"], Some(PASSWORD)),
        "--password-stdin",
    );
    assert_fails_with(
        cli(
            &dir,
            &["user", "add", "other", "--password-stdin"],
            Some("short"),
        ),
        "8",
    );
    assert_fails_with(
        cli(
            &dir,
            &["user", "add", "other", "--password-stdin"],
            Some("1234567\n"),
        ),
        "password",
    );
    assert_ok(cli(
        &dir,
        &["user", "add", "eight", "--password-stdin"],
        Some("12345678\n"),
    ));
    for bad in ["a:b", "with space", "ümlaut", ""] {
        let (ok, out, err) = cli(
            &dir,
            &["user", "add", bad, "--password-stdin"],
            Some(PASSWORD),
        );
        assert!(!ok, "{bad:?} accepted: {out}");
        assert!(
            err.contains("user name") || err.contains("invalid"),
            "{bad:?}: {err}"
        );
    }
    // None of the refused users exist; the first one's password is unchanged.
    let names: Vec<Value> = users_json(&dir).iter().map(|u| u["name"].clone()).collect();
    assert_eq!(names, vec![Value::from("eight"), Value::from("klinik")]);
    let server = Server::start(&dir, &[]);
    assert_eq!(api_status(&server, "eight", "12345678"), 200);
    assert_eq!(api_status(&server, "klinik", PASSWORD), 200);
    assert_eq!(api_status(&server, "klinik", NEW_PASSWORD), 401);
    assert_eq!(api_status(&server, "other", PASSWORD), 401);
}

/// Every usage line names the arguments in the order the command takes them.
#[test]
fn help_shows_arguments_in_the_order_they_are_taken() {
    let help = assert_ok(meldewerk(&["user", "email", "--help"], &[]));
    assert!(
        help.contains("Usage: meldewerk user email [OPTIONS] <NAME> <ADDRESS|--none>"),
        "{help}"
    );
    let dir = DataDir::new();
    assert_ok(cli(
        &dir,
        &["user", "add", "klinik", "--password-stdin"],
        Some(PASSWORD),
    ));
    let said = assert_ok(cli(
        &dir,
        &["user", "email", "klinik", "it@klinik.example"],
        None,
    ));
    assert!(
        said.contains("notices of klinik go to it@klinik.example"),
        "{said}"
    );
}

#[test]
fn user_list_shows_names_customers_and_seals() {
    let dir = DataDir::new();
    assert_ok(cli(
        &dir,
        &[
            "user",
            "add",
            "klinik-a",
            "--password-stdin",
            "--customer",
            "C1",
        ],
        Some(PASSWORD),
    ));
    dir.add_user("klinik-b");
    let table = assert_ok(cli(&dir, &["user", "list"], None));
    assert!(
        table.contains("klinik-a") && table.contains("klinik-b") && table.contains("C1"),
        "{table}"
    );

    let users = users_json(&dir);
    assert_eq!(users.len(), 2, "{users:?}");
    let a = users
        .iter()
        .find(|u| u["name"] == "klinik-a")
        .expect("klinik-a listed");
    let b = users
        .iter()
        .find(|u| u["name"] == "klinik-b")
        .expect("klinik-b listed");
    assert_eq!(a["customer"], "C1");
    assert!(b["customer"].is_null(), "{b}");
    assert_eq!(a["seal"], false);
    assert_eq!(b["seal"], false);
    // Nothing secret is listed.
    let raw = assert_ok(cli(&dir, &["user", "list", "--json"], None));
    assert!(!raw.contains("argon2") && !raw.contains(PASSWORD), "{raw}");
}

#[test]
fn passwd_replaces_the_password_on_the_api() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    assert_fails_with(
        cli(&dir, &["user", "passwd", "klinik"], Some(NEW_PASSWORD)),
        "--password-stdin",
    );
    assert_fails_with(
        cli(
            &dir,
            &["user", "passwd", "klinik", "--password-stdin"],
            Some("short"),
        ),
        "8",
    );
    assert_fails_with(
        cli(
            &dir,
            &["user", "passwd", "ghost", "--password-stdin"],
            Some(NEW_PASSWORD),
        ),
        "there is no user",
    );

    // The refused attempts changed nothing.
    let mut server = Server::start(&dir, &[]);
    assert_eq!(api_status(&server, "klinik", PASSWORD), 200);
    let old_link = magic_link(&server, "klinik", &complete_notice("geb-old"));
    assert_eq!(Browser::new().get(&server.url(&old_link)).status(), 302);
    server.terminate();

    assert_ok(cli(
        &dir,
        &["user", "passwd", "klinik", "--password-stdin"],
        Some(&format!("{NEW_PASSWORD}\n")),
    ));
    let server = Server::start(&dir, &[]);
    assert_eq!(api_status(&server, "klinik", PASSWORD), 401);
    assert_eq!(api_status(&server, "klinik", NEW_PASSWORD), 200);
    // The password change revoked the magic links made under the old one.
    let revoked = Browser::new().get(&server.url(&old_link));
    assert_eq!(revoked.status(), 302);
    assert_eq!(revoked.headers()["location"], "/login?error");
}

#[test]
fn remove_takes_the_user_off_the_api() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("stays");
    let mut server = Server::start(&dir, &[]);
    let link = magic_link(&server, "klinik", &complete_notice("geb-gone"));
    server.terminate();
    let out = assert_ok(cli(&dir, &["user", "remove", "klinik"], None));
    assert!(out.contains("klinik"), "{out}");
    assert_fails_with(
        cli(&dir, &["user", "remove", "klinik"], None),
        "there is no user",
    );
    assert_fails_with(cli(&dir, &["user", "remove", "a:b"], None), "invalid");
    // The name of a removed user is not given out again: its reports keep it.
    assert_fails_with(
        cli(
            &dir,
            &["user", "add", "klinik", "--password-stdin"],
            Some(PASSWORD),
        ),
        "belonged to a removed user",
    );
    let names: Vec<Value> = users_json(&dir).iter().map(|u| u["name"].clone()).collect();
    assert_eq!(names, vec![Value::from("stays")]);

    server.start_again();
    assert_eq!(api_status(&server, "klinik", PASSWORD), 401);
    assert_eq!(api_status(&server, "stays", PASSWORD), 200);
    // The removed user's magic links no longer log anyone in.
    let refused = Browser::new().get(&server.url(&link));
    assert_eq!(refused.status(), 302);
    assert_eq!(refused.headers()["location"], "/login?error");
}

#[test]
fn seal_deposit_prints_the_public_key_and_refuses_bad_keys() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("other");
    let out = assert_ok(cli(&dir, &["seal", "deposit", "klinik"], None));
    let key = out.trim().rsplit(' ').next().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(key)
        .unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(bytes.len(), 32, "an Ed25519 public key: {out}");

    assert_fails_with(
        cli(&dir, &["seal", "deposit", "ghost"], None),
        "there is no user",
    );
    let garbage = dir.path().join("garbage.der");
    std::fs::write(&garbage, b"this is not a key").unwrap();
    assert_fails_with(
        cli(
            &dir,
            &[
                "seal",
                "deposit",
                "other",
                "--key-file",
                garbage.to_str().unwrap(),
            ],
            None,
        ),
        "invalid seal key",
    );
    let missing = dir.path().join("missing.der");
    let (ok, _, err) = cli(
        &dir,
        &[
            "seal",
            "deposit",
            "other",
            "--key-file",
            missing.to_str().unwrap(),
        ],
        None,
    );
    assert!(!ok && !err.is_empty(), "{err}");

    let users = users_json(&dir);
    let seal = |name: &str| users.iter().find(|u| u["name"] == name).unwrap()["seal"].clone();
    assert_eq!(seal("klinik"), true);
    assert_eq!(seal("other"), false, "a refused key deposits nothing");
    let table = assert_ok(cli(&dir, &["user", "list"], None));
    let line = table
        .lines()
        .find(|l| l.starts_with("klinik "))
        .expect("klinik in the table");
    assert!(line.contains("yes"), "{table}");
    let line = table
        .lines()
        .find(|l| l.starts_with("other "))
        .expect("other in the table");
    assert!(line.contains("no") && !line.contains("yes"), "{table}");
}

#[test]
fn a_deposited_seal_key_file_is_used_instead_of_a_signature() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    dir.add_user("unsealed");
    let key = dir.path().join("seal.der");
    let made = run_tool(
        "openssl",
        &[
            "genpkey",
            "-algorithm",
            "ed25519",
            "-outform",
            "DER",
            "-out",
            key.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let public = run_tool(
        "openssl",
        &[
            "pkey",
            "-inform",
            "DER",
            "-in",
            key.to_str().unwrap(),
            "-pubout",
            "-outform",
            "DER",
        ],
        &[],
    );
    assert!(public.status.success());
    let expected = &public.stdout[public.stdout.len() - 32..];

    let out = assert_ok(cli(
        &dir,
        &[
            "seal",
            "deposit",
            "klinik",
            "--key-file",
            key.to_str().unwrap(),
        ],
        None,
    ));
    let printed = base64::engine::general_purpose::STANDARD
        .decode(out.trim().rsplit(' ').next().unwrap())
        .unwrap();
    assert_eq!(
        printed, expected,
        "the printed key is the key file's public key: {out}"
    );

    let server = Server::start(&dir, &[]);
    let sealed = Browser::new().open_magic_link(
        &server,
        &magic_link(&server, "klinik", &complete_notice("geb-s")),
    );
    assert_eq!(sealed.status, 200);
    assert!(
        !sealed.html.contains("name=\"signatur.name\""),
        "a sealed user is not asked to sign"
    );
    let unsealed = Browser::new().open_magic_link(
        &server,
        &magic_link(&server, "unsealed", &complete_notice("geb-u")),
    );
    assert!(
        unsealed.html.contains("name=\"signatur.name\""),
        "an unsealed user must sign"
    );

    let id = dispatch(&server, "klinik", &complete_notice("geb-s"));
    server.wait_for_status("klinik", &id, "SUCCESS");
    let message = server.admin_get(&format!("/admin/api/v1/reports/birthnotice/{id}/message"));
    assert_eq!(message.status(), 200);
    assert_eq!(message.headers()["x-signature-kind"], "seal");
}

#[test]
fn commands_on_a_missing_or_empty_data_dir_fail_without_creating_it() {
    let dir = DataDir::new();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["user", "list"],
        &["user", "list", "--json"],
        &["user", "remove", "klinik"],
        &["seal", "deposit", "klinik"],
        &["user", "passwd", "klinik", "--password-stdin"],
    ];
    for args in commands {
        let mut all = vec!["--data-dir", missing];
        all.extend_from_slice(args);
        assert_fails_with(meldewerk_with(&all, &[], NEW_PASSWORD), "data directory");
        assert!(
            !Path::new(missing).exists(),
            "{args:?} created the data directory"
        );

        let (ok, out, err) = cli(&dir, args, Some(NEW_PASSWORD));
        assert!(!ok, "{args:?} on an empty data directory: {out}");
        assert!(err.contains("data directory"), "{args:?}: {err}");
        assert!(
            entries(dir.path()).is_empty(),
            "{args:?} wrote into the empty data directory: {:?}",
            entries(dir.path())
        );
    }
    // `user add` is the command that creates it.
    let nested = dir.path().join("new").join("data");
    let nested = nested.to_str().unwrap();
    assert_ok(meldewerk_with(
        &[
            "--data-dir",
            nested,
            "user",
            "add",
            "klinik",
            "--password-stdin",
        ],
        &[],
        PASSWORD,
    ));
    assert!(assert_ok(meldewerk(&["--data-dir", nested, "user", "list"], &[])).contains("klinik"));
}

#[test]
fn admin_commands_refuse_a_data_dir_in_use_by_a_server() {
    let dir = DataDir::new();
    dir.add_user("klinik");
    let mut server = Server::start(&dir, &[]);
    assert_fails_with(
        cli(
            &dir,
            &["user", "add", "other", "--password-stdin"],
            Some(PASSWORD),
        ),
        "in use by another process",
    );
    assert_fails_with(
        cli(&dir, &["user", "list"], None),
        "in use by another process",
    );
    assert_fails_with(
        cli(&dir, &["user", "remove", "klinik"], None),
        "in use by another process",
    );
    // The refused commands changed nothing on the running server.
    assert_eq!(api_status(&server, "klinik", PASSWORD), 200);
    assert!(server.terminate(), "server exits cleanly on SIGTERM");

    assert_ok(cli(
        &dir,
        &["user", "add", "other", "--password-stdin"],
        Some(PASSWORD),
    ));
    let names: Vec<Value> = users_json(&dir).iter().map(|u| u["name"].clone()).collect();
    assert_eq!(names, vec![Value::from("klinik"), Value::from("other")]);
}

#[test]
fn serve_refuses_invalid_configuration() {
    let dir = DataDir::new();
    let data = dir.path().to_str().unwrap();
    let serve = ["--data-dir", data, "serve", "--listen", "127.0.0.1:0"];
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_LOG__FORMAT", "xml")]),
        "invalid configuration",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_NO_SUCH_SETTING", "1")]),
        "invalid configuration",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_TOKEN_LIFETIME_SECS", "0")]),
        "invalid configuration",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_MAX_BODY_BYTES", "lots")]),
        "invalid configuration",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_STORE__CACHE_CAPACITY_MB", "0")]),
        "store.cache_capacity_mb must be between 1 and",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_STORE__CACHE_CAPACITY_MB", "64MB")]),
        "invalid configuration",
    );

    // Each module reads its own section; a section of no module, a key the module does not
    // know and a retention that is no number are refused, naming the section.
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_MODULES__NOSUCHMODULE__RETENTION_SECS", "1")],
        ),
        "modules.nosuchmodule: no module reads this section (known: bedreport, birthdata, \
         birthnotice, deathnotice, guardianship, hospreport, labreport, xpersonenstand)",
    );
    // The civil registry's message header is a section its modules share; the top-level
    // section of earlier versions is refused, as is a transport the service does not know.
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_MODULES__XPERSONENSTAND__PORTAL_KENUNG", "sap:1")],
        ),
        "modules.xpersonenstand: unknown field: found `portal_kenung`",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_XPERSONENSTAND__PORTAL_KENNUNG", "sap:1")],
        ),
        "unknown field: found `xpersonenstand`",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_TRANSPORTS__NOSUCH__URL", "http://127.0.0.1:1")],
        ),
        "transports.nosuch: no such transport (known: xpersonenstand, demis, egvp)",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_MODULES__BIRTHNOTICE__PROBLEMS_BASE", "https://x")],
        ),
        "modules.birthnotice: unknown field",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_MODULES__DEATHNOTICE__RETENTION_SECS", "soon")],
        ),
        "modules.deathnotice: retention_secs must be a whole number of seconds",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_MODULES__BIRTHDATA__PROBLEMS_BASE", "problems")],
        ),
        "modules.birthdata: problems_base must be an http(s) URL",
    );
    assert_fails_with(
        meldewerk(&serve, &[("MELDEWERK_TIME_ZONE", "Mars/Olympus")]),
        "time_zone: 'Mars/Olympus' is not a time zone of the tz database",
    );

    // The listener's settings: proxies that are no address, a header it cannot read, half a
    // certificate setting, files that cannot be read.
    assert_fails_with(
        meldewerk(
            &serve,
            &[(
                "MELDEWERK_SERVER__TRUSTED_PROXIES",
                "127.0.0.1,proxy.example",
            )],
        ),
        "server.trusted_proxies: \"proxy.example\" is neither an IP address nor a CIDR range",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[("MELDEWERK_SERVER__FORWARDED_HEADER", "x-real-ip")],
        ),
        "unknown variant: found `x-real-ip`, expected ``x-forwarded-for` or `forwarded``",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[(
                "MELDEWERK_SERVER__TLS__CERTIFICATE",
                "/nonexistent/cert.pem",
            )],
        ),
        "missing field `key`",
    );
    let empty = tempfile::NamedTempFile::new().unwrap();
    let empty = empty.path().to_str().unwrap();
    assert_fails_with(
        meldewerk(
            &serve,
            &[
                (
                    "MELDEWERK_SERVER__TLS__CERTIFICATE",
                    "/nonexistent/cert.pem",
                ),
                ("MELDEWERK_SERVER__TLS__KEY", empty),
            ],
        ),
        "server.tls.certificate /nonexistent/cert.pem: I/O error: No such file or directory",
    );
    assert_fails_with(
        meldewerk(
            &serve,
            &[
                ("MELDEWERK_SERVER__TLS__CERTIFICATE", empty),
                ("MELDEWERK_SERVER__TLS__KEY", empty),
            ],
        ),
        &format!("server.tls.certificate {empty}: no CERTIFICATE in the PEM file"),
    );

    let mut with_config = vec!["--config", "/nonexistent.toml"];
    with_config.extend_from_slice(&serve);
    assert_fails_with(meldewerk(&with_config, &[]), "/nonexistent.toml");

    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "listen = [unclosed").unwrap();
    let mut with_broken = vec!["--config", broken.to_str().unwrap()];
    with_broken.extend_from_slice(&serve);
    assert_fails_with(meldewerk(&with_broken, &[]), "invalid configuration");

    // The same configuration rules hold for the admin commands.
    assert_fails_with(
        meldewerk(
            &["--data-dir", data, "user", "list"],
            &[("MELDEWERK_LOG__FORMAT", "xml")],
        ),
        "invalid configuration",
    );
    // Values from a configuration file are checked as well.
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "[log]\nformat = \"xml\"\n").unwrap();
    let mut with_good = vec!["--config", good.to_str().unwrap()];
    with_good.extend_from_slice(&serve);
    assert_fails_with(meldewerk(&with_good, &[]), "log.format");
}
