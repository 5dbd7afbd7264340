//! schemathesis (PyPI, pinned by the test command) against the real server: every check and
//! every phase (examples, coverage, fuzzing, stateful) over each module's OpenAPI document and
//! the service's own routes of the combined one. Zero failures: no 5xx, every answer's status,
//! content type, headers and body as documented, invalid requests refused, valid ones accepted
//! (with the exceptions tests/schemathesis/schemathesis.toml names and explains).
//!
//! The modules' HTML form routes are left to the browser journeys: they answer only a session
//! (opened by a magic link), so schemathesis would see nothing but the redirect to the login.

mod common;

use std::process::Command;

use common::{DataDir, Server, PASSWORD};

const USER: &str = "integrator";

/// The server: an API user, and failed-login limits that schemathesis' checks of wrong
/// credentials do not reach (they would answer every later request with 429 and test nothing).
fn server() -> (DataDir, Server) {
    let dir = DataDir::new();
    dir.add_user(USER);
    let server = Server::start(
        &dir,
        &[
            (
                "MELDEWERK_SECURITY__FAILED_LOGINS_PER_USER_PER_MINUTE",
                "1000000",
            ),
            (
                "MELDEWERK_SECURITY__FAILED_LOGINS_PER_ADDRESS_PER_MINUTE",
                "1000000",
            ),
        ],
    );
    (dir, server)
}

/// Runs schemathesis over the document at `document` (a path of the server) for the operations
/// whose path matches `paths`, with `auth` as Basic credentials; the output when it failed.
fn schemathesis(server: &Server, document: &str, paths: &str, auth: &str) -> Result<(), String> {
    let config = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/schemathesis/schemathesis.toml"
    );
    let seed = std::env::var("SCHEMATHESIS_SEED").unwrap_or_else(|_| "1".into());
    // Its cache of found failures goes to a directory of the run, not into the source tree.
    let scratch = tempfile::tempdir().unwrap();
    let output = Command::new("python3")
        .current_dir(scratch.path())
        .args(["-m", "schemathesis.cli", "--config-file", config, "run"])
        .arg(server.url(document))
        .args(["--url", &server.base, "--auth", auth])
        .args([
            "--checks",
            "all",
            "--phases",
            "examples,coverage,fuzzing,stateful",
        ])
        .args(["--include-path-regex", paths, "--seed", &seed, "--no-color"])
        .env("SCHEMATHESIS_HOOKS", "")
        .output()
        .expect("schemathesis runs (scripts/test.sh installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // The summary line, so that a passing run shows what it covered.
    if let Some(summary) = text
        .lines()
        .rev()
        .find(|l| l.contains(" in ") && l.contains('='))
    {
        println!(
            "{document}: {}",
            summary.trim_matches(|c| c == '=' || c == ' ')
        );
    }
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("schemathesis over {document} failed:\n{text}"))
    }
}

#[test]
fn every_module_api_is_as_its_document_says() {
    let (_dir, server) = server();
    let auth = format!("{USER}:{PASSWORD}");
    // Every module's document the service lists, so that a new module is covered as it comes.
    let combined: serde_json::Value = common::loopback_client()
        .build()
        .unwrap()
        .get(server.url("/api-docs/openapi.json"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let documents: Vec<&String> = combined["paths"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|path| path.starts_with("/api-docs/") && path.matches('/').count() == 3)
        .collect();
    assert_eq!(documents.len(), 7, "{documents:?}");
    let failures: Vec<String> = documents
        .iter()
        .filter_map(|document| schemathesis(&server, document, "^/api/", &auth).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_service_routes_are_as_the_combined_document_says() {
    let (_dir, server) = server();
    let auth = format!("{USER}:{PASSWORD}");
    // Health, metrics, the magic link, `/bal/`, login and logout, and the documents.
    let paths = "^/(healthz|readyz|metrics|mtl/|bal|login|logout|api-docs/)";
    if let Err(failure) = schemathesis(&server, "/api-docs/openapi.json", paths, &auth) {
        panic!("{failure}");
    }
}

#[test]
fn the_operator_api_is_as_the_combined_document_says() {
    let (_dir, server) = server();
    let (name, password) = common::OPERATOR;
    // The operator API and the simulated transports' operator routes, with the operator's
    // credentials (the dashboard's HTML pages are left to the browser journeys).
    if let Err(failure) = schemathesis(
        &server,
        "/api-docs/openapi.json",
        "^/admin/api/v1/",
        &format!("{name}:{password}"),
    ) {
        panic!("{failure}");
    }
}
