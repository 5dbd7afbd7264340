//! Laboratory reports from the form's submit to their final result: the end user sends a
//! disease form, the engine builds the FHIR notification, delivers it to the reporting system,
//! which decides at once, and stores the result with its receipt.
//!
//! Run with `cargo bench --bench labreport_pipeline` (release build). `BENCH_REPORTS` reports
//! (default 2000) are prepared before the clock starts: memento, magic link, the disease index
//! and the disease form (the four diseases in turn), its findings filled in. Then `BENCH_WORKERS`
//! browsers (default 8) send them; the in-process simulated reporting system answers at once
//! (its default). Printed: form submissions accepted per second, reports per second from the
//! first submission until every one is final (read from the engine's health), and the server's
//! and the browsers' CPU time per report and the server's disk writes per report (from `/proc`:
//! what reached the block layer, beside all that went through write calls, sockets included).
//! Client and server share the cores.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/labreport_support/mod.rs"]
mod labreport_support;
#[path = "support/mod.rs"]
mod support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use labreport_support::{disease_link, fill_findings, standard, DISEASES};
use serde_json::Value;
use support::*;

/// A form opened before the clock starts: its user's cookies, where it is sent, the form.
type Opened = (Vec<String>, String, Form);

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 2000).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);

    let (_dir, server) = labreport_support::start(&[("MELDEWERK_LOG__LEVEL", "warn")]);
    let pid = server.pid().expect("server runs");
    println!(
        "meldewerk labreport pipeline: {reports} laboratory reports, {workers} browser sessions"
    );

    let opening = Instant::now();
    let opened: Vec<Mutex<Option<Opened>>> = run_browsers(workers, reports, |jar, browser, i| {
        jar.clear();
        let (status, answer) =
            labreport_support::memento(&server, &standard(&format!("lab-bench-{i}")));
        assert_eq!(status, 200, "{answer}");
        let link = answer["magicLink"].as_str().unwrap();
        let landed = browser.get(&server.url(link));
        assert_eq!(landed.status(), 302);
        let index = landed.headers()["location"].to_str().unwrap().to_owned();
        let html = browser.get(&server.url(&index)).text().unwrap();
        let link = disease_link(&html, DISEASES[i % DISEASES.len()]).replace("&amp;", "&");
        let mut form = browser.form(&server.url(&link));
        assert_eq!(form.status, 200, "{}", form.html);
        fill_findings(&mut form, "POSITIVE");
        // The page itself is not needed to send it; thousands of them would only take memory.
        form.html = String::new();
        let path = link.split_once('?').unwrap().0.to_owned();
        Mutex::new(Some((jar.take(), path, form)))
    });
    println!(
        "forms opened:              {:>8.0} /s ({:.2} s, before the clock starts)",
        reports as f64 / opening.elapsed().as_secs_f64(),
        opening.elapsed().as_secs_f64()
    );

    let cpu_before = cpu_seconds(pid);
    let client_before = cpu_seconds(std::process::id());
    let written_before = written(pid);
    let started = Instant::now();
    run_browsers(workers, reports, |jar, browser, i| {
        let (cookies, path, form) = opened[i].lock().unwrap().take().expect("opened once");
        jar.restore(cookies);
        let response = browser.submit_to(&server, &path, &form);
        assert_eq!(response.status(), 303, "submission {i} refused");
    });
    let accepted = started.elapsed();
    println!(
        "form submissions accepted: {:>8.0} /s ({:.2} s)",
        reports as f64 / accepted.as_secs_f64(),
        accepted.as_secs_f64()
    );
    let deadline = Instant::now() + Duration::from_secs(600);
    while finished_in(&server, "labreport") < reports as u64 {
        assert!(Instant::now() < deadline, "reports never all finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    let all_final = started.elapsed();
    let cpu = cpu_seconds(pid) - cpu_before;
    let client_cpu = cpu_seconds(std::process::id()) - client_before;
    let writes = written(pid).since(written_before);
    let (handed, to_disk) = (
        kib_per_report(writes.handed, reports),
        kib_per_report(writes.to_disk, reports),
    );
    let sample: Value = server
        .get_as(
            labreport_support::USER,
            "/api/labreport/v1/reports/lab-bench-0?peek=true",
        )
        .json()
        .unwrap();
    assert_eq!(sample["status"], "SUCCESS", "{sample}");

    println!(
        "reports final:             {:>8.0} /s ({:.2} s from the first submission)",
        reports as f64 / all_final.as_secs_f64(),
        all_final.as_secs_f64()
    );
    println!(
        "server CPU per report:     {:>8.2} ms (from the form's submit)",
        cpu * 1000.0 / reports as f64
    );
    println!(
        "client CPU per report:     {:>8.2} ms (the browsers, on the same cores)",
        client_cpu * 1000.0 / reports as f64
    );
    println!(
        "disk writes per report:    {to_disk:>8.1} KiB ({handed:.1} KiB in write calls, sockets too)"
    );
    let note = format!("{reports} reports, {workers} browsers, from the form's submit");
    figure(
        "labreport pipeline: reports final",
        reports as f64 / all_final.as_secs_f64(),
        "reports/s",
        &note,
    );
    figure(
        "labreport pipeline: server CPU per report",
        cpu * 1000.0 / reports as f64,
        "ms",
        &note,
    );
    figure(
        "labreport pipeline: disk writes per report",
        to_disk,
        "KiB",
        &note,
    );
}
