//! Failed-login counters and known logins, shared by the nodes on the database.
//!
//! A counter is the generic cell rate algorithm on one row: its theoretical arrival time `tat`
//! moves an interval ahead with each failure, from now or from where it was if that is later;
//! the key is blocked while `tat` is more than [`Allowance::threshold`] ahead of now. The move is
//! one `INSERT … ON CONFLICT … DO UPDATE … RETURNING` statement, which the database serialises
//! per row: failures on every node count exactly, none lost to a race. `tat` never runs more
//! than the whole burst ahead, so that a block lasts at most one interval past the last failure,
//! as with one node.

use std::time::Duration;

use super::sessions::micros;
use super::Db;
use crate::{Allowance, StoreResult};

/// How long a key is blocked when its `tat` is `ahead_us` microseconds ahead of now.
fn block(ahead_us: i64, allowance: Allowance) -> Option<Duration> {
    let over = ahead_us - micros(allowance.threshold());
    (over > 0).then(|| Duration::from_micros(over.unsigned_abs()))
}

pub(super) async fn count_failure(
    db: &Db,
    key_digest: &[u8; 32],
    allowance: Allowance,
) -> StoreResult<Option<Duration>> {
    let client = db.client().await?;
    let interval = micros(allowance.interval);
    let burst = micros(allowance.interval * allowance.burst);
    let ahead: i64 = client
        .query_one(
            "INSERT INTO login_failures AS f (key_sha256, tat)
             VALUES ($1, now() + $2::bigint * interval '1 microsecond')
             ON CONFLICT (key_sha256) DO UPDATE SET tat = least(
                 greatest(f.tat, now()) + $2::bigint * interval '1 microsecond',
                 now() + $3::bigint * interval '1 microsecond')
             RETURNING (extract(epoch FROM tat - now()) * 1000000)::bigint",
            &[&key_digest.as_slice(), &interval, &burst],
        )
        .await
        .map_err(|e| db.error(e))?
        .get(0);
    db.mark_reachable();
    Ok(block(ahead, allowance))
}

pub(super) async fn failure_blocks(
    db: &Db,
    keys: &[([u8; 32], Allowance)],
) -> StoreResult<Vec<Option<Duration>>> {
    let digests: Vec<&[u8]> = keys.iter().map(|(digest, _)| digest.as_slice()).collect();
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT key_sha256, (extract(epoch FROM tat - now()) * 1000000)::bigint
             FROM login_failures WHERE key_sha256 = ANY($1) AND tat > now()",
            &[&digests],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(keys
        .iter()
        .map(|(digest, allowance)| {
            rows.iter()
                .find(|row| row.get::<_, &[u8]>(0) == digest.as_slice())
                .and_then(|row| block(row.get(1), *allowance))
        })
        .collect())
}

pub(super) async fn remember_login(
    db: &Db,
    key_digest: &[u8; 32],
    known_for: Duration,
) -> StoreResult<()> {
    let client = db.client().await?;
    client
        .execute(
            "INSERT INTO known_logins (key_sha256, known_until)
             VALUES ($1, now() + $2::bigint * interval '1 microsecond')
             ON CONFLICT (key_sha256) DO UPDATE SET known_until = EXCLUDED.known_until",
            &[&key_digest.as_slice(), &micros(known_for)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

pub(super) async fn login_known(db: &Db, key_digest: &[u8; 32]) -> StoreResult<bool> {
    let client = db.client().await?;
    let known = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM known_logins
                            WHERE key_sha256 = $1 AND known_until > now())",
            &[&key_digest.as_slice()],
        )
        .await
        .map_err(|e| db.error(e))?
        .get(0);
    db.mark_reachable();
    Ok(known)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_blocked_for_what_its_arrival_time_runs_past_the_threshold() {
        let three = Allowance::per_minute(3); // an interval of 20 s, a threshold of 40 s
        assert_eq!(block(0, three), None);
        assert_eq!(block(40_000_000, three), None, "exactly at the threshold");
        assert_eq!(block(40_000_001, three), Some(Duration::from_micros(1)));
        assert_eq!(block(60_000_000, three), Some(Duration::from_secs(20)));
    }
}
