//! The dashboard of a node that shares its database with another, in a real headless Chromium
//! (tests/common/browser.rs) at desktop and phone size: the overview lists both nodes, marks the
//! one that answers, says which actors stand by because the other node leads their work, and
//! shows a node killed with SIGKILL as lost once its heartbeat is overdue. Screenshots land in
//! `target/browser-screenshots/nodes-*.png`.

mod common;

use common::browser::Chromium;
use common::*;
use meldewerk_storage::postgres::testing::cluster;
use serde_json::json;

/// `path` of `server` with the operator's credentials in the URL.
fn as_operator(server: &Server, path: &str) -> String {
    server.url(path).replacen(
        "http://",
        &format!("http://{}:{}@", OPERATOR.0, OPERATOR.1),
        1,
    )
}

/// The rows of the nodes table: each row's cells' text.
fn node_rows(browser: &Chromium) -> Vec<Vec<String>> {
    let rows = browser.execute(
        "return [...document.querySelectorAll('#nodes tbody tr')]
             .map(r => [...r.querySelectorAll('td')].map(c => c.innerText.trim()))",
        vec![],
    );
    serde_json::from_value(rows).unwrap()
}

#[test]
fn browser_dashboard_lists_every_node_on_the_database() {
    let url = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database());
    let store = on_database(&url, [9; 32]);
    let start = |dir: &DataDir, name: &str| {
        Server::start(
            dir,
            &[
                ("MELDEWERK_STORE__LEASE_SECS", "3"),
                ("MELDEWERK_NODE__NAME", name),
            ],
        )
    };
    let (dir_a, dir_b) = (DataDir::sharing(&store), DataDir::sharing(&store));
    let a = start(&dir_a, "node-a");
    let b = start(&dir_b, "node-b");
    // Both have published their health once (every 5 s).
    wait_until("both nodes to publish their health", || {
        let listed: serde_json::Value = a.admin_get("/admin/api/v1/nodes").json().unwrap();
        let nodes = listed["nodes"].as_array().unwrap().clone();
        (nodes.len() == 2 && nodes.iter().all(|n| n["health"]["actors"].is_array())).then_some(())
    });

    for (browser, screen) in [
        (Chromium::desktop("nodes-desktop"), "desktop"),
        (Chromium::phone("nodes-phone"), "phone"),
    ] {
        browser.goto(&as_operator(&a, "/admin/"));
        browser.wait_for_page("/admin/");
        let rows = node_rows(&browser);
        assert_eq!(rows.len(), 2, "{screen}: {rows:?}");
        assert_eq!(rows[0][0], "node-a (this node)", "{screen}");
        assert_eq!(rows[1][0], "node-b", "{screen}");
        assert!(rows.iter().all(|r| r[1] == "alive"), "{screen}: {rows:?}");
        // Each periodic task is led by one of the two: what one leads, the other stands by for.
        let standing_by = |row: &Vec<String>| -> usize {
            let text = &row[5];
            let words: Vec<&str> = text.split(", ").collect();
            words[2].trim_end_matches(" standing by").parse().unwrap()
        };
        assert!(
            standing_by(&rows[0]) + standing_by(&rows[1]) >= 3,
            "{screen}: {rows:?}"
        );
        let fits = browser.execute(
            "return document.documentElement.scrollWidth <= window.innerWidth",
            vec![],
        );
        assert_eq!(fits, json!(true), "{screen}: nothing to scroll sideways");
        browser.screenshot("overview");
    }

    // A pause from node-a's dashboard holds on both, and the page says so.
    let browser = Chromium::desktop("nodes-paused");
    browser.goto(&as_operator(&a, "/admin/"));
    browser.wait_for_page("/admin/");
    browser.click("#module-birthnotice button");
    browser.wait_for_page("/admin/");
    assert_eq!(
        browser.text("#done"),
        "Module birthnotice paused on every node: its reports wait in the outbox. Recorded in the \
         audit log."
    );
    wait_until("node-b to hold birthnotice", || {
        (b.actor("module:birthnotice")["paused"] == true).then_some(())
    });
    browser.screenshot("overview");
    browser.click("#module-birthnotice button");
    browser.wait_for_page("/admin/");
    assert!(browser
        .text("#done")
        .starts_with("Module birthnotice resumed on every node"));

    // node-b dies without a word: once its heartbeat is overdue (the 3 s lease), it is lost.
    b.signal("KILL");
    let browser = Chromium::desktop("nodes-lost");
    wait_until("node-b to be lost", || {
        browser.goto(&as_operator(&a, "/admin/"));
        browser.wait_for_page("/admin/");
        let rows = node_rows(&browser);
        (rows.len() == 2 && rows[1][1] == "lost").then_some(())
    });
    assert_eq!(node_rows(&browser)[0][1], "alive");
    browser.screenshot("overview");
    drop(dir_b);
}
