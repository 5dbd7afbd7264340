//! The court-message index: what the store keeps of each message of a court mailbox account.
//!
//! A sync lists an account's mailbox and indexes each message it has not seen (`Indexed`); a
//! hydration fetches it, reads its XJustiz, writes its archive and records the outcome
//! (`Hydrated`, with the case reference); an acknowledgement, the server's deleting it, or the
//! retention backstop soft-deletes it (`Deleted`: the entry stays, its archive goes). The
//! archives themselves are files beside the store (one per index id), not in it.
//!
//! A case reference maps to the job that sent it (`jobId`), so that a court's reply quoting it
//! is listed under that job.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::MailboxAccountId;

/// Most messages one [`crate::Store::court_messages`] call answers.
pub const MAX_COURT_MESSAGE_PAGE: usize = 1000;
/// Longest error text kept with a message (longer ones are cut at a character boundary).
pub const MAX_COURT_MESSAGE_ERROR: usize = 1000;

/// Whether a message came into the account or was sent from it (the contract's `direction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CourtMessageDirection {
    /// Received from outside (a court's message).
    Incoming,
    /// Sent from the account.
    Outgoing,
}

/// One message of an account's listing, as a sync hands it to the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedCourtMessage {
    /// The transport message id, unique within the account.
    pub message_id: String,
    /// Into the account or out of it.
    pub direction: CourtMessageDirection,
    /// When the mailbox server stored it.
    pub created_at: DateTime<Utc>,
    /// Its first retrieval, as the server knows it.
    pub received_at: Option<DateTime<Utc>>,
    /// The sum of its files' byte lengths.
    pub size: u64,
}

/// Where a message's hydration stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Hydration {
    /// Indexed, waiting for its fetch: due at `due_at`; `attempts` made so far, the last one
    /// failing with `last_error`.
    Waiting {
        /// Fetches tried so far.
        attempts: u32,
        /// When the next may start.
        due_at: DateTime<Utc>,
        /// Why the last one failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_error: Option<String>,
    },
    /// Fetched, read and archived.
    Hydrated,
    /// Fetched and archived, but its XJustiz could not be read (malformed or hostile): listed
    /// with no case reference, downloadable as the court sent it, `error` for operators.
    Unreadable {
        /// Why it could not be read.
        error: String,
    },
    /// Given up without an archive: fetching kept failing, or the server's copy was unusable
    /// every time.
    Failed {
        /// Why.
        error: String,
    },
}

/// Why a message was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum DeletionCause {
    /// An API user acknowledged it (`POST /messages/ack`).
    Acknowledged {
        /// Who.
        user: String,
    },
    /// A full listing of the mailbox no longer had it.
    GoneFromServer,
    /// Older than the retention backstop.
    Retention,
}

/// When and why a message was deleted; its index entry stays for the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deletion {
    /// When.
    pub at: DateTime<Utc>,
    /// Why.
    #[serde(flatten)]
    pub cause: DeletionCause,
}

/// A court message's index entry (the contract's message resource, plus what operators see).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourtMessage {
    /// Index id (the contract's `id`): unique, from 1, never reused.
    pub id: u64,
    /// The account whose mailbox holds it.
    pub account: MailboxAccountId,
    /// The account's SAFE-ID when it was indexed (the contract's `safeId` filter).
    pub safe_id: String,
    /// The transport message id.
    pub message_id: String,
    /// Into the account or out of it.
    pub direction: CourtMessageDirection,
    /// When the mailbox server stored it.
    pub created_at: DateTime<Utc>,
    /// Its first retrieval.
    pub received_at: Option<DateTime<Utc>>,
    /// When the sync indexed it.
    pub indexed_at: DateTime<Utc>,
    /// The sum of its files' byte lengths, as listed.
    pub size: u64,
    /// The job its case reference maps to, once hydrated.
    pub job_id: Option<String>,
    /// The case reference its XJustiz names, once hydrated.
    pub aktenzeichen: Option<String>,
    /// When it was fetched and read.
    pub hydrated_at: Option<DateTime<Utc>>,
    /// Where its hydration stands.
    pub hydration: Hydration,
    /// Set once it is deleted.
    pub deleted: Option<Deletion>,
}

impl CourtMessage {
    /// The entry a sync's listing adds for `listed` in `account` (whose SAFE-ID is `safe_id`),
    /// with index id `id`, waiting and due `now`. Shared by both engines: an entry indexed on
    /// one must read the same as one indexed on the other.
    pub(crate) fn indexed(
        id: u64,
        account: MailboxAccountId,
        safe_id: &str,
        listed: &ListedCourtMessage,
        now: DateTime<Utc>,
    ) -> CourtMessage {
        CourtMessage {
            id,
            account,
            safe_id: safe_id.to_owned(),
            message_id: listed.message_id.clone(),
            direction: listed.direction,
            created_at: listed.created_at,
            received_at: listed.received_at,
            indexed_at: now,
            size: listed.size,
            job_id: None,
            aktenzeichen: None,
            hydrated_at: None,
            hydration: Hydration::Waiting {
                attempts: 0,
                due_at: now,
                last_error: None,
            },
            deleted: None,
        }
    }

    /// Applies `outcome` to this entry, a waiting one, at `now`; `job_id` is the job its case
    /// reference maps to (looked up by the engine in the same transaction). Shared by both
    /// engines, so that a hydration records the same whichever engine holds the index.
    pub(crate) fn apply_hydration(
        &mut self,
        outcome: &HydrationOutcome,
        job_id: Option<String>,
        now: DateTime<Utc>,
    ) {
        let attempts = match &self.hydration {
            Hydration::Waiting { attempts, .. } => *attempts,
            _ => 0,
        };
        self.hydration = match outcome {
            HydrationOutcome::Hydrated {
                aktenzeichen,
                received_at,
            } => {
                self.hydrated_at = Some(now);
                self.aktenzeichen.clone_from(aktenzeichen);
                self.job_id = job_id;
                self.received_at = self.received_at.or(*received_at);
                Hydration::Hydrated
            }
            // Archived, but not read: `hydrated_at` means "downloaded and parsed", so it stays
            // unset, as does the case reference.
            HydrationOutcome::Unreadable { error, received_at } => {
                self.received_at = self.received_at.or(*received_at);
                Hydration::Unreadable {
                    error: bounded_error(error),
                }
            }
            HydrationOutcome::Retry { error, due_at } => Hydration::Waiting {
                attempts: attempts.saturating_add(1),
                due_at: *due_at,
                last_error: Some(bounded_error(error)),
            },
            HydrationOutcome::Failed { error } => Hydration::Failed {
                error: bounded_error(error),
            },
        };
    }

    /// Whether a hydration may still be recorded on it: live and waiting (one deleted meanwhile,
    /// or recorded already by another hydration, records nothing). Shared by both engines,
    /// which check it on the entry they read in the recording transaction.
    pub(crate) fn awaits_hydration(&self) -> bool {
        self.deleted.is_none() && matches!(self.hydration, Hydration::Waiting { .. })
    }

    /// Whether the hydration queue should hand it out at `now`: live, waiting, and due at or
    /// before `now`. Shared by both engines, whose queues (sled's keys in whole milliseconds,
    /// PostgreSQL's columns) only narrow what is read; this decides.
    pub(crate) fn due_for_hydration(&self, now: DateTime<Utc>) -> bool {
        self.deleted.is_none()
            && matches!(self.hydration, Hydration::Waiting { due_at, .. } if due_at <= now)
    }

    /// Whether its archive is on disk (or should be, if not deleted): hydrated, or archived
    /// unread.
    pub fn archived(&self) -> bool {
        self.deleted.is_none()
            && matches!(
                self.hydration,
                Hydration::Hydrated | Hydration::Unreadable { .. }
            )
    }

    /// The error operators see: why it could not be read, why fetching it failed for good, or
    /// why the last fetch failed.
    pub fn error(&self) -> Option<&str> {
        match &self.hydration {
            Hydration::Unreadable { error } | Hydration::Failed { error } => Some(error),
            Hydration::Waiting { last_error, .. } => last_error.as_deref(),
            Hydration::Hydrated => None,
        }
    }
}

/// What one hydration attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HydrationOutcome {
    /// Fetched, read, archived: its case reference (if it names one) and its first retrieval as
    /// the fetch answered it.
    Hydrated {
        /// The case reference.
        aktenzeichen: Option<String>,
        /// Its first retrieval.
        received_at: Option<DateTime<Utc>>,
    },
    /// Fetched and archived, but unreadable.
    Unreadable {
        /// Why.
        error: String,
        /// Its first retrieval.
        received_at: Option<DateTime<Utc>>,
    },
    /// Failed, worth another attempt at `due_at`.
    Retry {
        /// Why.
        error: String,
        /// When.
        due_at: DateTime<Utc>,
    },
    /// Failed for good.
    Failed {
        /// Why.
        error: String,
    },
}

impl HydrationOutcome {
    /// The case reference a successful hydration names, which the engine looks up among the
    /// mapped ones for the entry's job. Shared by both engines, so that only a hydrated message
    /// (not an unreadable one) is ever mapped to a job.
    pub(crate) fn aktenzeichen(&self) -> Option<&str> {
        match self {
            HydrationOutcome::Hydrated {
                aktenzeichen: Some(aktenzeichen),
                ..
            } => Some(aktenzeichen),
            _ => None,
        }
    }
}

/// What [`crate::Store::delete_court_message`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CourtMessageDeleted {
    /// Deleted now; the entry as it is after.
    Deleted(CourtMessage),
    /// Deleted before (by whatever cause); the entry unchanged.
    AlreadyDeleted(CourtMessage),
    /// No such index id.
    NotFound,
}

/// Which messages a listing answers: live ones (not deleted) of `accounts`, created after
/// `since` if given, mapped to one of `job_ids` if given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CourtMessageFilter {
    /// The accounts (an empty list answers nothing).
    pub accounts: Vec<MailboxAccountId>,
    /// Only messages created after this.
    pub since: Option<DateTime<Utc>>,
    /// Only messages whose `job_id` is one of these.
    pub job_ids: Option<Vec<String>>,
}

impl CourtMessageFilter {
    /// Whether `message` passes the filter.
    pub fn admits(&self, message: &CourtMessage) -> bool {
        message.deleted.is_none()
            && self.accounts.contains(&message.account)
            && self.since.is_none_or(|since| message.created_at > since)
            && self.job_ids.as_ref().is_none_or(|jobs| {
                message
                    .job_id
                    .as_ref()
                    .is_some_and(|job| jobs.iter().any(|j| j == job))
            })
    }
}

/// How errors name index entry `id`. Shared by both engines, so that a corrupt entry is named
/// alike whichever engine found it.
pub(crate) fn message_what(id: u64) -> String {
    format!("court message {id}")
}

/// Cuts `error` to [`MAX_COURT_MESSAGE_ERROR`] bytes at a character boundary.
pub fn bounded_error(error: &str) -> String {
    if error.len() <= MAX_COURT_MESSAGE_ERROR {
        return error.to_owned();
    }
    let mut end = MAX_COURT_MESSAGE_ERROR;
    while !error.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &error[..end])
}
