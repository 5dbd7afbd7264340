//! The end-to-end pipeline: form submissions through to final, acknowledged reports.
//!
//! Run with `cargo bench --bench pipeline` (release build). `BENCH_REPORTS` birth notices
//! (default 500) are prepared (memento and magic link, not timed), then `BENCH_WORKERS` browsers
//! (default 8) open the forms and send them, each serving one user after the other with its
//! cookies cleared in between (`BENCH_NEW_BROWSERS=1`: a new browser, i.e. a new client thread
//! and connection, per user); the simulated office acknowledges at once
//! (`ack_delay_ms = 0`). Printed: form submissions accepted per second, reports per second from
//! the first submission until every report is final (read from the engine's health), and the
//! server's and the browsers' CPU time per report (from `/proc`). Client and server share the
//! machine's cores.
//!
//! With `BENCH_OPEN_FIRST=1` every form is opened (magic link, form page) before the clock starts,
//! and the browsers then only send them: what is timed is the pipeline alone, from the form's
//! submit to the final, acknowledged report with its receipt.
//!
//! With `BENCH_PHASES=1` the module is paused while the forms are sent and resumed once all are
//! accepted, so that the two halves are measured apart: the HTTP side (form pages, checks,
//! storing the report) and the engine (message built, signed, delivered, acknowledged, stored).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use support::*;

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 500).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);
    let phases = setting("BENCH_PHASES", 0) == 1;
    let new_browsers = setting("BENCH_NEW_BROWSERS", 0) == 1;
    let open_first = setting("BENCH_OPEN_FIRST", 0) == 1;
    assert!(
        !(open_first && new_browsers),
        "BENCH_OPEN_FIRST keeps each user's cookies for the browser that sends the form; \
         it cannot be combined with BENCH_NEW_BROWSERS"
    );

    let dir = DataDir::new();
    dir.add_user("bench");
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_LOG__LEVEL", "warn"),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
            ("MELDEWERK_ENGINE__INBOX_INTERVAL_MS", "20"),
        ],
    );
    let pid = server.pid().expect("server runs");
    println!("meldewerk pipeline: {reports} birth notices, {workers} browser sessions");
    let links: Vec<String> = (0..reports)
        .map(|i| magic_link(&server, "bench", &complete_notice(&format!("pipe-{i}"))))
        .collect();

    if phases {
        let paused = server.admin_post("/admin/api/v1/modules/birthnotice/pause");
        assert_eq!(paused.status(), 200, "pausing the module");
    }
    // With BENCH_OPEN_FIRST every form is opened (magic link, form page) before the clock starts,
    // so that what is timed is the pipeline alone: form submit to final report.
    let opened: Vec<Mutex<Option<Opened>>> = if open_first {
        let opening = Instant::now();
        let opened = run_browsers(workers, reports, |jar, browser, i| {
            jar.clear();
            let form = signed_form(browser, &server, &links[i]);
            Some((jar.take(), form))
        });
        println!(
            "forms opened:              {:>8.0} /s ({:.2} s, before the clock starts)",
            reports as f64 / opening.elapsed().as_secs_f64(),
            opening.elapsed().as_secs_f64()
        );
        opened.into_iter().map(Mutex::new).collect()
    } else {
        Vec::new()
    };

    let cpu_before = cpu_seconds(pid);
    let client_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    run_browsers(workers, reports, |jar, browser, i| {
        let fresh = new_browsers.then(Browser::new);
        let browser = fresh.as_ref().unwrap_or(browser);
        let form = match opened.get(i) {
            Some(slot) => {
                let (cookies, form) = slot.lock().unwrap().take().expect("opened once");
                jar.restore(cookies);
                form
            }
            None => {
                jar.clear();
                signed_form(browser, &server, &links[i])
            }
        };
        let response = browser.submit(&server, &form);
        assert_eq!(response.status(), 303, "submission {i} refused");
    });
    let accepted = started.elapsed();
    let cpu_accepted = cpu_seconds(pid);
    let client_cpu = cpu_seconds(std::process::id()) - client_before;
    // Printed at once, so that a profiler can be started for the engine's phase alone.
    use std::io::Write;
    println!(
        "form submissions accepted: {:>8.0} /s ({:.2} s)",
        reports as f64 / accepted.as_secs_f64(),
        accepted.as_secs_f64()
    );
    std::io::stdout().flush().ok();
    let engine_started = std::time::Instant::now();
    if phases {
        let resumed = server.admin_post("/admin/api/v1/modules/birthnotice/resume");
        assert_eq!(resumed.status(), 200, "resuming the module");
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    while finished(&server) < reports as u64 {
        assert!(Instant::now() < deadline, "reports never all finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    let all_final = started.elapsed();
    let engine_took = engine_started.elapsed();
    let cpu_final = cpu_seconds(pid);
    let cpu = cpu_final - cpu_before;

    println!(
        "reports final:             {:>8.0} /s ({:.2} s from the first submission)",
        reports as f64 / all_final.as_secs_f64(),
        all_final.as_secs_f64()
    );
    println!(
        "server CPU per report:     {:>8.2} ms ({})",
        cpu * 1000.0 / reports as f64,
        if open_first {
            "from the form's submit"
        } else {
            "incl. form pages and magic links"
        }
    );
    println!(
        "client CPU per report:     {:>8.2} ms (the browsers, on the same cores)",
        client_cpu * 1000.0 / reports as f64
    );
    let note = format!(
        "birthnotice, {reports} reports, {workers} browsers, {}",
        if open_first {
            "from the form's submit"
        } else {
            "whole browser flow"
        }
    );
    figure(
        "birthnotice pipeline: reports final",
        reports as f64 / all_final.as_secs_f64(),
        "reports/s",
        &note,
    );
    figure(
        "birthnotice pipeline: server CPU per report",
        cpu * 1000.0 / reports as f64,
        "ms",
        &note,
    );
    if phases {
        let per_report = |seconds: f64| seconds * 1000.0 / reports as f64;
        println!(
            "  while sending the forms: {:>8.2} ms (module paused)",
            per_report(cpu_accepted - cpu_before)
        );
        println!(
            "  in the engine alone:     {:>8.2} ms ({:.0} reports/s final after the resume)",
            per_report(cpu_final - cpu_accepted),
            reports as f64 / engine_took.as_secs_f64()
        );
    }
}

/// A form opened before the clock starts, with the cookies of its user's session.
type Opened = (Vec<String>, Form);

/// The form behind `link`, opened by `browser` and signed, ready to send.
fn signed_form(browser: &Browser, server: &Server, link: &str) -> Form {
    let mut form = browser.open_magic_link(server, link);
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    // The page itself is not needed to send it; 3,000 of them would only take memory.
    form.html = String::new();
    form
}
