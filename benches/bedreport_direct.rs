//! Direct bed occupancy reports (`POST /api/bedreport/v1/report`): each request is checked,
//! stored, delivered to the reporting system and answered with its decision, so what is measured
//! is the whole synchronous way of a report, not its acceptance alone.
//!
//! Run with `cargo bench --bench bedreport_direct` (release build). `BENCH_CONNECTIONS`
//! keep-alive connections (default 64), one thread each, send complete reports with fresh ids for
//! `BENCH_SECONDS` seconds (default 10) against the in-process simulated reporting system with
//! no latency (its default). Every answer must be `200` with `"succeeded":true`. Printed: reports
//! answered per second, the server's CPU time and disk writes per report (from `/proc`: what
//! reached the block layer, beside all that went through write calls), and the answer's median
//! and slowest time. Client and server share the machine's cores; the client writes raw HTTP/1.1
//! so that its own cost stays small.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::demis::complete_bed_report;
use common::*;
use support::*;

/// One connection sending reports until `until`; the time each answer took.
fn load(address: &str, auth: &str, connection: usize, until: Instant) -> Vec<Duration> {
    let mut raw = RawConnection::open(address);
    let mut took = Vec::new();
    while Instant::now() < until {
        let body = complete_bed_report(&format!("bed-{connection}-{}", took.len())).to_string();
        let request = format!(
            "POST /api/bedreport/v1/report HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let sent = Instant::now();
        let answer = raw.ok(request.as_bytes());
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.contains(r#""succeeded":true"#),
            "not accepted: {answer}"
        );
        took.push(sent.elapsed());
    }
    took
}

fn main() {
    let connections: usize = setting("BENCH_CONNECTIONS", 64).max(1);
    let seconds: u64 = setting("BENCH_SECONDS", 10).max(1);

    let dir = DataDir::new();
    dir.add_user("bench");
    let server = Server::start(&dir, &[("MELDEWERK_LOG__LEVEL", "warn")]);
    let pid = server.pid().expect("server runs");
    let address = server.base.trim_start_matches("http://").to_string();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("bench:{PASSWORD}"));

    // Warm-up: the first authenticated request runs argon2 once; later ones hit the cache.
    load(
        &address,
        &auth,
        usize::MAX,
        Instant::now() + Duration::from_millis(500),
    );

    let cpu_before = cpu_seconds(pid);
    let written_before = written(pid);
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut took: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|c| {
                let (address, auth) = (&address, &auth);
                scope.spawn(move || load(address, auth, c, until))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    took.sort();
    let reports = took.len();
    let writes = written(pid).since(written_before);
    let (handed, to_disk) = (
        kib_per_report(writes.handed, reports),
        kib_per_report(writes.to_disk, reports),
    );

    println!("meldewerk bedreport direct submissions: {connections} connections, {seconds} s");
    println!(
        "reports answered:       {:>8.0} /s ({reports} in {elapsed:.2} s, every one accepted)",
        reports as f64 / elapsed
    );
    println!(
        "server CPU per report:  {:>8.2} ms",
        cpu * 1000.0 / reports.max(1) as f64
    );
    println!(
        "disk writes per report: {to_disk:>8.1} KiB ({handed:.1} KiB in write calls, sockets too)"
    );
    println!(
        "answer time:            {:>8.1} ms median, {:.1} ms slowest",
        took[reports / 2].as_secs_f64() * 1000.0,
        took[reports - 1].as_secs_f64() * 1000.0
    );
    let note = format!(
        "POST /report, each decided within its request; {connections} connections, {seconds} s"
    );
    figure(
        "bedreport direct: reports answered",
        reports as f64 / elapsed,
        "reports/s",
        &note,
    );
    figure(
        "bedreport direct: disk writes per report",
        to_disk,
        "KiB",
        &note,
    );
}
