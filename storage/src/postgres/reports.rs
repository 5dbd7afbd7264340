//! Reports: stored at dispatch with their job, read whole or reduced to what a poll answers,
//! consumed, forgotten after a refusal, and expired by retention.
//!
//! A report's row holds its state (the crate's [`Report`] as JSON, without its key and its
//! payload) beside the columns that queries select by, and its payload (submission, message body,
//! receipt) in columns of its own, written once. The helpers here that turn rows into records and
//! back are shared with the outbox, whose delivery phases change reports too.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;

use super::{from_json, is_unique_violation, to_json, Db};
use crate::*;

/// Reports expired per transaction: a sweep may find a whole day's reports due at once; in
/// batches, the memory it holds stays bounded and a crash keeps what was done.
const EXPIRY_BATCH: i64 = 256;

/// How errors name the report under `key`.
pub(super) fn report_what(key: &ReportKey) -> String {
    format!("report {key}")
}

/// The report key in a row's columns `at`, `at + 1`, `at + 2` (owner, module, report id).
/// The id is bytea (it may hold NUL); one that is not UTF-8 was not written by this engine.
pub(super) fn key_at(row: &Row, at: usize) -> StoreResult<ReportKey> {
    let owner: String = row.try_get(at).map_err(corrupt_column)?;
    let module: String = row.try_get(at + 1).map_err(corrupt_column)?;
    let id: Vec<u8> = row.try_get(at + 2).map_err(corrupt_column)?;
    let id = String::from_utf8(id).map_err(|e| {
        StoreError::Corrupt(format!("report id of {owner}/{module} is not UTF-8: {e}"))
    })?;
    Ok(ReportKey { owner, module, id })
}

/// A column of an unexpected type or nullness: the schema is not the one this build wrote.
pub(super) fn corrupt_column(e: tokio_postgres::Error) -> StoreError {
    StoreError::Corrupt(format!("unexpected column: {e}"))
}

/// What the `status` column holds for `status`: the name the records use.
pub(super) fn status_name(status: ReportStatus) -> &'static str {
    match status {
        ReportStatus::Pending => "PENDING",
        ReportStatus::Success => "SUCCESS",
        ReportStatus::Failure => "FAILURE",
    }
}

/// The state column of `report`: its JSON without the key (the row's key columns hold it, once)
/// and without the payload, whatever `report` carries of it, so that no change ever writes the
/// payload into the state.
pub(super) fn state_record(report: &Report) -> StoreResult<Value> {
    let what = report_what(&report.key);
    let mut record = to_json(&what, report)?;
    let Some(fields) = record.as_object_mut() else {
        return Err(StoreError::Corrupt(format!("{what}: not a JSON object")));
    };
    fields.remove("key");
    fields.insert("submission".into(), Value::Null);
    fields.insert("receipt".into(), Value::Null);
    if let Some(Value::Object(message)) = fields.get_mut("message") {
        message.insert("body".into(), Value::String(String::new()));
    }
    Ok(record)
}

/// The report whose state column is `record`, under `key`, without its payload.
pub(super) fn report_from(key: &ReportKey, record: Value) -> StoreResult<Report> {
    let what = report_what(key);
    let mut record = record;
    let Some(fields) = record.as_object_mut() else {
        return Err(StoreError::Corrupt(format!("{what}: not a JSON object")));
    };
    fields.insert("key".into(), to_json(&what, key)?);
    from_json(&what, record)
}

/// The payload columns of one row, as read.
pub(super) struct Payload {
    /// The submission, when it was read.
    pub(super) submission: Option<Value>,
    /// The stored message's body.
    pub(super) body: Option<Vec<u8>>,
    /// The receipt.
    pub(super) receipt: Option<Vec<u8>>,
}

/// Puts the payload back into `report` (read from its state): nothing of an expired report
/// (retention removed it); the message's body, which a stored message never lacks (a retry
/// would deliver nothing); the receipt of a successful report.
pub(super) fn attach(report: &mut Report, payload: Payload) -> StoreResult<()> {
    if report.expired_at.is_some() {
        return Ok(());
    }
    report.submission = payload.submission;
    if let Some(message) = &mut report.message {
        match payload.body {
            Some(body) => message.body = body,
            None => return Err(missing_body(&report.key)),
        }
    }
    if report.status == ReportStatus::Success {
        report.receipt = payload.receipt;
    }
    Ok(())
}

/// A stored message whose body is not there: corrupt, never an empty message.
pub(super) fn missing_body(key: &ReportKey) -> StoreError {
    StoreError::Corrupt(format!(
        "{}: its stored message has no body",
        report_what(key)
    ))
}

/// The report id as its column holds it.
pub(super) fn id_bytes(key: &ReportKey) -> &[u8] {
    key.id.as_bytes()
}

/// The report, its listing as pending and its `Deliver` job in one transaction. The report's
/// primary key decides a duplicate (`ON CONFLICT DO NOTHING`): of two concurrent dispatches of one
/// id, the second waits for the first's commit and then finds the id taken.
pub(super) async fn dispatch_report(db: &Db, report: Report) -> StoreResult<Job> {
    let mut report = report;
    let submission = report.submission.take();
    let body = report.message.as_ref().map(|m| m.body.clone());
    let message_uuid = report.message.as_ref().map(|m| m.message_uuid.clone());
    let state = state_record(&report)?;
    let mut job = Job {
        id: 0,
        report: report.key.clone(),
        kind: JobKind::Deliver,
        attempts: 0,
        not_before: Utc::now(),
        last_error: None,
    };
    let job_record = super::outbox::job_record(&job)?;
    let key = &report.key;
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    // Any stored report counts, expired or consumed: an id is used once per owner and module,
    // so a late duplicate never overwrites the audit trail.
    let inserted = tx
        .execute(
            "INSERT INTO reports (owner, module, report_id, status, pending, finished_at,
                                  expired_at, message_uuid, record, submission, message_body)
             VALUES ($1, $2, $3, $4, true, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (owner, module, report_id) DO NOTHING",
            &[
                &key.owner,
                &key.module,
                &id_bytes(key),
                &status_name(report.status),
                &report.finished_at,
                &report.expired_at,
                &message_uuid,
                &state,
                &submission,
                &body,
            ],
        )
        .await;
    match inserted {
        Ok(1) => {}
        Ok(_) => return Err(StoreError::Conflict(report_what(key))),
        Err(e) if is_unique_violation(&e) => return Err(message_conflict(message_uuid)),
        Err(e) => return Err(db.error(e)),
    }
    let id: i64 = tx
        .query_one(
            // Claimed by the node that dispatches it: that node routes the job at once and
            // may wait for its outcome to answer its client (a report decided at once), which
            // it would never hear of if another node's scan delivered it. Should the node die,
            // the lease runs out and any node takes the job.
            "INSERT INTO jobs (owner, module, report_id, lane, not_before, record,
                               claimed_by, claimed_until)
             VALUES ($1, $2, $3, $4, $5, $6,
                     $7, clock_timestamp() + make_interval(secs => $8)) RETURNING id",
            &[
                &key.owner,
                &key.module,
                &id_bytes(key),
                &super::outbox::lane(&job.kind),
                &job.not_before,
                &job_record,
                &db.node(),
                &db.lease_secs(),
            ],
        )
        .await
        .map_err(|e| db.error(e))?
        .try_get(0)
        .map_err(corrupt_column)?;
    db.commit(tx).await?;
    job.id = super::outbox::job_id(id)?;
    Ok(job)
}

/// A message UUID that another report's message has already: UUIDs are random, so this is a
/// bug upstream; an acknowledgement naming it could not tell the two apart.
pub(super) fn message_conflict(message_uuid: Option<String>) -> StoreError {
    StoreError::Conflict(format!(
        "message {} (another report's message has this UUID)",
        message_uuid.unwrap_or_default()
    ))
}

/// The whole report, submission included (a peek, an operator's look-up).
pub(super) async fn report(db: &Db, key: &ReportKey) -> StoreResult<Option<Report>> {
    read_report(db, key, true).await
}

/// The report without its submission once a message is stored: a delivery reads only the
/// message, and the submission is the largest part of most reports.
pub(super) async fn report_to_deliver(db: &Db, key: &ReportKey) -> StoreResult<Option<Report>> {
    read_report(db, key, false).await
}

/// The report under `key` with its payload; without its submission if `submission` is false and
/// a message is stored (a delivery reads nothing else of it). One statement: the state and its
/// payload are read as of one moment.
async fn read_report(db: &Db, key: &ReportKey, submission: bool) -> StoreResult<Option<Report>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record,
                    CASE WHEN $4 OR message_uuid IS NULL THEN submission END,
                    message_body, receipt
             FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3",
            &[&key.owner, &key.module, &id_bytes(key), &submission],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    let Some(row) = row else {
        return Ok(None);
    };
    let mut report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    let payload = Payload {
        submission: row.try_get(1).map_err(corrupt_column)?,
        body: row.try_get(2).map_err(corrupt_column)?,
        receipt: row.try_get(3).map_err(corrupt_column)?,
    };
    attach(&mut report, payload)?;
    Ok(Some(report))
}

/// What a poll answers about `report` (its state as read), with `receipt` (its column) in the
/// base64 that results carry.
fn result_of(report: &Report, receipt: Option<Vec<u8>>) -> ReportResult {
    let mut result = ReportResult::from(report);
    if report.status == ReportStatus::Success && report.expired_at.is_none() {
        result.receipt_base64 = receipt.map(|bytes| STANDARD.encode(bytes));
    }
    result
}

/// The row of the report under `key` as a poll reads it, without a lock: its state (column 0)
/// and, only where a result carries it, its receipt (column 1); never the submission or the
/// message. Shared by [`report_result`] and [`consume_report`]'s first read, which answer the
/// same poll.
async fn poll_row(
    db: &Db,
    client: &impl tokio_postgres::GenericClient,
    key: &ReportKey,
) -> StoreResult<Option<Row>> {
    let row = client
        .query_opt(
            "SELECT record, CASE WHEN status = 'SUCCESS' THEN receipt END
             FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3",
            &[&key.owner, &key.module, &id_bytes(key)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(row)
}

/// What a poll answers, from the state and the receipt alone: the submission and the message,
/// which a poll never shows, are not read.
pub(super) async fn report_result(db: &Db, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
    let client = db.client().await?;
    let Some(row) = poll_row(db, &**client, key).await? else {
        return Ok(None);
    };
    let report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    let receipt = row.try_get(1).map_err(corrupt_column)?;
    Ok(Some(result_of(&report, receipt)))
}

/// The `status` column alone: a check over many reports decodes no record.
pub(super) async fn report_status(db: &Db, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT status FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3",
            &[&key.owner, &key.module, &id_bytes(key)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    let Some(row) = row else {
        return Ok(None);
    };
    let status: String = row.try_get(0).map_err(corrupt_column)?;
    match status.as_str() {
        "PENDING" => Ok(Some(ReportStatus::Pending)),
        "SUCCESS" => Ok(Some(ReportStatus::Success)),
        "FAILURE" => Ok(Some(ReportStatus::Failure)),
        other => Err(StoreError::Corrupt(format!(
            "{}: unknown status {other:?}",
            report_what(key)
        ))),
    }
}

/// A consumed report answers as stored after consuming, i.e. with `polled` set.
pub(super) async fn consume_report(db: &Db, key: &ReportKey) -> StoreResult<Consumed> {
    // Most polls find a report pending, or consumed already: a plain read answers those
    // without locking (or writing) anything. Only a final, unpolled report is consumed in a
    // transaction, which reads it again under a row lock: of two consumers, the second waits
    // and then finds it polled.
    let client = db.client().await?;
    let Some(row) = poll_row(db, &**client, key).await? else {
        return Ok(Consumed::NotFound);
    };
    let report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    if let Some(answer) = unconsumable(&report, || row.try_get(1).map_err(corrupt_column))? {
        return Ok(answer);
    }
    drop(row);
    let mut client = client;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let row = tx
        .query_opt(
            "SELECT record, CASE WHEN status = 'SUCCESS' THEN receipt END
             FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3
             FOR NO KEY UPDATE",
            &[&key.owner, &key.module, &id_bytes(key)],
        )
        .await
        .map_err(|e| db.error(e))?;
    let Some(row) = row else {
        // Forgotten meanwhile.
        return Ok(Consumed::NotFound);
    };
    let mut report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    let receipt: Option<Vec<u8>> = row.try_get(1).map_err(corrupt_column)?;
    if let Some(answer) = unconsumable(&report, || Ok(receipt.clone()))? {
        return Ok(answer);
    }
    report.polled = true;
    tx.execute(
        "UPDATE reports SET record = $4, pending = false
         WHERE owner = $1 AND module = $2 AND report_id = $3",
        &[
            &key.owner,
            &key.module,
            &id_bytes(key),
            &state_record(&report)?,
        ],
    )
    .await
    .map_err(|e| db.error(e))?;
    db.commit(tx).await?;
    Ok(Consumed::Result(result_of(&report, receipt)))
}

/// What a poll without `peek` answers about `report` when it does not consume it: expired,
/// consumed already, or still pending (answered as it is, with the receipt `receipt` reads);
/// `None` for a final, unpolled report, which is consumed.
fn unconsumable(
    report: &Report,
    receipt: impl FnOnce() -> StoreResult<Option<Vec<u8>>>,
) -> StoreResult<Option<Consumed>> {
    if report.expired_at.is_some() {
        return Ok(Some(Consumed::Expired));
    }
    if report.polled {
        return Ok(Some(Consumed::AlreadyRetrieved));
    }
    if !report.status.is_final() {
        return Ok(Some(Consumed::Result(result_of(report, receipt()?))));
    }
    Ok(None)
}

/// The owner's listed reports in the module, in byte order of their ids (as the sled engine
/// lists them), from the partial index of pending reports.
pub(super) async fn pending_ids(db: &Db, owner: &str, module: &str) -> StoreResult<Vec<String>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT report_id FROM reports WHERE owner = $1 AND module = $2 AND pending
             ORDER BY report_id",
            &[&owner, &module],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter()
        .map(|row| {
            let id: Vec<u8> = row.try_get(0).map_err(corrupt_column)?;
            String::from_utf8(id).map_err(|e| {
                StoreError::Corrupt(format!("report id in the pending list is not UTF-8: {e}"))
            })
        })
        .collect()
}

/// Every owner's report under the module and id, owners in byte order. The id is compared
/// whole: a longer id that starts with it (`id\0more`) is another report.
pub(super) async fn reports_with_id(
    db: &Db,
    module: &str,
    id: &str,
) -> StoreResult<Vec<ReportKey>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT owner FROM reports WHERE module = $1 AND report_id = $2 ORDER BY owner",
            &[&module, &id.as_bytes()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.iter()
        .map(|row| {
            Ok(ReportKey {
                owner: row.try_get(0).map_err(corrupt_column)?,
                module: module.to_owned(),
                id: id.to_owned(),
            })
        })
        .collect()
}

/// Removes a report the authority refused at once, checked under the row's lock so that a
/// report that meanwhile ended otherwise is never removed.
pub(super) async fn forget_refused(db: &Db, key: &ReportKey) -> StoreResult<bool> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    let row = tx
        .query_opt(
            "SELECT record FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3
             FOR UPDATE",
            &[&key.owner, &key.module, &id_bytes(key)],
        )
        .await
        .map_err(|e| db.error(e))?;
    let Some(row) = row else {
        return Ok(false);
    };
    let report = report_from(key, row.try_get(0).map_err(corrupt_column)?)?;
    // Checked under the row's lock: only the authority's own refusal frees the id. Its job left
    // the outbox when it ended.
    if !report.refused_on_delivery() {
        return Ok(false);
    }
    tx.execute(
        "DELETE FROM reports WHERE owner = $1 AND module = $2 AND report_id = $3",
        &[&key.owner, &key.module, &id_bytes(key)],
    )
    .await
    .map_err(|e| db.error(e))?;
    db.commit(tx).await?;
    Ok(true)
}

/// Reads the module's final, unexpired reports whose `finished_at` column is at most the
/// cutoff's microsecond, in batches of [`EXPIRY_BATCH`] in the order they finished, each batch
/// one transaction holding its rows' locks. The exact time in the state decides: a report that
/// finished within the cutoff's microsecond but not before it stays.
pub(super) async fn expire_finished_before(
    db: &Db,
    module: &str,
    cutoff: DateTime<Utc>,
) -> StoreResult<usize> {
    let now = Utc::now();
    let mut client = db.client().await?;
    let mut expired = 0;
    // Where the last batch ended: its last row's finish time (as the column holds it) and key.
    let mut after: Option<(DateTime<Utc>, String, Vec<u8>)> = None;
    loop {
        let tx = client.transaction().await.map_err(|e| db.error(e))?;
        let rows = match &after {
            None => {
                tx.query(
                    "SELECT finished_at, owner, module, report_id, record FROM reports
                 WHERE module = $1 AND finished_at IS NOT NULL AND expired_at IS NULL
                   AND finished_at <= $2
                 ORDER BY finished_at, owner, report_id LIMIT $3
                 FOR NO KEY UPDATE",
                    &[&module, &cutoff, &EXPIRY_BATCH],
                )
                .await
            }
            Some((at, owner, id)) => {
                tx.query(
                    "SELECT finished_at, owner, module, report_id, record FROM reports
                 WHERE module = $1 AND finished_at IS NOT NULL AND expired_at IS NULL
                   AND finished_at <= $2
                   AND (finished_at, owner, report_id) > ($4, $5, $6)
                 ORDER BY finished_at, owner, report_id LIMIT $3
                 FOR NO KEY UPDATE",
                    &[&module, &cutoff, &EXPIRY_BATCH, at, owner, id],
                )
                .await
            }
        }
        .map_err(|e| db.error(e))?;
        for row in &rows {
            let key = key_at(row, 1)?;
            let mut report = report_from(&key, row.try_get(4).map_err(corrupt_column)?)?;
            let due = report.expired_at.is_none()
                && report.status.is_final()
                && report.finished_at.is_some_and(|at| at < cutoff);
            if !due {
                continue;
            }
            report.submission = None;
            report.message = None;
            report.receipt = None;
            report.expired_at = Some(now);
            tx.execute(
                "UPDATE reports SET record = $4, expired_at = $5, pending = false,
                        submission = NULL, message_uuid = NULL, message_body = NULL,
                        receipt = NULL
                 WHERE owner = $1 AND module = $2 AND report_id = $3",
                &[
                    &key.owner,
                    &key.module,
                    &id_bytes(&key),
                    &state_record(&report)?,
                    &now,
                ],
            )
            .await
            .map_err(|e| db.error(e))?;
            expired += 1;
        }
        db.commit(tx).await?;
        // A short batch is the last: rows changed by others meanwhile (expired by another
        // sweep, forgotten) drop out of it, and are theirs.
        let Some(last) = rows.last().filter(|_| rows.len() as i64 == EXPIRY_BATCH) else {
            break;
        };
        after = Some((
            last.try_get(0).map_err(corrupt_column)?,
            last.try_get(1).map_err(corrupt_column)?,
            last.try_get(3).map_err(corrupt_column)?,
        ));
    }
    Ok(expired)
}
