//! The nodes that share one store: what a node publishes about itself, and what every node reads
//! of the others. One node (the sled engine) has no list: it describes only itself.

use chrono::{DateTime, Utc};
use serde::Serialize;

/// One node on a shared store, as its last heartbeat left it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// The node's name (`node.name`).
    pub name: String,
    /// When its process started.
    pub started_at: DateTime<Utc>,
    /// Its last heartbeat.
    pub seen_at: DateTime<Utc>,
    /// When it stopped on purpose; `None` while it runs, or if it died.
    pub stopped_at: Option<DateTime<Utc>>,
    /// Whether it is alive: not stopped, and heard from within the lease.
    pub alive: bool,
    /// The outbox jobs it holds a lease on now.
    pub claims: u64,
    /// The health of its actors, as it last published it (`null` before its first report).
    pub health: serde_json::Value,
}

/// The machine's host name, the default name of a node; `meldewerk` where none can be read.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "meldewerk".into())
}
