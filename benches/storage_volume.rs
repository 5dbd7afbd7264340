//! Storage at volume: what many reports cost in disk, memory and start-up time.
//!
//! Run with `scripts/storage_volume.sh [REPORTS] [CACHE_MB]`, or `cargo bench --bench
//! storage_volume` with `BENCH_REPORTS` (default 100,000), `BENCH_WORKERS` (browser sessions,
//! default 8), `BENCH_CACHE_MB` (the server's `store.cache_capacity_mb`; unset: its default),
//! `BENCH_IDLE_SECS` (default 30), `BENCH_SAMPLE_RECORD` (a file to write the first report to, as
//! the store encodes it), `BENCH_COPY_TO` (a path to copy the data directory to once written, to
//! time more first starts on it), `BENCH_CRASH=1` (stop the server with SIGKILL after the writing
//! instead of SIGTERM: the first start then recovers from a crash, without the checkpoint a clean
//! stop writes). The data directory is a temporary one, removed afterwards.
//!
//! Each report goes the way a real one does: memento, magic link, form, signature, dispatch; the
//! simulated office acknowledges at once. Printed: resident memory while writing (samples and
//! the peak), bytes on disk (the store, the office's journal, the whole data directory), the
//! payload (submission, delivered message and receipt of every report, read back from the
//! store), the ratios of the two, and for three starts after the writing the time until
//! `/healthz` answers and the resident memory two seconds later; then CPU time and bytes
//! written by a server idling on the data.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use meldewerk_storage::{ReportKey, SledStore, Store};
use support::*;

const USER: &str = "bench";

/// Bytes allocated on disk under `path` (what `du` counts), leaving out `skip`.
fn disk_bytes(path: &Path, skip: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    if path == skip {
        return 0;
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let children = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| disk_bytes(&entry.path(), skip))
                .sum()
        })
        .unwrap_or(0);
    own + children
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Memento, magic link, form, signature, dispatch: one report the way a real one comes in.
fn dispatch_one(server: &Server, id: &str) {
    let link = magic_link(server, USER, &complete_notice(id));
    let browser = Browser::new();
    let mut form = browser.open_magic_link(server, &link);
    form.set("signatur.name", "Dr. Erika Beispiel");
    form.set("signatur.bestaetigt", "true");
    let response = browser.submit(server, &form);
    assert_eq!(response.status(), 303, "dispatch of {id} refused");
}

/// What the store keeps of the reports' content, summed over all of them.
#[derive(Default)]
struct Payload {
    submission: u64,
    message: u64,
    receipt: u64,
    /// The stored records as the store encodes them (JSON, byte fields as base64).
    encoded: u64,
}

impl Payload {
    fn total(&self) -> u64 {
        self.submission + self.message + self.receipt
    }
}

/// Reads every report back from the store (the server must be stopped).
fn payload(db: &Path, reports: usize) -> Payload {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let store = SledStore::open(db).expect("open the store");
    let mut sum = Payload::default();
    runtime.block_on(async {
        for i in 0..reports {
            let key = ReportKey {
                owner: USER.into(),
                module: "birthnotice".into(),
                id: format!("vol-{i}"),
            };
            let report = store.report(&key).await.unwrap().expect("report stored");
            let encoded = serde_json::to_vec(&report).unwrap();
            if let (0, Ok(path)) = (i, std::env::var("BENCH_SAMPLE_RECORD")) {
                std::fs::write(path, &encoded).expect("write the sample record");
            }
            sum.encoded += encoded.len() as u64;
            if let Some(submission) = &report.submission {
                sum.submission += serde_json::to_vec(submission).unwrap().len() as u64;
            }
            if let Some(message) = &report.message {
                sum.message += message.body.len() as u64;
            }
            sum.receipt += report.receipt.as_ref().map_or(0, |r| r.len() as u64);
        }
    });
    sum
}

/// A free port on loopback, so that a start can be timed from the spawn to the first answer.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the server on `data_dir`, and returns the time until `/healthz` answered and its
/// resident memory two seconds after the start; with `idle`, also its CPU ticks and bytes
/// written over that many seconds after that. Stops it with SIGTERM.
fn timed_start(data_dir: &Path, env: &[(&str, String)], idle: Option<u64>) -> (f64, u64, String) {
    let port = free_port();
    let mut command = Command::new(binary());
    command
        .arg("--data-dir")
        .arg(data_dir)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env_remove("MELDEWERK_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    // At info, the server logs how long its store and its transports took to open.
    let log_path = data_dir.join("starts.log");
    let log = std::fs::File::create(&log_path).expect("start log");
    command
        .env("MELDEWERK_LOG__LEVEL", "info")
        .env("NO_COLOR", "1")
        .stderr(log);
    let client = loopback_client()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let spawned = Instant::now();
    let mut child = command.spawn().expect("start meldewerk");
    let url = format!("http://127.0.0.1:{port}/healthz");
    loop {
        if client
            .get(&url)
            .send()
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        assert!(
            spawned.elapsed() < Duration::from_secs(120),
            "no answer from /healthz"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let startup = spawned.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2).saturating_sub(spawned.elapsed()));
    let pid = child.id();
    let rss = proc_field(pid, "status", "VmRSS");
    let idle = idle.map_or(String::new(), |secs| {
        let (ticks, before) = (cpu_ticks(pid), written(pid));
        std::thread::sleep(Duration::from_secs(secs));
        format!(
            "idle {secs} s: CPU {:.2} % of a core, {} bytes written",
            (cpu_ticks(pid) - ticks) as f64 / secs as f64,
            written(pid).since(before).to_disk
        )
    });
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "server did not stop cleanly: {status}");
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let opened = ["store", "transports"]
        .iter()
        .filter_map(|what| {
            let line = log
                .lines()
                .find(|l| l.contains(&format!("{what} opened")))?;
            let ms = line.rsplit("ms=").next()?.split_whitespace().next()?;
            Some(format!("{what} {ms} ms"))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let idle = match opened.is_empty() {
        true => idle,
        false if idle.is_empty() => format!("opened: {opened}"),
        false => format!("opened: {opened}; {idle}"),
    };
    (startup, rss, idle)
}

fn main() {
    let reports: usize = setting("BENCH_REPORTS", 100_000).max(1);
    let workers: usize = setting("BENCH_WORKERS", 8).max(1);
    let idle_secs: u64 = setting("BENCH_IDLE_SECS", 30);
    let cache_mb = std::env::var("BENCH_CACHE_MB").ok();

    let dir = DataDir::new();
    let data_dir = dir.path().to_path_buf();
    dir.add_user(USER);

    let mut env: Vec<(&str, String)> = vec![
        // Requests at warn, so that the log does not cost the writing; the checkpoint at info.
        (
            "MELDEWERK_LOG__LEVEL",
            "warn,meldewerk::startup=info".into(),
        ),
        ("NO_COLOR", "1".into()),
        (
            "MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS",
            "0".into(),
        ),
        ("MELDEWERK_ENGINE__ACK_POLL_INTERVAL_MS", "0".into()),
    ];
    if let Some(mb) = &cache_mb {
        env.push(("MELDEWERK_STORE__CACHE_CAPACITY_MB", mb.clone()));
    }
    let env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = Server::start(&dir, &env_refs);
    let pid = server.pid().expect("server runs");
    println!(
        "meldewerk storage volume: {reports} birth notices, {workers} browser sessions, \
         store.cache_capacity_mb = {}",
        cache_mb.as_deref().unwrap_or("default")
    );

    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let writing = AtomicBool::new(true);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= reports {
                    break;
                }
                dispatch_one(&server, &format!("vol-{i}"));
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        // Memory while writing, at every tenth of the reports.
        scope.spawn(|| {
            let mut shown = 0;
            while writing.load(Ordering::SeqCst) {
                let tenth = done.load(Ordering::SeqCst) * 10 / reports;
                if tenth > shown {
                    shown = tenth;
                    println!(
                        "  {:>3} % dispatched after {:>6.1} s: RSS {:>6.1} MiB, {} threads",
                        tenth * 10,
                        started.elapsed().as_secs_f64(),
                        proc_field(pid, "status", "VmRSS") as f64 / 1024.0,
                        proc_field(pid, "status", "Threads")
                    );
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let deadline = Instant::now() + Duration::from_secs(6 * 3600);
        while done.load(Ordering::SeqCst) < reports || finished(&server) < reports as u64 {
            assert!(Instant::now() < deadline, "reports never all finished");
            std::thread::sleep(Duration::from_millis(200));
        }
        writing.store(false, Ordering::SeqCst);
    });
    let elapsed = started.elapsed().as_secs_f64();
    let peak_kib = proc_field(pid, "status", "VmHWM");
    let written = proc_field(pid, "io", "write_bytes");
    // What stays once the work is done: memory held for the data, not for the load.
    std::thread::sleep(Duration::from_secs(5));
    let settled_kib = proc_field(pid, "status", "VmRSS");
    let crash = setting("BENCH_CRASH", 0) == 1;
    let stopping = Instant::now();
    if crash {
        server.kill();
    } else {
        assert!(server.terminate(), "server stops cleanly");
    }
    let stopped = stopping.elapsed().as_secs_f64();
    println!(
        "written and acknowledged in {elapsed:.0} s ({:.0} reports/s); peak RSS (VmHWM) \
         {:.1} MiB, 5 s later {:.1} MiB; {:.0} MiB written to disk",
        reports as f64 / elapsed,
        peak_kib as f64 / 1024.0,
        settled_kib as f64 / 1024.0,
        mib(written)
    );
    let checkpoints: Vec<String> = server
        .log()
        .lines()
        .filter(|l| l.contains("checkpoint written"))
        .filter_map(|l| {
            Some(format!(
                "{} ms",
                l.rsplit("ms=").next()?.split_whitespace().next()?
            ))
        })
        .collect();
    println!(
        "{} after {stopped:.2} s; checkpoints at the stop: {}",
        if crash {
            "killed (SIGKILL)"
        } else {
            "stopped (SIGTERM)"
        },
        if checkpoints.is_empty() {
            "none".to_string()
        } else {
            checkpoints.join(", ")
        }
    );

    let log = data_dir.join("server.log");
    let store_disk = disk_bytes(&data_dir.join("db"), &log);
    let journal_disk = disk_bytes(&data_dir.join("simulators"), &log);
    let all_disk = disk_bytes(&data_dir, &log);
    // sled writes pages larger than a quarter segment (128 KiB) to files of their own.
    let blobs_disk = disk_bytes(&data_dir.join("db").join("blobs"), &log);
    // The starts come before anything else opens the data: the first open of a sled database
    // replays the log written since its last open, and that is what the first start must pay.
    if let Ok(copy) = std::env::var("BENCH_COPY_TO") {
        // Before the first start, so that the copy's first open replays the whole log too.
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&data_dir)
            .arg(&copy)
            .status();
        assert!(copied.is_ok_and(|s| s.success()), "cannot copy to {copy}");
    }
    let mut slowest_start = (0f64, 0u64);
    let starts: Vec<String> = (1..=3)
        .map(|start| {
            let idle = (start == 3).then_some(idle_secs).filter(|s| *s > 0);
            let (startup, rss, idle) = timed_start(&data_dir, &env, idle);
            if startup > slowest_start.0 {
                slowest_start = (startup, rss);
            }
            format!(
                "start {start}: /healthz after {startup:.2} s; RSS after 2 s {:.1} MiB{}{idle}",
                rss as f64 / 1024.0,
                if idle.is_empty() { "" } else { "; " }
            )
        })
        .collect();
    let payload = payload(&data_dir.join("db"), reports);
    let per = |bytes: u64| bytes as f64 / reports as f64 / 1024.0;
    println!(
        "payload per report: submission {:.1} KiB, message {:.1} KiB, receipt {:.1} KiB = \
         {:.1} KiB (stored record {:.1} KiB); {:.1} MiB in all",
        per(payload.submission),
        per(payload.message),
        per(payload.receipt),
        per(payload.total()),
        per(payload.encoded),
        mib(payload.total())
    );
    let ratio = |bytes: u64| bytes as f64 / payload.total() as f64;
    println!(
        "on disk: store {:.1} MiB ({:.1} KiB/report, {:.2}x payload; {:.1} MiB of it in sled's \
         blob files); office journal {:.1} MiB ({:.2}x); data directory {:.1} MiB ({:.2}x)",
        mib(store_disk),
        per(store_disk),
        ratio(store_disk),
        mib(blobs_disk),
        mib(journal_disk),
        ratio(journal_disk),
        mib(all_disk),
        ratio(all_disk)
    );

    for start in starts {
        println!("{start}");
    }
    let note = format!(
        "{reports} stored reports, slowest of three starts after {}",
        if crash { "SIGKILL" } else { "a clean stop" }
    );
    figure(
        "stored reports: start-up until /healthz answers",
        slowest_start.0,
        "s",
        &note,
    );
    figure(
        "stored reports: RSS 2 s after that start",
        slowest_start.1 as f64 / 1024.0,
        "MiB",
        &note,
    );
    figure(
        "stored reports: peak RSS while writing",
        peak_kib as f64 / 1024.0,
        "MiB",
        &format!("{reports} reports written through the form"),
    );
    figure(
        "stored reports: data directory on disk",
        ratio(all_disk),
        "× payload",
        &format!("{reports} reports; store, office journal and the rest"),
    );
}
