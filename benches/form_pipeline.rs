//! Every module's reports end to end through its form, with authorities that answer at once:
//! the same measurement for the seven modules, one after the other, each on a server of its own.
//!
//! Run with `cargo bench --bench form_pipeline` (release build). For each module in
//! `BENCH_MODULES` (default: all seven, comma-separated), `BENCH_REPORTS` reports (default 300)
//! are prepared before the clock starts: memento, magic link (bedreport: the portal's link with
//! the user's credentials), the form page and, where the form asks for it, the signature.
//! Then `BENCH_WORKERS` browsers (default 8) send them, and the clock stops once the engine's
//! health counts every report final. The simulated authorities answer at once: the registry
//! office acknowledges without delay, the reporting system and the court mailbox are in-process
//! simulators without latency (their defaults). Printed per module: form submissions accepted
//! per second, reports final per second from the first submission, and the server's CPU time per
//! report (from `/proc`). Client and server share the machine's cores.
//!
//! `benches/pipeline.rs` and `benches/labreport_pipeline.rs` measure the birth notice and the
//! laboratory report alone, at larger counts and with more options.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/hospreport_common/mod.rs"]
mod hospreport_common;
#[path = "../tests/labreport_support/mod.rs"]
mod labreport_support;
#[path = "support/mod.rs"]
mod support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use support::*;

/// A form opened before the clock starts: its user's cookies, where it is sent, the form.
type Opened = (Vec<String>, String, Form);

/// The user every module's reports are sent as.
const USER: &str = "bench";

/// A server for `module`, with what its reports need (the laboratory's registry entries, a
/// facility certificate, the court mailbox account), and the user its reports are sent as.
fn start(module: &str) -> (DataDir, Server, &'static str) {
    let env = [
        ("MELDEWERK_LOG__LEVEL", "warn"),
        ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
        ("MELDEWERK_ENGINE__INBOX_INTERVAL_MS", "20"),
    ];
    match module {
        "labreport" => {
            let (dir, server) = labreport_support::start(&env);
            (dir, server, labreport_support::USER)
        }
        "hospreport" => {
            let (dir, server) = hospreport_common::start(&env);
            hospreport_common::deposit_certificate(&server, hospreport_common::KNOWN_BSNR);
            (dir, server, hospreport_common::USER)
        }
        "guardianship" => {
            let (dir, server) = common::court::court_server(&[USER], &env);
            (dir, server, USER)
        }
        _ => {
            let dir = DataDir::new();
            dir.add_user(USER);
            let server = Server::start(&dir, &env);
            (dir, server, USER)
        }
    }
}

/// The memento request of report `id` of `module`: the tests' complete request of each.
fn request(module: &str, id: &str) -> Value {
    match module {
        "birthnotice" => complete_notice(id),
        "birthdata" => {
            let mut body = complete_birth_data(id);
            body["geburtsangaben"]["uhrzeit"] = "10:15".into();
            body
        }
        "deathnotice" => complete_death_notice(id),
        "labreport" => labreport_support::standard(id),
        "hospreport" => hospreport_common::complete(Some(id), hospreport_common::KNOWN_BSNR),
        "bedreport" => common::demis::complete_bed_report(id),
        "guardianship" => common::court::memento_body(id),
        other => panic!("unknown module {other}; BENCH_MODULES takes {MODULES:?}"),
    }
}

/// The path a redirect points to.
fn location(response: &reqwest::blocking::Response) -> String {
    assert!(
        response.status().is_redirection(),
        "expected a redirect, got {}",
        response.status()
    );
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// Report `i` of `module` opened in `browser` the way its user opens it, ready to send: where
/// the form is posted, and the form.
fn open(server: &Server, browser: &Browser, module: &str, user: &str, i: usize) -> (String, Form) {
    let id = format!("form-{module}-{i}");
    let answer = server.memento_in(module, user, &request(module, &id));
    assert_eq!(answer.status(), 200, "memento of {id}");
    let answer: Value = answer.json().unwrap();
    let memento = answer["memento"].as_str().unwrap_or_default();
    let mut form = match module {
        "labreport" => {
            let landed = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
            let html = browser.get(&server.url(&location(&landed))).text().unwrap();
            let disease = labreport_support::DISEASES[i % labreport_support::DISEASES.len()];
            let link = labreport_support::disease_link(&html, disease).replace("&amp;", "&");
            let mut form = browser.form(&server.url(&link));
            labreport_support::fill_findings(&mut form, "POSITIVE");
            let path = link.split_once('?').unwrap().0.to_owned();
            return (path, finish(form));
        }
        "bedreport" => {
            // The portal's link: the user's credentials in the URL, the memento in the query.
            let base = server.base.replacen(
                "http://",
                &format!("http://{user}:correct%20horse%20battery@"),
                1,
            );
            let landed = browser.get(&format!(
                "{base}/bal/bedreport/pm/De/Bettenbelegung?m={memento}"
            ));
            browser.form(&server.url(&location(&landed)))
        }
        "hospreport" => {
            let landed = browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
            browser.form(&server.url(&location(&landed)))
        }
        "guardianship" => {
            // The link lands on the index of the three court forms; the clerk picks the first.
            browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
            browser.form(&server.url(&format!("/guardianship/BetreuungAnregung?m={memento}")))
        }
        _ => browser.open_magic_link(server, answer["magicLink"].as_str().unwrap()),
    };
    assert_eq!(form.status, 200, "form of {id}: {}", form.html);
    if form.html.contains("name=\"signatur.name\"") {
        form.set("signatur.name", "Dr. Erika Beispiel");
        form.set("signatur.bestaetigt", "true");
    }
    let path = form.action();
    (path, finish(form))
}

/// The form without its page: it is not needed to send it, and hundreds would only take memory.
fn finish(mut form: Form) -> Form {
    form.html = String::new();
    form
}

/// Measures `module` with `reports` reports and `workers` browsers; prints and records its
/// figures.
fn measure(module: &str, reports: usize, workers: usize) {
    let (_dir, server, user) = start(module);
    let pid = server.pid().expect("server runs");
    let opened: Vec<Mutex<Option<Opened>>> = run_browsers(workers, reports, |jar, browser, i| {
        jar.clear();
        let (path, form) = open(&server, browser, module, user, i);
        Mutex::new(Some((jar.take(), path, form)))
    });

    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    run_browsers(workers, reports, |jar, browser, i| {
        let (cookies, path, form) = opened[i].lock().unwrap().take().expect("opened once");
        jar.restore(cookies);
        let response = browser.submit_to(&server, &path, &form);
        // Every form but hospreport's answers 303; hospreport's waits for the decision and
        // redirects to its success page with 302.
        assert!(
            response.status().is_redirection(),
            "{module}: submission {i} refused: {:?}",
            page_errors(response)
        );
    });
    let accepted = started.elapsed().as_secs_f64();
    let deadline = Instant::now() + Duration::from_secs(600);
    while finished_in(&server, module) < reports as u64 {
        assert!(
            Instant::now() < deadline,
            "{module}: reports never all finished ({} of {reports})",
            finished_in(&server, module)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let all_final = started.elapsed().as_secs_f64();
    let cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000.0 / reports as f64;
    let (accepted_rate, final_rate) = (reports as f64 / accepted, reports as f64 / all_final);
    println!("{module:<13} {accepted_rate:>10.0} {final_rate:>10.0} {cpu_ms:>14.2}",);
    let note =
        format!("{reports} reports through the form, {workers} browsers, from the first submit");
    figure(
        &format!("{module}: reports final through the form"),
        final_rate,
        "reports/s",
        &note,
    );
    figure(
        &format!("{module}: server CPU per report"),
        cpu_ms,
        "ms",
        &note,
    );
}

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 300).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);
    let modules = std::env::var("BENCH_MODULES").unwrap_or_else(|_| MODULES.join(","));
    println!(
        "meldewerk form pipeline: {reports} reports per module, {workers} browser sessions, \
         authorities answering at once"
    );
    println!(
        "{:<13} {:>10} {:>10} {:>14}",
        "module", "accepted/s", "final/s", "CPU/report ms"
    );
    for module in modules.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        measure(module, reports, workers);
    }
}
