//! `meldewerk simulate xpersonenstand` serves its own OpenAPI 3.1 document at
//! `/api-docs/openapi.json`, and the document holds the process to what it says: every
//! documented operation exists there (none meets the process's catch-all 404) and answers with
//! a status the document lists for it. (That every route the process registers is documented
//! is checked in-process, against the routes' resource map, by `simulate::api_docs`'s tests.)

mod common;

use common::remote::Peer;
use common::*;
use reqwest::Method;
use serde_json::Value;

/// The catch-all answer of the process for a route it does not have.
const NOT_A_ROUTE: &str = r#"{"error":"not found"}"#;

/// `path` with each `{parameter}` replaced by a sample value.
fn sample(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("a closed parameter") + start;
        out.push_str("DE.Justiz.sample");
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_simulator_serves_a_document_of_every_route_it_answers() {
    let dir = DataDir::new();
    let peer = Peer::simulator(dir.path(), &[]);
    let client = peer.client();

    let answer = client
        .get(peer.url("/api-docs/openapi.json"))
        .send()
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(answer.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let doc: Value = answer.json().unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "meldewerk simulator xpersonenstand");
    let paths = doc["paths"].as_object().unwrap();
    for expected in [
        "/deliveries",
        "/acknowledgements",
        "/script",
        "/script/rules",
        "/received",
        "/mailboxes/{safe_id}/messages",
        "/mailboxes/{safe_id}/messages/{message_id}",
        "/healthz",
        "/api-docs/openapi.json",
    ] {
        assert!(
            paths.contains_key(expected),
            "the document lacks {expected}"
        );
    }
    // The wire protocol's bodies are described field by field.
    let schemas = &doc["components"]["schemas"];
    for member in [
        "idempotency_key",
        "module",
        "report_id",
        "body",
        "signature",
    ] {
        assert!(
            schemas["Delivery"]["properties"].get(member).is_some(),
            "Delivery lacks {member}"
        );
    }
    assert!(schemas["WireError"]["properties"]["error"].is_object());

    let mut asked = 0;
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let answer = client
                .request(method.clone(), peer.url(&sample(path)))
                .send()
                .unwrap();
            let status = answer.status().as_u16().to_string();
            let body = answer.text().unwrap();
            assert_ne!(
                body, NOT_A_ROUTE,
                "{method} {path} is documented but not served"
            );
            assert!(
                operation["responses"].get(&status).is_some(),
                "{method} {path} answered {status}, which its document does not list: {body}"
            );
            asked += 1;
        }
    }
    assert!(asked >= 11, "only {asked} operations");

    // And a route the process does not have is the catch-all, so the check above can tell.
    let missing = client.get(peer.url("/no-such-route")).send().unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.text().unwrap(), NOT_A_ROUTE);
}
