//! Throughput of the HTTP API against the same server's cheapest endpoint, measured side by side
//! in one run: `/healthz`, authenticated memento creation, and result polling (`peek=true`).
//!
//! Run with `cargo bench --bench http_throughput` (release build). Each endpoint is loaded for
//! `BENCH_SECONDS` seconds (default 5) by `BENCH_CONNECTIONS` keep-alive
//! connections (default 4), one thread each, over loopback. The load generator writes raw HTTP/1.1
//! so that the client's own cost stays small next to the server's. The numbers that matter are the
//! ratios: both sides share the same two cores.

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;

/// One keep-alive connection sending the same request again and again.
fn load(address: &str, request: &[u8], until: Instant) -> u64 {
    let stream = TcpStream::connect(address).expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut done = 0;
    let mut line = String::new();
    while Instant::now() < until {
        writer.write_all(request).unwrap();
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert!(
            line.starts_with("HTTP/1.1 200"),
            "unexpected answer: {line}"
        );
        let mut length = 0usize;
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        done += 1;
    }
    done
}

fn requests_per_second(address: &str, request: Vec<u8>, connections: usize, seconds: u64) -> f64 {
    let until = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let total: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|_| {
                let request = request.clone();
                scope.spawn(move || load(address, &request, until))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    total as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let connections: usize = std::env::var("BENCH_CONNECTIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);

    let dir = DataDir::new();
    dir.add_user("bench");
    let server = Server::start(&dir, &[("MELDEWERK_LOG__LEVEL", "warn")]);
    let id = dispatch(&server, "bench", &complete_notice("bench-1"));
    server.wait_for_status("bench", &id, "SUCCESS");
    let address = server.base.trim_start_matches("http://").to_string();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("bench:{PASSWORD}"));

    let healthz = format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\n\r\n").into_bytes();
    let body = serde_json::to_string(&complete_notice("bench-memento")).unwrap();
    let memento = format!(
        "POST /api/birthnotice/v1/memento HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes();
    let peek = format!(
        "GET /api/birthnotice/v1/reports/{id}?peek=true HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\n\r\n"
    )
    .into_bytes();

    // Warm-up: the first authenticated request runs argon2 once; later ones hit the cache.
    requests_per_second(&address, memento.clone(), 1, 1);

    let health_rps = requests_per_second(&address, healthz, connections, seconds);
    let memento_rps = requests_per_second(&address, memento, connections, seconds);
    let peek_rps = requests_per_second(&address, peek, connections, seconds);

    println!("meldewerk HTTP throughput ({connections} keep-alive connections, {seconds} s each, one run)");
    println!("{:<44} {:>10} {:>8}", "endpoint", "req/s", "ratio");
    println!("{:<44} {:>10.0} {:>8.2}", "GET /healthz", health_rps, 1.0);
    println!(
        "{:<44} {:>10.0} {:>8.2}",
        "POST /api/birthnotice/v1/memento",
        memento_rps,
        memento_rps / health_rps
    );
    println!(
        "{:<44} {:>10.0} {:>8.2}",
        "GET /api/birthnotice/v1/reports/{id}?peek",
        peek_rps,
        peek_rps / health_rps
    );
}
