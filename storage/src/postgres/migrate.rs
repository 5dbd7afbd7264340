//! The schema's versions, applied in order when the engine opens (or by `meldewerk migrate`).
//!
//! Each version is one SQL file under `migrations/`, embedded at build time, applied in one
//! transaction together with its row in `schema_migrations`. The whole run holds a transaction
//! advisory lock, so that nodes starting at once apply each version once: the second waits, then
//! finds nothing left to do. A database whose schema is newer than this build (a version it does
//! not know) is refused: an older node must not write into a layout it does not understand.

use chrono::{DateTime, Utc};

use super::Db;
use crate::{StoreError, StoreResult};

/// One version of the schema.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// Its number, from 1, without gaps.
    pub version: i32,
    /// What it brings, for `meldewerk migrate`.
    pub name: &'static str,
    sql: &'static str,
}

/// Every version this build knows, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "users, reports, the outbox, the audit log",
        sql: include_str!("migrations/0001_core.sql"),
    },
    Migration {
        version: 2,
        name: "facilities, customer scopes, certificates, mailbox accounts",
        sql: include_str!("migrations/0002_facilities.sql"),
    },
    Migration {
        version: 3,
        name: "the court-message index",
        sql: include_str!("migrations/0003_court_messages.sql"),
    },
    Migration {
        version: 4,
        name: "several nodes: job leases, the node list, leases of periodic work",
        sql: include_str!("migrations/0004_nodes.sql"),
    },
    Migration {
        version: 5,
        name: "end users' sessions, failed-login counters, known logins",
        sql: include_str!("migrations/0005_sessions.sql"),
    },
    Migration {
        version: 6,
        name: "modules paused for every node",
        sql: include_str!("migrations/0006_paused_modules.sql"),
    },
];

/// The key of the advisory lock every migration run holds ("meldewerk" in ASCII, cut to 63
/// bits): one run at a time across every node on the database.
const LOCK_KEY: i64 = 0x6d65_6c64_6577_6572;

/// The schema's state in one database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaState {
    /// The versions applied, with when.
    pub applied: Vec<(i32, DateTime<Utc>)>,
    /// The versions this build knows that are not applied yet.
    pub pending: Vec<i32>,
}

/// Applies every version not applied yet, in order; returns those it applied.
pub(crate) async fn apply(db: &Db) -> StoreResult<Vec<i32>> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await
        .map_err(|e| db.error(e))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version integer PRIMARY KEY,
            name text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(|e| db.error(e))?;
    let applied: Vec<i32> = tx
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .map_err(|e| db.error(e))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    if let Some(newer) = applied.iter().find(|v| **v > known) {
        return Err(StoreError::Backend(format!(
            "the database's schema is at version {newer}, newer than this build knows \
             ({known}): run the newer meldewerk on it"
        )));
    }
    let mut done = Vec::new();
    for migration in MIGRATIONS {
        if applied.contains(&migration.version) {
            continue;
        }
        tx.batch_execute(migration.sql)
            .await
            .map_err(|e| db.error(e))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(|e| db.error(e))?;
        tracing::info!(
            version = migration.version,
            name = migration.name,
            "schema migration applied"
        );
        done.push(migration.version);
    }
    db.commit(tx).await?;
    Ok(done)
}

/// The schema's state, read without changing anything.
pub(crate) async fn state(db: &Db) -> StoreResult<SchemaState> {
    let client = db.client().await?;
    let exists: bool = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .await
        .map_err(|e| db.error(e))?
        .get(0);
    let applied: Vec<(i32, DateTime<Utc>)> = if exists {
        client
            .query(
                "SELECT version, applied_at FROM schema_migrations ORDER BY version",
                &[],
            )
            .await
            .map_err(|e| db.error(e))?
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect()
    } else {
        Vec::new()
    };
    let pending = MIGRATIONS
        .iter()
        .map(|m| m.version)
        .filter(|v| !applied.iter().any(|(a, _)| a == v))
        .collect();
    Ok(SchemaState { applied, pending })
}
