//! End-to-end reports per second on one, two and three nodes: one node on sled (the default
//! embedded store), one node on PostgreSQL, and two and three nodes on one PostgreSQL database,
//! each with the same number of bed occupancy reports against the same kind of authority.
//!
//! Run with `cargo bench --bench nodes` (release build). For each configuration, in one run:
//! a fresh reporting system (`meldewerk simulate demis` as its own process, serving TLS and
//! taking the nodes' client certificate, shared by all the configuration's nodes), fresh data
//! directories and, for PostgreSQL, a fresh database of the throwaway cluster of
//! `meldewerk_storage::postgres::testing`. `BENCH_CLIENTS` keep-alive connections (default 48, so
//! that one, two and three nodes each get the same number), client `c` on node `c mod nodes`,
//! send `BENCH_REPORTS` complete reports (default 2,000) through
//! `POST /api/bedreport/v1/report`, which the node stores, delivers and answers with the
//! reporting system's decision. A report is final when its answer says `"succeeded":true`, or,
//! answered 202 (undecided within the wait), when its status says so later. Timed: from the
//! first submission until every report is final.
//!
//! Printed and appended to `BENCH_FIGURES`: reports per second for each configuration and their
//! ratios, the nodes' CPU time per report (all nodes together, from `/proc/<pid>/stat`),
//! PostgreSQL's (the postmaster and its backends), and the CPU the nodes and the database spend
//! while idle for `BENCH_IDLE_SECS` (default 5) before the burst; also `/healthz` on the sled
//! node, the machine's state at the time. Afterwards every report must have reached the reporting
//! system exactly once, counted in its own received log: a bench that loses a report fails.
//!
//! The nodes run with the engine's default intervals (outbox scan every 200 ms, inbox every
//! 500 ms; `BENCH_SCAN_INTERVAL_MS`, `BENCH_INBOX_INTERVAL_MS` to change them), not the test
//! servers' quicker ones: a node waits for a direct submission's decision on its own engine,
//! and claims the job it dispatches so that it delivers it itself; a report answered 202 after
//! the whole `answer_wait_secs` would mean another node took the job first. Those reports are
//! counted and printed.
//!
//! `BENCH_ROUNDS` (default 1) runs the four configurations that many times, alternating, and
//! takes each figure's median. The test cluster runs with `fsync=off`; with `BENCH_PG_FSYNC=1`
//! the bench starts it with `fsync=on` instead (a wrapper around the `postgres` binary whose
//! later `-c fsync=on` wins), so that the durability cost of PostgreSQL's commits is measured
//! too. Nodes, database, reporting system and clients share the machine's cores: nothing here
//! can show more nodes going faster on one machine, only what each costs.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use common::demis::complete_bed_report;
use common::deposited::{pairs, TlsReportingSystem};
use common::*;
use meldewerk_storage::postgres::testing::cluster;
use serde_json::Value;
use support::*;

/// One configuration: how many nodes, on which store.
#[derive(Clone, Copy)]
struct Setup {
    /// Its name in the figures.
    label: &'static str,
    nodes: usize,
    postgres: bool,
}

/// The configurations, in the order each round runs them.
const SETUPS: [Setup; 4] = [
    Setup {
        label: "sled, 1 node",
        nodes: 1,
        postgres: false,
    },
    Setup {
        label: "PostgreSQL, 1 node",
        nodes: 1,
        postgres: true,
    },
    Setup {
        label: "PostgreSQL, 2 nodes",
        nodes: 2,
        postgres: true,
    },
    Setup {
        label: "PostgreSQL, 3 nodes",
        nodes: 3,
        postgres: true,
    },
];

/// The user the reports are sent as.
const USER: &str = "klinikum";

/// What one run of one configuration measured.
#[derive(Default)]
struct Measured {
    /// Reports final per second, from the first submission.
    per_second: f64,
    /// CPU time of all nodes per report, ms.
    node_ms: f64,
    /// CPU time of PostgreSQL (postmaster and backends) per report, ms; 0 on sled.
    database_ms: f64,
    /// CPU time of the reporting system's process per report, ms.
    authority_ms: f64,
    /// CPU time of this process (the clients) per report, ms.
    client_ms: f64,
    /// CPU of the nodes and the database while idle, % of a core.
    idle_percent: f64,
    /// `/healthz` answers per second, measured on the sled node only.
    healthz: Option<f64>,
    /// Reports answered 202: undecided within the node's wait, final later.
    undecided: f64,
}

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 2000).max(1);
    let clients: usize = setting("BENCH_CLIENTS", 48).max(1);
    let rounds: usize = setting("BENCH_ROUNDS", 1).max(1);
    let idle = Duration::from_secs(setting("BENCH_IDLE_SECS", 5));
    let fsync = setting("BENCH_PG_FSYNC", 0) == 1;
    // Set before the cluster's first use, on this thread alone: nothing else reads it yet.
    let _wrapper = fsync.then(fsync_on);
    let runtime = tokio::runtime::Runtime::new().unwrap();

    println!(
        "meldewerk on several nodes: {reports} bed reports per configuration, {clients} clients, \
         {rounds} round(s), PostgreSQL fsync={}",
        if fsync { "on" } else { "off" }
    );
    let mut results: Vec<Vec<Measured>> = SETUPS.iter().map(|_| Vec::new()).collect();
    for round in 1..=rounds {
        for (setup, results) in SETUPS.iter().zip(&mut results) {
            let url = setup
                .postgres
                .then(|| runtime.block_on(cluster().fresh_database()));
            let measured = run(setup, url.as_deref(), reports, clients, idle);
            println!(
                "round {round}, {:<20} {:>6.0} reports/s; CPU per report: nodes {:.2} ms, \
                 database {:.2} ms, reporting system {:.2} ms, clients {:.2} ms; idle {:.1} % \
                 of a core",
                format!("{}:", setup.label),
                measured.per_second,
                measured.node_ms,
                measured.database_ms,
                measured.authority_ms,
                measured.client_ms,
                measured.idle_percent,
            );
            results.push(measured);
        }
    }
    write_figures(&results, reports, clients, rounds, fsync, idle.as_secs());
}

/// Appends the figures: each configuration's medians and the ratios between them.
fn write_figures(
    results: &[Vec<Measured>],
    reports: usize,
    clients: usize,
    rounds: usize,
    fsync: bool,
    idle_secs: u64,
) {
    let intervals = format!(
        "engine scans every {} ms, inbox every {} ms",
        setting("BENCH_SCAN_INTERVAL_MS", 200),
        setting("BENCH_INBOX_INTERVAL_MS", 500)
    );
    let sync = if fsync {
        "PostgreSQL with fsync=on"
    } else {
        "PostgreSQL with fsync=off (no durability cost in the database's figures)"
    };
    let note = format!(
        "{reports} bed reports over POST /report, {clients} clients round-robin over the nodes, \
         the reporting system over TLS as its own process; {sync}; {intervals}; all on one \
         machine; median of {rounds} round(s)"
    );
    let of = |n: usize, field: fn(&Measured) -> f64| median(results[n].iter().map(field));
    let mut summary = Vec::new();
    for (n, setup) in SETUPS.iter().enumerate() {
        let per_second = of(n, |m| m.per_second);
        let node_ms = of(n, |m| m.node_ms);
        figure(
            &format!("{}: reports final", setup.label),
            per_second,
            "reports/s",
            &note,
        );
        figure(
            &format!("{}: nodes' CPU per report", setup.label),
            node_ms,
            "ms",
            &note,
        );
        if setup.postgres {
            figure(
                &format!("{}: PostgreSQL's CPU per report", setup.label),
                of(n, |m| m.database_ms),
                "ms",
                &note,
            );
        }
        figure(
            &format!("{}: idle CPU of nodes and database", setup.label),
            of(n, |m| m.idle_percent),
            "% of a core",
            &format!("the nodes and PostgreSQL for {idle_secs} s before the burst; {intervals}"),
        );
        figure(
            &format!("{}: answered 202, not the decision", setup.label),
            of(n, |m| m.undecided),
            "reports",
            &format!(
                "of {reports}: the client waited the whole answer_wait_secs (20 s), the \
                 decision came later; {intervals}"
            ),
        );
        summary.push((setup.label, per_second, node_ms));
    }
    let ratio = |a: usize, b: usize| summary[a].1 / summary[b].1;
    figure(
        "PostgreSQL, 1 node vs. sled, 1 node",
        ratio(1, 0),
        "×",
        &note,
    );
    figure("PostgreSQL, 2 nodes vs. 1 node", ratio(2, 1), "×", &note);
    figure("PostgreSQL, 3 nodes vs. 1 node", ratio(3, 1), "×", &note);
    let healthz = median(results[0].iter().filter_map(|m| m.healthz));
    figure(
        "/healthz on the sled node",
        healthz,
        "req/s",
        "the machine's state at the time: 4 connections, 1 s, before the sled burst",
    );
    println!();
    for (label, per_second, node_ms) in &summary {
        println!("{label:<20} {per_second:>6.0} reports/s, {node_ms:.2} ms of node CPU per report");
    }
    println!(
        "ratios: PostgreSQL/sled {:.2}, 2 nodes/1 node {:.2}, 3 nodes/1 node {:.2}; /healthz \
         {healthz:.0} req/s",
        ratio(1, 0),
        ratio(2, 1),
        ratio(3, 1)
    );
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Starts `setup` (its reporting system, its nodes on sled or on the database `url`), lets it
/// idle, sends the reports and checks that each reached the reporting system once.
fn run(
    setup: &Setup,
    url: Option<&str>,
    reports: usize,
    clients: usize,
    idle: Duration,
) -> Measured {
    let reporting = TlsReportingSystem::start();
    let own = reporting.ca.issue("Meldeportal", 2040);
    let mut env = reporting.service_env();
    env.extend(reporting.client_files_env(&own));
    env.push(("MELDEWERK_LOG__LEVEL".into(), "warn".into()));
    // The engine's own defaults, not the test servers' quicker scans: how often a node looks for
    // due jobs decides how often it takes one another node dispatched (see below).
    for (key, default) in [("SCAN", 200), ("INBOX", 500)] {
        let interval = setting(&format!("BENCH_{key}_INTERVAL_MS"), default).to_string();
        env.push((format!("MELDEWERK_ENGINE__{key}_INTERVAL_MS"), interval));
    }
    // On PostgreSQL the same key on every node: each reads what the others stored. Without a
    // database, sled in the one node's directory.
    let store = url.map_or_else(Vec::new, |url| on_database(url, [7; 32]));
    let dirs: Vec<DataDir> = (0..setup.nodes).map(|_| DataDir::sharing(&store)).collect();
    dirs[0].add_user(USER);
    let nodes = start_nodes(&dirs, &pairs(&env));
    let node_pids: Vec<u32> = nodes.iter().map(|n| n.pid().expect("node runs")).collect();
    let addresses: Vec<String> = nodes
        .iter()
        .map(|n| n.base.trim_start_matches("http://").to_owned())
        .collect();
    let auth = STANDARD.encode(format!("{USER}:{PASSWORD}"));
    // Each node checks the password with argon2 once, then from its cache: not part of the
    // figures.
    for node in &nodes {
        let unknown = node.get_as(USER, "/api/bedreport/v1/status/warm-up?peek=true");
        assert_eq!(unknown.status(), 404, "warming up {}", node.base);
    }
    let mut measured = Measured {
        healthz: (!setup.postgres).then(|| healthz(&addresses[0])),
        ..Measured::default()
    };

    let server_cpu = || -> f64 {
        node_pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>()
            + url.map_or(0.0, |_| postgres_cpu_seconds())
    };
    let idle_before = server_cpu();
    std::thread::sleep(idle);
    measured.idle_percent =
        (server_cpu() - idle_before) * 100.0 / idle.as_secs_f64().max(f64::EPSILON);

    let authority_pid = reporting.peer.pid().expect("reporting system runs");
    let nodes_before: f64 = node_pids.iter().map(|p| cpu_seconds(*p)).sum();
    let database_before = url.map_or(0.0, |_| postgres_cpu_seconds());
    let authority_before = cpu_seconds(authority_pid);
    let client_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    let undecided = burst(&addresses, &auth, reports, clients);
    // Reports answered 202 end later: final when their status says so.
    for id in &undecided {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !succeeded(&nodes[0], id) {
            assert!(Instant::now() < deadline, "{id} never succeeded");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let per_report = |seconds: f64| seconds * 1000.0 / reports as f64;
    let nodes_after: f64 = node_pids.iter().map(|p| cpu_seconds(*p)).sum();
    measured.per_second = reports as f64 / elapsed;
    measured.node_ms = per_report(nodes_after - nodes_before);
    measured.database_ms =
        per_report(url.map_or(0.0, |_| postgres_cpu_seconds()) - database_before);
    measured.authority_ms = per_report(cpu_seconds(authority_pid) - authority_before);
    measured.client_ms = per_report(cpu_seconds(std::process::id()) - client_before);
    measured.undecided = undecided.len() as f64;
    if !undecided.is_empty() {
        println!(
            "  {} of {reports} answered 202 (undecided within the wait), final later",
            undecided.len()
        );
    }

    // Counted by the reporting system itself: every report once, nothing else.
    let (per_id, repeats) = reporting.peer.received_per_report(&reporting.tester(&own));
    for i in 0..reports {
        let id = id_of(i);
        assert_eq!(
            per_id.get(&id),
            Some(&1),
            "{id} reached the reporting system"
        );
    }
    assert_eq!(per_id.len(), reports, "nothing else reached it");
    if repeats > 0 {
        println!("  {repeats} resends answered as repeats (registered once each)");
    }
    measured
}

/// Adds [`USER`] through the CLI on the database `env` names: users live in the database, so
/// once for every node.
/// Report `i`'s id.
fn id_of(i: usize) -> String {
    format!("nodes-{i:06}")
}

/// `clients` connections, client `c` on node `c mod nodes`, send reports `0..reports` between
/// them, each taking the next; returns the ids answered 202 (not final yet).
fn burst(addresses: &[String], auth: &str, reports: usize, clients: usize) -> Vec<String> {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let (address, next) = (&addresses[c % addresses.len()], &next);
                scope.spawn(move || {
                    let mut raw = RawConnection::open(address);
                    let mut undecided = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= reports {
                            return undecided;
                        }
                        let id = id_of(i);
                        let body = complete_bed_report(&id).to_string();
                        let request = format!(
                            "POST /api/bedreport/v1/report HTTP/1.1\r\nHost: {address}\r\n\
                             Authorization: Basic {auth}\r\nContent-Type: application/json\r\n\
                             Content-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        let (status, answer) = raw.send(request.as_bytes());
                        let answer = String::from_utf8_lossy(&answer);
                        match status {
                            200 if answer.contains(r#""succeeded":true"#) => {}
                            202 => undecided.push(id),
                            _ => panic!("{id} on {address}: {status} {answer}"),
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// Whether report `id`'s status, read on `node`, says the reporting system accepted it.
fn succeeded(node: &Server, id: &str) -> bool {
    let response = node.get_as(USER, &format!("/api/bedreport/v1/status/{id}?peek=true"));
    assert_eq!(response.status(), 200, "status of {id}");
    let status: Value = response.json().unwrap();
    status["succeeded"] == true
}

/// `GET /healthz` answers per second over 4 keep-alive connections for one second.
fn healthz(address: &str) -> f64 {
    let until = Instant::now() + Duration::from_secs(1);
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n");
    let started = Instant::now();
    let answered: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let request = &request;
                scope.spawn(move || {
                    let mut raw = RawConnection::open(address);
                    let mut answered = 0;
                    while Instant::now() < until {
                        raw.ok(request.as_bytes());
                        answered += 1;
                    }
                    answered
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    answered as f64 / started.elapsed().as_secs_f64()
}

/// The fields of `/proc/<pid>/stat` after the command's name (state first); empty when the
/// process is gone.
fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after.split_whitespace().map(str::to_owned).collect()
}

/// The ids of the processes whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    let parent = parent.to_string();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat_fields(*pid).get(1) == Some(&parent))
        .collect()
}

/// CPU seconds of the test cluster's PostgreSQL: the postmaster (this process's child) with the
/// backends it has reaped (`cutime`, `cstime`), and every live one of its children.
fn postgres_cpu_seconds() -> f64 {
    let ticks = |pid: u32, fields: std::ops::Range<usize>| -> u64 {
        let stat = stat_fields(pid);
        stat.get(fields)
            .map_or(0, |f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
    };
    let is_postgres = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "postgres")
    };
    let total: u64 = children(std::process::id())
        .into_iter()
        .filter(is_postgres)
        .map(|postmaster| {
            ticks(postmaster, 11..15)
                + children(postmaster)
                    .into_iter()
                    .map(|backend| ticks(backend, 11..13))
                    .sum::<u64>()
        })
        .sum();
    total as f64 / 100.0
}

/// Points `PG_BIN` at a folder whose `postgres` runs the real one with `-c fsync=on` after the
/// test cluster's own options (the later setting wins), and whose `initdb` is the real one;
/// the folder lives as long as the returned guard.
fn fsync_on() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let real = std::env::var_os("PG_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            let mut versions: Vec<(u32, std::path::PathBuf)> =
                std::fs::read_dir("/usr/lib/postgresql")
                    .expect("PostgreSQL under /usr/lib/postgresql, or PG_BIN")
                    .filter_map(Result::ok)
                    .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path())))
                    .collect();
            versions.sort();
            versions.pop().expect("a PostgreSQL version").1.join("bin")
        });
    let wrapper = tempfile::tempdir().unwrap();
    // The cluster runs as the `postgres` user when this process is root: it must reach the
    // folder.
    std::fs::set_permissions(wrapper.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = wrapper.path().join("postgres");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" -c fsync=on\n",
            real.join("postgres").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(real.join("initdb"), wrapper.path().join("initdb")).unwrap();
    std::env::set_var("PG_BIN", wrapper.path());
    wrapper
}
