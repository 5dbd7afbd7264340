//! Three nodes on one PostgreSQL database, the authorities as processes of their own (the civil
//! registry office, which acknowledges later, the reporting system over TLS and the court
//! mailbox, which answer at once): 1,000 reports submitted round-robin across the nodes and the
//! seven modules, one node killed with SIGKILL mid-burst and never started again, the database
//! restarted once. Every report a node accepted ends SUCCESS and reaches its authority exactly
//! once, counted by the authorities themselves; the dead node's work is resumed by the others
//! once its leases run out, and every node's dashboard lists every node.

mod common;
mod hospreport_common;
mod labreport_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::burst::{settled, Broken, Submitted};
use common::court;
use common::demis::complete_bed_report;
use common::deposited::{pairs, TlsReportingSystem};
use common::pkcs12::pkcs12;
use common::remote::Peer;
use common::*;
use hospreport_common as hosp;
use labreport_support as lab;
use meldewerk_storage::postgres::testing::cluster;
use reqwest::blocking::Client;
use serde_json::Value;

/// Reports in the burst.
const REPORTS: usize = 1000;
/// Clients submitting at the same time.
const CLIENTS: usize = 6;
/// The nodes.
const NODES: usize = 3;
/// The node killed mid-burst.
const KILLED: usize = 1;
/// The modules, in turn: three through the civil registry office (form, later acknowledgement);
/// three through the reporting system (answered at once): the laboratory's and the
/// hospitalisation by form with the facility's deposited certificate, bed occupancy by API with
/// the service's own; and a court message by form through the court mailbox (answered at once).
const MODULES: [&str; 7] = [
    "birthnotice",
    "deathnotice",
    "birthdata",
    "labreport",
    "hospreport",
    "bedreport",
    "guardianship",
];

fn id_of(i: usize) -> String {
    format!("node-{i:04}")
}

fn module_of(i: usize) -> &'static str {
    MODULES[i % MODULES.len()]
}

/// The report body for report `i`.
fn body_of(i: usize) -> Value {
    let id = id_of(i);
    match module_of(i) {
        "birthnotice" => complete_notice(&id),
        "deathnotice" => complete_death_notice(&id),
        "birthdata" => complete_birth_data(&id),
        "labreport" => lab::standard(&id),
        "hospreport" => hosp::complete(Some(&id), hosp::KNOWN_BSNR),
        "guardianship" => court::memento_body(&id),
        _ => complete_bed_report(&id),
    }
}

/// The API user whose reports of `module` these are.
fn user_of(module: &str) -> &'static str {
    match module {
        "labreport" => lab::USER,
        "hospreport" | "bedreport" => "klinikum",
        "guardianship" => "betreuung",
        _ => "klinik",
    }
}

/// The form report `i` is sent through when its magic link lands on an index of forms: one of
/// the four diseases in turn, the first of the court forms.
fn chosen_form(i: usize) -> Option<&'static str> {
    const DISEASES: [&str; 4] = [
        "/labreport/Influenza/",
        "/labreport/Rsv/",
        "/labreport/Norovirus/",
        "/labreport/Sarscov2/",
    ];
    match module_of(i) {
        "labreport" => Some(DISEASES[i / MODULES.len() % DISEASES.len()]),
        "guardianship" => Some("/guardianship/BetreuungAnregung"),
        _ => None,
    }
}

/// The link of an index page's `html` to the form at `path`.
fn link_to(html: &str, path: &str) -> Option<String> {
    let start = html.find(&format!("href=\"{path}?"))? + "href=\"".len();
    let end = start + html[start..].find('"')?;
    Some(html[start..end].replace("&amp;", "&"))
}

fn basic(user: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{PASSWORD}"))
    )
}

/// Submits report `i` through the node at `base`: the form for the civil registry's modules
/// (memento, magic link, form page, signature, post), the API for bed occupancy.
fn submit(base: &str, i: usize) -> Result<u16, Broken> {
    let again = |_| Broken::BeforePost;
    let client = loopback_client()
        .cookie_store(true)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let module = module_of(i);
    if module == "bedreport" {
        return post(&client, &format!("{base}/api/bedreport/v1/report"), |r| {
            r.header("authorization", basic("klinikum"))
                .json(&body_of(i))
        });
    }
    let memento = client
        .post(format!("{base}/api/{module}/v1/memento"))
        .header("authorization", basic(user_of(module)))
        .json(&body_of(i))
        .send()
        .map_err(again)?;
    if memento.status() != 200 {
        return Err(Broken::BeforePost);
    }
    let link = memento.json::<Value>().map_err(again)?["magicLink"]
        .as_str()
        .unwrap()
        .to_owned();
    let opened = client.get(format!("{base}{link}")).send().map_err(again)?;
    let Some(location) = opened.headers().get("location") else {
        return Err(Broken::BeforePost);
    };
    let location = location.to_str().unwrap().to_owned();
    // A good link sent to the login page is a refusal, also while the database is away (that
    // is 503, and the link stays good).
    if location.starts_with("/login") {
        return Ok(opened.status().as_u16());
    }
    let open = |path: &str| match client.get(format!("{base}{path}")).send() {
        Ok(page) if page.status() == 200 => Ok(page),
        _ => Err(Broken::BeforePost),
    };
    let mut page = open(&location)?;
    if let Some(path) = chosen_form(i) {
        let index = page.text().map_err(again)?;
        let link = link_to(&index, path).unwrap_or_else(|| panic!("{path} on {index}"));
        page = open(&link)?;
    }
    let mut form = Form::read(page);
    if module == "labreport" {
        lab::fill_findings(&mut form, "POSITIVE");
    }
    if form.html.contains("name=\"signatur.name\"") {
        form.set("signatur.name", "Dr. Erika Beispiel");
        form.set("signatur.bestaetigt", "true");
    }
    post(&client, &format!("{base}{}", form.action()), |r| {
        r.form(&form.fields)
    })
}

/// Posts what `build` makes of a request to `url`: its status, or why there is none.
fn post(
    client: &Client,
    url: &str,
    build: impl FnOnce(reqwest::blocking::RequestBuilder) -> reqwest::blocking::RequestBuilder,
) -> Result<u16, Broken> {
    match build(client.post(url)).send() {
        Ok(response) if response.status() == 503 => Err(Broken::BeforePost),
        // The hospitalisation form's success page; a redirect anywhere else (the login page)
        // is a refusal.
        Ok(response)
            if response.status() == 302 && response.headers()["location"] == hosp::SUCCESS =>
        {
            Ok(200)
        }
        Ok(response) => Ok(response.status().as_u16()),
        // Refused before a byte was sent: the node is gone.
        Err(e) if e.is_connect() => Err(Broken::BeforePost),
        Err(_) => Err(Broken::DuringPost),
    }
}

/// A report's status as `node` reads it for its owner; `None` when no node knows it.
fn status_of(node: &Server, i: usize) -> Option<String> {
    let module = module_of(i);
    let path = match module {
        "bedreport" => format!("/api/bedreport/v1/status/{}?peek=true", id_of(i)),
        module => format!("/api/{module}/v1/reports/{}?peek=true", id_of(i)),
    };
    let response = node.get_as(user_of(module), &path);
    match response.status().as_u16() {
        404 => None,
        200 => {
            let report: Value = response.json().unwrap();
            Some(match module_of(i) {
                "bedreport" if report["succeeded"] == true => "SUCCESS".into(),
                "bedreport" => format!("FAILURE: {report}"),
                _ => report["status"].as_str().unwrap().to_owned(),
            })
        }
        other => panic!("status of {}: {other}", id_of(i)),
    }
}

#[test]
fn three_nodes_deliver_every_accepted_report_exactly_once_through_a_node_kill_and_a_database_restart(
) {
    let url = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(cluster().fresh_database());
    let office_dir = DataDir::new();
    let office = Peer::simulator(
        office_dir.path(),
        &[("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0")],
    );
    let reporting = TlsReportingSystem::start();
    let own = reporting.ca.issue("Meldeportal", 2040);
    let court_dir = DataDir::new();
    let court_mailbox = Peer::simulate(court_dir.path(), "egvp", &[]);
    // The court messages' archives, on a folder every node reaches (docs/operations.md).
    let archives = tempfile::tempdir().unwrap();

    let mut store = on_database(&url, [7; 32]);
    store.extend(owned(&[
        ("MELDEWERK_STORE__LEASE_SECS", "3"),
        ("MELDEWERK_STORE__CONNECT_TIMEOUT_SECS", "2"),
    ]));
    let mut env = reporting.service_env();
    env.extend(reporting.client_files_env(&own));
    env.extend(owned(&[
        ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__URL", &office.base),
        ("MELDEWERK_TRANSPORTS__EGVP__URL", &court_mailbox.base),
        (
            "MELDEWERK_MODULES__GUARDIANSHIP__ARCHIVE_DIR",
            archives.path().to_str().unwrap(),
        ),
        ("MELDEWERK_LOG__LEVEL", "warn"),
    ]));
    let dirs: Vec<DataDir> = (0..NODES).map(|_| DataDir::sharing(&store)).collect();
    // The users, the laboratory's customer and its facilities live in the database: added once,
    // known to every node.
    for user in ["klinik", "klinikum", "betreuung"] {
        dirs[0].add_user(user);
    }
    lab::register(&dirs[0]);
    let nodes = start_nodes(&dirs, &pairs(&env));
    // The facility's certificate (the hospital's and the laboratory's BSNR are one here) and the
    // court mailbox account, set up once through one node: in the database, every node uses them.
    assert_eq!(hosp::KNOWN_BSNR, lab::BSNR);
    let facility = reporting.ca.issue("Klinikum Mitte", 2040);
    let status = common::deposited::deposit_pkcs12(
        &nodes[0],
        hosp::KNOWN_BSNR,
        &pkcs12(&facility, &reporting.ca),
    );
    assert_eq!(status, 201);
    court::configure_account(&nodes[0], "betreuung");
    let bases: Vec<String> = nodes.iter().map(|n| n.base.clone()).collect();
    let dead: Vec<AtomicBool> = (0..NODES).map(|_| AtomicBool::new(false)).collect();

    let next = AtomicUsize::new(0);
    let accepted = AtomicUsize::new(0);
    let outcomes = Mutex::new(vec![None::<Submitted>; REPORTS]);
    let burst = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= REPORTS {
                    break;
                }
                let deadline = Instant::now() + Duration::from_secs(120);
                let mut node = i % NODES;
                let outcome = loop {
                    assert!(Instant::now() < deadline, "{} never went through", id_of(i));
                    if dead[node].load(Ordering::SeqCst) {
                        node = (node + 1) % NODES;
                        continue;
                    }
                    match submit(&bases[node], i) {
                        Ok(200 | 202 | 303) => break Submitted::Accepted,
                        Ok(status) => break Submitted::Refused(status),
                        Err(Broken::DuringPost) => break Submitted::InDoubt,
                        Err(Broken::BeforePost) => {
                            node = (node + 1) % NODES;
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                };
                if outcome == Submitted::Accepted {
                    accepted.fetch_add(1, Ordering::SeqCst);
                }
                outcomes.lock().unwrap()[i] = Some(outcome);
            });
        }
        // A third of the way: one node is killed, never to come back. Two thirds: the
        // database goes away for two seconds.
        let reach = |count: usize| {
            let deadline = Instant::now() + Duration::from_secs(300);
            while accepted.load(Ordering::SeqCst) < count {
                assert!(
                    Instant::now() < deadline,
                    "the burst stalled before {count}"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        reach(REPORTS / 3);
        dead[KILLED].store(true, Ordering::SeqCst);
        nodes[KILLED].signal("KILL");
        reach(2 * REPORTS / 3);
        cluster().stop_server();
        std::thread::sleep(Duration::from_secs(2));
        cluster().start_server().unwrap();
    });
    let burst = burst.elapsed();

    let outcomes = settled(outcomes);
    let refused: Vec<(String, Submitted)> = (0..REPORTS)
        .filter(|i| matches!(outcomes[*i], Submitted::Refused(_)))
        .map(|i| (id_of(i), outcomes[i]))
        .collect();
    assert!(refused.is_empty(), "refused submissions: {refused:?}");

    // Every accepted report ends SUCCESS, the dead node's ones too, read on a living node.
    let reader = &nodes[0];
    let settled = Instant::now();
    let mut stored = Vec::new();
    for (i, outcome) in outcomes.iter().enumerate() {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            match status_of(reader, i) {
                Some(status) if status == "SUCCESS" => {
                    stored.push(id_of(i));
                    break;
                }
                None if *outcome == Submitted::InDoubt => break,
                status => {
                    assert!(
                        Instant::now() < deadline,
                        "{} ({:?}) is {status:?}; the reporting system has {:?}",
                        id_of(i),
                        outcome,
                        reporting.received(&reporting.tester(&own), &id_of(i)),
                    );
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
    let settled = settled.elapsed();

    // Counted at the authorities: each stored report once, and nothing else.
    let (office_got, office_repeats) =
        office.received_per_report(&loopback_client().build().unwrap());
    let (reporting_got, reporting_repeats) =
        reporting.peer.received_per_report(&reporting.tester(&own));
    let (court_got, court_repeats) = court_mailbox.received_per_report(&court_mailbox.client());
    let mut got = office_got;
    got.extend(reporting_got);
    got.extend(court_got);
    for id in &stored {
        assert_eq!(got.get(id), Some(&1), "{id} reached its authority");
    }
    assert_eq!(
        got.len(),
        stored.len(),
        "nothing else reached the authorities"
    );

    // The living nodes list all three, the killed one as lost.
    let listed: Value = nodes[2].admin_get("/admin/api/v1/nodes").json().unwrap();
    let names: Vec<&str> = listed["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["node-0", "node-1", "node-2"], "{listed}");
    assert_eq!(listed["node"], "node-2");
    let killed = &listed["nodes"][KILLED];
    assert_eq!(killed["alive"], false, "{killed}");
    assert_eq!(killed["stoppedAt"], Value::Null, "it never said goodbye");
    assert_eq!(listed["nodes"][0]["alive"], true);

    let in_doubt = outcomes
        .iter()
        .filter(|o| **o == Submitted::InDoubt)
        .count();
    println!(
        "{REPORTS} reports over {NODES} nodes in {:.1} s, settled {:.1} s later; node-{KILLED} \
         killed and the database restarted: {} accepted, {in_doubt} in doubt, {} stored, \
         {} resends answered as repeats",
        burst.as_secs_f64(),
        settled.as_secs_f64(),
        accepted.load(Ordering::SeqCst),
        stored.len(),
        office_repeats + reporting_repeats + court_repeats,
    );
}
