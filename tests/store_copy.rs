//! `meldewerk store copy`: a node on sled is stopped with reports in several states, its store
//! is copied into PostgreSQL, and a node on the same data directory (the same master key) serves
//! from the copy: results and receipts read as before, a consumed result stays consumed, the
//! delivery that was waiting for its acknowledgement ends, a new report gets through. The
//! database's password appears in nothing the command or the node writes.

mod common;

use common::*;
use meldewerk_storage::postgres::testing::cluster;
use serde_json::{json, Value};

/// A password in the database's address: the test cluster trusts local connections and never
/// asks for it, so it can be looked for in everything written.
const SECRET: &str = "pg-secret-c0py-42";

fn fresh_database() -> String {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database())
}

/// `GET /api/birthnotice/v1/reports/{id}?peek=true` of `klinik`: status and body.
fn peek(server: &Server, id: &str) -> (u16, Value) {
    let response = server.get_as(
        "klinik",
        &format!("/api/birthnotice/v1/reports/{id}?peek=true"),
    );
    let status = response.status().as_u16();
    (status, response.json().unwrap_or(Value::Null))
}

/// The outbox's jobs as operators see them.
fn jobs(server: &Server) -> Vec<Value> {
    let page: Value = server.admin_get("/admin/api/v1/jobs").json().unwrap();
    page["jobs"].as_array().unwrap().clone()
}

#[test]
fn a_sled_node_copied_into_postgres_goes_on_where_it_stopped() {
    let dir = DataDir::new();
    assert!(
        dir.sled(),
        "this test copies from sled: run it without TEST_STORE=postgres"
    );
    dir.add_user("klinik");
    // Acknowledgements overdue after 3 s are asked for again by delivering the message again.
    let quick_acks = [("MELDEWERK_ENGINE__ACK_TIMEOUT_SECS", "3")];
    let mut server = Server::start(&dir, &quick_acks);
    server.script_rule(&json!({"kind": "ack_lost", "report_id": "geb-copy-pending"}));
    for id in ["geb-copy-done", "geb-copy-taken", "geb-copy-pending"] {
        dispatch(&server, "klinik", &complete_notice(id));
    }
    let done = server.wait_for_status("klinik", "geb-copy-done", "SUCCESS");
    assert!(done["receiptPdf"]
        .as_str()
        .is_some_and(|pdf| !pdf.is_empty()));
    server.wait_for_status("klinik", "geb-copy-taken", "SUCCESS");
    let taken = server.get_as("klinik", "/api/birthnotice/v1/reports/geb-copy-taken");
    assert_eq!(taken.status(), 200);
    wait_until("the pending report to wait for its acknowledgement", || {
        jobs(&server)
            .iter()
            .any(|j| j["report"] == "geb-copy-pending" && j["waitingFor"] == "acknowledgement")
            .then_some(())
    });

    let url = format!("{} password={SECRET}", fresh_database());
    let on_postgres = [
        ("MELDEWERK_STORE__ENGINE", "postgres".to_owned()),
        ("MELDEWERK_STORE__URL", url.clone()),
    ];
    let with = |env: &[(&str, String)]| -> Vec<(String, String)> {
        env.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };

    // While the node runs, sled's lock refuses the copy.
    let (ok, out, err) = run(&dir, &with(&on_postgres), &["store", "copy"]);
    assert!(!ok, "copied from a running node: {out}");
    assert!(err.contains("in use by another process"), "{err}");
    assert!(
        !out.contains(SECRET) && !err.contains(SECRET),
        "{out} {err}"
    );

    assert!(server.terminate(), "the sled node did not stop cleanly");
    let (ok, out, err) = run(&dir, &with(&on_postgres), &["store", "copy"]);
    assert!(ok, "{out} {err}");
    println!("{out}");
    assert!(
        !out.contains(SECRET) && !err.contains(SECRET),
        "{out} {err}"
    );
    assert!(out.contains("every count matches"), "{out}");
    for line in [
        "users",
        "reports",
        "of them pending",
        "with a receipt",
        "outbox jobs",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
    let count = |label: &str| -> u64 {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {out}"));
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    assert_eq!(count("users"), 1);
    assert_eq!(count("reports"), 3);
    assert_eq!(count("of them pending"), 2);
    assert_eq!(count("with a receipt"), 2);
    assert_eq!(count("outbox jobs"), 1);
    assert!(out.contains("court-messages"), "the archive hint: {out}");

    // Once is enough: the filled database is refused, and --to says where as well.
    let (ok, out, err) = run(
        &dir,
        &[],
        &["store", "copy", "--to", &format!("{url} connect_timeout=5")],
    );
    assert!(!ok, "copied twice: {out}");
    assert!(err.contains("holds data"), "{err}");
    assert!(
        !out.contains(SECRET) && !err.contains(SECRET),
        "{out} {err}"
    );

    // The node on PostgreSQL, on the same data directory: the same master key.
    let env: Vec<(&str, &str)> = on_postgres
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .chain(quick_acks)
        .collect();
    let server = Server::start(&dir, &env);
    let (status, again) = peek(&server, "geb-copy-done");
    assert_eq!(status, 200, "{again}");
    assert_eq!(again, done, "the result reads as it did on sled");
    let (status, _) = peek(&server, "geb-copy-taken");
    assert_eq!(status, 410, "a consumed result stays consumed");
    let listed: Value = server
        .get_as("klinik", "/api/birthnotice/v1/reports")
        .json()
        .unwrap();
    let listed = listed.as_array().unwrap().clone();
    assert!(listed.contains(&json!("geb-copy-done")), "{listed:?}");
    assert!(listed.contains(&json!("geb-copy-pending")), "{listed:?}");
    // The waiting delivery is taken up again under its job id and ends.
    let resumed = server.wait_for_status("klinik", "geb-copy-pending", "SUCCESS");
    assert!(resumed["receiptPdf"]
        .as_str()
        .is_some_and(|pdf| !pdf.is_empty()));
    // A new report gets through, under a job id sled never gave.
    dispatch(&server, "klinik", &complete_notice("geb-copy-new"));
    server.wait_for_status("klinik", "geb-copy-new", "SUCCESS");
    assert!(
        !server.log().contains(SECRET),
        "the node logged the password"
    );
}

/// Runs `meldewerk --data-dir DIR args…` with `env`: (success, stdout, stderr).
fn run(dir: &DataDir, env: &[(String, String)], args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(binary())
        .arg("--data-dir")
        .arg(dir.path())
        .args(args)
        .env_remove("MELDEWERK_DATA_DIR")
        .env_remove("MELDEWERK_STORE__ENGINE")
        .env_remove("MELDEWERK_STORE__URL")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run meldewerk");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
