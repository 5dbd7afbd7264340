//! What the benchmarks share: their settings from the environment, the server process's own
//! figures from `/proc`, and the count of reports the engine finished.
#![allow(dead_code)] // each benchmark uses a different subset

use serde_json::Value;

use crate::common::Server;

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

/// User plus system CPU time of process `pid`, in clock ticks (100 a second on every common
/// Linux configuration).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields
        .get(11..13)
        .map(|f| f.iter().filter_map(|v| v.parse::<u64>().ok()).sum())
        .unwrap_or(0)
}

/// [`cpu_ticks`] in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    cpu_ticks(pid) as f64 / 100.0
}

/// Reports the birthnotice module brought to a final state, from the engine's health.
pub fn finished(server: &Server) -> u64 {
    let actors: Vec<Value> = server
        .admin_get("/admin/api/v1/actors")
        .json()
        .unwrap_or_default();
    actors
        .iter()
        .find(|a| a["name"] == "module:birthnotice")
        .and_then(|a| a["processed"].as_u64())
        .unwrap_or(0)
}
