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
//! With `BENCH_PHASES=1` the module is paused while the forms are sent and resumed once all are
//! accepted, so that the two halves are measured apart: the HTTP side (form pages, checks,
//! storing the report) and the engine (message built, signed, delivered, acknowledged, stored).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use support::*;

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 500).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);
    let phases = setting("BENCH_PHASES", 0) == 1;
    let new_browsers = setting("BENCH_NEW_BROWSERS", 0) == 1;

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
    let links: Vec<String> = (0..reports)
        .map(|i| magic_link(&server, "bench", &complete_notice(&format!("pipe-{i}"))))
        .collect();

    if phases {
        let paused = server.admin_post("/admin/api/v1/modules/birthnotice/pause");
        assert_eq!(paused.status(), 200, "pausing the module");
    }
    let next = AtomicUsize::new(0);
    let cpu_before = cpu_seconds(pid);
    let client_before = cpu_seconds(std::process::id());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let jar = std::sync::Arc::new(SessionJar::default());
                let kept = Browser::with_cookies(jar.clone());
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(link) = links.get(i) else { break };
                    jar.clear();
                    let fresh = new_browsers.then(Browser::new);
                    let browser = fresh.as_ref().unwrap_or(&kept);
                    let mut form = browser.open_magic_link(&server, link);
                    form.set("signatur.name", "Dr. Erika Beispiel");
                    form.set("signatur.bestaetigt", "true");
                    let response = browser.submit(&server, &form);
                    assert_eq!(response.status(), 303, "submission {i} refused");
                }
            });
        }
    });
    let accepted = started.elapsed();
    let cpu_accepted = cpu_seconds(pid);
    let client_cpu = cpu_seconds(std::process::id()) - client_before;
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

    println!("meldewerk pipeline: {reports} birth notices, {workers} browser sessions");
    println!(
        "form submissions accepted: {:>8.0} /s ({:.2} s)",
        reports as f64 / accepted.as_secs_f64(),
        accepted.as_secs_f64()
    );
    println!(
        "reports final:             {:>8.0} /s ({:.2} s from the first submission)",
        reports as f64 / all_final.as_secs_f64(),
        all_final.as_secs_f64()
    );
    println!(
        "server CPU per report:     {:>8.2} ms (incl. form pages and magic links)",
        cpu * 1000.0 / reports as f64
    );
    println!(
        "client CPU per report:     {:>8.2} ms (the browsers, on the same cores)",
        client_cpu * 1000.0 / reports as f64
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
