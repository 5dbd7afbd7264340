//! Several nodes on one database: each node's row in the node list with its heartbeat, the
//! leases on jobs it works on, and the leads of periodic work.
//!
//! A node claims a job when it begins an attempt (`outbox/delivery.rs`) and lets go of it when
//! the attempt is recorded. While the node lives, its heartbeat pushes the leases of its claims
//! on, every third of a lease; a node that dies stops pushing, and once a lease has run out the
//! job is due for every node again. Every time is the database's clock, so that the nodes'
//! clocks need not agree.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::oneshot;

use super::reports::corrupt_column;
use super::Db;
use crate::{NodeStatus, StoreError, StoreResult};

/// Days after its last heartbeat a node leaves the node list (cleared when a node starts).
const FORGET_AFTER_DAYS: i32 = 7;

/// Stops the node's heartbeat when dropped (with its store): the node then lets go of its
/// claims and leads, so that the other nodes take its work over at once, and marks its row
/// stopped.
pub(super) struct Heartbeat(#[allow(dead_code)] oneshot::Sender<()>);

/// An id of this opening of the store, which tells two processes given one name apart: the
/// process id, the time to the nanosecond, and a count of the openings in this process.
fn instance() -> String {
    static OPENED: AtomicU64 = AtomicU64::new(0);
    let opening = OPENED.fetch_add(1, Ordering::Relaxed);
    let now = chrono::Utc::now();
    format!(
        "{}-{}{:09}-{opening}",
        std::process::id(),
        now.timestamp(),
        now.timestamp_subsec_nanos()
    )
}

/// Adds this node to the node list (taking over its row from an earlier process of the same
/// name) and starts its heartbeat on the engine's runtime.
pub(super) async fn join(db: &Db) -> StoreResult<Heartbeat> {
    let instance = instance();
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT extract(epoch FROM clock_timestamp() - seen_at)::float8 FROM nodes
             WHERE name = $1 AND stopped_at IS NULL",
            &[&db.node()],
        )
        .await
        .map_err(|e| db.error(e))?;
    if let Some(row) = row {
        let ago: f64 = row.try_get(0).map_err(corrupt_column)?;
        if ago < db.lease_secs() {
            // A restart after a crash looks the same, so this is no refusal; two living
            // processes with one name would take each other's claims for their own.
            tracing::warn!(
                node = db.node(),
                seen_secs_ago = ago,
                "a process with this node name was alive moments ago; if it still runs, give \
                 every node its own node.name"
            );
        }
    }
    // Nodes gone for a week (renamed, replaced containers) leave the list.
    client
        .execute(
            "DELETE FROM nodes WHERE seen_at < clock_timestamp() - make_interval(days => $1)",
            &[&FORGET_AFTER_DAYS],
        )
        .await
        .map_err(|e| db.error(e))?;
    client
        .execute(
            "INSERT INTO nodes (name, instance, started_at, seen_at)
             VALUES ($1, $2, clock_timestamp(), clock_timestamp())
             ON CONFLICT (name) DO UPDATE SET instance = $2, started_at = clock_timestamp(),
                 seen_at = clock_timestamp(), stopped_at = NULL, health = NULL",
            &[&db.node(), &instance],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    let (stop, stopped) = oneshot::channel();
    let beating = db.clone();
    db.spawn(beat(beating, instance, stopped));
    Ok(Heartbeat(stop))
}

/// Beats every third of a lease until the store is dropped, then lets go.
async fn beat(db: Db, instance: String, mut stopped: oneshot::Receiver<()>) {
    let every = (db.lease / 3).max(Duration::from_millis(100));
    let mut displaced = false;
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            _ = tokio::time::sleep(every) => {}
        }
        match beat_once(&db, &instance).await {
            Ok(true) => displaced = false,
            Ok(false) if !displaced => {
                displaced = true;
                tracing::error!(
                    node = db.node(),
                    "another process has taken this node's name; every node needs its own \
                     node.name"
                );
            }
            Ok(false) => {}
            // Noted by the store's condition; the next beat tries again.
            Err(e) => tracing::debug!(error = %e, "heartbeat failed"),
        }
    }
    if let Err(e) = leave(&db, &instance).await {
        tracing::warn!(error = %e, "could not let go of this node's claims; they run out with their lease");
    }
}

/// One heartbeat: the node's row, and the leases of its claims pushed on. `false` when the row
/// belongs to another process now.
async fn beat_once(db: &Db, instance: &str) -> StoreResult<bool> {
    let client = db.client().await?;
    let ours = client
        .execute(
            "UPDATE nodes SET seen_at = clock_timestamp() WHERE name = $1 AND instance = $2",
            &[&db.node(), &instance],
        )
        .await
        .map_err(|e| db.error(e))?;
    client
        .execute(
            "UPDATE jobs SET claimed_until = clock_timestamp() + make_interval(secs => $2)
             WHERE claimed_by = $1",
            &[&db.node(), &db.lease_secs()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(ours == 1)
}

/// A node stopping on purpose: its claims and leads go at once, and its row says it stopped.
async fn leave(db: &Db, instance: &str) -> StoreResult<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let ours = tx
        .execute(
            "UPDATE nodes SET stopped_at = clock_timestamp(), seen_at = clock_timestamp()
             WHERE name = $1 AND instance = $2",
            &[&db.node(), &instance],
        )
        .await
        .map_err(|e| db.error(e))?;
    // Another process of the same name works on: its claims are its own.
    if ours == 1 {
        tx.execute(
            "UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1",
            &[&db.node()],
        )
        .await
        .map_err(|e| db.error(e))?;
        tx.execute("DELETE FROM task_leases WHERE holder = $1", &[&db.node()])
            .await
            .map_err(|e| db.error(e))?;
    }
    db.commit(tx).await
}

/// Whether this node leads `task` until `interval` and a lease from now: it takes the lead when
/// nobody holds it or its holder's time has run out, and renews its own.
pub(super) async fn lead(db: &Db, task: &str, interval: Duration) -> StoreResult<bool> {
    let hold = interval.as_secs_f64() + db.lease_secs();
    let client = db.client().await?;
    let row = client
        .query_opt(
            "INSERT INTO task_leases (task, holder, held_until)
             VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
             ON CONFLICT (task) DO UPDATE
                 SET holder = $2, held_until = clock_timestamp() + make_interval(secs => $3)
                 WHERE task_leases.holder = $2 OR task_leases.held_until <= clock_timestamp()
             RETURNING holder",
            &[&task, &db.node(), &hold],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(row.is_some())
}

/// Stores this node's health in its row.
pub(super) async fn publish_health(db: &Db, health: serde_json::Value) -> StoreResult<()> {
    let client = db.client().await?;
    client
        .execute(
            "UPDATE nodes SET health = $2 WHERE name = $1",
            &[&db.node(), &health],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

/// The modules paused for every node, by name.
pub(super) async fn paused_modules(db: &Db) -> StoreResult<Vec<String>> {
    let client = db.client().await?;
    let rows = client
        .query("SELECT module FROM paused_modules ORDER BY module", &[])
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter()
        .map(|row| row.try_get(0).map_err(corrupt_column))
        .collect()
}

/// Pauses `module` for every node (kept from the first pause), or resumes it.
pub(super) async fn set_paused(db: &Db, module: &str, paused: bool) -> StoreResult<()> {
    let client = db.client().await?;
    let done = match paused {
        true => {
            client
                .execute(
                    "INSERT INTO paused_modules (module, paused_by, paused_at)
                     VALUES ($1, $2, clock_timestamp()) ON CONFLICT (module) DO NOTHING",
                    &[&module, &db.node()],
                )
                .await
        }
        false => {
            client
                .execute("DELETE FROM paused_modules WHERE module = $1", &[&module])
                .await
        }
    };
    done.map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

/// Every node in the list, by name, with its claims counted.
pub(super) async fn nodes(db: &Db) -> StoreResult<Vec<NodeStatus>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT n.name, n.started_at, n.seen_at, n.stopped_at,
                    n.stopped_at IS NULL
                        AND n.seen_at > clock_timestamp() - make_interval(secs => $1),
                    (SELECT count(*) FROM jobs j WHERE j.claimed_by = n.name
                        AND j.claimed_until > clock_timestamp()),
                    n.health
             FROM nodes n ORDER BY n.name",
            &[&db.lease_secs()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter()
        .map(|row| {
            let claims: i64 = row.try_get(5).map_err(corrupt_column)?;
            Ok(NodeStatus {
                name: row.try_get(0).map_err(corrupt_column)?,
                started_at: row.try_get(1).map_err(corrupt_column)?,
                seen_at: row.try_get(2).map_err(corrupt_column)?,
                stopped_at: row.try_get(3).map_err(corrupt_column)?,
                alive: row.try_get(4).map_err(corrupt_column)?,
                claims: u64::try_from(claims)
                    .map_err(|_| StoreError::Corrupt(format!("claims {claims}")))?,
                health: row
                    .try_get::<_, Option<serde_json::Value>>(6)
                    .map_err(corrupt_column)?
                    .unwrap_or(serde_json::Value::Null),
            })
        })
        .collect()
}
