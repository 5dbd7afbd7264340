//! The facility registry and customer scopes in the operator API (`/admin/api/v1/facilities…`,
//! `/admin/api/v1/customers/{customer}/scope`, `/admin/api/v1/users/{name}/customer`), against
//! the real server over HTTP.
//!
//! Proves: facilities are created (201), replaced (200, `createdAt` kept, `active` kept when left
//! out), read, paged in BSNR order and removed (204, then 404); every validation rule with its
//! exact `{"errors": [...]}`, all problems at once; bodies read strictly (415, 413, duplicates);
//! scopes set, cleared and refused; a user's customer set and removed; 401 without operator
//! credentials, 403 from another site; and every change in the audit log.

mod common;

use common::operator::*;
use common::*;
use reqwest::blocking::Response;
use reqwest::Method;
use serde_json::{json, Value};

const FACILITIES: &str = "/admin/api/v1/facilities";

/// `PUT /admin/api/v1/facilities/{bsnr}` with `body`.
fn put(server: &Server, bsnr: &str, body: &Value) -> Response {
    operator(
        server,
        Method::PUT,
        &format!("{FACILITIES}/{bsnr}"),
        Some(body),
    )
}

/// A valid body for a facility.
fn body(name: &str, ik: &str) -> Value {
    json!({
        "name": name,
        "address": {"street": "Hauptstraße 5", "postalCode": "10117", "city": "Berlin", "country": "DE"},
        "ik": ik,
    })
}

#[test]
fn a_facility_is_created_read_replaced_and_removed_each_change_audited() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let created = put(&server, "123456789", &body("Labor Süd", "260326822"));
    assert_eq!(created.status(), 201);
    let created: Value = created.json().unwrap();
    let created_at = created["createdAt"].as_str().unwrap().to_owned();
    assert_eq!(created["updatedAt"], created["createdAt"]);
    let without_times = |mut facility: Value| {
        let object = facility.as_object_mut().unwrap();
        object.remove("createdAt");
        object.remove("updatedAt");
        facility
    };
    let expected = json!({
        "bsnr": "123456789",
        "name": "Labor Süd",
        "address": {"street": "Hauptstraße 5", "postalCode": "10117", "city": "Berlin", "country": "DE"},
        "ik": "260326822",
        "active": true,
    });
    assert_eq!(without_times(created.clone()), expected);
    let read = server.admin_get(&format!("{FACILITIES}/123456789"));
    assert_eq!(read.status(), 200);
    assert_eq!(read.json::<Value>().unwrap(), created);

    // Deactivated by a replacement; a later replacement without `active` keeps it so.
    let mut deactivate = body("Labor Süd", "260326822");
    deactivate["active"] = json!(false);
    let replaced = put(&server, "123456789", &deactivate);
    assert_eq!(replaced.status(), 200);
    let replaced: Value = replaced.json().unwrap();
    assert_eq!(replaced["active"], false);
    assert_eq!(replaced["createdAt"], created_at.as_str());
    let moved = put(&server, "123456789", &body("Labor Nord", "260326823"));
    assert_eq!(moved.status(), 200);
    let moved: Value = moved.json().unwrap();
    assert_eq!(
        without_times(moved.clone()),
        json!({
            "bsnr": "123456789",
            "name": "Labor Nord",
            "address": {"street": "Hauptstraße 5", "postalCode": "10117", "city": "Berlin", "country": "DE"},
            "ik": "260326823",
            "active": false,
        })
    );
    assert_eq!(moved["createdAt"], created_at.as_str());

    let removed = operator(
        &server,
        Method::DELETE,
        &format!("{FACILITIES}/123456789"),
        None,
    );
    assert_eq!(removed.status(), 204);
    let gone = [r#"facility 123456789 not found"#];
    assert_errors(
        server.admin_get(&format!("{FACILITIES}/123456789")),
        404,
        &gone,
    );
    assert_errors(
        operator(
            &server,
            Method::DELETE,
            &format!("{FACILITIES}/123456789"),
            None,
        ),
        404,
        &gone,
    );
    assert_eq!(
        audited(&server),
        [
            pair("add-facility", "facility 123456789"),
            pair("change-facility", "facility 123456789"),
            pair("change-facility", "facility 123456789"),
            pair("remove-facility", "facility 123456789"),
        ]
    );
}

#[test]
fn every_problem_of_a_facility_is_answered_at_once_and_nothing_is_stored() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    assert_errors(
        put(&server, "12345678x", &json!({})),
        400,
        &[
            "bsnr must be exactly 9 digits",
            "address must not be null",
            "name must not be null",
            "ik must not be null",
        ],
    );
    assert_errors(
        put(
            &server,
            "123456789",
            &json!({
                "name": "  ",
                "address": {"street": 5, "postalCode": "1011_", "city": "x".repeat(201), "country": "de", "zip": "1"},
                "ik": "26032682",
                "active": "yes",
                "bsnr": "123456789",
            }),
        ),
        400,
        &[
            "bsnr is not a known field",
            "address.zip is not a known field",
            "active must be true or false",
            "address.street must be a string",
            "name must not be empty",
            "address.country must be a country code of two capital letters (ISO 3166-1 alpha-2, e.g. DE)",
            "address.postalCode must have 1 to 12 letters, digits, spaces or hyphens",
            "address.city must have at most 200 characters",
            "ik must be exactly 9 digits",
        ],
    );
    assert_errors(
        put(
            &server,
            "123456789",
            &json!({"name": "Labor\u{7}", "address": [], "ik": 260326822}),
        ),
        400,
        &[
            "address must be an object",
            "ik must be a string",
            "name must not contain control characters",
        ],
    );
    let mut german = body("Labor", "260326822");
    german["address"]["postalCode"] = json!("1011");
    assert_errors(
        put(&server, "123456789", &german),
        400,
        &["address.postalCode must be 5 digits in Germany (country DE)"],
    );
    assert_errors(
        put(&server, "123456789", &json!(["not", "an", "object"])),
        400,
        &["the body must be a JSON object"],
    );
    // Read strictly, as every JSON endpoint.
    let raw = |content_type: &str, text: String| {
        server
            .client()
            .put(server.url(&format!("{FACILITIES}/123456789")))
            .basic_auth(OPERATOR.0, Some(OPERATOR.1))
            .header("content-type", content_type)
            .body(text)
            .send()
            .unwrap()
    };
    let valid = body("Labor", "260326822").to_string();
    assert_errors(
        raw("application/xml", valid.clone()),
        415,
        &["the request body must be sent as Content-Type: application/json"],
    );
    let twice = valid.replacen('{', r#"{"ik": "111111111", "#, 1);
    let refused = raw("application/json", twice);
    assert_eq!(refused.status(), 400);
    let said = refused.json::<Value>().unwrap()["errors"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        said.starts_with("invalid JSON: duplicate member \"ik\""),
        "{said}"
    );
    let huge = json!({"name": "x".repeat(300_000)}).to_string();
    assert_errors(
        raw("application/json", huge),
        413,
        &["request body exceeds 262144 bytes"],
    );
    // Nothing of it was stored.
    let page: Value = server.admin_get(FACILITIES).json().unwrap();
    assert_eq!(page, json!({"facilities": [], "next": null}));
    assert!(audited(&server).is_empty());
    // A path that is no BSNR is refused before anything is looked up.
    let bad = ["bsnr must be exactly 9 digits"];
    assert_errors(server.admin_get(&format!("{FACILITIES}/1234")), 400, &bad);
    assert_errors(
        operator(&server, Method::DELETE, &format!("{FACILITIES}/abc"), None),
        400,
        &bad,
    );
}

#[test]
fn facilities_are_listed_in_bsnr_order_page_by_page() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    for bsnr in [
        "300000000",
        "012345678",
        "200000000",
        "100000000",
        "999999999",
    ] {
        assert_eq!(
            put(&server, bsnr, &body(&format!("Labor {bsnr}"), "260326822")).status(),
            201
        );
    }
    let page = |query: &str| -> (Vec<String>, Value) {
        let response = server.admin_get(&format!("{FACILITIES}{query}"));
        assert_eq!(response.status(), 200, "{query}");
        let page: Value = response.json().unwrap();
        let bsnrs = page["facilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["bsnr"].as_str().unwrap().to_owned())
            .collect();
        (bsnrs, page["next"].clone())
    };
    assert_eq!(
        page(""),
        (
            vec![
                "012345678".into(),
                "100000000".into(),
                "200000000".into(),
                "300000000".into(),
                "999999999".into()
            ],
            Value::Null
        )
    );
    assert_eq!(
        page("?limit=2"),
        (
            vec!["012345678".into(), "100000000".into()],
            json!("100000000")
        )
    );
    assert_eq!(
        page("?after=100000000&limit=2"),
        (
            vec!["200000000".into(), "300000000".into()],
            json!("300000000")
        )
    );
    assert_eq!(
        page("?after=300000000&limit=2"),
        (vec!["999999999".into()], Value::Null)
    );
    // After the last BSNR the page is empty.
    assert_eq!(page("?after=999999999"), (vec![], Value::Null));
    assert_errors(
        server.admin_get(&format!("{FACILITIES}?limit=0")),
        400,
        &["limit must be from 1 to 1000"],
    );
    assert_errors(
        server.admin_get(&format!("{FACILITIES}?after=12")),
        400,
        &["after must be exactly 9 digits"],
    );
}

#[test]
fn a_customer_scope_is_set_read_cleared_and_checked() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let scope = "/admin/api/v1/customers/K-1/scope";
    let read = |path: &str| -> Value {
        let response = server.admin_get(path);
        assert_eq!(response.status(), 200);
        response.json().unwrap()
    };
    assert_eq!(read(scope), json!({"customer": "K-1", "iks": []}));
    let set = operator(
        &server,
        Method::PUT,
        scope,
        Some(&json!({"iks": ["260326823", "260326822"]})),
    );
    assert_eq!(set.status(), 200);
    let expected = json!({"customer": "K-1", "iks": ["260326822", "260326823"]});
    assert_eq!(set.json::<Value>().unwrap(), expected);
    assert_eq!(read(scope), expected);
    // Customer ids are the users' free text: a space travels percent-encoded.
    assert_eq!(
        read("/admin/api/v1/customers/Klinik%20S%C3%BCd/scope"),
        json!({"customer": "Klinik Süd", "iks": []})
    );

    let refused = |body: Value, errors: &[&str]| {
        assert_errors(
            operator(&server, Method::PUT, scope, Some(&body)),
            400,
            errors,
        )
    };
    refused(json!({}), &["iks must not be null"]);
    refused(
        json!({"iks": "260326822"}),
        &["iks must be an array of strings"],
    );
    refused(
        json!({"iks": ["260326822", 5, "2603268", "260326822"], "customer": "K-2"}),
        &[
            "customer is not a known field",
            "iks[1] must be a string",
            "iks[2] must be exactly 9 digits",
            "iks[3] 260326822 is listed twice",
        ],
    );
    assert_errors(
        operator(
            &server,
            Method::PUT,
            "/admin/api/v1/customers/%20/scope",
            Some(&json!({"iks": []})),
        ),
        400,
        &["the customer must not be empty"],
    );
    assert_eq!(read(scope), expected, "nothing refused was stored");

    let cleared = operator(&server, Method::PUT, scope, Some(&json!({"iks": []})));
    assert_eq!(cleared.status(), 200);
    assert_eq!(
        cleared.json::<Value>().unwrap(),
        json!({"customer": "K-1", "iks": []})
    );
    assert_eq!(read(scope), json!({"customer": "K-1", "iks": []}));
    assert_eq!(
        audited(&server),
        [
            pair("set-scope", "customer K-1"),
            pair("set-scope", "customer K-1")
        ]
    );
}

#[test]
fn an_operator_sets_and_removes_the_customer_of_a_user() {
    let dir = DataDir::new();
    dir.add_user("labor");
    let server = Server::start(&dir, &[]);
    let customer = "/admin/api/v1/users/labor/customer";
    let customer_of = || -> Value {
        let users: Vec<Value> = server.admin_get("/admin/api/v1/users").json().unwrap();
        users[0]["customer"].clone()
    };
    assert_eq!(customer_of(), Value::Null);
    let set = operator(
        &server,
        Method::PUT,
        customer,
        Some(&json!({"customer": "K-1"})),
    );
    assert_eq!(set.status(), 204);
    assert_eq!(customer_of(), "K-1");
    for (body, errors) in [
        (
            json!({}),
            vec!["customer is required: an id, or null to remove it"],
        ),
        (json!({"customer": ""}), vec!["customer must not be empty"]),
        (json!({"customer": 7}), vec!["customer must be a string"]),
        // As the scopes take customer ids, or the user could never match one.
        (
            json!({"customer": "K-2 "}),
            vec!["invalid customer: the customer must not begin or end with a space"],
        ),
        (
            json!({"customer": "K\u{7}2"}),
            vec!["invalid customer: the customer must not contain control characters"],
        ),
        (
            json!({"customer": "K-2", "name": "x"}),
            vec!["name is not a known field"],
        ),
    ] {
        assert_errors(
            operator(&server, Method::PUT, customer, Some(&body)),
            400,
            &errors,
        );
    }
    assert_errors(
        operator(
            &server,
            Method::PUT,
            "/admin/api/v1/users/nobody/customer",
            Some(&json!({"customer": "K-1"})),
        ),
        404,
        &["there is no user nobody"],
    );
    assert_eq!(customer_of(), "K-1", "nothing refused was stored");
    let removed = operator(
        &server,
        Method::PUT,
        customer,
        Some(&json!({"customer": null})),
    );
    assert_eq!(removed.status(), 204);
    assert_eq!(customer_of(), Value::Null);
    assert_eq!(
        audited(&server),
        [
            pair("set-customer", "user labor"),
            pair("remove-customer", "user labor")
        ]
    );
}

#[test]
fn every_endpoint_needs_operator_credentials_and_changes_refuse_other_sites() {
    let dir = DataDir::new();
    dir.add_user("labor");
    let server = Server::start(&dir, &[]);
    assert_eq!(
        put(&server, "123456789", &body("Labor", "260326822")).status(),
        201
    );
    let facility = format!("{FACILITIES}/123456789");
    let scope = "/admin/api/v1/customers/K-1/scope".to_string();
    let attempts = [
        (Method::GET, FACILITIES.to_string(), None),
        (Method::GET, facility.clone(), None),
        (
            Method::PUT,
            facility.clone(),
            Some(body("Eindringling", "999999999")),
        ),
        (Method::DELETE, facility.clone(), None),
        (Method::GET, scope.clone(), None),
        (
            Method::PUT,
            scope.clone(),
            Some(json!({"iks": ["999999999"]})),
        ),
        (
            Method::PUT,
            "/admin/api/v1/users/labor/customer".to_string(),
            Some(json!({"customer": "K-9"})),
        ),
    ];
    assert_operator_routes(&server, &attempts, "labor");
    // Nothing changed.
    let read: Value = server.admin_get(&facility).json().unwrap();
    assert_eq!(read["name"], "Labor");
    assert_eq!(
        server.admin_get(&scope).json::<Value>().unwrap(),
        json!({"customer": "K-1", "iks": []})
    );
    assert_eq!(
        audited(&server),
        [pair("add-facility", "facility 123456789")]
    );
}
