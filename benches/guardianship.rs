//! Court messages: how fast the engine hydrates them, and what downloading a large archive
//! costs the server.
//!
//! Run with `cargo bench --bench guardianship` (release build). Two parts, one server:
//! 1. **Hydration.** `BENCH_MESSAGES` court messages (default 1,000) of `BENCH_MESSAGE_KB`
//!    (default 100 KB: the XJustiz XML and one attachment) are dropped into a mailbox whose
//!    account is not configured yet, with the simulated court mailbox at zero latency; then the
//!    account is configured, and the time until every message is listed hydrated is taken.
//!    Printed: messages hydrated per second, and the server's CPU time per message (`/proc`).
//! 2. **Download.** The archive of the first message is replaced on disk by a valid ZIP of
//!    `BENCH_ARCHIVE_MB` (default 200 MB, stored, random bytes), since the simulator holds
//!    messages in memory and takes 10 MiB at most. It is downloaded `BENCH_ROUNDS` times
//!    (default 3) while a thread samples the server's resident memory every 2 ms. Printed: the
//!    archive's size, the server's peak RSS growth over its RSS before (goal: under 20 MB), the
//!    download's throughput beside that of the same file sent over a loopback TCP connection
//!    by a plain copy (the `cat` of the goal; goal: at least 0.5 ×).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/mod.rs"]
mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::court::*;
use common::*;
use support::*;

/// Reads everything from `reader` into nothing; the bytes read.
fn drain(mut reader: impl Read) -> u64 {
    let mut buffer = vec![0u8; 256 * 1024];
    let mut total = 0;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return total,
            Ok(n) => total += n as u64,
            Err(e) => panic!("reading failed: {e}"),
        }
    }
}

/// The file sent over a loopback TCP connection by a plain copy, read into nothing: seconds.
fn loopback_copy(path: &std::path::Path) -> f64 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let path = path.to_path_buf();
    let sender = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut file = std::fs::File::open(path).unwrap();
        std::io::copy(&mut file, &mut socket).unwrap();
        socket.flush().unwrap();
    });
    let started = Instant::now();
    let got = drain(TcpStream::connect(address).unwrap());
    let took = started.elapsed().as_secs_f64();
    sender.join().unwrap();
    assert!(got > 0);
    took
}

fn main() {
    let messages: usize = setting("BENCH_MESSAGES", 1000).max(1);
    let message_kb: usize = setting("BENCH_MESSAGE_KB", 100).max(1);
    let archive_mb: u64 = setting("BENCH_ARCHIVE_MB", 200).max(1);
    let rounds: usize = setting("BENCH_ROUNDS", 3).max(1);

    let (dir, server) = quick_server(&["betreuung"], &[("MELDEWERK_LOG__LEVEL", "warn")]);
    let pid = server.pid().unwrap();

    // 1. Hydration.
    let attachment = vec![b'x'; (message_kb * 1024).saturating_sub(BESCHLUSS.len())];
    for _ in 0..messages {
        drop_court_message(
            &server,
            &[
                ("xjustiz_nachricht.xml", BESCHLUSS),
                ("anlage.pdf", &attachment),
            ],
        );
    }
    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    configure_account(&server, "betreuung");
    loop {
        let processed = server.actor("hydration:egvp")["processed"]
            .as_u64()
            .unwrap_or(0);
        if processed as usize >= messages {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "hydration took too long"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    println!(
        "hydration: {messages} messages of {message_kb} KB in {took:.2} s: {:.0} messages/s, \
         server CPU {:.2} ms per message",
        messages as f64 / took,
        cpu * 1000.0 / messages as f64
    );
    figure(
        "court messages hydrated",
        messages as f64 / took,
        "messages/s",
        &format!("{messages} messages of {message_kb} KB, court mailbox without latency"),
    );
    let (_, listing) = list(&server, "betreuung", "");
    let hydrated = listing
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["hydratedAt"].is_null())
        .count();
    assert_eq!(hydrated, messages, "every message hydrated");

    // 2. Download of a large archive.
    let id = listing[0]["id"].as_u64().unwrap();
    let archive = dir.path().join(format!("court-messages/{id}.zip"));
    let write = Command::new("python3")
        .args([
            "-c",
            "import os, sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_STORED, allowZip64=True) as z:\n\
             \x20   with z.open('anlage.bin', 'w', force_zip64=True) as f:\n\
             \x20       for _ in range(int(sys.argv[2])):\n\
             \x20           f.write(os.urandom(1024 * 1024))\n",
        ])
        .arg(&archive)
        .arg(archive_mb.to_string())
        .status()
        .unwrap();
    assert!(write.success());
    let size = std::fs::metadata(&archive).unwrap().len();
    let url = server.url(&format!("{API}/download/{id}"));
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()
        .unwrap();
    let (mut growth_mb, mut ratios) = (0f64, Vec::new());
    for round in 1..=rounds {
        let before = proc_field(pid, "status", "VmRSS");
        let peak = Arc::new(AtomicU64::new(before));
        let sampling = Arc::new(AtomicBool::new(true));
        let sampler = {
            let (peak, sampling) = (Arc::clone(&peak), Arc::clone(&sampling));
            std::thread::spawn(move || {
                while sampling.load(Ordering::Relaxed) {
                    peak.fetch_max(proc_field(pid, "status", "VmRSS"), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let started = Instant::now();
        let response = client
            .get(&url)
            .basic_auth("betreuung", Some(PASSWORD))
            .send()
            .unwrap();
        assert_eq!(response.status(), 200);
        let got = drain(response);
        let download = started.elapsed().as_secs_f64();
        sampling.store(false, Ordering::Relaxed);
        sampler.join().unwrap();
        assert_eq!(got, size);
        let copy = loopback_copy(&archive);
        let mb = size as f64 / 1_048_576.0;
        let grown = (peak.load(Ordering::Relaxed).saturating_sub(before)) as f64 / 1024.0;
        growth_mb = growth_mb.max(grown);
        ratios.push(copy / download);
        println!(
            "download {round}: {mb:.0} MB archive; server RSS {} MB before, peak growth {:.1} MB; \
             {:.0} MB/s over HTTP, {:.0} MB/s plain loopback copy: {:.2} ×",
            before / 1024,
            grown,
            mb / download,
            mb / copy,
            copy / download
        );
    }
    let note = format!("{archive_mb} MB archive, {rounds} downloads, RSS sampled every 2 ms");
    figure(
        "archive download: server RSS growth (largest)",
        growth_mb,
        "MB",
        &note,
    );
    ratios.sort_by(f64::total_cmp);
    figure(
        "archive download: throughput vs. loopback copy (slowest)",
        ratios[0],
        "×",
        &note,
    );
}
