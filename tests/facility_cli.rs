//! The facility registry on the command line: `meldewerk facility add|set|list|show|deactivate|
//! activate|remove`, `meldewerk customer scope` and `meldewerk user customer`, on a stopped
//! server's data directory — messages, refusals, and what a server started afterwards answers
//! over its operator API.

mod common;

use common::operator::*;
use common::*;
use serde_json::{json, Value};

const BSNR: &str = "123456789";

fn add_args(bsnr: &str) -> Vec<&str> {
    vec![
        "facility",
        "add",
        bsnr,
        "--name",
        "Labor Süd",
        "--street",
        "Hauptstraße 5",
        "--postal-code",
        "10117",
        "--city",
        "Berlin",
        "--ik",
        "260326822",
    ]
}

fn show(dir: &DataDir, bsnr: &str) -> Value {
    serde_json::from_str(&ok(dir, &["facility", "show", bsnr])).unwrap()
}

#[test]
fn facilities_are_added_listed_changed_deactivated_and_removed() {
    let dir = DataDir::new();
    dir.add_user("labor");
    assert_eq!(ok(&dir, &add_args(BSNR)), "facility 123456789 added");
    let shown = show(&dir, BSNR);
    assert_eq!(shown["name"], "Labor Süd");
    assert_eq!(
        shown["address"],
        json!({"street": "Hauptstraße 5", "postalCode": "10117", "city": "Berlin", "country": "DE"})
    );
    assert_eq!(shown["ik"], "260326822");
    assert_eq!(shown["active"], true);
    assert_eq!(
        fails(&dir, &add_args(BSNR)),
        "error: facility 123456789 exists already; change it with `meldewerk facility set`"
    );

    let mut inactive = add_args("012345678");
    inactive.push("--inactive");
    ok(&dir, &inactive);
    let table = ok(&dir, &["facility", "list"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("BSNR"), "{table}");
    assert!(
        lines[1].starts_with("012345678  260326822  no ") && lines[1].contains("Labor Süd"),
        "{table}"
    );
    assert!(lines[2].starts_with("123456789  260326822  yes"), "{table}");
    let listed: Vec<Value> =
        serde_json::from_str(&ok(&dir, &["facility", "list", "--json"])).unwrap();
    assert_eq!(listed, [show(&dir, "012345678"), shown.clone()]);

    assert_eq!(
        ok(
            &dir,
            &[
                "facility",
                "set",
                BSNR,
                "--city",
                "Potsdam",
                "--postal-code",
                "14467"
            ]
        ),
        "facility 123456789 changed"
    );
    let changed = show(&dir, BSNR);
    assert_eq!(changed["address"]["city"], "Potsdam");
    assert_eq!(changed["address"]["postalCode"], "14467");
    assert_eq!(changed["name"], "Labor Süd");
    assert_eq!(changed["createdAt"], shown["createdAt"]);

    assert_eq!(
        ok(&dir, &["facility", "deactivate", BSNR]),
        "facility 123456789 deactivated: reports naming it are refused"
    );
    assert_eq!(show(&dir, BSNR)["active"], false);
    assert_eq!(
        ok(&dir, &["facility", "activate", BSNR]),
        "facility 123456789 activated: reports may name it"
    );
    assert_eq!(show(&dir, BSNR)["active"], true);

    assert_eq!(
        ok(&dir, &["facility", "remove", "012345678"]),
        "facility 012345678 removed"
    );
    assert_eq!(
        fails(&dir, &["facility", "remove", "012345678"]),
        "error: there is no facility 012345678"
    );
    assert_eq!(
        fails(&dir, &["facility", "show", "012345678"]),
        "error: there is no facility 012345678"
    );
}

#[test]
fn invalid_values_are_refused_all_at_once() {
    let dir = DataDir::new();
    dir.add_user("labor");
    assert_eq!(
        fails(&dir, &["facility", "show", "12"]),
        "error: invalid BSNR \"12\": must be exactly 9 digits"
    );
    assert_eq!(
        fails(
            &dir,
            &[
                "facility",
                "add",
                BSNR,
                "--name",
                " ",
                "--postal-code",
                "1011",
                "--ik",
                "x"
            ]
        ),
        "error: invalid facility: --name must not be empty; --street is required; \
         --postal-code must be 5 digits in Germany (country DE); --city is required; \
         --ik must be exactly 9 digits"
    );
    ok(&dir, &add_args(BSNR));
    assert_eq!(
        fails(&dir, &["facility", "set", BSNR]),
        "error: give at least one of --name, --street, --postal-code, --city, --country, --ik"
    );
    // A change is checked whole: another country asks another postal code of the stored one.
    assert_eq!(
        fails(&dir, &["facility", "set", BSNR, "--country", "de"]),
        "error: invalid facility: --country must be a country code of two capital letters \
         (ISO 3166-1 alpha-2, e.g. DE)"
    );
    assert_eq!(show(&dir, BSNR)["address"]["country"], "DE");
    assert_eq!(
        fails(&dir, &["customer", "scope", "K-1", "--ik", "26032682"]),
        "error: invalid IK \"26032682\": must be exactly 9 digits"
    );
    let usage = fails(&dir, &["customer", "scope", "K-1"]);
    assert!(usage.contains("--ik"), "{usage}");
    // Without a database nothing is created.
    let empty = DataDir::new();
    let said = fails(&empty, &["facility", "list"]);
    assert!(said.contains("has no meldewerk database"), "{said}");
}

#[test]
fn scopes_and_customers_set_on_the_command_line_are_what_the_server_answers() {
    let dir = DataDir::new();
    dir.add_user("labor");
    ok(&dir, &add_args(BSNR));
    ok(&dir, &["facility", "deactivate", BSNR]);
    assert_eq!(
        ok(
            &dir,
            &[
                "customer",
                "scope",
                "K-1",
                "--ik",
                "260326823",
                "--ik",
                "260326822"
            ]
        ),
        "customer K-1 may report for IK 260326822, 260326823"
    );
    assert_eq!(
        ok(&dir, &["customer", "scope", "K-1", "--show"]),
        "customer K-1 may report for IK 260326822, 260326823"
    );
    assert_eq!(
        ok(&dir, &["customer", "scope", "K-2", "--ik", "111111111"]),
        "customer K-2 may report for IK 111111111"
    );
    assert_eq!(
        ok(&dir, &["customer", "scope", "K-2", "--none"]),
        "customer K-2 may report for no facility"
    );
    assert_eq!(
        ok(&dir, &["user", "customer", "labor", "K-1"]),
        "labor belongs to customer K-1"
    );
    let users: Vec<Value> = serde_json::from_str(&ok(&dir, &["user", "list", "--json"])).unwrap();
    assert_eq!(users[0]["customer"], "K-1");
    assert_eq!(
        fails(&dir, &["user", "customer", "nobody", "K-1"]),
        "error: there is no user nobody"
    );

    let server = Server::start(&dir, &[]);
    let facility: Value = server
        .admin_get(&format!("/admin/api/v1/facilities/{BSNR}"))
        .json()
        .unwrap();
    assert_eq!(facility["active"], false);
    assert_eq!(facility["ik"], "260326822");
    assert_eq!(
        server
            .admin_get("/admin/api/v1/customers/K-1/scope")
            .json::<Value>()
            .unwrap(),
        json!({"customer": "K-1", "iks": ["260326822", "260326823"]})
    );
    assert_eq!(
        server
            .admin_get("/admin/api/v1/customers/K-2/scope")
            .json::<Value>()
            .unwrap(),
        json!({"customer": "K-2", "iks": []})
    );
    let users: Vec<Value> = server.admin_get("/admin/api/v1/users").json().unwrap();
    assert_eq!(users[0]["customer"], "K-1");
    // While the server runs, the command line keeps off its data directory.
    let said = fails(&dir, &["facility", "list"]);
    assert!(said.contains("is in use by another process"), "{said}");
    drop(server);
    assert_eq!(
        ok(&dir, &["user", "customer", "labor", "--none"]),
        "labor belongs to no customer"
    );
}
