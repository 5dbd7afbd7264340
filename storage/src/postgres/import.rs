//! Filling an empty database with another engine's [`Record`]s (`meldewerk store copy`).
//!
//! The whole copy is one transaction: the tables it fills are locked and must be empty (no
//! merging: a record that exists twice would have to be decided by someone), the records are
//! inserted in batches, the numbering continues past the copied ids, and the counts per kind
//! are compared with the source's before the commit; any failure rolls everything back, so a
//! database is either untouched or holds the whole copy.
//!
//! Each row is written as the engine's own writers write it, with their helpers: a report's
//! state through `reports::state_record` with its payload in the payload columns, a job's record
//! through `outbox::job_record`, a court message's columns through `court_messages::Columns`.
//! Ids are inserted as they are (`OVERRIDING SYSTEM VALUE` for the identity columns).
//!
//! A batch is sent pipelined (every statement of it is on the wire before the first answer
//! comes back) and holds one kind of record, at most [`BATCH_RECORDS`] of them and about
//! [`BATCH_BYTES`] of payload, so that memory stays bounded however large the store is.

use futures::future::try_join_all;
use tokio_postgres::{Statement, Transaction};

use super::court_messages::{split_time, Columns};
use super::outbox::{job_record, lane};
use super::reports::{corrupt_column, id_bytes, state_record, status_name};
use super::{to_json, Db, PgStore};
use crate::copy::{Count, Counts, Record};
use crate::{ReportStatus, StoreError, StoreResult};

/// Most records in one batch.
const BATCH_RECORDS: usize = 256;

/// About the most payload bytes one batch holds (a single larger report is a batch of its own).
const BATCH_BYTES: usize = 16 * 1024 * 1024;

/// What a record that carries no payload counts towards [`BATCH_BYTES`].
const SMALL_RECORD: usize = 1024;

/// The tables the copy fills, in the order their records come (the order of [`Record`]'s kinds,
/// which their foreign keys need). `court_message_last_id` is checked and set apart.
const TABLES: [&str; 13] = [
    "users",
    "reports",
    "jobs",
    "audit_log",
    "inbox_cursors",
    "facilities",
    "customer_scopes",
    "certificates",
    "mailbox_accounts",
    "mailbox_grants",
    "court_messages",
    "mailbox_sync_cursors",
    "case_references",
];

impl PgStore {
    /// Writes `records` (another engine's export, [`crate::SledStore::export`]) into this
    /// database, which must hold no data: `Conflict` naming a table that has rows, and nothing
    /// written. One transaction: on any error nothing stays. Answers the counts of the
    /// database after the copy, which equal the source's (else the copy is rolled back).
    pub async fn import<I>(&self, records: I) -> StoreResult<Counts>
    where
        I: Iterator<Item = StoreResult<Record>>,
    {
        let db = self.db();
        let mut client = db.client().await?;
        let tx = client.transaction().await.map_err(|e| db.error(e))?;
        claim_empty(db, &tx).await?;
        let mut source = Counts::default();
        let mut numbering = Numbering::default();
        let mut batch = Batch::default();
        for record in records {
            let record = record?;
            source.add(&record);
            numbering.note(&record);
            if matches!(record, Record::Counters { .. }) {
                continue;
            }
            if !batch.takes(&record) {
                batch.send(db, &tx).await?;
            }
            batch.push(record);
        }
        batch.send(db, &tx).await?;
        numbering.continue_past(db, &tx).await?;
        let target = counts(db, &tx).await?;
        let differences = source.differences(&target);
        if !differences.is_empty() {
            let said: Vec<String> = differences
                .iter()
                .map(|(count, source, target)| {
                    format!(
                        "{}: {source} in the source, {target} copied",
                        count.label().trim()
                    )
                })
                .collect();
            return Err(StoreError::Backend(format!(
                "the copy does not match its source ({}); nothing was copied",
                said.join("; ")
            )));
        }
        db.commit(tx).await?;
        Ok(target)
    }
}

/// Locks the tables the copy fills against every other writer until the commit (readers may
/// go on) and makes sure they are empty.
async fn claim_empty(db: &Db, tx: &Transaction<'_>) -> StoreResult<()> {
    tx.batch_execute(&format!(
        "LOCK TABLE {}, court_message_last_id IN EXCLUSIVE MODE",
        TABLES.join(", ")
    ))
    .await
    .map_err(|e| db.error(e))?;
    for table in TABLES {
        let holds: bool = tx
            .query_one(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), &[])
            .await
            .map_err(|e| db.error(e))?
            .try_get(0)
            .map_err(corrupt_column)?;
        if holds {
            return Err(not_empty(table));
        }
    }
    let last: i64 = tx
        .query_one(
            "SELECT coalesce(max(last_id), 0) FROM court_message_last_id",
            &[],
        )
        .await
        .map_err(|e| db.error(e))?
        .try_get(0)
        .map_err(corrupt_column)?;
    if last != 0 {
        return Err(not_empty("court_message_last_id"));
    }
    Ok(())
}

/// The refusal of a database that holds data.
fn not_empty(table: &str) -> StoreError {
    StoreError::Conflict(format!(
        "the target database holds data (table {table} has rows); a copy goes only into an \
         empty database and merges nothing"
    ))
}

/// Records of one kind waiting to be sent.
#[derive(Default)]
struct Batch {
    records: Vec<Record>,
    bytes: usize,
}

impl Batch {
    /// Whether `record` may join the batch: of the same kind, and the batch not full.
    fn takes(&self, record: &Record) -> bool {
        match self.records.first() {
            None => true,
            Some(first) => {
                std::mem::discriminant(first) == std::mem::discriminant(record)
                    && self.records.len() < BATCH_RECORDS
                    && self.bytes < BATCH_BYTES
            }
        }
    }

    fn push(&mut self, record: Record) {
        self.bytes += payload_bytes(&record);
        self.records.push(record);
    }

    /// Inserts the batch's records, pipelined on the transaction's connection, and empties it.
    async fn send(&mut self, db: &Db, tx: &Transaction<'_>) -> StoreResult<()> {
        let Some(first) = self.records.first() else {
            return Ok(());
        };
        let statement = tx
            .prepare(insert_sql(first))
            .await
            .map_err(|e| db.error(e))?;
        try_join_all(
            self.records
                .iter()
                .map(|record| insert(db, tx, &statement, record)),
        )
        .await?;
        self.records.clear();
        self.bytes = 0;
        Ok(())
    }
}

/// About the bytes `record` holds, for [`BATCH_BYTES`]: a report's payload, else a little.
fn payload_bytes(record: &Record) -> usize {
    let Record::Report { report, .. } = record else {
        return SMALL_RECORD;
    };
    let body = report.message.as_ref().map_or(0, |m| m.body.len());
    let receipt = report.receipt.as_ref().map_or(0, Vec::len);
    let submission = report.submission.as_ref().map_or(0, |s| {
        let mut counter = ByteCounter(0);
        // Counting cannot fail; a value that does not serialise fails at its insert.
        let _ = serde_json::to_writer(&mut counter, s);
        counter.0
    });
    SMALL_RECORD + body + receipt + submission
}

/// A writer that only counts what it is given.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The statement inserting a record of `record`'s kind: the columns the engine's own writers
/// fill. A removed user's row is what `users::remove_user` leaves (its removal time is the
/// copy's: sled keeps no time for it).
fn insert_sql(record: &Record) -> &'static str {
    match record {
        Record::User(_) => "INSERT INTO users (name, key_id, record) VALUES ($1, $2, $3)",
        Record::RemovedUser(_) => {
            "INSERT INTO users (name, key_id, record, removed_at) VALUES ($1, NULL, NULL, now())"
        }
        Record::Report { .. } => {
            "INSERT INTO reports (owner, module, report_id, status, pending, finished_at,
                                  expired_at, message_uuid, record, submission, message_body,
                                  receipt)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        }
        Record::Job(_) => {
            "INSERT INTO jobs (id, owner, module, report_id, lane, not_before, record)
             OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7)"
        }
        Record::Audit { .. } => {
            "INSERT INTO audit_log (number, record) OVERRIDING SYSTEM VALUE VALUES ($1, $2)"
        }
        Record::InboxCursor { .. } => {
            "INSERT INTO inbox_cursors (transport, inbox_cursor) VALUES ($1, $2)"
        }
        Record::Facility(_) => "INSERT INTO facilities (bsnr, record) VALUES ($1, $2)",
        Record::CustomerScope(_) => {
            "INSERT INTO customer_scopes (customer, record) VALUES ($1, $2)"
        }
        Record::Certificate(_) => {
            "INSERT INTO certificates (bsnr, environment, record) VALUES ($1, $2, $3)"
        }
        Record::MailboxAccount(_) => {
            "INSERT INTO mailbox_accounts (id, safe_id_folded, record) VALUES ($1, $2, $3)"
        }
        Record::MailboxGrant { .. } => {
            "INSERT INTO mailbox_grants (account_id, user_name) VALUES ($1, $2)"
        }
        Record::CourtMessage(_) => {
            "INSERT INTO court_messages (id, account_id, message_id, created_at, created_ns,
                                         live, due_at, due_ns, job_id, record)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        }
        Record::MailboxSyncCursor { .. } => {
            "INSERT INTO mailbox_sync_cursors (account_id, sync_cursor) VALUES ($1, $2)"
        }
        Record::CaseReference { .. } => {
            "INSERT INTO case_references (account_id, aktenzeichen, job_id) VALUES ($1, $2, $3)"
        }
        Record::Counters { .. } => "SELECT 1",
    }
}

/// An id as a `bigint` column holds it; none of the store's ids is larger.
fn big(what: &str, id: u64) -> StoreResult<i64> {
    i64::try_from(id).map_err(|_| StoreError::Corrupt(format!("{what} {id} is too large")))
}

/// Inserts `record` with `statement` ([`insert_sql`] of its kind).
async fn insert(
    db: &Db,
    tx: &Transaction<'_>,
    statement: &Statement,
    record: &Record,
) -> StoreResult<()> {
    let done = match record {
        Record::User(user) => {
            let json = to_json(&format!("user {}", user.name), user)?;
            tx.execute(statement, &[&user.name, &user.memento_key.key_id, &json])
                .await
        }
        Record::RemovedUser(name) => tx.execute(statement, &[name]).await,
        Record::Report { report, pending } => {
            let key = &report.key;
            let live = report.expired_at.is_none();
            let message_uuid = report.message.as_ref().map(|m| m.message_uuid.as_str());
            let body = report.message.as_ref().map(|m| m.body.as_slice());
            let submission = report.submission.as_ref().filter(|_| live);
            let receipt = report
                .receipt
                .as_deref()
                .filter(|_| live && report.status == ReportStatus::Success);
            tx.execute(
                statement,
                &[
                    &key.owner,
                    &key.module,
                    &id_bytes(key),
                    &status_name(report.status),
                    pending,
                    &report.finished_at,
                    &report.expired_at,
                    &message_uuid,
                    &state_record(report)?,
                    &submission,
                    &body,
                    &receipt,
                ],
            )
            .await
        }
        Record::Job(job) => {
            let id = big("job id", job.id)?;
            tx.execute(
                statement,
                &[
                    &id,
                    &job.report.owner,
                    &job.report.module,
                    &id_bytes(&job.report),
                    &lane(&job.kind),
                    &job.not_before,
                    &job_record(job)?,
                ],
            )
            .await
        }
        Record::Audit { number, entry } => {
            let what = format!("audit entry {number}");
            let number = big("audit entry number", *number)?;
            tx.execute(statement, &[&number, &to_json(&what, entry)?])
                .await
        }
        Record::InboxCursor { transport, cursor } => {
            tx.execute(statement, &[transport, cursor]).await
        }
        Record::Facility(facility) => {
            let what = format!("facility {}", facility.bsnr.as_str());
            tx.execute(
                statement,
                &[&facility.bsnr.as_str(), &to_json(&what, facility)?],
            )
            .await
        }
        Record::CustomerScope(scope) => {
            let what = format!("scope of customer {}", scope.customer);
            tx.execute(statement, &[&scope.customer, &to_json(&what, scope)?])
                .await
        }
        Record::Certificate(certificate) => {
            let (bsnr, environment) = (certificate.bsnr.as_str(), certificate.environment.as_str());
            let what = format!("certificate {bsnr}/{environment}");
            tx.execute(
                statement,
                &[&bsnr, &environment, &to_json(&what, certificate)?],
            )
            .await
        }
        Record::MailboxAccount(account) => {
            let id = account.egvp_account_id.get();
            let what = format!("mailbox account {id}");
            tx.execute(
                statement,
                &[&id, &account.safe_id.folded(), &to_json(&what, account)?],
            )
            .await
        }
        Record::MailboxGrant { account, user } => {
            tx.execute(statement, &[&account.get(), user]).await
        }
        Record::CourtMessage(message) => {
            let what = crate::court_messages::message_what(message.id);
            let id = big("court-message index id", message.id)?;
            let (created_at, created_ns) = split_time(message.created_at);
            let columns = Columns::of(message);
            let (due_at, due_ns) = columns.due.unzip();
            tx.execute(
                statement,
                &[
                    &id,
                    &message.account.get(),
                    &message.message_id,
                    &created_at,
                    &created_ns,
                    &columns.live,
                    &due_at,
                    &due_ns,
                    &columns.job_id,
                    &to_json(&what, message)?,
                ],
            )
            .await
        }
        Record::MailboxSyncCursor { account, cursor } => {
            tx.execute(statement, &[&account.get(), cursor]).await
        }
        Record::CaseReference {
            account,
            aktenzeichen,
            job_id,
        } => {
            tx.execute(statement, &[&account.get(), aktenzeichen, job_id])
                .await
        }
        Record::Counters { .. } => return Ok(()),
    };
    done.map_err(|e| db.error(e))?;
    Ok(())
}

/// Where the numbering of the copied ids stands: the largest of each, and what the source
/// said ([`Record::Counters`]).
#[derive(Default)]
struct Numbering {
    /// The smallest job id not given out yet.
    next_job_id: u64,
    /// The largest audit number.
    last_audit: u64,
    /// The largest court-message index id given out.
    last_court_message: u64,
}

impl Numbering {
    fn note(&mut self, record: &Record) {
        match record {
            Record::Job(job) => {
                self.next_job_id = self.next_job_id.max(job.id.saturating_add(1));
            }
            Record::Audit { number, .. } => self.last_audit = self.last_audit.max(*number),
            Record::CourtMessage(message) => {
                self.last_court_message = self.last_court_message.max(message.id);
            }
            Record::Counters {
                next_job_id,
                last_court_message_id,
            } => {
                self.next_job_id = self.next_job_id.max(*next_job_id);
                self.last_court_message = self.last_court_message.max(*last_court_message_id);
            }
            _ => {}
        }
    }

    /// Moves the target's numbering past every copied id: the job and audit sequences, and the
    /// court-message index's last id. A sequence the copy gave nothing to stays as it is.
    async fn continue_past(&self, db: &Db, tx: &Transaction<'_>) -> StoreResult<()> {
        if self.next_job_id > 0 {
            let next = big("job id", self.next_job_id)?;
            tx.query_one(
                "SELECT setval(pg_get_serial_sequence('jobs', 'id'), $1, false)",
                &[&next],
            )
            .await
            .map_err(|e| db.error(e))?;
        }
        if self.last_audit > 0 {
            let last = big("audit entry number", self.last_audit)?;
            tx.query_one(
                "SELECT setval(pg_get_serial_sequence('audit_log', 'number'), $1, true)",
                &[&last],
            )
            .await
            .map_err(|e| db.error(e))?;
        }
        let last = big("court-message index id", self.last_court_message)?;
        tx.execute("UPDATE court_message_last_id SET last_id = $1", &[&last])
            .await
            .map_err(|e| db.error(e))?;
        Ok(())
    }
}

/// What the database holds, by the same counts as the source's records ([`Record::counts`]).
async fn counts(db: &Db, tx: &Transaction<'_>) -> StoreResult<Counts> {
    let mut counts = Counts::default();
    for count in Count::ALL {
        let query = match count {
            Count::Users => "users WHERE record IS NOT NULL",
            Count::RemovedUsers => "users WHERE record IS NULL",
            Count::Reports => "reports",
            Count::PendingReports => "reports WHERE pending",
            Count::Messages => "reports WHERE message_uuid IS NOT NULL AND expired_at IS NULL",
            Count::Receipts => "reports WHERE receipt IS NOT NULL",
            Count::Jobs => "jobs",
            Count::AuditEntries => "audit_log",
            Count::InboxCursors => "inbox_cursors",
            Count::Facilities => "facilities",
            Count::CustomerScopes => "customer_scopes",
            Count::Certificates => "certificates",
            Count::MailboxAccounts => "mailbox_accounts",
            Count::MailboxGrants => "mailbox_grants",
            Count::CourtMessages => "court_messages",
            Count::DeletedCourtMessages => "court_messages WHERE NOT live",
            Count::MailboxSyncCursors => "mailbox_sync_cursors",
            Count::CaseReferences => "case_references",
        };
        let n: i64 = tx
            .query_one(&format!("SELECT count(*) FROM {query}"), &[])
            .await
            .map_err(|e| db.error(e))?
            .try_get(0)
            .map_err(corrupt_column)?;
        counts.set(count, u64::try_from(n).unwrap_or(0));
    }
    Ok(counts)
}
