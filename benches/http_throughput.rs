//! Throughput of the HTTP API against the same server's cheapest endpoint, measured side by side
//! in one run: `/healthz`, authenticated memento creation of every module (labreport's with its
//! facility looked up in the registry), and result polling (`peek=true`) of a final report of
//! every module, each sent the way its users send it before the measurement starts.
//!
//! Run with `cargo bench --bench http_throughput` (release build). The endpoints take turns
//! in slices of `BENCH_SLICE_MS` milliseconds (default 1000) for `BENCH_ROUNDS` rounds (default
//! 10), each loaded by `BENCH_CONNECTIONS` keep-alive connections (default 4), one thread each,
//! over loopback. Taking turns means that whatever else the machine does hits all of them alike, so
//! the ratios hold even when the absolute numbers move. The load generator writes raw HTTP/1.1 so
//! that the client's own cost stays small next to the server's; client and server share the cores.
//!
//! Beside each endpoint's rate it prints the CPU time per request (user and system) of the server
//! and of the load generator, which share the cores: what the ratios are made of.
//!
//! `BENCH_ONLY` (a comma-separated list of parts of endpoint names, e.g. `labreport/v1/memento`)
//! measures only the endpoints it names, beside `/healthz`: for a profile of one path.
//!
//! With `BENCH_LOAD=wrk` each slice is loaded by `wrk` instead (`apt-get install wrk`), two
//! threads and `BENCH_CONNECTIONS` connections, slices rounded up to whole seconds: the same
//! measurement taken with an outside tool, as operators take it.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/hospreport_common/mod.rs"]
mod hospreport_common;
#[path = "../tests/labreport_support/mod.rs"]
mod labreport_support;
#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use support::*;

/// One keep-alive connection sending the same request again and again.
fn load(address: &str, request: &[u8], until: Instant) -> u64 {
    let mut connection = RawConnection::open(address);
    let mut done = 0;
    while Instant::now() < until {
        connection.ok(request);
        done += 1;
    }
    done
}

/// Requests answered by `connections` connections within `slice`, and the time it took.
fn run_slice(address: &str, request: &[u8], connections: usize, slice: Duration) -> (u64, f64) {
    let until = Instant::now() + slice;
    let started = Instant::now();
    let total: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|_| scope.spawn(move || load(address, request, until)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    (total, started.elapsed().as_secs_f64())
}

/// Requests per second `wrk` reached within `slice` for `request` (`method`, `path`, headers and
/// body as `wrk`'s Lua settings); every answer must be a success.
fn run_wrk(base: &str, request: &WrkRequest, connections: usize, slice: Duration) -> (u64, f64) {
    let seconds = slice.as_secs_f64().ceil().max(1.0) as u64;
    let script = tempfile::NamedTempFile::new().expect("temporary file");
    std::fs::write(script.path(), request.lua()).expect("write the wrk script");
    let output = std::process::Command::new("wrk")
        .args([
            &format!("-t{}", connections.clamp(1, 2)),
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            "-s",
        ])
        .arg(script.path())
        .arg(format!("{base}{}", request.path))
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "wrk failed: {text}");
    assert!(!text.contains("Non-2xx"), "unexpected answers: {text}");
    let total: u64 = text
        .lines()
        .find_map(|line| line.trim().split_once(" requests in "))
        .and_then(|(count, _)| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("no request count in wrk's output: {text}"));
    (total, seconds as f64)
}

/// One endpoint's request, for `wrk`.
struct WrkRequest {
    method: &'static str,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
}

impl WrkRequest {
    /// `wrk`'s Lua settings for this request.
    fn lua(&self) -> String {
        // Long brackets: the text goes in as it is, without Lua's escapes.
        let mut lua = format!("wrk.method = [==[{}]==]\n", self.method);
        for (name, value) in &self.headers {
            lua.push_str(&format!(
                "wrk.headers[ [==[{name}]==] ] = [==[{value}]==]\n"
            ));
        }
        if let Some(body) = &self.body {
            lua.push_str(&format!("wrk.body = [==[{body}]==]\n"));
        }
        lua
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// The tests' complete parents' birth data, with a valid time of birth.
fn birth_data(id: &str) -> serde_json::Value {
    let mut body = complete_birth_data(id);
    body["geburtsangaben"]["uhrzeit"] = "10:15".into();
    body
}

/// One final report of every module, sent the way its users send it: `(module, user, id)`.
fn final_reports(server: &Server) -> Vec<(&'static str, &'static str, String)> {
    let mut reports = Vec::new();
    for (module, body) in [
        ("birthnotice", complete_notice("poll-birth")),
        ("birthdata", birth_data("poll-data")),
        ("deathnotice", complete_death_notice("poll-death")),
    ] {
        let id = dispatch_in(server, module, "bench", &body);
        server.wait_for_status_in(module, "bench", &id, "SUCCESS");
        reports.push((module, "bench", id));
    }
    let lab = labreport_support::send(
        server,
        &labreport_support::standard("poll-lab"),
        "Influenza",
    );
    server.wait_for_status_in("labreport", labreport_support::USER, &lab, "SUCCESS");
    reports.push(("labreport", labreport_support::USER, lab));
    let (browser, form) = hospreport_common::open(
        server,
        &hospreport_common::complete(Some("poll-hosp"), hospreport_common::KNOWN_BSNR),
    );
    hospreport_common::send(server, &browser, &form);
    server.wait_for_status_in(
        "hospreport",
        hospreport_common::USER,
        "poll-hosp",
        "SUCCESS",
    );
    reports.push(("hospreport", hospreport_common::USER, "poll-hosp".into()));
    // A direct bed occupancy report is decided within its request.
    let bed = server.post_as(
        "bench",
        "/api/bedreport/v1/report",
        &common::demis::complete_bed_report("poll-bed"),
    );
    assert_eq!(bed.status(), 200, "{}", bed.text().unwrap_or_default());
    reports.push(("bedreport", "bench", "poll-bed".into()));
    let answer: serde_json::Value = server
        .memento_in(
            "guardianship",
            "bench",
            &common::court::memento_body("poll-court"),
        )
        .json()
        .unwrap();
    let browser = Browser::new();
    browser.get(&server.url(answer["magicLink"].as_str().unwrap()));
    let memento = answer["memento"].as_str().unwrap();
    let mut form =
        browser.form(&server.url(&format!("/guardianship/BetreuungAnregung?m={memento}")));
    form.set(
        "betroffener.gegenwaertigerAufenthalt",
        "Station 4B, Zimmer 12",
    );
    assert_eq!(browser.submit(server, &form).status(), 303);
    server.wait_for_status_in("guardianship", "bench", "poll-court", "SUCCESS");
    reports.push(("guardianship", "bench", "poll-court".into()));
    reports
}

fn main() {
    let rounds: usize = setting("BENCH_ROUNDS", 10).max(1);
    let slice = Duration::from_millis(setting("BENCH_SLICE_MS", 1000));
    let connections: usize = setting("BENCH_CONNECTIONS", 4);
    let with_wrk = std::env::var("BENCH_LOAD").is_ok_and(|load| load == "wrk");

    // The laboratory reports' facility and customer scope come with the data directory; the
    // hospital's user sends hospitalisation reports, the court mailbox account is granted to
    // `bench`.
    let dir = labreport_support::data_dir();
    dir.add_user("bench");
    dir.add_user(hospreport_common::USER);
    labreport_support::ok(&dir, &["user", "customer", "bench", "K-1"]);
    let server = Server::start(
        &dir,
        &[
            ("MELDEWERK_LOG__LEVEL", "warn"),
            ("MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS", "0"),
        ],
    );
    common::court::configure_account(&server, "bench");
    hospreport_common::deposit_certificate(&server, hospreport_common::KNOWN_BSNR);
    let address = server.base.trim_start_matches("http://").to_string();
    let auth_of =
        |user: &str| base64::engine::general_purpose::STANDARD.encode(format!("{user}:{PASSWORD}"));
    let auth = auth_of("bench");

    let healthz = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n").into_bytes();
    let post = |path: &str, body: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    // Every module's memento, each with the tests' complete request.
    let mementos: Vec<(String, String)> = [
        ("birthnotice", complete_notice("bench-memento")),
        ("birthdata", complete_birth_data("bench-data")),
        ("deathnotice", complete_death_notice("bench-death")),
        ("labreport", labreport_support::standard("bench-lab")),
        (
            "hospreport",
            hospreport_common::complete(Some("bench-hosp"), "123456789"),
        ),
        ("bedreport", common::demis::complete_bed_report("bench-bed")),
        ("guardianship", common::court::memento_body("bench-court")),
    ]
    .into_iter()
    .map(|(module, body)| (format!("/api/{module}/v1/memento"), body.to_string()))
    .collect();
    let memento = post(&mementos[0].0, &mementos[0].1);
    // Warm-up: the first authenticated request runs argon2 once; later ones hit the cache.
    run_slice(&address, &memento, 1, Duration::from_millis(500));

    // One final report of every module, polled with `peek=true` by the user who sent it.
    let polled = final_reports(&server);
    let mut wrk_requests = vec![WrkRequest {
        method: "GET",
        path: "/healthz".into(),
        headers: vec![],
        body: None,
    }];
    let mut endpoints: Vec<(String, Vec<u8>)> = vec![("GET /healthz".into(), healthz)];
    let authorization = ("Authorization", format!("Basic {auth}"));
    for (path, body) in &mementos {
        wrk_requests.push(WrkRequest {
            method: "POST",
            path: path.clone(),
            headers: vec![
                authorization.clone(),
                ("Content-Type", "application/json".into()),
            ],
            body: Some(body.clone()),
        });
        endpoints.push((format!("POST {path}"), post(path, body)));
    }
    for (module, user, id) in &polled {
        let path = format!("/api/{module}/v1/reports/{id}?peek=true");
        let auth = auth_of(user);
        endpoints.push((
            format!("GET /api/{module}/v1/reports/{{id}}?peek"),
            format!(
                "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\n\r\n"
            )
            .into_bytes(),
        ));
        wrk_requests.push(WrkRequest {
            method: "GET",
            path,
            headers: vec![("Authorization", format!("Basic {auth}"))],
            body: None,
        });
    }
    // Parts left empty (`BENCH_ONLY=`, a trailing comma) name nothing; none at all: everything.
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let parts: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if !parts.is_empty() {
        let wanted = |name: &str| parts.iter().any(|part| name.contains(part));
        let keep: Vec<bool> = endpoints
            .iter()
            .enumerate()
            .map(|(i, (name, _))| i == 0 || wanted(name))
            .collect();
        let mut kept = keep.iter().copied();
        endpoints.retain(|_| kept.next().unwrap_or(false));
        let mut kept = keep.iter().copied();
        wrk_requests.retain(|_| kept.next().unwrap_or(false));
    }
    let count = endpoints.len();
    let pid = server.pid().expect("server runs");
    let mut totals = vec![(0u64, 0f64); count];
    let mut server_ticks = vec![0u64; count];
    let mut client_ticks = vec![0u64; count];
    let mut round_ratios: Vec<Vec<f64>> = vec![Vec::new(); count];
    for _ in 0..rounds {
        let mut round = vec![0f64; count];
        for (i, (_, request)) in endpoints.iter().enumerate() {
            let client = || cpu_ticks_with_children(std::process::id());
            let ticks_before = (cpu_ticks(pid), client());
            let (done, took) = if with_wrk {
                run_wrk(&server.base, &wrk_requests[i], connections, slice)
            } else {
                run_slice(&address, request, connections, slice)
            };
            server_ticks[i] += cpu_ticks(pid) - ticks_before.0;
            client_ticks[i] += client() - ticks_before.1;
            totals[i].0 += done;
            totals[i].1 += took;
            round[i] = done as f64 / took;
        }
        for (ratios, rate) in round_ratios.iter_mut().zip(&round) {
            ratios.push(rate / round[0]);
        }
    }

    println!(
        "meldewerk HTTP throughput: {rounds} rounds of {} ms per endpoint, {connections} keep-alive connections{}",
        slice.as_millis(),
        if with_wrk { " (wrk)" } else { "" }
    );
    println!(
        "{:<44} {:>10} {:>8} {:>14} {:>10} {:>10}",
        "endpoint", "req/s", "ratio", "median ratio", "server µs", "client µs"
    );
    let health_rps = totals[0].0 as f64 / totals[0].1;
    for (i, (name, _)) in endpoints.iter().enumerate() {
        let rps = totals[i].0 as f64 / totals[i].1;
        // CPU per request of the server and of this load generator (user and system, in the
        // kernel's 10 ms ticks over every round).
        let per_request = |ticks: u64| ticks as f64 * 10_000.0 / totals[i].0.max(1) as f64;
        println!(
            "{:<44} {:>10.0} {:>8.2} {:>14.2} {:>10.1} {:>10.1}",
            name,
            rps,
            rps / health_rps,
            median(round_ratios[i].clone()),
            per_request(server_ticks[i]),
            per_request(client_ticks[i])
        );
        let note = format!(
            "{rounds} rounds of {} ms, {connections} connections{}; median round {:.2}",
            slice.as_millis(),
            if with_wrk { ", wrk" } else { "" },
            median(round_ratios[i].clone())
        );
        if i == 0 {
            figure("/healthz", rps, "req/s", &note);
        } else {
            figure(name, rps / health_rps, "× /healthz", &note);
        }
    }
}
