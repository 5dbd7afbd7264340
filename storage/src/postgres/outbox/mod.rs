//! The outbox (what the engine still has to do for each report), read by the engine's scans and
//! by operators; the audit log of operators' actions; where each transport's acknowledgement
//! inbox was read to. The delivery phases that change jobs are in `delivery.rs`.
//!
//! A job's row holds the crate's [`Job`] as JSON without its id and report (columns of their
//! own), beside the columns the scans select and order by: its lane (first deliveries before
//! acknowledgements gone overdue), module and due time. The JSON keeps `not_before` to the
//! nanosecond, so that a job read back is the same turn ([`Job::same_turn`]) as the one its
//! caller was handed; the column keeps it to the microsecond, which is what PostgreSQL holds.

mod delivery;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;

use super::reports::{corrupt_column, key_at};
use super::{from_json, to_json, Db};
use crate::*;

pub(super) use delivery::{
    begin_attempt, begin_attempt_with_message, record_acknowledgements, record_delivered,
    record_outcome, record_prepared, reschedule,
};

/// Jobs read per query of a module's due jobs: a scan passing over many jobs being worked on
/// reads on in pages of this size, never the module's whole backlog at once.
const DUE_PAGE: usize = 1000;

/// The lanes in the order a scan reads them.
const LANES: [JobKind; 2] = [JobKind::Deliver, JobKind::AwaitAck];

/// The `lane` column of a job of `kind`: first deliveries sort before acknowledgements.
pub(super) fn lane(kind: &JobKind) -> i16 {
    match kind {
        JobKind::Deliver => 0,
        JobKind::AwaitAck => 1,
    }
}

/// A job id as the database holds it; `None` for one past `bigint`, which no job has.
fn db_id(id: u64) -> Option<i64> {
    i64::try_from(id).ok()
}

/// A job id from the database as the API has it: the sequence gives only positive ones.
pub(super) fn job_id(id: i64) -> StoreResult<u64> {
    u64::try_from(id).map_err(|_| StoreError::Corrupt(format!("job id {id} is negative")))
}

/// The `record` column of `job`: its JSON without the id and report, which are columns.
pub(super) fn job_record(job: &Job) -> StoreResult<Value> {
    let what = format!("job {}", job.id);
    let mut record = to_json(&what, job)?;
    let Some(fields) = record.as_object_mut() else {
        return Err(StoreError::Corrupt(format!("{what}: not a JSON object")));
    };
    fields.remove("id");
    fields.remove("report");
    Ok(record)
}

/// Columns [`job_at`] reads, in its order.
const JOB_COLUMNS: &str = "id, owner, module, report_id, record";

/// The job in a row of [`JOB_COLUMNS`].
fn job_at(row: &Row) -> StoreResult<Job> {
    let id: i64 = row.try_get(0).map_err(corrupt_column)?;
    let key = key_at(row, 1)?;
    let record: Value = row.try_get(4).map_err(corrupt_column)?;
    let what = format!("job {id}");
    let mut record = record;
    let Some(fields) = record.as_object_mut() else {
        return Err(StoreError::Corrupt(format!("{what}: not a JSON object")));
    };
    fields.insert("id".into(), Value::from(job_id(id)?));
    fields.insert("report".into(), to_json(&what, &key)?);
    from_json(&what, record)
}

/// Modules with jobs in a lane, in byte order, read by skipping from one module to the next in
/// the `jobs_due` index (a handful of index probes however many jobs each module has).
const LANE_MODULES: &str = "
    WITH RECURSIVE modules (module) AS (
        (SELECT module FROM jobs WHERE lane = $1 ORDER BY module LIMIT 1)
        UNION ALL
        SELECT (SELECT j.module FROM jobs j WHERE j.lane = $1 AND j.module > m.module
                ORDER BY j.module LIMIT 1)
        FROM modules m WHERE m.module IS NOT NULL
    )
    SELECT module FROM modules WHERE module IS NOT NULL";

/// The condition on a job that no other node works on now: unclaimed, claimed by this node
/// (`$5`; a claim of this node that no worker of it holds is one an earlier process of the node
/// left, and its own scan passes over the jobs it works on), or its lease run out (its node
/// died or hangs).
const FREE: &str = "(claimed_by IS NULL OR claimed_by = $5 OR claimed_until <= clock_timestamp())";

/// New deliveries first, then acknowledgements gone overdue; in each lane module by module,
/// each with the whole limit, oldest due first (jobs due in one microsecond in id order).
pub(super) async fn due_jobs(
    db: &Db,
    now: DateTime<Utc>,
    limit: usize,
    skip: &(dyn Fn(u64) -> bool + Send + Sync),
) -> StoreResult<Vec<Job>> {
    let mut due = Vec::new();
    if limit == 0 {
        return Ok(due);
    }
    let page = limit.min(DUE_PAGE);
    let page_rows = i64::try_from(page).unwrap_or(i64::MAX);
    let first_page = format!(
        "SELECT id, owner, module, report_id, record, not_before FROM jobs
         WHERE lane = $1 AND module = $2 AND not_before <= $3 AND {FREE}
         ORDER BY not_before, id LIMIT $4"
    );
    let next_page = format!(
        "SELECT id, owner, module, report_id, record, not_before FROM jobs
         WHERE lane = $1 AND module = $2 AND not_before <= $3 AND {FREE}
           AND (not_before, id) > ($6, $7)
         ORDER BY not_before, id LIMIT $4"
    );
    let client = db.client().await?;
    for kind in &LANES {
        let lane = lane(kind);
        let modules = client
            .query(LANE_MODULES, &[&lane])
            .await
            .map_err(|e| db.error(e))?;
        for module in &modules {
            let module: String = module.try_get(0).map_err(corrupt_column)?;
            let mut taken = 0;
            // Where the last page ended: its last row's due time (as the column holds it) and id.
            let mut after: Option<(DateTime<Utc>, i64)> = None;
            'pages: loop {
                let rows = match after {
                    None => {
                        client
                            .query(&first_page, &[&lane, &module, &now, &page_rows, &db.node()])
                            .await
                    }
                    Some((at, id)) => {
                        client
                            .query(
                                &next_page,
                                &[&lane, &module, &now, &page_rows, &db.node(), &at, &id],
                            )
                            .await
                    }
                }
                .map_err(|e| db.error(e))?;
                for row in &rows {
                    let id: i64 = row.try_get(0).map_err(corrupt_column)?;
                    after = Some((row.try_get(5).map_err(corrupt_column)?, id));
                    if skip(job_id(id)?) {
                        continue;
                    }
                    // One job that cannot be read must not stop every module's deliveries: it
                    // is named in the log and left where it is.
                    let job = match job_at(row) {
                        Ok(job) => job,
                        Err(e) => {
                            tracing::error!(job = id, error = %e, "an outbox job cannot be read; passed over");
                            continue;
                        }
                    };
                    // The column holds microseconds; a job due later within `now`'s microsecond
                    // is not due yet.
                    if job.not_before <= now {
                        due.push(job);
                        taken += 1;
                        if taken == limit {
                            break 'pages;
                        }
                    }
                }
                if rows.len() < page {
                    break;
                }
            }
        }
    }
    db.mark_reachable();
    Ok(due)
}

/// The backlog for health and metrics: counted, so that it is right whichever node changed
/// the outbox.
pub(super) async fn outbox_len(db: &Db) -> StoreResult<usize> {
    let client = db.client().await?;
    let count: i64 = client
        .query_one("SELECT count(*) FROM jobs", &[])
        .await
        .map_err(|e| db.error(e))?
        .try_get(0)
        .map_err(corrupt_column)?;
    db.mark_reachable();
    usize::try_from(count).map_err(|_| StoreError::Corrupt(format!("outbox length {count}")))
}

/// One job for operators; an id past `bigint` names none.
pub(super) async fn job(db: &Db, id: u64) -> StoreResult<Option<Job>> {
    let Some(id) = db_id(id) else {
        return Ok(None);
    };
    let client = db.client().await?;
    let row = client
        .query_opt(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"),
            &[&id],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| job_at(&row)).transpose()
}

/// A page of the outbox in id order for operators' queue views, read by the primary key,
/// never the whole outbox.
pub(super) async fn jobs(db: &Db, after: Option<u64>, limit: usize) -> StoreResult<Vec<Job>> {
    let after = match after {
        None => i64::MIN,
        Some(after) => match db_id(after) {
            Some(after) => after,
            // Past every id there can be.
            None => return Ok(Vec::new()),
        },
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let client = db.client().await?;
    let rows = client
        .query(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id > $1 ORDER BY id LIMIT $2"),
            &[&after, &limit],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter().map(job_at).collect()
}

/// Where the next fetch from the transport's inbox starts.
pub(super) async fn inbox_cursor(db: &Db, transport: &str) -> StoreResult<Option<String>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT inbox_cursor FROM inbox_cursors WHERE transport = $1",
            &[&transport],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| row.try_get(0).map_err(corrupt_column))
        .transpose()
}

/// Appends an operator's action; its number comes from the table's identity, so concurrent
/// appends (from several nodes) never take the same one.
pub(super) async fn append_audit(db: &Db, entry: AuditEntry) -> StoreResult<u64> {
    let record = to_json("audit entry", &entry)?;
    let client = db.client().await?;
    // One statement, its own transaction: durable once it answers.
    let number: i64 = client
        .query_one(
            "INSERT INTO audit_log (record) VALUES ($1) RETURNING number",
            &[&record],
        )
        .await
        .map_err(|e| db.error(e))?
        .try_get(0)
        .map_err(corrupt_column)?;
    db.mark_reachable();
    u64::try_from(number)
        .map_err(|_| StoreError::Corrupt(format!("audit entry number {number} is negative")))
}

/// A page of the audit log, oldest first, read by its primary key.
pub(super) async fn audit(
    db: &Db,
    after: Option<u64>,
    limit: usize,
) -> StoreResult<Vec<(u64, AuditEntry)>> {
    let after = match after {
        None => i64::MIN,
        Some(after) => match i64::try_from(after) {
            Ok(after) => after,
            Err(_) => return Ok(Vec::new()),
        },
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT number, record FROM audit_log WHERE number > $1 ORDER BY number LIMIT $2",
            &[&after, &limit],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter()
        .map(|row| {
            let number: i64 = row.try_get(0).map_err(corrupt_column)?;
            let what = format!("audit entry {number}");
            let number = u64::try_from(number)
                .map_err(|_| StoreError::Corrupt(format!("{what}: negative number")))?;
            Ok((
                number,
                from_json(&what, row.try_get(1).map_err(corrupt_column)?)?,
            ))
        })
        .collect()
}
