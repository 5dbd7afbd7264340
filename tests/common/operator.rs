//! What the tests of operators' records (facilities, mailbox accounts) share: requests with
//! operator credentials, the exact `{"errors": [...]}` of a refusal, the guard every operator
//! route has, the audit log, and commands of the command line that must succeed or fail.

use reqwest::blocking::Response;
use reqwest::Method;
use serde_json::{json, Value};

use super::{assert_operators_only, DataDir, Server, OPERATOR};

/// A request with operator credentials and a JSON body, if any.
pub fn operator(server: &Server, method: Method, path: &str, body: Option<&Value>) -> Response {
    let request = server
        .client()
        .request(method, server.url(path))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1));
    match body {
        Some(body) => request.json(body),
        None => request,
    }
    .send()
    .unwrap()
}

/// Asserts `status` and exactly `errors`.
pub fn assert_errors(response: Response, status: u16, errors: &[&str]) {
    assert_eq!(response.status(), status);
    assert_eq!(
        response.json::<Value>().unwrap(),
        json!({ "errors": errors })
    );
}

/// Asserts of each request (method, path, JSON body) that only the operator may make it
/// ([`assert_operators_only`], `api_user` being an API user's name) and, unless it is a `GET`,
/// that it is refused from another site even with the operator's credentials.
pub fn assert_operator_routes(
    server: &Server,
    attempts: &[(Method, String, Option<Value>)],
    api_user: &str,
) {
    for (method, path, body) in attempts {
        let request = || {
            let request = server.client().request(method.clone(), server.url(path));
            match body {
                Some(body) => request.json(body),
                None => request,
            }
        };
        assert_operators_only(&format!("{method} {path}"), request, api_user);
        if *method != Method::GET {
            let cross_site = request()
                .basic_auth(OPERATOR.0, Some(OPERATOR.1))
                .header("Sec-Fetch-Site", "cross-site")
                .send()
                .unwrap();
            assert_errors(
                cross_site,
                403,
                &["cross-site requests to the operator API are refused"],
            );
        }
    }
}

/// The audit log as `(who, action, target)`, oldest first.
pub fn audit_entries(server: &Server) -> Vec<(String, String, String)> {
    let audit: Value = server.admin_get("/admin/api/v1/audit").json().unwrap();
    audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |name: &str| e[name].as_str().unwrap().to_owned();
            (text("who"), text("action"), text("target"))
        })
        .collect()
}

/// `(action, target)`, as [`super::audited`] lists them.
pub fn pair(action: &str, target: &str) -> (String, String) {
    (action.to_owned(), target.to_owned())
}

/// Runs a command that must succeed; returns its standard output.
pub fn ok(dir: &DataDir, args: &[&str]) -> String {
    let (ok, out, err) = dir.cli(args, None);
    assert!(ok, "meldewerk {args:?} failed: {err}");
    out.trim_end().to_owned()
}

/// Runs a command that must fail; returns its standard error.
pub fn fails(dir: &DataDir, args: &[&str]) -> String {
    let (ok, out, err) = dir.cli(args, None);
    assert!(!ok, "meldewerk {args:?} should fail: {out}");
    err.trim_end().to_owned()
}
