//! The OpenAPI documents as an integrator finds them: served without credentials, one per
//! module and one for the whole service, each a valid OpenAPI 3.1 document to a validator
//! nobody here wrote (Python's `openapi-spec-validator`, installed by the test command), and
//! browsable in Swagger UI, whose assets the service serves itself.

mod common;

use std::process::Command;

use common::browser::Chromium;
use common::*;
use serde_json::Value;

fn get(server: &Server, path: &str) -> reqwest::blocking::Response {
    loopback_client()
        .build()
        .unwrap()
        .get(server.url(path))
        .send()
        .unwrap()
}

/// `openapi-spec-validator`'s verdict on `document`.
fn validate(document: &Value) -> Result<(), String> {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), document.to_string()).unwrap();
    let output = Command::new("python3")
        .args(["-c", "import sys, json\nfrom openapi_spec_validator import validate\nvalidate(json.load(open(sys.argv[1])))"])
        .arg(file.path())
        .output()
        .expect("python3 with openapi-spec-validator (scripts/test.sh installs it)");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

#[test]
fn every_document_is_served_and_valid_openapi_3_1() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let combined: Value = get(&server, "/api-docs/openapi.json").json().unwrap();
    assert_eq!(combined["openapi"], "3.1.0");
    validate(&combined).unwrap();
    let paths = combined["paths"].as_object().unwrap();
    for module in MODULES {
        let response = get(&server, &format!("/api-docs/{module}/openapi.json"));
        assert_eq!(response.status(), 200, "{module}");
        let document: Value = response.json().unwrap();
        validate(&document).unwrap_or_else(|e| panic!("{module}: {e}"));
        assert_eq!(document["openapi"], "3.1.0");
        // Each module's API is in its own document and in the combined one.
        for tail in ["memento", "reports", "reports/{id}"] {
            let path = format!("/api/{module}/v1/{tail}");
            assert!(
                document["paths"].get(&path).is_some(),
                "{module} lacks {path}"
            );
            assert!(
                paths.contains_key(&path),
                "the combined document lacks {path}"
            );
        }
        assert!(
            document["components"]["securitySchemes"]["apiUser"]["scheme"] == "basic",
            "{module}"
        );
    }
    assert_eq!(
        get(&server, "/api-docs/nosuchmodule/openapi.json").status(),
        404
    );
}

#[test]
fn a_memento_request_is_described_field_by_field() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let document: Value = get(&server, "/api-docs/birthnotice/openapi.json")
        .json()
        .unwrap();
    let request = &document["components"]["schemas"]["MementoRequest"];
    assert_eq!(request["required"], serde_json::json!(["id"]));
    assert_eq!(request["additionalProperties"], false);
    let id = &request["properties"]["id"];
    assert_eq!(id["maxLength"], 128);
    assert_eq!(
        id["not"]["anyOf"][1]["enum"],
        serde_json::json!([
            "BIRTHNOTICE-TEST-SUCCESS",
            "BIRTHNOTICE-TEST-PENDING",
            "BIRTHNOTICE-TEST-FAILURE"
        ])
    );
    let day = &request["properties"]["geburtsangaben"]["properties"]["tag"];
    assert_eq!(day["format"], "date");
    assert_eq!(day["type"], serde_json::json!(["string", "null"]));
    // The result and the error bodies of the contract.
    let result = &document["components"]["schemas"]["ReportResult"];
    assert_eq!(
        result["properties"]["status"]["enum"],
        serde_json::json!(["SUCCESS", "FAILURE", "PENDING"])
    );
    assert!(result["properties"]["clientReference"].is_object());
    let memento = &document["paths"]["/api/birthnotice/v1/memento"]["post"]["responses"];
    assert_eq!(
        memento["400"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/PlainErrors"
    );
    let problem: Value = get(&server, "/api-docs/birthdata/openapi.json")
        .json()
        .unwrap();
    let bad = &problem["paths"]["/api/birthdata/v1/memento"]["post"]["responses"]["400"];
    assert!(
        bad["content"]["application/problem+json"].is_object(),
        "{bad}"
    );
    let court: Value = get(&server, "/api-docs/guardianship/openapi.json")
        .json()
        .unwrap();
    let errors = &court["components"]["schemas"]["SummarisedErrors"];
    assert_eq!(errors["required"], serde_json::json!(["error", "errors"]));
}

#[test]
fn a_known_path_under_another_method_is_405_with_allow() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let client = loopback_client().build().unwrap();
    let response = client.delete(server.url("/healthz")).send().unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET");
    let body: Value = response.json().unwrap();
    assert_eq!(body["errors"][0], "method not allowed; use GET");
    // An encoded spelling of the path is the path, as routing reads it.
    let response = client.delete(server.url("/health%7A")).send().unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET");
    let response = client.post(server.url("/nowhere")).send().unwrap();
    assert_eq!(response.status(), 404);
}

#[test]
fn swagger_ui_shows_every_document_from_the_service_itself() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let browser = Chromium::desktop("api-docs");
    browser.goto(&server.url("/api-docs/"));
    browser.wait_for(".opblock");
    let text = browser.page_text();
    assert!(text.contains("/api/birthnotice/v1/memento"), "{text}");
    assert!(text.contains("/healthz"), "{text}");
    // The drop-down offers each module's document.
    let options: Vec<String> = browser
        .find_all("#select option")
        .iter()
        .map(|o| browser.block_on(o.text()).unwrap())
        .collect();
    for module in MODULES {
        assert!(options.iter().any(|o| o == module), "{options:?}");
    }
    browser.screenshot("swagger-ui");
}
