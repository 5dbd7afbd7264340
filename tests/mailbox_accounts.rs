//! Court-mailbox accounts and grants in the operator API (`/admin/api/v1/mailbox-accounts…`,
//! `/admin/api/v1/users/{name}/mailbox-accounts`), against the real server over HTTP.
//!
//! Proves: accounts are created (201), replaced (200, `createdAt` kept, `active` kept when left
//! out), read, paged in id order and removed (204, then 404); bad ids, SAFE-IDs and bodies get
//! their exact `{"errors": [...]}` (all problems at once), a SAFE-ID of another account 409;
//! grants are given (201, then 200), refused for unknown accounts and users (404), taken back
//! (204, then 404), listed per user without another user's; an account still granted is not
//! removed (409) and a removed user's grants go with them; 401 without operator credentials, 403
//! from another site; and every change in the audit log.

mod common;

use common::operator::*;
use common::*;
use reqwest::blocking::Response;
use reqwest::Method;
use serde_json::{json, Value};

const ACCOUNTS: &str = "/admin/api/v1/mailbox-accounts";

/// `PUT /admin/api/v1/mailbox-accounts/{id}` with `body`.
fn put(server: &Server, id: &str, body: &Value) -> Response {
    operator(server, Method::PUT, &format!("{ACCOUNTS}/{id}"), Some(body))
}

/// `PUT` (grant) or `DELETE` (revoke) of `/admin/api/v1/mailbox-accounts/{id}/users/{user}`.
fn grant(server: &Server, method: Method, id: &str, user: &str) -> Response {
    operator(
        server,
        method,
        &format!("{ACCOUNTS}/{id}/users/{user}"),
        None,
    )
}

fn body(safe_id: &str, name: &str) -> Value {
    json!({ "safeId": safe_id, "name": name })
}

/// The account without its times.
fn without_times(mut account: Value) -> Value {
    let object = account.as_object_mut().unwrap();
    object.remove("createdAt");
    object.remove("updatedAt");
    account
}

/// The ids of a user's accounts, as the operator API lists them.
fn ids_of(server: &Server, user: &str) -> Vec<i64> {
    let response = server.admin_get(&format!("/admin/api/v1/users/{user}/mailbox-accounts"));
    assert_eq!(response.status(), 200, "{user}");
    let listed: Value = response.json().unwrap();
    assert_eq!(listed["user"], user);
    listed["mailboxAccounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["egvpAccountId"].as_i64().unwrap())
        .collect()
}

const SAFE_ID_RULE: &str = "must be a SAFE-ID such as DE.Justiz.1a2b-3c4d or DE.BRAK.1a2b3c (DE, a directory, an id of letters, digits, '.', '-', '_'), or safe-<digits>-<digits>, at most 128 characters";

#[test]
fn an_account_is_created_read_replaced_and_removed_each_change_audited() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let created = put(&server, "7", &body("DE.Justiz.sieben", "Betreuung Süd"));
    assert_eq!(created.status(), 201);
    let created: Value = created.json().unwrap();
    assert_eq!(created["updatedAt"], created["createdAt"]);
    assert_eq!(
        without_times(created.clone()),
        json!({
            "egvpAccountId": 7,
            "safeId": "DE.Justiz.sieben",
            "name": "Betreuung Süd",
            "active": true,
            "users": [],
        })
    );
    let read = server.admin_get(&format!("{ACCOUNTS}/7"));
    assert_eq!(read.status(), 200);
    assert_eq!(read.json::<Value>().unwrap(), created);

    // Deactivated by a replacement; a later one without `active` keeps it so.
    let mut deactivate = body("DE.Justiz.sieben", "Betreuung Süd");
    deactivate["active"] = json!(false);
    let replaced = put(&server, "7", &deactivate);
    assert_eq!(replaced.status(), 200);
    assert_eq!(replaced.json::<Value>().unwrap()["active"], false);
    let moved = put(&server, "7", &body("DE.BRAK.neu-1", "Betreuung Nord"));
    assert_eq!(moved.status(), 200);
    let moved: Value = moved.json().unwrap();
    assert_eq!(
        without_times(moved.clone()),
        json!({
            "egvpAccountId": 7,
            "safeId": "DE.BRAK.neu-1",
            "name": "Betreuung Nord",
            "active": false,
            "users": [],
        })
    );
    assert_eq!(moved["createdAt"], created["createdAt"]);

    assert_eq!(
        operator(&server, Method::DELETE, &format!("{ACCOUNTS}/7"), None).status(),
        204
    );
    let gone = ["there is no mailbox account 7"];
    assert_errors(server.admin_get(&format!("{ACCOUNTS}/7")), 404, &gone);
    assert_errors(
        operator(&server, Method::DELETE, &format!("{ACCOUNTS}/7"), None),
        404,
        &gone,
    );
    let account = "mailbox account 7";
    assert_eq!(
        audited(&server),
        [
            pair("add-mailbox-account", account),
            pair("change-mailbox-account", account),
            pair("change-mailbox-account", account),
            pair("remove-mailbox-account", account),
        ]
    );
}

#[test]
fn bad_ids_safe_ids_and_bodies_are_refused_and_nothing_is_stored() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    let valid = body("DE.Justiz.sieben", "Betreuung");
    for (id, problem) in [
        ("0", "egvpAccountId must be at least 1"),
        ("-4", "egvpAccountId must be at least 1"),
        ("abc", "egvpAccountId must be a positive whole number, written in digits without leading zeros"),
        ("1.5", "egvpAccountId must be a positive whole number, written in digits without leading zeros"),
        ("007", "egvpAccountId must be a positive whole number, written in digits without leading zeros"),
        ("9223372036854775808", "egvpAccountId must be at most 9223372036854775807"),
    ] {
        assert_errors(put(&server, id, &valid), 400, &[problem]);
        assert_errors(server.admin_get(&format!("{ACCOUNTS}/{id}")), 400, &[problem]);
        assert_errors(
            operator(&server, Method::DELETE, &format!("{ACCOUNTS}/{id}"), None),
            400,
            &[problem],
        );
    }
    for bad in [
        "DE.Justiz",
        "de.Justiz.x",
        "DE.Justiz.a b",
        "DE.Justiz.../x",
        "safe-12",
        "",
    ] {
        let safe_id_problem = format!("safeId {SAFE_ID_RULE}");
        assert_errors(
            put(&server, "7", &body(bad, "Betreuung")),
            400,
            &[safe_id_problem.as_str()],
        );
    }
    // Every problem at once: the id, unknown members, types, values.
    assert_errors(
        put(
            &server,
            "0",
            &json!({"egvpAccountId": 7, "safeId": 7, "name": " ", "active": "yes"}),
        ),
        400,
        &[
            "egvpAccountId must be at least 1",
            "egvpAccountId is not a known field",
            "active must be true or false",
            "safeId must be a string",
            "name must not be empty",
        ],
    );
    assert_errors(
        put(&server, "7", &json!({})),
        400,
        &["safeId must not be null", "name must not be null"],
    );
    assert_errors(
        put(
            &server,
            "7",
            &json!({"safeId": "DE.Justiz.x", "name": "a\u{7}"}),
        ),
        400,
        &["name must not contain control characters"],
    );
    let refused = server
        .client()
        .put(server.url(&format!("{ACCOUNTS}/7")))
        .basic_auth(OPERATOR.0, Some(OPERATOR.1))
        .header("content-type", "application/xml")
        .body(valid.to_string())
        .send()
        .unwrap();
    assert_errors(
        refused,
        415,
        &["the request body must be sent as Content-Type: application/json"],
    );
    let page: Value = server.admin_get(ACCOUNTS).json().unwrap();
    assert_eq!(page, json!({"mailboxAccounts": [], "next": null}));
    assert!(audited(&server).is_empty());

    // One account per mailbox, whatever the case of its SAFE-ID.
    assert_eq!(put(&server, "7", &valid).status(), 201);
    for taken in ["DE.Justiz.sieben", "DE.JUSTIZ.Sieben"] {
        assert_errors(
            put(&server, "8", &body(taken, "Doppelt")),
            409,
            &[format!("SAFE-ID {taken} is the mailbox of account 7").as_str()],
        );
    }
    assert_errors(
        server.admin_get(&format!("{ACCOUNTS}/8")),
        404,
        &["there is no mailbox account 8"],
    );
    assert_eq!(
        audited(&server),
        [pair("add-mailbox-account", "mailbox account 7")]
    );
}

#[test]
fn accounts_are_listed_in_id_order_page_by_page() {
    let dir = DataDir::new();
    let server = Server::start(&dir, &[]);
    for id in ["300", "2", "70000000000", "1"] {
        let created = put(&server, id, &body(&format!("DE.Justiz.a{id}"), "Betreuung"));
        assert_eq!(created.status(), 201);
    }
    let page = |query: &str| -> (Vec<i64>, Value) {
        let response = server.admin_get(&format!("{ACCOUNTS}{query}"));
        assert_eq!(response.status(), 200, "{query}");
        let page: Value = response.json().unwrap();
        let ids = page["mailboxAccounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["egvpAccountId"].as_i64().unwrap())
            .collect();
        (ids, page["next"].clone())
    };
    assert_eq!(page(""), (vec![1, 2, 300, 70_000_000_000], Value::Null));
    assert_eq!(page("?limit=2"), (vec![1, 2], json!(2)));
    assert_eq!(
        page("?after=2&limit=2"),
        (vec![300, 70_000_000_000], json!(70_000_000_000_i64))
    );
    assert_eq!(page("?after=70000000000"), (vec![], Value::Null));
    assert_errors(
        server.admin_get(&format!("{ACCOUNTS}?after=x")),
        400,
        &["after must be a positive whole number, written in digits without leading zeros"],
    );
}

#[test]
fn grants_are_given_listed_per_user_and_taken_back_without_leaking() {
    let dir = DataDir::new();
    dir.add_user("anna");
    dir.add_user("bert");
    let server = Server::start(&dir, &[]);
    assert_eq!(
        put(&server, "1", &body("DE.Justiz.eins", "Eins")).status(),
        201
    );
    assert_eq!(
        put(&server, "2", &body("DE.BRAK.zwei", "Zwei")).status(),
        201
    );

    let given = grant(&server, Method::PUT, "1", "anna");
    assert_eq!(given.status(), 201);
    assert_eq!(given.json::<Value>().unwrap()["users"], json!(["anna"]));
    let again = grant(&server, Method::PUT, "1", "anna");
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().unwrap()["users"], json!(["anna"]));
    assert_eq!(grant(&server, Method::PUT, "2", "bert").status(), 201);
    assert_eq!(ids_of(&server, "anna"), [1]);
    assert_eq!(ids_of(&server, "bert"), [2]);
    let of_anna: Value = server
        .admin_get("/admin/api/v1/users/anna/mailbox-accounts")
        .json()
        .unwrap();
    assert_eq!(
        without_times(of_anna["mailboxAccounts"][0].clone()),
        json!({"egvpAccountId": 1, "safeId": "DE.Justiz.eins", "name": "Eins", "active": true})
    );
    let second: Value = server.admin_get(&format!("{ACCOUNTS}/2")).json().unwrap();
    assert_eq!(second["users"], json!(["bert"]));

    // Unknown accounts and users, malformed ones.
    assert_errors(
        grant(&server, Method::PUT, "9", "anna"),
        404,
        &["there is no mailbox account 9"],
    );
    assert_errors(
        grant(&server, Method::PUT, "1", "carl"),
        404,
        &["there is no user carl"],
    );
    assert_errors(
        grant(&server, Method::PUT, "0", "a:b"),
        400,
        &[
            "egvpAccountId must be at least 1",
            r#"invalid user name "a:b": use 1 to 64 characters of A-Z a-z 0-9 . _ -"#,
        ],
    );
    assert_errors(
        server.admin_get("/admin/api/v1/users/carl/mailbox-accounts"),
        404,
        &["there is no user carl"],
    );

    // Still granted: not removed.
    assert_errors(
        operator(&server, Method::DELETE, &format!("{ACCOUNTS}/1"), None),
        409,
        &["mailbox account 1 is granted to 1 user (anna); revoke the grants first"],
    );
    assert_eq!(grant(&server, Method::DELETE, "1", "anna").status(), 204);
    assert_errors(
        grant(&server, Method::DELETE, "1", "anna"),
        404,
        &["user anna holds no grant for mailbox account 1"],
    );
    assert_eq!(ids_of(&server, "anna"), Vec::<i64>::new());
    assert_eq!(ids_of(&server, "bert"), [2]);
    assert_eq!(
        operator(&server, Method::DELETE, &format!("{ACCOUNTS}/1"), None).status(),
        204
    );

    // Removing a user takes their grants with them; the account can go afterwards.
    assert_eq!(
        operator(&server, Method::DELETE, "/admin/api/v1/users/bert", None).status(),
        204
    );
    let second: Value = server.admin_get(&format!("{ACCOUNTS}/2")).json().unwrap();
    assert_eq!(second["users"], json!([]));
    assert_errors(
        grant(&server, Method::PUT, "2", "bert"),
        404,
        &["there is no user bert"],
    );
    assert_eq!(
        operator(&server, Method::DELETE, &format!("{ACCOUNTS}/2"), None).status(),
        204
    );
    assert_eq!(
        audited(&server),
        [
            pair("add-mailbox-account", "mailbox account 1"),
            pair("add-mailbox-account", "mailbox account 2"),
            pair("grant-mailbox-account", "mailbox account 1 to user anna"),
            pair("grant-mailbox-account", "mailbox account 1 to user anna"),
            pair("grant-mailbox-account", "mailbox account 2 to user bert"),
            pair("revoke-mailbox-account", "mailbox account 1 from user anna"),
            pair("remove-mailbox-account", "mailbox account 1"),
            pair("remove-user", "user bert"),
            pair("remove-mailbox-account", "mailbox account 2"),
        ]
    );
}

#[test]
fn every_endpoint_needs_operator_credentials_and_changes_refuse_other_sites() {
    let dir = DataDir::new();
    dir.add_user("anna");
    let server = Server::start(&dir, &[]);
    assert_eq!(
        put(&server, "7", &body("DE.Justiz.sieben", "Sieben")).status(),
        201
    );
    let account = format!("{ACCOUNTS}/7");
    let user = format!("{account}/users/anna");
    let attempts = [
        (Method::GET, ACCOUNTS.to_string(), None),
        (Method::GET, account.clone(), None),
        (
            Method::PUT,
            account.clone(),
            Some(body("DE.Justiz.x", "Fremd")),
        ),
        (Method::DELETE, account.clone(), None),
        (Method::PUT, user.clone(), None),
        (Method::DELETE, user.clone(), None),
        (
            Method::GET,
            "/admin/api/v1/users/anna/mailbox-accounts".into(),
            None,
        ),
    ];
    assert_operator_routes(&server, &attempts, "anna");
    // Nothing changed.
    let read: Value = server.admin_get(&account).json().unwrap();
    assert_eq!(read["name"], "Sieben");
    assert_eq!(read["users"], json!([]));
    assert_eq!(
        audited(&server),
        [pair("add-mailbox-account", "mailbox account 7")]
    );
}
