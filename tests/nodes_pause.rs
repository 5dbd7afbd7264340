//! Two nodes on one PostgreSQL database and the civil-registry office as a process of its own: an
//! operator's pause through one node holds the module on both, also on a node restarted while
//! it lasts (it reads the pauses before it delivers), and a resume through the other node lets
//! the held report go, delivered once.

mod common;

use std::time::Duration;

use common::deposited::pairs;
use common::remote::Peer;
use common::*;
use meldewerk_storage::postgres::testing::cluster;
use serde_json::{json, Value};

/// Whether `node` holds `module`'s deliveries, as its actors' health says.
fn paused_on(node: &Server, module: &str) -> bool {
    node.actor(&format!("module:{module}"))["paused"] == true
}

fn wait_paused_on(node: &Server, module: &str, paused: bool) {
    wait_until(
        &format!("{module} paused={paused} on {}", node.base),
        || (paused_on(node, module) == paused).then_some(()),
    );
}

#[test]
fn a_pause_through_one_node_holds_on_every_node_until_a_resume_through_another() {
    let url = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database());
    let office_dir = DataDir::new();
    let office = Peer::simulator(office_dir.path(), &[]);
    let store = on_database(&url, [9; 32]);
    let env = [(
        "MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL".to_owned(),
        office.base.clone(),
    )];
    let dirs = [DataDir::sharing(&store), DataDir::sharing(&store)];
    dirs[0].add_user("klinik");
    let mut nodes = start_nodes(&dirs, &pairs(&env));

    let paused = nodes[0].admin_post("/admin/api/v1/modules/birthnotice/pause");
    assert_eq!(paused.status(), 200);
    assert_eq!(
        paused.json::<Value>().unwrap(),
        json!({"module": "birthnotice", "paused": true})
    );
    assert!(paused_on(&nodes[0], "birthnotice"));
    // The other node follows within a second or so; other modules go on.
    wait_paused_on(&nodes[1], "birthnotice", true);
    assert!(!paused_on(&nodes[1], "deathnotice"));
    // The dashboard's word after a pause says it holds everywhere.
    let page = nodes[1]
        .admin_get("/admin/?done=pause&module=birthnotice")
        .text()
        .unwrap();
    assert!(
        page.contains("Module birthnotice paused on every node: its reports wait in the outbox"),
        "{page}"
    );

    // A notice sent through the other node waits there, while a death notice goes through.
    dispatch(&nodes[1], "klinik", &complete_notice("geb-held"));
    dispatch_in(
        &nodes[1],
        "deathnotice",
        "klinik",
        &complete_death_notice("tod-running"),
    );
    nodes[1].wait_for_status_in("deathnotice", "klinik", "tod-running", "SUCCESS");
    let client = office.client();
    assert!(office.received(&client, "geb-held").is_empty());

    // A node restarted during the pause holds the module from its start.
    nodes[1].kill();
    nodes[1].start_again();
    assert!(paused_on(&nodes[1], "birthnotice"));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        office.received(&client, "geb-held").is_empty(),
        "delivered while paused"
    );
    let waiting = nodes[0].get_as("klinik", "/api/birthnotice/v1/reports/geb-held?peek=true");
    assert_eq!(waiting.json::<Value>().unwrap()["status"], "PENDING");

    // Resumed through the restarted node: both nodes let go, the notice is delivered once.
    let resumed = nodes[1].admin_post("/admin/api/v1/modules/birthnotice/resume");
    assert_eq!(resumed.status(), 200);
    wait_paused_on(&nodes[0], "birthnotice", false);
    nodes[0].wait_for_status("klinik", "geb-held", "SUCCESS");
    assert_eq!(office.received(&client, "geb-held").len(), 1);

    // The pause and the resume, taken by two nodes, are in the one audit log.
    let audit: Value = nodes[0].admin_get("/admin/api/v1/audit").json().unwrap();
    let mut actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .filter(|e| e["target"] == "module birthnotice")
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    actions.sort();
    assert_eq!(actions, ["pause", "resume"], "{audit}");
}
