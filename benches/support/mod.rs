//! What the benchmarks share: their settings from the environment, the server process's own
//! figures from `/proc`, and the count of reports the engine finished.
#![allow(dead_code)] // each benchmark uses a different subset

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use reqwest::header::HeaderValue;
use serde_json::Value;

use crate::common::{Browser, Server};

/// The benchmark setting `name` from the environment, or `default`.
pub fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A field of `/proc/<pid>/<file>`: `status` fields in KiB (`VmRSS`, `VmHWM`, `Threads`),
/// `io` fields in bytes (`write_bytes`: what reached the block layer). 0 when unreadable.
pub fn proc_field(pid: u32, file: &str, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Bytes a process wrote: handed to write calls, files and sockets alike (`wchar`), and sent
/// towards the disk (`write_bytes`: pages as the process dirtied them, so a page written out and
/// dirtied again counts again).
#[derive(Clone, Copy, Debug)]
pub struct Written {
    /// `wchar`.
    pub handed: u64,
    /// `write_bytes`.
    pub to_disk: u64,
}

impl Written {
    /// What was written after `before` was read.
    pub fn since(self, before: Written) -> Written {
        Written {
            handed: self.handed.saturating_sub(before.handed),
            to_disk: self.to_disk.saturating_sub(before.to_disk),
        }
    }
}

/// What process `pid` has written so far, from `/proc/<pid>/io`.
pub fn written(pid: u32) -> Written {
    Written {
        handed: proc_field(pid, "io", "wchar"),
        to_disk: proc_field(pid, "io", "write_bytes"),
    }
}

/// `bytes` in KiB per report.
pub fn kib_per_report(bytes: u64, reports: usize) -> f64 {
    bytes as f64 / 1024.0 / reports.max(1) as f64
}

/// User plus system CPU time of process `pid`, in clock ticks (100 a second on every common
/// Linux configuration).
pub fn cpu_ticks(pid: u32) -> u64 {
    stat_ticks(pid, 11..13)
}

/// [`cpu_ticks`] with the CPU time of the process's children that it has waited for (a load
/// generator it ran, such as `wrk`).
pub fn cpu_ticks_with_children(pid: u32) -> u64 {
    stat_ticks(pid, 11..15)
}

/// The sum of the clock-tick fields `fields` of `/proc/{pid}/stat`, counted after the
/// parenthesised command name (utime, stime, cutime and cstime are the 14th to 17th fields).
fn stat_ticks(pid: u32, fields: std::ops::Range<usize>) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let all: Vec<&str> = after.split_whitespace().collect();
    all.get(fields)
        .map(|f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
        .unwrap_or(0)
}

/// [`cpu_ticks`] in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    cpu_ticks(pid) as f64 / 100.0
}

/// Reports the birthnotice module brought to a final state, from the engine's health.
pub fn finished(server: &Server) -> u64 {
    finished_in(server, "birthnotice")
}

/// Reports `module` brought to a final state, from the engine's health.
pub fn finished_in(server: &Server, module: &str) -> u64 {
    let actors: Vec<Value> = server
        .admin_get("/admin/api/v1/actors")
        .json()
        .unwrap_or_default();
    actors
        .iter()
        .find(|a| a["name"] == format!("module:{module}").as_str())
        .and_then(|a| a["processed"].as_u64())
        .unwrap_or(0)
}

/// The cookies of one user at a time, for a [`crate::common::Browser`] that serves many users in
/// turn: [`SessionJar::clear`] before each. A fresh browser per user costs the client a thread,
/// a runtime and a connection, about as much CPU as the server spends on the user's pages, and
/// client and server share the machine's cores.
#[derive(Default)]
pub struct SessionJar(Mutex<Vec<String>>);

impl SessionJar {
    /// Forgets every cookie: the next request starts a new user's session.
    pub fn clear(&self) {
        self.cookies().clear();
    }

    /// Takes the current user's cookies out, leaving the jar empty for the next user.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.cookies())
    }

    /// Puts a user's cookies (from [`SessionJar::take`]) back: the next request is theirs.
    pub fn restore(&self, cookies: Vec<String>) {
        *self.cookies() = cookies;
    }

    fn cookies(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl reqwest::cookie::CookieStore for SessionJar {
    fn set_cookies(&self, headers: &mut dyn Iterator<Item = &HeaderValue>, _url: &reqwest::Url) {
        let mut cookies = self.cookies();
        for header in headers.filter_map(|h| h.to_str().ok()) {
            // `name=value`, without the attributes; a later cookie of the same name replaces it.
            let pair = header.split(';').next().unwrap_or_default().trim();
            let name = pair.split('=').next().unwrap_or_default();
            cookies.retain(|c| c.split('=').next() != Some(name));
            cookies.push(pair.to_owned());
        }
    }

    fn cookies(&self, _url: &reqwest::Url) -> Option<HeaderValue> {
        let cookies = self.cookies();
        (!cookies.is_empty())
            .then(|| HeaderValue::from_str(&cookies.join("; ")).ok())
            .flatten()
    }
}

/// Runs `work` for every index below `count` on `workers` browsers, each serving one index after
/// the other with a jar of its own; returns what `work` returned, by index.
pub fn run_browsers<T: Send>(
    workers: usize,
    count: usize,
    work: impl Fn(&SessionJar, &Browser, usize) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<T>>> = (0..count).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let jar = Arc::new(SessionJar::default());
                let browser = Browser::with_cookies(jar.clone());
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= count {
                        break;
                    }
                    let result = work(&jar, &browser, i);
                    *results[i].lock().unwrap() = Some(result);
                }
            });
        }
    });
    results
        .into_iter()
        .map(|slot| slot.into_inner().unwrap().expect("every index worked"))
        .collect()
}

/// One keep-alive HTTP/1.1 connection of a load generator that writes raw requests, so that the
/// client's own cost stays small next to the server's.
pub struct RawConnection {
    writer: std::net::TcpStream,
    reader: std::io::BufReader<std::net::TcpStream>,
}

impl RawConnection {
    /// A connection to `address` (`host:port`).
    pub fn open(address: &str) -> Self {
        let stream = std::net::TcpStream::connect(address).expect("connect");
        stream.set_nodelay(true).unwrap();
        RawConnection {
            writer: stream.try_clone().unwrap(),
            reader: std::io::BufReader::new(stream),
        }
    }

    /// Sends `request` and reads its answer, which must be a `200`; its body.
    pub fn ok(&mut self, request: &[u8]) -> Vec<u8> {
        let (status, body) = self.send(request);
        assert_eq!(
            status,
            200,
            "unexpected answer: {status} {}",
            String::from_utf8_lossy(&body)
        );
        body
    }

    /// Sends `request` and reads its answer, whatever its status: the status and the body.
    pub fn send(&mut self, request: &[u8]) -> (u16, Vec<u8>) {
        use std::io::{BufRead, Read, Write};
        self.writer.write_all(request).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP/1.1 answer: {line:?}"));
        let mut length = 0usize;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, body)
    }
}

/// Appends one key figure to the file named by `BENCH_FIGURES`, if it is set, as a line of four
/// tab-separated fields: `figure`, `value`, `unit`, `note` (what it means, which sizes ran).
/// `scripts/bench.sh` collects these lines from every bench into one table; without the variable
/// nothing is written, and the bench prints what it always printed.
pub fn figure(name: &str, value: f64, unit: &str, note: &str) {
    let Ok(path) = std::env::var("BENCH_FIGURES") else {
        return;
    };
    // Tabs and line breaks would split a line into fields or lines of its own.
    let clean = |text: &str| text.replace(['\t', '\n'], " ");
    let value = if value.fract() == 0.0 || value.abs() >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    };
    let line = format!(
        "{}\t{value}\t{}\t{}\n",
        clean(name),
        clean(unit),
        clean(note)
    );
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .unwrap_or_else(|e| panic!("cannot append to BENCH_FIGURES {path}: {e}"));
}
