//! The delivery phases of a job: attempts counted, put back for later, its message stored,
//! delivered (then waiting for its acknowledgement), finished one by one (the authority's answer,
//! the engine giving up, an operator's discard), and finished in batches from a transport's
//! acknowledgement inbox.
//!
//! Every phase is one transaction that locks the job's row first and its report's row second (in
//! that order everywhere, so that two phases never wait for each other in a circle), checks what
//! it read under those locks, and writes. An acknowledgement names the message it answers by its
//! UUID, which is the report's `message_uuid` column from the transaction that stores the message
//! on: a job is found by it before its delivery's acceptance is recorded.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use tokio_postgres::Transaction;

use super::super::reports::{
    corrupt_column, id_bytes, message_conflict, missing_body, report_from, report_what,
    state_record, status_name,
};
use super::super::{is_unique_violation, Db};
use super::{db_id, job_at, job_id, job_record, lane, JOB_COLUMNS};
use crate::*;

/// The job `id` as stored, its row locked until the transaction ends. `NotFound` once it has
/// left the outbox.
async fn locked_job(db: &Db, tx: &Transaction<'_>, id: u64) -> StoreResult<Job> {
    let gone = || StoreError::NotFound(format!("job {id}"));
    let Some(db_id) = db_id(id) else {
        return Err(gone());
    };
    let row = tx
        .query_opt(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE"),
            &[&db_id],
        )
        .await
        .map_err(|e| db.error(e))?;
    match row {
        Some(row) => job_at(&row),
        None => Err(gone()),
    }
}

/// [`locked_job`], refused as `NotFound` unless it is still the turn of `read`
/// ([`Job::same_turn`]): the job moved on since the caller read it, and another run has it.
async fn locked_turn(db: &Db, tx: &Transaction<'_>, read: &Job) -> StoreResult<Job> {
    let stored = locked_job(db, tx, read.id).await?;
    if !stored.same_turn(read) {
        return Err(StoreError::NotFound(format!(
            "job {} as read (it moved on since)",
            read.id
        )));
    }
    Ok(stored)
}

/// `Busy` if another node holds a live claim on the (locked) job `id`: a node that hung past
/// its lease comes back to a job another node works on now, or an operator acts on a job another
/// node is delivering; that node's claim, due time and answer stand.
async fn refuse_held_elsewhere(db: &Db, tx: &Transaction<'_>, id: u64) -> StoreResult<()> {
    let Some(db_id) = db_id(id) else {
        return Ok(());
    };
    let row = tx
        .query_opt(
            "SELECT claimed_by FROM jobs WHERE id = $1 AND claimed_by <> $2
               AND claimed_until > clock_timestamp()",
            &[&db_id, &db.node()],
        )
        .await
        .map_err(|e| db.error(e))?;
    match row {
        None => Ok(()),
        Some(row) => {
            let holder: String = row.try_get(0).map_err(corrupt_column)?;
            Err(StoreError::Busy(format!(
                "job {id} is being worked on by node {holder} right now"
            )))
        }
    }
}

/// The state of the report under `key` and its message's body, its row locked until the
/// transaction ends. `NotFound` if there is no such report.
async fn locked_report(
    db: &Db,
    tx: &Transaction<'_>,
    key: &ReportKey,
) -> StoreResult<(Report, Option<Vec<u8>>)> {
    let row = tx
        .query_opt(
            "SELECT record, message_body FROM reports
             WHERE owner = $1 AND module = $2 AND report_id = $3 FOR NO KEY UPDATE",
            &[&key.owner, &key.module, &id_bytes(key)],
        )
        .await
        .map_err(|e| db.error(e))?;
    let Some(row) = row else {
        return Err(StoreError::NotFound(report_what(key)));
    };
    let report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    Ok((report, row.try_get(1).map_err(corrupt_column)?))
}

/// Whether a job written back stays claimed by this node.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// An attempt begins: the node holds the job for a lease, pushed on by its heartbeat, and
    /// the other nodes pass over it meanwhile.
    Hold,
    /// The attempt is recorded: any node may take the job when it is due.
    Release,
}

/// Writes `job` (kind, due time, attempts, error) over its row, claimed by this node or by none.
async fn put_job(db: &Db, tx: &Transaction<'_>, job: &Job, claim: Claim) -> StoreResult<()> {
    let Some(id) = db_id(job.id) else {
        return Err(StoreError::NotFound(format!("job {}", job.id)));
    };
    let holder = (claim == Claim::Hold).then(|| db.node());
    tx.execute(
        "UPDATE jobs SET lane = $2, not_before = $3, record = $4, claimed_by = $5,
             claimed_until = CASE WHEN $5::text IS NULL THEN NULL
                 ELSE clock_timestamp() + make_interval(secs => $6) END
         WHERE id = $1",
        &[
            &id,
            &lane(&job.kind),
            &job.not_before,
            &job_record(job)?,
            &holder,
            &db.lease_secs(),
        ],
    )
    .await
    .map_err(|e| db.error(e))?;
    Ok(())
}

/// Writes the state of `report` over its row's (a change that leaves status, payload and
/// listings as they are).
async fn put_state(db: &Db, tx: &Transaction<'_>, report: &Report) -> StoreResult<()> {
    let key = &report.key;
    tx.execute(
        "UPDATE reports SET record = $4 WHERE owner = $1 AND module = $2 AND report_id = $3",
        &[
            &key.owner,
            &key.module,
            &id_bytes(key),
            &state_record(report)?,
        ],
    )
    .await
    .map_err(|e| db.error(e))?;
    Ok(())
}

/// Stores `message` on the report under `key` (its body in its column, its UUID where
/// acknowledgements look), unless the report has a message already: then that one comes back,
/// so that a retry delivers exactly the same bytes.
async fn store_message(
    db: &Db,
    tx: &Transaction<'_>,
    key: &ReportKey,
    message: PreparedMessage,
) -> StoreResult<PreparedMessage> {
    let (mut report, body) = locked_report(db, tx, key).await?;
    if let Some(mut existing) = report.message {
        existing.body = body.ok_or_else(|| missing_body(key))?;
        return Ok(existing);
    }
    report.message = Some(message.clone());
    let stored = tx
        .execute(
            "UPDATE reports SET record = $4, message_uuid = $5, message_body = $6
             WHERE owner = $1 AND module = $2 AND report_id = $3",
            &[
                &key.owner,
                &key.module,
                &id_bytes(key),
                &state_record(&report)?,
                &message.message_uuid,
                &message.body,
            ],
        )
        .await;
    match stored {
        Ok(_) => Ok(message),
        Err(e) if is_unique_violation(&e) => Err(message_conflict(Some(message.message_uuid))),
        Err(e) => Err(db.error(e)),
    }
}

/// Records the report's final state (`outcome`, at `at`) and removes its job.
async fn end(
    db: &Db,
    tx: &Transaction<'_>,
    stored: Job,
    mut report: Report,
    outcome: &Outcome,
    at: DateTime<Utc>,
) -> StoreResult<FinishedReport> {
    report.finish(outcome, at);
    let receipt = match outcome {
        Outcome::Success { receipt, .. } => Some(receipt.bytes.as_slice()),
        Outcome::Failure { .. } => None,
    };
    let key = &report.key;
    tx.execute(
        "UPDATE reports SET record = $4, status = $5, finished_at = $6, receipt = $7
         WHERE owner = $1 AND module = $2 AND report_id = $3",
        &[
            &key.owner,
            &key.module,
            &id_bytes(key),
            &state_record(&report)?,
            &status_name(report.status),
            &at,
            &receipt,
        ],
    )
    .await
    .map_err(|e| db.error(e))?;
    let Some(id) = db_id(stored.id) else {
        return Err(StoreError::NotFound(format!("job {}", stored.id)));
    };
    tx.execute("DELETE FROM jobs WHERE id = $1", &[&id])
        .await
        .map_err(|e| db.error(e))?;
    Ok(FinishedReport::of(report, stored.id))
}

/// Counts the attempt before it is made, on the turn `job` was read at only: of two workers
/// holding the same copy, the second finds the job moved on (`NotFound`).
pub(in crate::postgres) async fn begin_attempt(db: &Db, job: &Job) -> StoreResult<Job> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let mut stored = locked_turn(db, &tx, job).await?;
    stored.attempts = stored.attempts.saturating_add(1);
    put_job(db, &tx, &stored, Claim::Hold).await?;
    db.commit(tx).await?;
    Ok(stored)
}

/// `NotFound` if the job has left the outbox. The stored job, not the caller's copy, keeps the
/// attempt count authoritative.
pub(in crate::postgres) async fn reschedule(
    db: &Db,
    job: &Job,
    not_before: DateTime<Utc>,
    last_error: Option<String>,
) -> StoreResult<()> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let mut stored = locked_job(db, &tx, job.id).await?;
    // A node that hung past its lease comes back to a job another node works on now: that
    // node's claim and due time stand.
    refuse_held_elsewhere(db, &tx, job.id).await?;
    stored.not_before = not_before;
    stored.last_error = last_error;
    put_job(db, &tx, &stored, Claim::Release).await?;
    db.commit(tx).await?;
    Ok(())
}

/// `NotFound` if the job's report does not exist; the job itself is not read.
pub(in crate::postgres) async fn record_prepared(
    db: &Db,
    job: &Job,
    message: PreparedMessage,
) -> StoreResult<PreparedMessage> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let stored = store_message(db, &tx, &job.report, message).await?;
    db.commit(tx).await?;
    Ok(stored)
}

/// [`begin_attempt`] and [`record_prepared`] in one transaction (one commit, one flush of the
/// WAL); the job's row is locked before its report's, as everywhere.
pub(in crate::postgres) async fn begin_attempt_with_message(
    db: &Db,
    job: &Job,
    message: PreparedMessage,
) -> StoreResult<(Job, PreparedMessage)> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let mut stored = locked_turn(db, &tx, job).await?;
    stored.attempts = stored.attempts.saturating_add(1);
    put_job(db, &tx, &stored, Claim::Hold).await?;
    let message = store_message(db, &tx, &stored.report, message).await?;
    db.commit(tx).await?;
    Ok((stored, message))
}

/// `NotFound` if the job has left the outbox or its report is gone. A delivery that waits for
/// its acknowledgement is recorded on whatever turn the job is at (the transport took the
/// message); one that ends the report only on the turn `job` was read at.
pub(in crate::postgres) async fn record_delivered(
    db: &Db,
    job: &Job,
    transport: &str,
    transport_ref: Option<String>,
    delivered_at: DateTime<Utc>,
    after: AfterDelivery,
) -> StoreResult<Option<FinishedReport>> {
    let resend_at = match after {
        AfterDelivery::AwaitAck { resend_at } => resend_at,
        AfterDelivery::Finished(outcome) => {
            let delivery = (transport, transport_ref, delivered_at);
            return finish_job(db, job, &outcome, delivered_at, Some(delivery))
                .await
                .map(Some);
        }
    };
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let stored = locked_job(db, &tx, job.id).await?;
    let (mut report, _) = locked_report(db, &tx, &stored.report).await?;
    // A message delivered again that the transport had lost may come back under a new
    // reference; the acknowledgement finds it by its UUID either way.
    report.note_delivery((transport, transport_ref, delivered_at));
    put_state(db, &tx, &report).await?;
    // Same id, new kind: the job keeps its identity across the two phases.
    let waiting = stored.awaiting_ack(resend_at);
    put_job(db, &tx, &waiting, Claim::Release).await?;
    db.commit(tx).await?;
    Ok(None)
}

/// `NotFound` if the job has left the outbox (its outcome is recorded already), moved on since
/// `job` was read, or its report is gone.
pub(in crate::postgres) async fn record_outcome(
    db: &Db,
    job: &Job,
    outcome: Outcome,
    at: DateTime<Utc>,
) -> StoreResult<FinishedReport> {
    finish_job(db, job, &outcome, at, None).await
}

/// Ends the job's report with `outcome` and removes the job, in one transaction, only on the
/// turn `job` was read at (an operator's discard does not end a job the engine has moved on
/// meanwhile); with `delivery`, records first which transport took the message under which
/// reference.
async fn finish_job(
    db: &Db,
    job: &Job,
    outcome: &Outcome,
    at: DateTime<Utc>,
    delivery: Option<(&str, Option<String>, DateTime<Utc>)>,
) -> StoreResult<FinishedReport> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let stored = locked_turn(db, &tx, job).await?;
    refuse_held_elsewhere(db, &tx, job.id).await?;
    let (mut report, _) = locked_report(db, &tx, &stored.report).await?;
    if let Some(delivery) = delivery {
        report.note_delivery(delivery);
    }
    let finished = end(db, &tx, stored, report, outcome, at).await?;
    db.commit(tx).await?;
    Ok(finished)
}

/// Finds the jobs by their messages' UUIDs; writes nothing (no transaction) when no
/// acknowledgement names a job in the outbox and the cursor stays, the common case of an idle
/// inbox.
pub(in crate::postgres) async fn record_acknowledgements(
    db: &Db,
    transport: &str,
    acknowledgements: Vec<(String, Outcome)>,
    cursor: Option<String>,
    at: DateTime<Utc>,
) -> StoreResult<Vec<FinishedReport>> {
    let uuids: Vec<&str> = acknowledgements
        .iter()
        .map(|(uuid, _)| uuid.as_str())
        .collect();
    let mut client = db.client().await?;
    let current: Option<String> = client
        .query_opt(
            "SELECT inbox_cursor FROM inbox_cursors WHERE transport = $1",
            &[&transport],
        )
        .await
        .map_err(|e| db.error(e))?
        .map(|row| row.try_get(0).map_err(corrupt_column))
        .transpose()?;
    let moves = cursor.is_some() && cursor != current;
    let ours: bool = if uuids.is_empty() {
        false
    } else {
        client
            .query_one(
                "SELECT EXISTS (
                     SELECT 1 FROM reports r JOIN jobs j
                       ON (j.owner, j.module, j.report_id) = (r.owner, r.module, r.report_id)
                     WHERE r.message_uuid = ANY($1))",
                &[&uuids],
            )
            .await
            .map_err(|e| db.error(e))?
            .try_get(0)
            .map_err(corrupt_column)?
    };
    db.mark_reachable();
    if !moves && !ours {
        return Ok(Vec::new());
    }
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    // Every job the batch names, locked at once in id order: two batches naming the same jobs
    // wait for each other instead of locking them in opposite orders.
    let rows = tx
        .query(
            "SELECT j.id, r.message_uuid FROM jobs j JOIN reports r
               ON (j.owner, j.module, j.report_id) = (r.owner, r.module, r.report_id)
             WHERE r.message_uuid = ANY($1)
             ORDER BY j.id FOR UPDATE OF j",
            &[&uuids],
        )
        .await
        .map_err(|e| db.error(e))?;
    let mut jobs = HashMap::with_capacity(rows.len());
    for row in &rows {
        let id: i64 = row.try_get(0).map_err(corrupt_column)?;
        let uuid: String = row.try_get(1).map_err(corrupt_column)?;
        jobs.insert(uuid, job_id(id)?);
    }
    let mut finished = Vec::new();
    for (uuid, outcome) in &acknowledgements {
        let Some(&id) = jobs.get(uuid) else {
            continue;
        };
        // Ended by an earlier acknowledgement of this batch naming the same message.
        let stored = match locked_job(db, &tx, id).await {
            Ok(stored) => stored,
            Err(StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        let (report, _) = match locked_report(db, &tx, &stored.report).await {
            Ok(read) => read,
            Err(StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        // Another transport took the message: this is not its acknowledgement.
        if report
            .transport
            .as_deref()
            .is_some_and(|took| took != transport)
        {
            continue;
        }
        finished.push(end(db, &tx, stored, report, outcome, at).await?);
    }
    if let Some(cursor) = &cursor {
        tx.execute(
            "INSERT INTO inbox_cursors (transport, inbox_cursor) VALUES ($1, $2)
             ON CONFLICT (transport) DO UPDATE SET inbox_cursor = EXCLUDED.inbox_cursor",
            &[&transport, cursor],
        )
        .await
        .map_err(|e| db.error(e))?;
    }
    db.commit(tx).await?;
    Ok(finished)
}
