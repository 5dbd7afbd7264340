//! End users' browser sessions, shared by the nodes on the database, and the sweep of every
//! table of [`crate::LoginState`]. A session's row is keyed by the SHA-256 of its cookie value;
//! its life is the database's clock: each use moves `expires_at` to now plus the idle time, in
//! the same statement that finds it alive, so that every node sees the same expiry.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Db;
use crate::{SessionRecord, StoreResult};

/// How often a node sweeps the tables on its own, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Microseconds of `d` (the unit of timestamptz), as a query parameter.
pub(super) fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

pub(super) async fn open_session(
    db: &Db,
    id_digest: &[u8; 32],
    session: &SessionRecord,
    idle: Duration,
) -> StoreResult<()> {
    let client = db.client().await?;
    client
        .execute(
            "INSERT INTO sessions (id_sha256, user_name, key_id, csrf, expires_at)
             VALUES ($1, $2, $3, $4, now() + $5::bigint * interval '1 microsecond')",
            &[
                &id_digest.as_slice(),
                &session.username,
                &session.key_id,
                &session.csrf,
                &micros(idle),
            ],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

pub(super) async fn touch_session(
    db: &Db,
    id_digest: &[u8; 32],
    idle: Duration,
) -> StoreResult<Option<SessionRecord>> {
    let client = db.client().await?;
    // Found alive and kept alive in one statement: a session that expired a moment ago is not
    // revived by a request that read it just before.
    let row = client
        .query_opt(
            "UPDATE sessions SET expires_at = now() + $2::bigint * interval '1 microsecond'
             WHERE id_sha256 = $1 AND expires_at > now()
             RETURNING user_name, key_id, csrf",
            &[&id_digest.as_slice(), &micros(idle)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(row.map(|row| SessionRecord {
        username: row.get(0),
        key_id: row.get(1),
        csrf: row.get(2),
    }))
}

pub(super) async fn end_session(db: &Db, id_digest: &[u8; 32]) -> StoreResult<()> {
    let client = db.client().await?;
    client
        .execute(
            "DELETE FROM sessions WHERE id_sha256 = $1",
            &[&id_digest.as_slice()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

/// Removes what has run out in every table of the login state, in one transaction.
pub(super) async fn sweep(db: &Db) -> StoreResult<u64> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let mut removed = 0;
    for statement in [
        "DELETE FROM sessions WHERE expires_at <= now()",
        // A counter whose arrival time has passed counts as no failure at all.
        "DELETE FROM login_failures WHERE tat <= now()",
        "DELETE FROM known_logins WHERE known_until <= now()",
    ] {
        removed += tx.execute(statement, &[]).await.map_err(|e| db.error(e))?;
    }
    db.commit(tx).await?;
    Ok(removed)
}

/// When this node last swept, so that the writes of the login state sweep now and then without
/// a timer of their own: the tables then hold what is alive plus at most a minute of what ran
/// out.
#[derive(Default)]
pub(crate) struct Sweeps(Mutex<Option<Instant>>);

impl Sweeps {
    /// Sweeps unless this node did within the last minute. A failed sweep is only logged: the
    /// write it follows has succeeded, and the next one tries again.
    pub(super) async fn sweep_if_due(&self, db: &Db) {
        {
            let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            if last.is_some_and(|at| now.duration_since(at) < SWEEP_EVERY) {
                return;
            }
            *last = Some(now);
        }
        match sweep(db).await {
            Ok(removed) if removed > 0 => {
                tracing::debug!(removed, "expired sessions and login counters removed")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "sweeping expired sessions failed"),
        }
    }
}
