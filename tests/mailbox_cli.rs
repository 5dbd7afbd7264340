//! Court-mailbox accounts on the command line: `meldewerk mailbox add|set|list|show|activate|
//! deactivate|remove|grant|revoke`, on a stopped server's data directory — messages, refusals
//! (bad ids and SAFE-IDs, duplicates, unknown users, an account still granted), grants per user,
//! a removed user's grants, and what a server started afterwards answers over its operator API,
//! audit log included.

mod common;

use common::operator::*;
use common::*;
use serde_json::{json, Value};

fn show(dir: &DataDir, id: &str) -> Value {
    serde_json::from_str(&ok(dir, &["mailbox", "show", id])).unwrap()
}

fn add(dir: &DataDir, id: &str, safe_id: &str) -> String {
    ok(
        dir,
        &[
            "mailbox",
            "add",
            id,
            "--safe-id",
            safe_id,
            "--name",
            "Betreuung Süd",
        ],
    )
}

#[test]
fn accounts_are_added_listed_changed_deactivated_and_removed() {
    let dir = DataDir::new();
    dir.add_user("anna");
    assert_eq!(
        add(&dir, "7", "DE.Justiz.sieben"),
        "mailbox account 7 added"
    );
    let shown = show(&dir, "7");
    assert_eq!(shown["egvpAccountId"], 7);
    assert_eq!(shown["safeId"], "DE.Justiz.sieben");
    assert_eq!(shown["name"], "Betreuung Süd");
    assert_eq!(shown["active"], true);
    assert_eq!(shown["users"], json!([]));
    assert_eq!(
        fails(
            &dir,
            &[
                "mailbox",
                "add",
                "7",
                "--safe-id",
                "DE.Justiz.x",
                "--name",
                "x"
            ]
        ),
        "error: mailbox account 7 exists already; change it with `meldewerk mailbox set`"
    );
    ok(
        &dir,
        &[
            "mailbox",
            "add",
            "12",
            "--safe-id",
            "safe-1234567890123-12345678",
            "--name",
            "Alt",
            "--inactive",
        ],
    );
    let table = ok(&dir, &["mailbox", "list"]);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("ID "), "{table}");
    assert!(
        lines[1].starts_with("7 ") && lines[1].contains("DE.Justiz.sieben"),
        "{table}"
    );
    assert!(lines[1].contains(" yes "), "{table}");
    assert!(
        lines[2].starts_with("12 ") && lines[2].contains(" no "),
        "{table}"
    );
    let listed: Vec<Value> =
        serde_json::from_str(&ok(&dir, &["mailbox", "list", "--json"])).unwrap();
    assert_eq!(listed, [shown.clone(), show(&dir, "12")]);

    assert_eq!(
        ok(&dir, &["mailbox", "set", "7", "--name", "Betreuung Nord"]),
        "mailbox account 7 changed"
    );
    let changed = show(&dir, "7");
    assert_eq!(changed["name"], "Betreuung Nord");
    assert_eq!(changed["safeId"], "DE.Justiz.sieben");
    assert_eq!(changed["createdAt"], shown["createdAt"]);
    assert_eq!(
        fails(&dir, &["mailbox", "set", "7"]),
        "error: give --safe-id, --name or both"
    );
    assert_eq!(
        ok(&dir, &["mailbox", "deactivate", "7"]),
        "mailbox account 7 deactivated: nothing is sent through it; its users still see its messages"
    );
    assert_eq!(show(&dir, "7")["active"], false);
    assert_eq!(
        ok(&dir, &["mailbox", "activate", "7"]),
        "mailbox account 7 activated"
    );
    assert_eq!(show(&dir, "7")["active"], true);
    assert_eq!(
        ok(&dir, &["mailbox", "remove", "12"]),
        "mailbox account 12 removed"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "remove", "12"]),
        "error: there is no mailbox account 12"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "show", "12"]),
        "error: there is no mailbox account 12"
    );
}

#[test]
fn bad_ids_safe_ids_duplicates_and_unknown_users_are_refused() {
    let dir = DataDir::new();
    dir.add_user("anna");
    for (id, problem) in [
        ("0", "the account id must be at least 1"),
        ("-3", "the account id must be at least 1"),
        ("x7", "the account id must be a positive whole number, written in digits without leading zeros"),
        ("2.5", "the account id must be a positive whole number, written in digits without leading zeros"),
        ("99999999999999999999", "the account id must be at most 9223372036854775807"),
    ] {
        assert_eq!(
            fails(
                &dir,
                &["mailbox", "add", id, "--safe-id", "DE.Justiz.x", "--name", "x"]
            ),
            format!("error: invalid account id: {problem}")
        );
        assert_eq!(
            fails(&dir, &["mailbox", "grant", id, "anna"]),
            format!("error: invalid account id: {problem}")
        );
    }
    assert_eq!(
        fails(&dir, &["mailbox", "add", "7", "--safe-id", "DE.Justiz"]),
        "error: invalid mailbox account: --safe-id must be a SAFE-ID such as DE.Justiz.1a2b-3c4d \
         or DE.BRAK.1a2b3c (DE, a directory, an id of letters, digits, '.', '-', '_'), or \
         safe-<digits>-<digits>, at most 128 characters; --name is required"
    );
    add(&dir, "7", "DE.BRAK.sieben");
    assert_eq!(
        fails(
            &dir,
            &[
                "mailbox",
                "add",
                "8",
                "--safe-id",
                "DE.brak.SIEBEN",
                "--name",
                "x"
            ]
        ),
        "error: SAFE-ID DE.brak.SIEBEN is the mailbox of account 7"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "grant", "7", "carl"]),
        "error: there is no user carl"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "grant", "9", "anna"]),
        "error: there is no mailbox account 9"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "grant", "7", "a b"]),
        r#"error: invalid user name "a b": use 1 to 64 characters of A-Z a-z 0-9 . _ -"#
    );
    assert_eq!(
        fails(&dir, &["mailbox", "list", "--user", "carl"]),
        "error: there is no user carl"
    );
}

#[test]
fn grants_are_per_user_go_with_a_removed_user_and_are_audited() {
    let dir = DataDir::new();
    dir.add_user("anna");
    dir.add_user("bert");
    add(&dir, "1", "DE.Justiz.eins");
    add(&dir, "2", "DE.Justiz.zwei");
    assert_eq!(
        ok(&dir, &["mailbox", "grant", "1", "anna"]),
        "anna may now use mailbox account 1"
    );
    assert_eq!(
        ok(&dir, &["mailbox", "grant", "1", "anna"]),
        "anna may use mailbox account 1 already"
    );
    ok(&dir, &["mailbox", "grant", "2", "bert"]);
    let ids_of = |user: &str| -> Vec<i64> {
        let listed: Vec<Value> =
            serde_json::from_str(&ok(&dir, &["mailbox", "list", "--user", user, "--json"]))
                .unwrap();
        listed
            .iter()
            .map(|a| a["egvpAccountId"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids_of("anna"), [1]);
    assert_eq!(ids_of("bert"), [2]);
    assert_eq!(
        fails(&dir, &["mailbox", "remove", "1"]),
        "error: mailbox account 1 is granted to 1 user (anna); revoke the grants first"
    );
    assert_eq!(
        ok(&dir, &["mailbox", "revoke", "1", "anna"]),
        "anna may no longer use mailbox account 1"
    );
    assert_eq!(
        fails(&dir, &["mailbox", "revoke", "1", "anna"]),
        "error: user anna holds no grant for mailbox account 1"
    );
    assert_eq!(ids_of("anna"), Vec::<i64>::new());
    ok(&dir, &["user", "remove", "bert"]);
    assert_eq!(show(&dir, "2")["users"], json!([]));
    ok(&dir, &["mailbox", "remove", "2"]);

    // The server started afterwards answers the same, and the log names the command line.
    let server = Server::start(&dir, &[]);
    let first: Value = server
        .admin_get("/admin/api/v1/mailbox-accounts/1")
        .json()
        .unwrap();
    assert_eq!(first["safeId"], "DE.Justiz.eins");
    assert_eq!(first["users"], json!([]));
    let entries: Vec<(String, String)> = audit_entries(&server)
        .into_iter()
        .map(|(who, action, target)| {
            assert!(who.starts_with("command line ("), "{who}");
            (action, target)
        })
        .collect();
    assert_eq!(
        entries,
        [
            pair("add-mailbox-account", "mailbox account 1"),
            pair("add-mailbox-account", "mailbox account 2"),
            pair("grant-mailbox-account", "mailbox account 1 to user anna"),
            pair("grant-mailbox-account", "mailbox account 1 to user anna"),
            pair("grant-mailbox-account", "mailbox account 2 to user bert"),
            pair("revoke-mailbox-account", "mailbox account 1 from user anna"),
            pair("remove-mailbox-account", "mailbox account 2"),
        ]
    );
}
