//! Court-mailbox accounts and their grants: `mailbox_accounts` (id → record, with the folded
//! SAFE-ID unique beside it) and `mailbox_grants` (one row a grant, its account a foreign key).
//!
//! What keeps the contract when several nodes write at once:
//! - one account per mailbox: the unique folded SAFE-ID; a put that loses a race to it tries
//!   again and then names the account that holds it;
//! - no account removed while granted: the removal locks the account row (`FOR UPDATE`) before
//!   it counts the grants, and a grant holds a share lock on the account (`FOR KEY SHARE`, as
//!   its foreign key check does) until it commits, so either the grant waits and then finds no
//!   account, or the removal waits and then sees the grant; the foreign key stands behind both;
//! - no grant to a removed user: a grant holds `FOR SHARE` on the user's row, which the removal's
//!   update of that row (see `users.rs`) waits for, so the removal's `DELETE` of the user's
//!   grants sees this one; a grant that waited on a removal finds the user gone.
//!
//! Items are `pub(in crate::postgres)` so that `facilities` can re-export them to the engine's
//! `store_impl.rs`, which calls every method of this area as `facilities::<method>`.

use deadpool_postgres::Object;

use super::{from_json, raced, sql_limit, to_json, Db, RACE_RETRIES};
use crate::postgres::is_unique_violation;
use crate::*;

/// How errors name account `id`, as the sled engine does.
fn account_what(id: impl std::fmt::Display) -> String {
    format!("mailbox account {id}")
}

/// An account id read from a column; `Corrupt` if it is none (zero or negative).
fn account_id(what: &str, id: i64) -> StoreResult<MailboxAccountId> {
    MailboxAccountId::try_from(id).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// Creates or replaces the account under its id, keeping `created_at` on a replace. `Conflict`
/// when another account has the SAFE-ID (folded). Each try is one transaction; a try that
/// another node's write overtook (the id created, or the SAFE-ID taken, after its reads) is
/// rolled back and made again, and then sees that write.
pub(in crate::postgres) async fn put_mailbox_account(
    db: &Db,
    account: MailboxAccount,
) -> StoreResult<MailboxAccountPut> {
    let mut client = db.client().await?;
    for _ in 0..RACE_RETRIES {
        if let Some(put) = try_put(db, &mut client, &account).await? {
            return Ok(put);
        }
    }
    Err(raced(&account_what(account.egvp_account_id)))
}

/// One try of [`put_mailbox_account`], in a transaction of its own; `None` (nothing stored)
/// when another node's write got in between its reads and its write.
async fn try_put(
    db: &Db,
    client: &mut Object,
    account: &MailboxAccount,
) -> StoreResult<Option<MailboxAccountPut>> {
    let id = account.egvp_account_id.get();
    let what = account_what(id);
    let folded = account.safe_id.folded();
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let holder = tx
        .query_opt(
            "SELECT id FROM mailbox_accounts WHERE safe_id_folded = $1 AND id <> $2",
            &[&folded, &id],
        )
        .await
        .map_err(|e| db.error(e))?;
    if let Some(row) = holder {
        let holder = account_id("SAFE-ID index", row.get(0))?;
        return Err(StoreError::Conflict(format!(
            "SAFE-ID {} is the mailbox of account {holder}",
            account.safe_id
        )));
    }
    let old = tx
        .query_opt(
            "SELECT record FROM mailbox_accounts WHERE id = $1 FOR UPDATE",
            &[&id],
        )
        .await
        .map_err(|e| db.error(e))?;
    let (put, written) = match old {
        Some(row) => {
            let old: MailboxAccount = from_json(&what, row.get(0))?;
            let stored = MailboxAccount {
                created_at: old.created_at,
                ..account.clone()
            };
            let written = tx
                .execute(
                    "UPDATE mailbox_accounts SET safe_id_folded = $2, record = $3 WHERE id = $1",
                    &[&id, &folded, &to_json(&what, &stored)?],
                )
                .await;
            (MailboxAccountPut::Replaced(stored), written)
        }
        None => {
            let written = tx
                .execute(
                    "INSERT INTO mailbox_accounts (id, safe_id_folded, record) VALUES ($1, $2, $3)
                     ON CONFLICT (id) DO NOTHING",
                    &[&id, &folded, &to_json(&what, account)?],
                )
                .await;
            (MailboxAccountPut::Created(account.clone()), written)
        }
    };
    match written {
        Ok(1) => {}
        // Created by another node since the read (the row is locked once it exists, so only
        // the insert can miss), or the SAFE-ID taken by one since the check: the next try sees
        // it. Dropping the transaction rolls it back.
        Ok(_) => return Ok(None),
        Err(e) if is_unique_violation(&e) => return Ok(None),
        Err(e) => return Err(db.error(e)),
    }
    db.commit(tx).await?;
    Ok(Some(put))
}

/// Reads one account by id.
pub(in crate::postgres) async fn mailbox_account(
    db: &Db,
    id: MailboxAccountId,
) -> StoreResult<Option<MailboxAccount>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record FROM mailbox_accounts WHERE id = $1",
            &[&id.get()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&account_what(id), row.get(0)))
        .transpose()
}

/// Reads the account whose folded SAFE-ID is `safe_id`'s (the unique column's index).
pub(in crate::postgres) async fn mailbox_account_by_safe_id(
    db: &Db,
    safe_id: &SafeId,
) -> StoreResult<Option<MailboxAccount>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT id, record FROM mailbox_accounts WHERE safe_id_folded = $1",
            &[&safe_id.folded()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&account_what(row.get::<_, i64>(0)), row.get(1)))
        .transpose()
}

/// A page in id order: a range read on the primary key.
pub(in crate::postgres) async fn mailbox_accounts(
    db: &Db,
    after: Option<MailboxAccountId>,
    limit: usize,
) -> StoreResult<Vec<MailboxAccount>> {
    // Ids start at 1: no `after` is a page from the start.
    let after = after.map_or(0, MailboxAccountId::get);
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT id, record FROM mailbox_accounts WHERE id > $1 ORDER BY id LIMIT $2",
            &[&after, &sql_limit(limit)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.into_iter()
        .map(|row| from_json(&account_what(row.get::<_, i64>(0)), row.get(1)))
        .collect()
}

/// Removes the account unless a user is granted it, in one transaction: the account row is
/// locked first, so that no grant can be added between the count and the delete (see the
/// module's notes).
pub(in crate::postgres) async fn remove_mailbox_account(
    db: &Db,
    id: MailboxAccountId,
) -> StoreResult<bool> {
    let what = account_what(id);
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let exists = tx
        .query_opt(
            "SELECT 1 FROM mailbox_accounts WHERE id = $1 FOR UPDATE",
            &[&id.get()],
        )
        .await
        .map_err(|e| db.error(e))?
        .is_some();
    if !exists {
        db.mark_reachable();
        return Ok(false);
    }
    let users: Vec<String> = tx
        .query(
            "SELECT user_name FROM mailbox_grants WHERE account_id = $1
             ORDER BY user_name COLLATE \"C\"",
            &[&id.get()],
        )
        .await
        .map_err(|e| db.error(e))?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if !users.is_empty() {
        let count = match users.len() {
            1 => "1 user".to_owned(),
            n => format!("{n} users"),
        };
        return Err(StoreError::Conflict(format!(
            "{what} is granted to {count} ({}); revoke the grants first",
            users.join(", ")
        )));
    }
    tx.execute("DELETE FROM mailbox_accounts WHERE id = $1", &[&id.get()])
        .await
        .map_err(|e| db.error(e))?;
    db.commit(tx).await?;
    Ok(true)
}

/// Grants the account to the user in one transaction, after checking both exist while holding
/// them (see the module's notes); `false` when the grant was there already.
pub(in crate::postgres) async fn grant_mailbox_account(
    db: &Db,
    id: MailboxAccountId,
    user: &str,
) -> StoreResult<bool> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let account = tx
        .query_opt(
            "SELECT 1 FROM mailbox_accounts WHERE id = $1 FOR KEY SHARE",
            &[&id.get()],
        )
        .await
        .map_err(|e| db.error(e))?;
    if account.is_none() {
        return Err(StoreError::NotFound(account_what(id)));
    }
    // A removed user's row stays (with no record): they count as unknown.
    let user_row = tx
        .query_opt(
            "SELECT 1 FROM users WHERE name = $1 AND record IS NOT NULL FOR SHARE",
            &[&user],
        )
        .await
        .map_err(|e| db.error(e))?;
    if user_row.is_none() {
        return Err(StoreError::NotFound(format!("user {user}")));
    }
    let granted = tx
        .execute(
            "INSERT INTO mailbox_grants (account_id, user_name) VALUES ($1, $2)
             ON CONFLICT (account_id, user_name) DO NOTHING",
            &[&id.get(), &user],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.commit(tx).await?;
    Ok(granted > 0)
}

/// Takes the grant back in one statement (its own transaction); the row count says whether
/// there was one. Neither the account nor the user need exist.
pub(in crate::postgres) async fn revoke_mailbox_account(
    db: &Db,
    id: MailboxAccountId,
    user: &str,
) -> StoreResult<bool> {
    let client = db.client().await?;
    let revoked = client
        .execute(
            "DELETE FROM mailbox_grants WHERE account_id = $1 AND user_name = $2",
            &[&id.get(), &user],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(revoked > 0)
}

/// The users granted the account, in byte order of their names (as sled's sets hold them).
pub(in crate::postgres) async fn mailbox_account_users(
    db: &Db,
    id: MailboxAccountId,
) -> StoreResult<Vec<String>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT user_name FROM mailbox_grants WHERE account_id = $1
             ORDER BY user_name COLLATE \"C\"",
            &[&id.get()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(rows.iter().map(|row| row.get(0)).collect())
}

/// The ids of the accounts granted to the user, in id order (the index by user).
pub(in crate::postgres) async fn mailbox_account_ids_of(
    db: &Db,
    user: &str,
) -> StoreResult<Vec<MailboxAccountId>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT account_id FROM mailbox_grants WHERE user_name = $1 ORDER BY account_id",
            &[&user],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    let what = format!("mailbox accounts of user {user}");
    rows.iter()
        .map(|row| account_id(&what, row.get(0)))
        .collect()
}
