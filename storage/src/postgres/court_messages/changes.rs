//! Changing one entry of the court-message index (recording a hydration's outcome, deleting
//! it) and mapping case references to jobs.
//!
//! An entry is changed by reading it `FOR UPDATE`, changing the record as the sled engine does
//! (with the same code: [`CourtMessage::apply_hydration`]),
//! and writing the record back with the columns derived from it ([`Columns::of`]), in one
//! transaction: a hydration and an acknowledgement of one message on two nodes take turns, and
//! the second sees what the first did (a hydration of an entry deleted meanwhile records
//! nothing).

use chrono::{DateTime, Utc};
use tokio_postgres::Transaction;

use super::{db_id, message_of, message_what, Columns, ENTRY};
use crate::postgres::{to_json, Db};
use crate::{
    CourtMessage, CourtMessageDeleted, Deletion, DeletionCause, HydrationOutcome, MailboxAccountId,
    StoreError, StoreResult,
};

/// Entry `id`, locked until the transaction ends; `None` if there is none.
async fn locked(db: &Db, tx: &Transaction<'_>, id: i64) -> StoreResult<Option<CourtMessage>> {
    let row = tx
        .query_opt(
            &format!("SELECT {ENTRY} FROM court_messages WHERE id = $1 FOR UPDATE"),
            &[&id],
        )
        .await
        .map_err(|e| db.error(e))?;
    row.as_ref().map(message_of).transpose()
}

/// Writes `message` (locked by [`locked`]) back, with its columns.
async fn write(db: &Db, tx: &Transaction<'_>, message: &CourtMessage) -> StoreResult<()> {
    let what = message_what(message.id);
    let id = db_id(message.id).ok_or_else(|| StoreError::Corrupt(what.clone()))?;
    let record = to_json(&what, message)?;
    let columns = Columns::of(message);
    let (due_at, due_ns) = columns.due.unzip();
    let written = tx
        .execute(
            "UPDATE court_messages SET live = $2, due_at = $3, due_ns = $4, job_id = $5,
                 record = $6
             WHERE id = $1",
            &[
                &id,
                &columns.live,
                &due_at,
                &due_ns,
                &columns.job_id,
                &record,
            ],
        )
        .await
        .map_err(|e| db.error(e))?;
    // The row is locked: it cannot have gone.
    if written != 1 {
        return Err(StoreError::Corrupt(format!("{what} vanished while locked")));
    }
    Ok(())
}

/// The job `aktenzeichen` maps to in `account`, read on `client` (a transaction or not).
async fn job_of(
    db: &Db,
    client: &impl tokio_postgres::GenericClient,
    account: MailboxAccountId,
    aktenzeichen: &str,
) -> StoreResult<Option<String>> {
    let row = client
        .query_opt(
            "SELECT job_id FROM case_references WHERE account_id = $1 AND aktenzeichen = $2",
            &[&account.get(), &aktenzeichen],
        )
        .await
        .map_err(|e| db.error(e))?;
    row.map(|row| row.try_get(0))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("job of a case reference: {e}")))
}

/// [`crate::Store::record_hydration`]: the outcome recorded on the locked entry if it still waits.
pub(in crate::postgres) async fn record_hydration(
    db: &Db,
    id: u64,
    outcome: HydrationOutcome,
    now: DateTime<Utc>,
) -> StoreResult<Option<CourtMessage>> {
    let Some(db_id) = db_id(id) else {
        return Ok(None);
    };
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let Some(mut message) = locked(db, &tx, db_id).await? else {
        db.mark_reachable();
        return Ok(None);
    };
    // Deleted meanwhile, or recorded already (by another node's hydration): nothing to record.
    if !message.awaits_hydration() {
        db.mark_reachable();
        return Ok(None);
    }
    let job_id = match outcome.aktenzeichen() {
        Some(aktenzeichen) => job_of(db, &*tx, message.account, aktenzeichen).await?,
        None => None,
    };
    message.apply_hydration(&outcome, job_id, now);
    write(db, &tx, &message).await?;
    db.commit(tx).await?;
    Ok(Some(message))
}

/// [`crate::Store::delete_court_message`]: the locked entry soft-deleted, unless it was before.
pub(in crate::postgres) async fn delete_court_message(
    db: &Db,
    id: u64,
    cause: DeletionCause,
    now: DateTime<Utc>,
) -> StoreResult<CourtMessageDeleted> {
    let Some(db_id) = db_id(id) else {
        return Ok(CourtMessageDeleted::NotFound);
    };
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let Some(mut message) = locked(db, &tx, db_id).await? else {
        db.mark_reachable();
        return Ok(CourtMessageDeleted::NotFound);
    };
    // Deleted before, by whatever cause: the first deletion stays.
    if message.deleted.is_some() {
        db.mark_reachable();
        return Ok(CourtMessageDeleted::AlreadyDeleted(message));
    }
    // The hydration keeps its state (the audit trail); the columns take the entry out of the
    // queue and the listings.
    message.deleted = Some(Deletion { at: now, cause });
    write(db, &tx, &message).await?;
    db.commit(tx).await?;
    Ok(CourtMessageDeleted::Deleted(message))
}

/// [`crate::Store::map_case_reference`]: the mapping inserted unless the case reference has one.
pub(in crate::postgres) async fn map_case_reference(
    db: &Db,
    account: MailboxAccountId,
    aktenzeichen: &str,
    job_id: &str,
) -> StoreResult<bool> {
    let client = db.client().await?;
    // One statement, its own transaction: of two nodes mapping one case reference at once, the
    // second waits for the first's commit and then finds it mapped.
    let mapped = client
        .execute(
            "INSERT INTO case_references (account_id, aktenzeichen, job_id) VALUES ($1, $2, $3)
             ON CONFLICT (account_id, aktenzeichen) DO NOTHING",
            &[&account.get(), &aktenzeichen, &job_id],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(mapped == 1)
}

/// [`crate::Store::job_of_case_reference`]: the job the case reference maps to.
pub(in crate::postgres) async fn job_of_case_reference(
    db: &Db,
    account: MailboxAccountId,
    aktenzeichen: &str,
) -> StoreResult<Option<String>> {
    let client = db.client().await?;
    let job = job_of(db, &**client, account, aktenzeichen).await?;
    db.mark_reachable();
    Ok(job)
}
