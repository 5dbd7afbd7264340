//! Copying a whole store from one engine into another (`meldewerk store copy`): the sled engine
//! streams what it holds as [`Record`]s ([`crate::SledStore::export`]), and the PostgreSQL engine
//! writes them into an empty database ([`crate::PgStore::import`]).
//!
//! A record is the crate's own type, as both engines store it, so that the copy writes the rows
//! the engine itself would have written; ids (job ids, audit numbers, court-message index ids,
//! account ids) travel with their records, and [`Record::Counters`] says where the source would
//! have gone on numbering, so that the target continues past every id the source ever gave.

use std::collections::BTreeMap;

use crate::{
    AuditEntry, CourtMessage, CustomerScope, Facility, FacilityCertificate, Job, MailboxAccount,
    MailboxAccountId, Report, ReportStatus, UserRecord,
};

/// One thing a store holds, engine-neutral. The export yields the kinds in the order of the
/// variants (users before the grants naming them, reports before their jobs, accounts before
/// their grants), [`Record::Counters`] last.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A user with its record (keys wrapped under the master key, which the copy never opens).
    User(UserRecord),
    /// The name of a removed user: never given to another user, since reports keep it.
    RemovedUser(String),
    /// A report whole: its state with its payload (submission, message body, receipt) attached,
    /// and whether it is listed as pending (dispatched, neither consumed by a poll nor expired).
    Report {
        /// The report (boxed: it is the largest record by far).
        report: Box<Report>,
        /// Listed in its owner's pending list.
        pending: bool,
    },
    /// An outbox job, with its id.
    Job(Job),
    /// An entry of the operators' audit log under its number.
    Audit {
        /// Its number in the log.
        number: u64,
        /// The entry.
        entry: AuditEntry,
    },
    /// Where the engine stands in a transport's acknowledgement inbox.
    InboxCursor {
        /// The transport's name.
        transport: String,
        /// The cursor, as the transport gave it.
        cursor: String,
    },
    /// A facility of the registry.
    Facility(Facility),
    /// A customer's scope (never an empty one: the engines keep none).
    CustomerScope(CustomerScope),
    /// A facility's certificate for one environment.
    Certificate(FacilityCertificate),
    /// A court-mailbox account.
    MailboxAccount(MailboxAccount),
    /// A user's grant of a court-mailbox account.
    MailboxGrant {
        /// The account.
        account: MailboxAccountId,
        /// The user.
        user: String,
    },
    /// An entry of the court-message index.
    CourtMessage(CourtMessage),
    /// The cursor of an account's last mailbox sync.
    MailboxSyncCursor {
        /// The account.
        account: MailboxAccountId,
        /// The cursor.
        cursor: String,
    },
    /// A case reference of an account mapped to the job that sent it.
    CaseReference {
        /// The account.
        account: MailboxAccountId,
        /// The case reference.
        aktenzeichen: String,
        /// The job (the court form's `jobId`).
        job_id: String,
    },
    /// Where the source's numbering stands, so that the target gives no id twice.
    Counters {
        /// The smallest outbox job id the source has not given out (jobs that finished are
        /// gone, but their ids are named in the audit log and in logs).
        next_job_id: u64,
        /// The last court-message index id the source gave out.
        last_court_message_id: u64,
    },
}

/// What the copy counts, in source and target alike, to tell that everything arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Count {
    /// Users.
    Users,
    /// Removed users' names.
    RemovedUsers,
    /// Reports.
    Reports,
    /// Reports in their owners' pending lists.
    PendingReports,
    /// Reports with a stored message.
    Messages,
    /// Reports with a receipt.
    Receipts,
    /// Outbox jobs.
    Jobs,
    /// Audit log entries.
    AuditEntries,
    /// Acknowledgement-inbox cursors.
    InboxCursors,
    /// Facilities.
    Facilities,
    /// Customer scopes.
    CustomerScopes,
    /// Facility certificates.
    Certificates,
    /// Court-mailbox accounts.
    MailboxAccounts,
    /// Grants of court-mailbox accounts.
    MailboxGrants,
    /// Court-message index entries.
    CourtMessages,
    /// Court-message index entries that are deleted (their row stays).
    DeletedCourtMessages,
    /// Mailbox sync cursors.
    MailboxSyncCursors,
    /// Case references.
    CaseReferences,
}

impl Count {
    /// Every count, in the order a summary lists them.
    pub const ALL: [Count; 18] = [
        Count::Users,
        Count::RemovedUsers,
        Count::Reports,
        Count::PendingReports,
        Count::Messages,
        Count::Receipts,
        Count::Jobs,
        Count::AuditEntries,
        Count::InboxCursors,
        Count::Facilities,
        Count::CustomerScopes,
        Count::Certificates,
        Count::MailboxAccounts,
        Count::MailboxGrants,
        Count::CourtMessages,
        Count::DeletedCourtMessages,
        Count::MailboxSyncCursors,
        Count::CaseReferences,
    ];

    /// How a summary names it.
    pub fn label(self) -> &'static str {
        match self {
            Count::Users => "users",
            Count::RemovedUsers => "removed users",
            Count::Reports => "reports",
            Count::PendingReports => "  of them pending",
            Count::Messages => "  with a stored message",
            Count::Receipts => "  with a receipt",
            Count::Jobs => "outbox jobs",
            Count::AuditEntries => "audit log entries",
            Count::InboxCursors => "inbox cursors",
            Count::Facilities => "facilities",
            Count::CustomerScopes => "customer scopes",
            Count::Certificates => "certificates",
            Count::MailboxAccounts => "mailbox accounts",
            Count::MailboxGrants => "mailbox grants",
            Count::CourtMessages => "court messages",
            Count::DeletedCourtMessages => "  of them deleted",
            Count::MailboxSyncCursors => "mailbox sync cursors",
            Count::CaseReferences => "case references",
        }
    }
}

/// How many of each [`Count`] a store holds (absent: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts(BTreeMap<Count, u64>);

impl Counts {
    /// How many of `count`.
    pub fn get(&self, count: Count) -> u64 {
        self.0.get(&count).copied().unwrap_or(0)
    }

    /// Sets how many of `count` there are.
    pub fn set(&mut self, count: Count, n: u64) {
        self.0.insert(count, n);
    }

    /// Counts `record` in.
    pub fn add(&mut self, record: &Record) {
        for count in record.counts() {
            *self.0.entry(count).or_insert(0) += 1;
        }
    }

    /// The counts in which `self` and `other` differ: (what, here, there).
    pub fn differences(&self, other: &Counts) -> Vec<(Count, u64, u64)> {
        Count::ALL
            .into_iter()
            .filter(|count| self.get(*count) != other.get(*count))
            .map(|count| (count, self.get(count), other.get(count)))
            .collect()
    }
}

impl Record {
    /// What the record counts towards.
    pub fn counts(&self) -> Vec<Count> {
        match self {
            Record::User(_) => vec![Count::Users],
            Record::RemovedUser(_) => vec![Count::RemovedUsers],
            Record::Report { report, pending } => {
                let mut counts = vec![Count::Reports];
                if *pending {
                    counts.push(Count::PendingReports);
                }
                if report.message.is_some() && report.expired_at.is_none() {
                    counts.push(Count::Messages);
                }
                if report.status == ReportStatus::Success
                    && report.receipt.is_some()
                    && report.expired_at.is_none()
                {
                    counts.push(Count::Receipts);
                }
                counts
            }
            Record::Job(_) => vec![Count::Jobs],
            Record::Audit { .. } => vec![Count::AuditEntries],
            Record::InboxCursor { .. } => vec![Count::InboxCursors],
            Record::Facility(_) => vec![Count::Facilities],
            Record::CustomerScope(_) => vec![Count::CustomerScopes],
            Record::Certificate(_) => vec![Count::Certificates],
            Record::MailboxAccount(_) => vec![Count::MailboxAccounts],
            Record::MailboxGrant { .. } => vec![Count::MailboxGrants],
            Record::CourtMessage(message) if message.deleted.is_some() => {
                vec![Count::CourtMessages, Count::DeletedCourtMessages]
            }
            Record::CourtMessage(_) => vec![Count::CourtMessages],
            Record::MailboxSyncCursor { .. } => vec![Count::MailboxSyncCursors],
            Record::CaseReference { .. } => vec![Count::CaseReferences],
            Record::Counters { .. } => Vec::new(),
        }
    }
}

pub use crate::sled_store::Export;
