//! Users and their memento keys. A removed user's row stays, emptied, so that the name is never
//! given to another user (reports keep their owner's name); the key id has a unique index, so
//! that a token's key id names one user at most.

use super::{from_json, is_unique_violation, to_json, Db};
use crate::*;

/// How errors name user `name`.
fn user_what(name: &str) -> String {
    format!("user {name}")
}

pub(super) async fn create_user(db: &Db, user: UserRecord) -> StoreResult<()> {
    let record = to_json(&user_what(&user.name), &user)?;
    let client = db.client().await?;
    let inserted = client
        .execute(
            "INSERT INTO users (name, key_id, record) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO NOTHING",
            &[&user.name, &user.memento_key.key_id, &record],
        )
        .await;
    match inserted {
        Ok(1) => {
            db.mark_reachable();
            Ok(())
        }
        Ok(_) => {
            // The name is taken, by a user or by a removed one whose reports keep it.
            let removed: bool = client
                .query_one(
                    "SELECT record IS NULL FROM users WHERE name = $1",
                    &[&user.name],
                )
                .await
                .map_err(|e| db.error(e))?
                .get(0);
            Err(StoreError::Conflict(if removed {
                format!("{} (the name of a removed user)", user_what(&user.name))
            } else {
                user_what(&user.name)
            }))
        }
        // Key ids are random, so a clash is a bug; resolving it would hand one user's tokens
        // to another.
        Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict(format!(
            "memento key id {}",
            user.memento_key.key_id
        ))),
        Err(e) => Err(db.error(e)),
    }
}

pub(super) async fn update_user(db: &Db, user: UserRecord) -> StoreResult<()> {
    let record = to_json(&user_what(&user.name), &user)?;
    let client = db.client().await?;
    let updated = client
        .execute(
            "UPDATE users SET key_id = $2, record = $3 WHERE name = $1 AND record IS NOT NULL",
            &[&user.name, &user.memento_key.key_id, &record],
        )
        .await;
    match updated {
        Ok(1) => {
            db.mark_reachable();
            Ok(())
        }
        Ok(_) => Err(StoreError::NotFound(user_what(&user.name))),
        Err(e) if is_unique_violation(&e) => Err(StoreError::Conflict(format!(
            "memento key id {}",
            user.memento_key.key_id
        ))),
        Err(e) => Err(db.error(e)),
    }
}

pub(super) async fn remove_user(db: &Db, name: &str) -> StoreResult<bool> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let removed = tx
        .execute(
            "UPDATE users SET record = NULL, key_id = NULL, removed_at = now()
             WHERE name = $1 AND record IS NOT NULL",
            &[&name],
        )
        .await
        .map_err(|e| db.error(e))?;
    if removed == 0 {
        return Ok(false);
    }
    // No account may list a user that no longer exists.
    tx.execute("DELETE FROM mailbox_grants WHERE user_name = $1", &[&name])
        .await
        .map_err(|e| db.error(e))?;
    db.commit(tx).await?;
    Ok(true)
}

pub(super) async fn user(db: &Db, name: &str) -> StoreResult<Option<UserRecord>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record FROM users WHERE name = $1 AND record IS NOT NULL",
            &[&name],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&user_what(name), row.get(0)))
        .transpose()
}

pub(super) async fn user_by_key_id(db: &Db, key_id: &str) -> StoreResult<Option<UserRecord>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT name, record FROM users WHERE key_id = $1 AND record IS NOT NULL",
            &[&key_id],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&user_what(row.get(0)), row.get(1)))
        .transpose()
}

pub(super) async fn users(db: &Db) -> StoreResult<Vec<UserRecord>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT name, record FROM users WHERE record IS NOT NULL ORDER BY name COLLATE \"C\"",
            &[],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.into_iter()
        .map(|row| from_json(&user_what(row.get(0)), row.get(1)))
        .collect()
}
