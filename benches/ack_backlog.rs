//! An idle server with many reports waiting for their acknowledgement, measured from outside.
//!
//! Run with `cargo bench --bench ack_backlog` (release build). `BENCH_REPORTS` birth notices
//! (default 10,000) are sent through the browser flow while the simulated office holds every
//! acknowledgement back (`ack_delay_ms` of an hour); once all are delivered and waiting, the
//! server is left alone for `BENCH_IDLE_SECS` (default 20) and its CPU time, bytes written to disk
//! and memory are read from `/proc`. Then single new reports are sent and the time until the
//! office has received each is taken — against the same measured on the empty server first.
//! Extra settings for the server can be passed as `MELDEWERK_*` variables.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use support::*;

/// Jobs waiting for their acknowledgement, read page by page from the operators' queue view.
fn waiting(server: &Server) -> usize {
    let mut count = 0;
    let mut after = String::new();
    loop {
        let page: Value = server
            .admin_get(&format!("/admin/api/v1/jobs?limit=1000{after}"))
            .json()
            .unwrap();
        let jobs = page["jobs"].as_array().unwrap();
        count += jobs
            .iter()
            .filter(|j| j["waitingFor"] == "acknowledgement")
            .count();
        match page["next"].as_u64() {
            Some(next) => after = format!("&after={next}"),
            None => return count,
        }
    }
}

/// Sends the forms behind `links` with `workers` browser sessions.
fn send_all(server: &Server, links: &[String], workers: usize) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(link) = links.get(i) else { break };
                send(server, link);
            });
        }
    });
}

/// A browser session with the signed form behind `link`, ready to send.
fn signed_form(server: &Server, link: &str) -> (Browser, Form) {
    let browser = Browser::new();
    let mut form = browser.open_magic_link(server, link);
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    (browser, form)
}

fn send(server: &Server, link: &str) {
    let (browser, form) = signed_form(server, link);
    let response = browser.submit(server, &form);
    assert_eq!(response.status(), 303, "submission refused");
}

/// Milliseconds from sending the form to the office having received the report, for each of
/// `count` new reports sent one after another.
fn delivery_latencies(server: &Server, prefix: &str, count: usize) -> Vec<f64> {
    (0..count)
        .map(|i| {
            let id = format!("{prefix}-{i}");
            let link = magic_link(server, "bench", &complete_notice(&id));
            let (browser, form) = signed_form(server, &link);
            let started = Instant::now();
            assert_eq!(browser.submit(server, &form).status(), 303);
            while received(server, &id).is_empty() {
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "{id} never delivered"
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

fn summary(latencies: &[f64]) -> String {
    let mut sorted = latencies.to_vec();
    sorted.sort_by(f64::total_cmp);
    format!(
        "median {:.0} ms, max {:.0} ms",
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1]
    )
}

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 10_000).max(1);
    let idle_secs: u64 = setting("BENCH_IDLE_SECS", 20).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);

    let dir = DataDir::new();
    dir.add_user("bench");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_LOG__LEVEL", "warn"),
            (
                "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS",
                "3600000",
            ),
        ],
    );
    let pid = server.pid().expect("server runs");
    let empty = delivery_latencies(&server, "empty", 5);

    let links: Vec<String> = (0..reports)
        .map(|i| magic_link(&server, "bench", &complete_notice(&format!("wait-{i}"))))
        .collect();
    send_all(&server, &links, workers);
    let deadline = Instant::now() + Duration::from_secs(900);
    while waiting(&server) < reports + empty.len() {
        assert!(Instant::now() < deadline, "reports never all delivered");
        std::thread::sleep(Duration::from_millis(500));
    }
    // Let the last deliveries' flushes and log lines settle.
    std::thread::sleep(Duration::from_secs(2));

    let cpu_before = cpu_seconds(pid);
    let written_before = written(pid);
    std::thread::sleep(Duration::from_secs(idle_secs));
    let cpu = cpu_seconds(pid) - cpu_before;
    let idle_writes = written(pid).since(written_before).to_disk;
    let rss_mb = proc_field(pid, "status", "VmRSS") as f64 / 1024.0;
    let peak_mb = proc_field(pid, "status", "VmHWM") as f64 / 1024.0;

    let backlog = delivery_latencies(&server, "new", 10);

    println!(
        "meldewerk acknowledgement backlog: {reports} birth notices waiting, idle for {idle_secs} s"
    );
    println!(
        "idle CPU:                  {:>8.2} % of one core",
        cpu * 100.0 / idle_secs as f64
    );
    println!("idle disk writes:          {:>8} bytes", idle_writes);
    println!("RSS while idle:            {rss_mb:>8.0} MB (peak {peak_mb:.0} MB)");
    println!("new report delivered, empty server:   {}", summary(&empty));
    println!(
        "new report delivered, with backlog:   {}",
        summary(&backlog)
    );
    let note =
        format!("{reports} deliveries waiting for their acknowledgement, idle {idle_secs} s");
    figure("waiting deliveries: RSS while idle", rss_mb, "MB", &note);
    figure("waiting deliveries: peak RSS", peak_mb, "MB", &note);
    figure(
        "waiting deliveries: idle CPU",
        cpu * 100.0 / idle_secs as f64,
        "% of a core",
        &note,
    );
    figure(
        "waiting deliveries: new report delivered (median)",
        median_ms(&backlog),
        "ms",
        &format!("{note}; empty server: {:.0} ms", median_ms(&empty)),
    );
}

/// The median of `latencies`.
fn median_ms(latencies: &[f64]) -> f64 {
    let mut sorted = latencies.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
