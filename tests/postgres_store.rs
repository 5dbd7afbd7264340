//! The service on the PostgreSQL engine (`store.engine = "postgres"`), against a real
//! PostgreSQL server the test starts: `meldewerk migrate` applies and shows the schema, users
//! are added through the command line, reports go through to their results, readiness says
//! when the database is gone, and accepted reports survive a database restart and a node's.

mod common;

use std::process::{Command, Stdio};

use common::demis::complete_bed_report;
use common::*;
use meldewerk_storage::postgres::migrate::MIGRATIONS;
use meldewerk_storage::postgres::testing::cluster;
use serde_json::{json, Value};

/// A password in the store's address: the test cluster trusts local connections and never asks
/// for it, so it can be looked for in everything the service writes.
const SECRET: &str = "pg-secret-7f3a91";

/// The settings that put a node on the database `url`.
fn on_postgres(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("MELDEWERK_STORE__ENGINE", "postgres".into()),
        ("MELDEWERK_STORE__URL", format!("{url} password={SECRET}")),
        ("MELDEWERK_STORE__CONNECT_TIMEOUT_SECS", "2".into()),
    ]
}

/// Runs `meldewerk --data-dir DIR args…` with `env` and `stdin`: (success, stdout, stderr).
fn cli(
    dir: &DataDir,
    env: &[(&str, String)],
    args: &[&str],
    stdin: &str,
) -> (bool, String, String) {
    let mut child = Command::new(binary())
        .arg("--data-dir")
        .arg(dir.path())
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run meldewerk");
    {
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fresh_database() -> String {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database())
}

fn ready(server: &Server) -> u16 {
    server
        .client()
        .get(server.url("/readyz"))
        .send()
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

fn submit(server: &Server, id: &str) -> (u16, Value) {
    let response = server.post_as(
        "klinikum",
        "/api/bedreport/v1/report",
        &complete_bed_report(id),
    );
    let status = response.status().as_u16();
    (status, response.json().unwrap())
}

/// One test, in order: the database restart stops the test process's one cluster, which
/// another test running beside it would not survive.
#[test]
fn a_node_on_postgres_migrates_serves_and_survives_restarts_of_the_database_and_itself() {
    let url = fresh_database();
    let env = on_postgres(&url);
    let dir = DataDir::new();

    // migrate: applies every version once, then finds nothing to do.
    let (ok, out, err) = cli(&dir, &env, &["migrate"], "");
    assert!(ok, "{out} {err}");
    let versions: Vec<String> = MIGRATIONS.iter().map(|m| m.version.to_string()).collect();
    assert!(versions.len() >= 4, "{versions:?}");
    let applied = format!("applied versions {}\n", versions.join(", "));
    assert!(out.starts_with(&applied), "{out}");
    for version in &versions {
        assert!(out.contains(&format!("\n{version:>4}  applied ")), "{out}");
    }
    let (ok, out, err) = cli(&dir, &env, &["migrate"], "");
    assert!(ok, "{out} {err}");
    assert!(
        out.starts_with("schema up to date, nothing applied"),
        "{out}"
    );

    // The command line writes into the database, not the data directory.
    let (ok, out, err) = cli(
        &dir,
        &env,
        &["user", "add", "klinikum", "--password-stdin"],
        PASSWORD,
    );
    assert!(ok, "{out} {err}");
    assert!(!dir.path().join("db").exists(), "a sled database was made");

    let settings: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = Server::start(&dir, &settings);
    assert_eq!(ready(&server), 200);
    let (status, body) = submit(&server, "BED-PG-1");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"reportId": "BED-PG-1", "succeeded": true, "errorMsg": null})
    );

    // An end user has a form open.
    let link = magic_link_in(
        &server,
        "birthnotice",
        "klinikum",
        &complete_notice("geb-pg-1"),
    );
    let browser = Browser::new();
    let opened = browser.get(&server.url(&link));
    assert_eq!(opened.status(), 302);
    let form_url = server.url(opened.headers()["location"].to_str().unwrap());
    assert_eq!(browser.get(&form_url).status(), 200);

    // The database goes away: readiness says so, a request is refused as unavailable (503),
    // never answered as if nothing had happened.
    cluster().stop_server();
    wait_until("readiness to fail", || {
        (ready(&server) == 503).then_some(())
    });
    let refused = server.post_as(
        "klinikum",
        "/api/bedreport/v1/report",
        &complete_bed_report("BED-PG-2"),
    );
    assert_eq!(refused.status(), 503);
    // The form's session cannot be checked against its user now: 503 with a page that says
    // so, not the login page; the session lives on.
    let page = browser.get(&form_url);
    assert_eq!(page.status(), 503);
    assert_eq!(page.headers()["retry-after"], "10");
    let text = page.text().unwrap();
    assert!(text.contains("Vorübergehend nicht erreichbar"), "{text}");

    // It comes back: the node reconnects by itself, and what was accepted is there.
    cluster().start_server().unwrap();
    wait_until("readiness to return", || {
        (ready(&server) == 200).then_some(())
    });
    let status = server.get_as("klinikum", "/api/bedreport/v1/status/BED-PG-1?peek=true");
    assert_eq!(status.status(), 200);
    assert_eq!(browser.get(&form_url).status(), 200, "the session lived on");
    let (status, body) = submit(&server, "BED-PG-3");
    assert_eq!(status, 200, "{body}");

    // The node itself restarts: nothing is lost, and a used id stays used.
    server.restart();
    let pending: Vec<String> = server
        .get_as("klinikum", "/api/bedreport/v1/reports")
        .json()
        .unwrap();
    assert_eq!(pending, ["BED-PG-1", "BED-PG-3"]);
    let (status, body) = submit(&server, "BED-PG-1");
    assert_eq!(status, 409, "{body}");

    // The address's password was written nowhere, the lost connection logged included.
    let log = server.settled_log();
    assert!(log.contains("the database cannot be reached"), "{log}");
    assert!(!log.contains(SECRET), "{log}");
}

#[test]
fn a_postgres_store_without_a_usable_address_stops_the_start_saying_why() {
    let missing = refused_start(&[("MELDEWERK_STORE__ENGINE", "postgres")]);
    assert!(
        missing.contains("store.engine = \"postgres\" needs store.url, the database's address"),
        "{missing}"
    );
    let garbled = format!("postgres://klinik:{SECRET}@db:notaport/meldewerk");
    let refused = refused_start(&[
        ("MELDEWERK_STORE__ENGINE", "postgres"),
        ("MELDEWERK_STORE__URL", &garbled),
    ]);
    assert!(
        refused.contains("store.url is no PostgreSQL address"),
        "{refused}"
    );
    assert!(!refused.contains(SECRET), "{refused}");
    // A database that is not there: the start stops, naming the cause, not the password.
    let absent = format!("host=/nonexistent/meldewerk dbname=meldewerk password={SECRET}");
    let refused = refused_start(&[
        ("MELDEWERK_STORE__ENGINE", "postgres"),
        ("MELDEWERK_STORE__URL", &absent),
        ("MELDEWERK_STORE__CONNECT_TIMEOUT_SECS", "1"),
    ]);
    assert!(
        refused.contains("the database cannot be reached"),
        "{refused}"
    );
    assert!(!refused.contains(SECRET), "{refused}");
    for (key, value, message) in [
        (
            "MELDEWERK_STORE__POOL_SIZE",
            "0",
            "store.pool_size must be between 1 and 1000, got 0",
        ),
        (
            "MELDEWERK_STORE__STATEMENT_TIMEOUT_SECS",
            "0",
            "store.statement_timeout_secs must be between 1 and 86400, got 0",
        ),
        (
            "MELDEWERK_STORE__CONNECT_TIMEOUT_SECS",
            "3601",
            "store.connect_timeout_secs must be between 1 and 3600, got 3601",
        ),
        (
            "MELDEWERK_STORE__ENGINE",
            "mysql",
            "found `mysql`, expected ``sled` or `postgres``",
        ),
    ] {
        let refused = refused_start(&[(key, value)]);
        assert!(refused.contains(message), "{key}={value}: {refused}");
    }
}
