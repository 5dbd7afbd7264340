//! Reading the court-message index: one entry, the API's listings over accounts and jobs, one
//! account's entries, the hydration queue and the retention scan. Every answer is at most
//! [`crate::MAX_COURT_MESSAGE_PAGE`] entries, whatever the caller asks; each is one statement, so it
//! reads one snapshot.

use chrono::{DateTime, Utc};
use tokio_postgres::types::ToSql;

use super::{db_id, message_of, messages_of, page, page_limit, split_time, ENTRY};
use crate::postgres::Db;
use crate::{CourtMessage, CourtMessageFilter, MailboxAccountId, StoreResult};

/// [`crate::Store::court_message`]: one entry, deleted or not.
pub(in crate::postgres) async fn court_message(
    db: &Db,
    id: u64,
) -> StoreResult<Option<CourtMessage>> {
    let Some(id) = db_id(id) else {
        return Ok(None);
    };
    let client = db.client().await?;
    let row = client
        .query_opt(
            &format!("SELECT {ENTRY} FROM court_messages WHERE id = $1"),
            &[&id],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.as_ref().map(message_of).transpose()
}

/// [`crate::Store::court_messages`]: live entries of the filter's accounts (and jobs, and created
/// after `since`) in id order; one statement built for the filter, so that each listing is
/// planned on the index that narrows it (the live entries', or the jobs').
pub(in crate::postgres) async fn court_messages(
    db: &Db,
    filter: &CourtMessageFilter,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    let Some((first, limit)) = page(after, limit) else {
        return Ok(Vec::new());
    };
    // No account, or a job filter naming no job, admits nothing.
    if filter.accounts.is_empty() || filter.job_ids.as_ref().is_some_and(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let accounts: Vec<i64> = filter.accounts.iter().map(|a| a.get()).collect();
    let since = filter.since.map(split_time);
    let mut sql = format!(
        "SELECT {ENTRY} FROM court_messages WHERE live AND account_id = ANY($1) AND id >= $2"
    );
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&accounts, &first];
    if let Some((at, nanos)) = &since {
        // `since` is exclusive.
        params.push(at);
        params.push(nanos);
        sql.push_str(&format!(
            " AND (created_at, created_ns) > (${}, ${})",
            params.len() - 1,
            params.len()
        ));
    }
    if let Some(jobs) = &filter.job_ids {
        // Whole ids compared, so that a job id that starts another names only itself.
        params.push(jobs);
        sql.push_str(&format!(" AND job_id = ANY(${})", params.len()));
    }
    params.push(&limit);
    sql.push_str(&format!(" ORDER BY id LIMIT ${}", params.len()));
    let client = db.client().await?;
    let rows = client.query(&sql, &params).await.map_err(|e| db.error(e))?;
    db.mark_reachable();
    messages_of(&rows)
}

/// [`crate::Store::court_messages_of`]: one account's entries in id order, deleted ones if asked.
pub(in crate::postgres) async fn court_messages_of(
    db: &Db,
    account: MailboxAccountId,
    after: Option<u64>,
    limit: usize,
    deleted: bool,
) -> StoreResult<Vec<CourtMessage>> {
    let Some((first, limit)) = page(after, limit) else {
        return Ok(Vec::new());
    };
    // Two statements rather than a parameter, so that the live one is planned on the index of
    // live entries.
    let sql = if deleted {
        format!(
            "SELECT {ENTRY} FROM court_messages WHERE account_id = $1 AND id >= $2
             ORDER BY id LIMIT $3"
        )
    } else {
        format!(
            "SELECT {ENTRY} FROM court_messages WHERE account_id = $1 AND id >= $2 AND live
             ORDER BY id LIMIT $3"
        )
    };
    let client = db.client().await?;
    let rows = client
        .query(&sql, &[&account.get(), &first, &limit])
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    messages_of(&rows)
}

/// [`crate::Store::court_messages_to_hydrate`]: the queue's due entries, earliest due first (by
/// the exact due time, then id).
pub(in crate::postgres) async fn court_messages_to_hydrate(
    db: &Db,
    now: DateTime<Utc>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let limit = page_limit(limit);
    let (at, nanos) = split_time(now);
    let client = db.client().await?;
    let rows = client
        .query(
            &format!(
                "SELECT {ENTRY} FROM court_messages
                 WHERE due_at IS NOT NULL AND (due_at, due_ns) <= ($1, $2)
                 ORDER BY due_at, due_ns, id LIMIT $3"
            ),
            &[&at, &nanos, &limit],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    let mut due = Vec::with_capacity(rows.len());
    for row in &rows {
        // One entry that cannot be read must not stop every message's hydration: it is named
        // in the log and left where it is (as the sled engine does).
        let message = match message_of(row) {
            Ok(message) => message,
            Err(e) => {
                let id: Option<i64> = row.try_get(0).ok();
                tracing::error!(court_message = ?id, error = %e, "a court message in the hydration queue cannot be read; passed over");
                continue;
            }
        };
        // The columns are the record's; checked all the same, as the sled engine checks its
        // queue's keys against the entries.
        if message.due_for_hydration(now) {
            due.push(message);
        }
    }
    Ok(due)
}

/// [`crate::Store::court_messages_created_before`]: the retention backstop's live entries created
/// before the cutoff, in id order.
pub(in crate::postgres) async fn court_messages_created_before(
    db: &Db,
    cutoff: DateTime<Utc>,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    let Some((first, limit)) = page(after, limit) else {
        return Ok(Vec::new());
    };
    let (at, nanos) = split_time(cutoff);
    let client = db.client().await?;
    let rows = client
        .query(
            &format!(
                "SELECT {ENTRY} FROM court_messages
                 WHERE live AND (created_at, created_ns) < ($1, $2) AND id >= $3
                 ORDER BY id LIMIT $4"
            ),
            &[&at, &nanos, &first, &limit],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    messages_of(&rows)
}
