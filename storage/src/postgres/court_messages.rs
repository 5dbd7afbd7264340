//! TODO area

use chrono::{DateTime, Utc};

use super::Db;
use crate::*;

pub(super) async fn index_court_messages(
    db: &Db,
    account: MailboxAccountId,
    safe_id: &str,
    listed: Vec<ListedCourtMessage>,
    cursor: Option<String>,
    now: DateTime<Utc>,
) -> StoreResult<Vec<CourtMessage>> {
    let _ = (db, account, safe_id, listed, cursor, now);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_sync_cursor(
    db: &Db,
    account: MailboxAccountId,
) -> StoreResult<Option<String>> {
    let _ = (db, account);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn court_message(db: &Db, id: u64) -> StoreResult<Option<CourtMessage>> {
    let _ = (db, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn court_messages(
    db: &Db,
    filter: &CourtMessageFilter,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    let _ = (db, filter, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn court_messages_of(
    db: &Db,
    account: MailboxAccountId,
    after: Option<u64>,
    limit: usize,
    deleted: bool,
) -> StoreResult<Vec<CourtMessage>> {
    let _ = (db, account, after, limit, deleted);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn court_messages_to_hydrate(
    db: &Db,
    now: DateTime<Utc>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    let _ = (db, now, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn court_messages_created_before(
    db: &Db,
    cutoff: DateTime<Utc>,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<CourtMessage>> {
    let _ = (db, cutoff, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn record_hydration(
    db: &Db,
    id: u64,
    outcome: HydrationOutcome,
    now: DateTime<Utc>,
) -> StoreResult<Option<CourtMessage>> {
    let _ = (db, id, outcome, now);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn delete_court_message(
    db: &Db,
    id: u64,
    cause: DeletionCause,
    now: DateTime<Utc>,
) -> StoreResult<CourtMessageDeleted> {
    let _ = (db, id, cause, now);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn map_case_reference(
    db: &Db,
    account: MailboxAccountId,
    aktenzeichen: &str,
    job_id: &str,
) -> StoreResult<bool> {
    let _ = (db, account, aktenzeichen, job_id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn job_of_case_reference(
    db: &Db,
    account: MailboxAccountId,
    aktenzeichen: &str,
) -> StoreResult<Option<String>> {
    let _ = (db, account, aktenzeichen);
    Err(StoreError::Backend("not yet".into()))
}
