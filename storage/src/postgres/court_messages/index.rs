//! Indexing what a sync listed, with the sync's cursor, in one transaction.
//!
//! New index ids come from the one row of `court_message_last_id`, locked until the commit:
//! index transactions that add entries take turns, so ids are given out once, without gaps
//! (a sequence would lose the ids of rolled-back and conflicting inserts), and commit in
//! increasing order, so that a reader paging by id never passes over one that commits later.
//! A transaction that adds nothing (the listing's messages are known) does not take the lock.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use tokio_postgres::Transaction;

use super::split_time;
use crate::postgres::{to_json, Db};
use crate::{CourtMessage, ListedCourtMessage, MailboxAccountId, StoreError, StoreResult};

/// A sync's listing as the index takes it: each transport message id once, in listing order, as
/// first listed; and, for each that any listing of it gives one, the first `received_at` given.
/// (A message listed twice is indexed from its first listing and then, like a known message,
/// takes a first retrieval the later one has, as the sled engine does it one by one.)
struct Page {
    /// The first listing of each transport id, in listing order.
    first: Vec<ListedCourtMessage>,
    /// Transport ids and the first retrieval their listings name.
    received: Vec<(String, DateTime<Utc>)>,
}

impl Page {
    /// The page of `listed`, so that each message is inserted and updated once per statement.
    fn of(listed: Vec<ListedCourtMessage>) -> Page {
        let mut seen = HashSet::new();
        let mut received_seen = HashSet::new();
        let mut page = Page {
            first: Vec::new(),
            received: Vec::new(),
        };
        for message in listed {
            if let Some(at) = message.received_at {
                if received_seen.insert(message.message_id.clone()) {
                    page.received.push((message.message_id.clone(), at));
                }
            }
            if seen.insert(message.message_id.clone()) {
                page.first.push(message);
            }
        }
        page
    }

    /// Every transport id of the listing, once.
    fn message_ids(&self) -> Vec<String> {
        self.first.iter().map(|m| m.message_id.clone()).collect()
    }
}

/// Of `message_ids`, those `account` has no entry for (deleted ones count as entries), in the
/// order given.
async fn unknown(
    db: &Db,
    tx: &Transaction<'_>,
    account: MailboxAccountId,
    message_ids: &[String],
) -> StoreResult<Vec<String>> {
    let known: HashSet<String> = tx
        .query(
            "SELECT message_id FROM court_messages
             WHERE account_id = $1 AND message_id = ANY($2)",
            &[&account.get(), &message_ids],
        )
        .await
        .map_err(|e| db.error(e))?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(|e| StoreError::Corrupt(format!("court-message transport id: {e}")))?;
    Ok(message_ids
        .iter()
        .filter(|id| !known.contains(*id))
        .cloned()
        .collect())
}

/// Locks the last index id given out until the transaction ends, and answers it.
async fn lock_last_id(db: &Db, tx: &Transaction<'_>) -> StoreResult<u64> {
    let row = tx
        .query_opt("SELECT last_id FROM court_message_last_id FOR UPDATE", &[])
        .await
        .map_err(|e| db.error(e))?
        .ok_or_else(|| StoreError::Corrupt("the last court-message index id is missing".into()))?;
    let last: i64 = row
        .try_get(0)
        .map_err(|e| StoreError::Corrupt(format!("last court-message index id: {e}")))?;
    u64::try_from(last)
        .map_err(|_| StoreError::Corrupt(format!("last court-message index id {last}")))
}

/// Inserts the entries of `listed` (known to be new, the last id locked at `last`), numbered
/// on from `last` in listing order; moves the last id; answers the entries.
async fn insert_new(
    db: &Db,
    tx: &Transaction<'_>,
    account: MailboxAccountId,
    safe_id: &str,
    listed: &[&ListedCourtMessage],
    mut last: u64,
    now: DateTime<Utc>,
) -> StoreResult<Vec<CourtMessage>> {
    let mut new = Vec::with_capacity(listed.len());
    let (mut ids, mut message_ids, mut created_at, mut created_ns, mut records) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for listed in listed {
        let (next, id) = last
            .checked_add(1)
            .and_then(|next| Some((next, super::db_id(next)?)))
            .ok_or_else(|| StoreError::Backend("court-message index ids are used up".into()))?;
        last = next;
        let message = CourtMessage::indexed(next, account, safe_id, listed, now);
        let (created, nanos) = split_time(message.created_at);
        ids.push(id);
        message_ids.push(message.message_id.clone());
        created_at.push(created);
        created_ns.push(nanos);
        records.push(to_json(&super::message_what(next), &message)?);
        new.push(message);
    }
    // Every new entry waits, due at once.
    let (due_at, due_ns) = split_time(now);
    tx.execute(
        "INSERT INTO court_messages
             (id, account_id, message_id, created_at, created_ns, live, due_at, due_ns, record)
         SELECT n.id, $1, n.message_id, n.created_at, n.created_ns, true, $2, $3, n.record
         FROM unnest($4::bigint[], $5::text[], $6::timestamptz[], $7::integer[], $8::jsonb[])
             AS n (id, message_id, created_at, created_ns, record)",
        &[
            &account.get(),
            &due_at,
            &due_ns,
            &ids,
            &message_ids,
            &created_at,
            &created_ns,
            &records,
        ],
    )
    .await
    .map_err(|e| db.error(e))?;
    let last = super::db_id(last)
        .ok_or_else(|| StoreError::Backend("court-message index ids are used up".into()))?;
    tx.execute("UPDATE court_message_last_id SET last_id = $1", &[&last])
        .await
        .map_err(|e| db.error(e))?;
    Ok(new)
}

/// Gives each live entry of `account` named in `received` that has no first retrieval the one
/// its listing names. One conditional statement: an entry that changes meanwhile (a hydration
/// recording a retrieval, a deletion) is judged as it is after that change, never overwritten.
async fn take_received(
    db: &Db,
    tx: &Transaction<'_>,
    account: MailboxAccountId,
    received: &[(String, DateTime<Utc>)],
) -> StoreResult<()> {
    if received.is_empty() {
        return Ok(());
    }
    let message_ids: Vec<&str> = received.iter().map(|(id, _)| id.as_str()).collect();
    let times = received
        .iter()
        .map(|(_, at)| to_json("a listed first retrieval", at))
        .collect::<StoreResult<Vec<_>>>()?;
    // The rows to change are locked first, in id order: two syncs of one account at once
    // (which the service avoids, but a failover may cause) then wait for each other instead of
    // deadlocking over rows an unordered update would lock in any order.
    tx.query(
        "SELECT id FROM court_messages
         WHERE account_id = $1 AND message_id = ANY($2) AND live
             AND coalesce(record -> 'received_at', 'null'::jsonb) = 'null'::jsonb
         ORDER BY id FOR UPDATE",
        &[&account.get(), &message_ids],
    )
    .await
    .map_err(|e| db.error(e))?;
    tx.execute(
        "UPDATE court_messages AS c
         SET record = jsonb_set(c.record, '{received_at}', u.received_at)
         FROM unnest($2::text[], $3::jsonb[]) AS u (message_id, received_at)
         WHERE c.account_id = $1 AND c.message_id = u.message_id AND c.live
             AND coalesce(c.record -> 'received_at', 'null'::jsonb) = 'null'::jsonb",
        &[&account.get(), &message_ids, &times],
    )
    .await
    .map_err(|e| db.error(e))?;
    Ok(())
}

/// [`crate::Store::index_court_messages`]: the listing's new messages numbered in listing order,
/// known live ones given a first retrieval they lack, and the cursor, in one transaction.
pub(in crate::postgres) async fn index_court_messages(
    db: &Db,
    account: MailboxAccountId,
    safe_id: &str,
    listed: Vec<ListedCourtMessage>,
    cursor: Option<String>,
    now: DateTime<Utc>,
) -> StoreResult<Vec<CourtMessage>> {
    // An idle mailbox is the common case of a sync: nothing to write, no transaction.
    if listed.is_empty() && cursor.is_none() {
        return Ok(Vec::new());
    }
    let page = Page::of(listed);
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let mut new = Vec::new();
    let message_ids = page.message_ids();
    if !message_ids.is_empty() {
        let mut candidates = unknown(db, &tx, account, &message_ids).await?;
        if !candidates.is_empty() {
            let last = lock_last_id(db, &tx).await?;
            // Another sync of the account (another node's, after a failover) may have indexed
            // some of them and committed while this one waited for the lock: looked at again,
            // now that every insert before this one is committed.
            candidates = unknown(db, &tx, account, &candidates).await?;
            if !candidates.is_empty() {
                let by_id: HashMap<&str, &ListedCourtMessage> = page
                    .first
                    .iter()
                    .map(|m| (m.message_id.as_str(), m))
                    .collect();
                let listed: Vec<&ListedCourtMessage> = candidates
                    .iter()
                    .filter_map(|id| by_id.get(id.as_str()).copied())
                    .collect();
                new = insert_new(db, &tx, account, safe_id, &listed, last, now).await?;
            }
        }
        // Known entries, and new ones whose first listing had no retrieval but a later one has.
        take_received(db, &tx, account, &page.received).await?;
    }
    if let Some(cursor) = &cursor {
        tx.execute(
            "INSERT INTO mailbox_sync_cursors (account_id, sync_cursor) VALUES ($1, $2)
             ON CONFLICT (account_id) DO UPDATE SET sync_cursor = EXCLUDED.sync_cursor
             WHERE mailbox_sync_cursors.sync_cursor IS DISTINCT FROM EXCLUDED.sync_cursor",
            &[&account.get(), cursor],
        )
        .await
        .map_err(|e| db.error(e))?;
    }
    db.commit(tx).await?;
    Ok(new)
}

/// [`crate::Store::mailbox_sync_cursor`]: where the account's next sync starts.
pub(in crate::postgres) async fn mailbox_sync_cursor(
    db: &Db,
    account: MailboxAccountId,
) -> StoreResult<Option<String>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT sync_cursor FROM mailbox_sync_cursors WHERE account_id = $1",
            &[&account.get()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| row.try_get(0))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("mailbox sync cursor of account {account}: {e}")))
}
