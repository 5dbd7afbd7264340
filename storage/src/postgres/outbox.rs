//! TODO area

use chrono::{DateTime, Utc};

use super::Db;
use crate::*;

pub(super) async fn due_jobs(
    db: &Db,
    now: DateTime<Utc>,
    limit: usize,
    skip: &(dyn Fn(u64) -> bool + Send + Sync),
) -> StoreResult<Vec<Job>> {
    let _ = (db, now, limit, skip);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn outbox_len(db: &Db) -> StoreResult<usize> {
    let _ = (db);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn begin_attempt(db: &Db, job: &Job) -> StoreResult<Job> {
    let _ = (db, job);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn reschedule(
    db: &Db,
    job: &Job,
    not_before: DateTime<Utc>,
    last_error: Option<String>,
) -> StoreResult<()> {
    let _ = (db, job, not_before, last_error);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn record_prepared(
    db: &Db,
    job: &Job,
    message: PreparedMessage,
) -> StoreResult<PreparedMessage> {
    let _ = (db, job, message);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn begin_attempt_with_message(
    db: &Db,
    job: &Job,
    message: PreparedMessage,
) -> StoreResult<(Job, PreparedMessage)> {
    let _ = (db, job, message);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn record_delivered(
    db: &Db,
    job: &Job,
    transport: &str,
    transport_ref: Option<String>,
    delivered_at: DateTime<Utc>,
    after: AfterDelivery,
) -> StoreResult<Option<FinishedReport>> {
    let _ = (db, job, transport, transport_ref, delivered_at, after);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn inbox_cursor(db: &Db, transport: &str) -> StoreResult<Option<String>> {
    let _ = (db, transport);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn record_acknowledgements(
    db: &Db,
    transport: &str,
    acknowledgements: Vec<(String, Outcome)>,
    cursor: Option<String>,
    at: DateTime<Utc>,
) -> StoreResult<Vec<FinishedReport>> {
    let _ = (db, transport, acknowledgements, cursor, at);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn job(db: &Db, id: u64) -> StoreResult<Option<Job>> {
    let _ = (db, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn jobs(db: &Db, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
    let _ = (db, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn append_audit(db: &Db, entry: AuditEntry) -> StoreResult<u64> {
    let _ = (db, entry);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn audit(
    db: &Db,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<(u64, AuditEntry)>> {
    let _ = (db, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn record_outcome(
    db: &Db,
    job: &Job,
    outcome: Outcome,
    at: DateTime<Utc>,
) -> StoreResult<FinishedReport> {
    let _ = (db, job, outcome, at);
    Err(StoreError::Backend("not yet".into()))
}
