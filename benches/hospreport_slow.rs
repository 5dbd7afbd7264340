//! Hospitalisation reports against a slow reporting system: the form's submit waits for the
//! system's decision, so every waiting user holds a request open. What is measured is whether
//! the service answers every one of them, and whether the rest of it stays responsive meanwhile
//! (no worker thread starved by the waiting).
//!
//! Run with `cargo bench --bench hospreport_slow` (release build). `BENCH_USERS` users (default
//! 200) each open a hospreport form through their magic link (before the clock starts), then
//! all send it at once; the simulated reporting system takes `BENCH_LATENCY_MS` (default 2000) to
//! answer each notification. Meanwhile a probe asks `/healthz` every 20 ms. Every submit must end
//! in the success redirect. Printed: how long until every user had the answer, the answers'
//! median and slowest time, and `/healthz` latency before and during (median, 99th percentile,
//! slowest).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/hospreport_common/mod.rs"]
mod hospreport_common;
#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use common::*;
use hospreport_common::*;
use support::*;

/// `/healthz` latencies, one probe every 20 ms until `stop` is set (or `count` probes).
fn probe(server: &Server, stop: &AtomicBool, count: usize) -> Vec<Duration> {
    let client = loopback_client().build().unwrap();
    let mut took = Vec::new();
    while !stop.load(Ordering::SeqCst) && took.len() < count {
        let sent = Instant::now();
        let answer = client.get(server.url("/healthz")).send().unwrap();
        assert_eq!(answer.status(), 200);
        took.push(sent.elapsed());
        std::thread::sleep(Duration::from_millis(20));
    }
    took
}

/// Median, 99th percentile and slowest of `took`, in milliseconds.
fn spread(mut took: Vec<Duration>) -> String {
    took.sort();
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
    format!(
        "{:.1} ms median, {:.1} ms p99, {:.1} ms slowest ({} probes)",
        at(0.5),
        at(0.99),
        at(1.0),
        took.len()
    )
}

fn main() {
    let users: usize = setting("BENCH_USERS", 200).max(1);
    let latency: u64 = setting("BENCH_LATENCY_MS", 2000);
    let latency_env = latency.to_string();

    let (_dir, server) = start(&[
        ("MELDEWERK_LOG__LEVEL", "warn"),
        ("MELDEWERK_TRANSPORTS__DEMIS__LATENCY_MS", &latency_env),
    ]);
    deposit_certificate(&server, KNOWN_BSNR);
    println!("meldewerk hospreport: {users} users at once, the reporting system answering in {latency} ms");
    let opened: Vec<_> = (0..users)
        .map(|i| open(&server, &complete(Some(&format!("hosp-{i}")), KNOWN_BSNR)))
        .collect();

    let idle = probe(&server, &AtomicBool::new(false), 100);
    let stop = AtomicBool::new(false);
    let start = Barrier::new(users + 1);
    let (answers, busy, all_answered) = std::thread::scope(|scope| {
        let prober = scope.spawn(|| probe(&server, &stop, usize::MAX));
        let senders: Vec<_> = opened
            .iter()
            .map(|(browser, form)| {
                let (server, start) = (&server, &start);
                scope.spawn(move || {
                    start.wait();
                    let sent = Instant::now();
                    send(server, browser, form);
                    sent.elapsed()
                })
            })
            .collect();
        start.wait();
        let started = Instant::now();
        let answers: Vec<Duration> = senders.into_iter().map(|s| s.join().unwrap()).collect();
        let all_answered = started.elapsed();
        stop.store(true, Ordering::SeqCst);
        (answers, prober.join().unwrap(), all_answered)
    });
    let mut sorted = answers.clone();
    sorted.sort();
    println!(
        "every user answered:  {} of {users} redirected to the success page in {:.2} s",
        answers.len(),
        all_answered.as_secs_f64()
    );
    println!(
        "answer time:          {:.0} ms median, {:.0} ms slowest",
        sorted[sorted.len() / 2].as_secs_f64() * 1000.0,
        sorted[sorted.len() - 1].as_secs_f64() * 1000.0
    );
    let note = format!("{users} users at once, reporting system answering in {latency} ms");
    figure(
        "hospreport slow authority: every user answered",
        all_answered.as_secs_f64(),
        "s",
        &note,
    );
    let mut busy_sorted = busy.clone();
    busy_sorted.sort();
    figure(
        "hospreport slow authority: /healthz p99 meanwhile",
        busy_sorted[((busy_sorted.len() - 1) as f64 * 0.99) as usize].as_secs_f64() * 1000.0,
        "ms",
        &note,
    );
    println!("/healthz before:      {}", spread(idle));
    println!("/healthz meanwhile:   {}", spread(busy));
}
