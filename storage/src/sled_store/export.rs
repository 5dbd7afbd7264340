//! Everything the sled engine holds, streamed as engine-neutral [`Record`]s for
//! `meldewerk store copy` (see `copy.rs`): tree by tree, one record at a time, so that memory
//! stays bounded however large the store is.
//!
//! The export reads what the engine's own reads answer: a report with its payload attached from
//! the payload trees (or inline, for records written before the split), a grant once per
//! account and user. Index trees that the records imply (`reports_by_id`, `outbox_by_id`,
//! `awaiting`, `finished`, `mailbox_safe_ids`, the court-message indexes) are not exported: the
//! importing engine derives its own from the records.

use std::collections::BTreeSet;
use std::sync::Arc;

use sled::{IVec, Tree};

use super::court_messages::{id_of, LAST_ID};
use super::{backend, decode, utf8, Engine, SledStore};
use crate::copy::Record;
use crate::{MailboxAccountId, Report, StoreError, StoreResult};

/// The records of a sled store, in the order [`Record`] lists its kinds.
pub struct Export {
    inner: Box<dyn Iterator<Item = StoreResult<Record>> + Send>,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Export").finish_non_exhaustive()
    }
}

impl Iterator for Export {
    type Item = StoreResult<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }
}

impl SledStore {
    /// Every record of the store, streamed ([`Record`]); [`Record::Counters`] comes last. Meant
    /// for a store nobody else writes to (the command line holds the data directory's lock):
    /// each tree is read as it is when the export reaches it.
    ///
    /// Takes one job id from sled's generator, which is what [`Record::Counters`] hands on as
    /// the next id: sled's ids are not kept anywhere else.
    pub fn export(&self) -> StoreResult<Export> {
        let engine = self.engine()?;
        let e = &engine;
        let inner = entries(&e.users, |_, value| {
            Ok(vec![Record::User(decode("user", &value)?)])
        })
        .chain(entries(&e.retired_users, |key, _| {
            Ok(vec![Record::RemovedUser(utf8("removed user name", &key)?)])
        }))
        .chain(reports(Arc::clone(&engine)))
        .chain(entries(&e.outbox, |_, value| {
            Ok(vec![Record::Job(decode("outbox job", &value)?)])
        }))
        .chain(entries(&e.audit, |key, value| {
            let number = super::keys::decode_job_id(&key)
                .map_err(|_| StoreError::Corrupt("audit entry number is not 8 bytes".into()))?;
            Ok(vec![Record::Audit {
                number,
                entry: decode(&format!("audit entry {number}"), &value)?,
            }])
        }))
        .chain(entries(&e.inbox_cursors, |key, value| {
            Ok(vec![Record::InboxCursor {
                transport: utf8("inbox cursor's transport", &key)?,
                cursor: utf8("inbox cursor", &value)?,
            }])
        }))
        .chain(entries(&e.facilities, |_, value| {
            Ok(vec![Record::Facility(decode("facility", &value)?)])
        }))
        .chain(entries(&e.customer_scopes, |_, value| {
            Ok(vec![Record::CustomerScope(decode(
                "customer scope",
                &value,
            )?)])
        }))
        .chain(entries(&e.certificates, |_, value| {
            Ok(vec![Record::Certificate(decode("certificate", &value)?)])
        }))
        .chain(entries(&e.mailbox_accounts, |_, value| {
            Ok(vec![Record::MailboxAccount(decode(
                "mailbox account",
                &value,
            )?)])
        }))
        .chain(entries(&e.mailbox_account_users, |key, value| {
            let account = account_of("grant", &key)?;
            let users: BTreeSet<String> = decode("mailbox grants", &value)?;
            Ok(users
                .into_iter()
                .map(|user| Record::MailboxGrant { account, user })
                .collect())
        }))
        .chain(entries(&e.court_messages, |_, value| {
            Ok(vec![Record::CourtMessage(decode("court message", &value)?)])
        }))
        .chain(entries(&e.mailbox_sync_cursors, |key, value| {
            Ok(vec![Record::MailboxSyncCursor {
                account: account_of("mailbox sync cursor", &key)?,
                cursor: utf8("mailbox sync cursor", &value)?,
            }])
        }))
        .chain(entries(&e.case_references, |key, value| {
            let (account, aktenzeichen) = key.split_at(key.len().min(8));
            Ok(vec![Record::CaseReference {
                account: account_of("case reference", account)?,
                aktenzeichen: utf8("case reference", aktenzeichen)?,
                job_id: utf8("job of a case reference", &value)?,
            }])
        }))
        .chain(std::iter::once_with(move || counters(&engine)).flatten());
        Ok(Export {
            inner: Box::new(inner),
        })
    }
}

/// Each entry of `tree` as the records `read` makes of it (a grant entry holds several).
fn entries(
    tree: &Tree,
    read: impl Fn(IVec, IVec) -> StoreResult<Vec<Record>> + Send + 'static,
) -> impl Iterator<Item = StoreResult<Record>> + Send {
    tree.iter().flat_map(move |entry| {
        let records = entry
            .map_err(backend)
            .and_then(|(key, value)| read(key, value));
        match records {
            Ok(records) => records.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }
    })
}

/// The reports, each with its payload and whether it is pending.
fn reports(engine: Arc<Engine>) -> impl Iterator<Item = StoreResult<Record>> + Send {
    let tree = engine.reports.clone();
    tree.iter().map(move |entry| {
        let (key, value) = entry.map_err(backend)?;
        let mut report: Report = decode("report", &value)?;
        engine.attach_parts(&key, &mut report, true)?;
        let pending = engine.pending.contains_key(&key).map_err(backend)?;
        Ok(Record::Report {
            report: Box::new(report),
            pending,
        })
    })
}

/// [`Record::Counters`]: the next job id from sled's generator, and the last court-message
/// index id (kept beside the transport ids, see `court_messages.rs`).
fn counters(engine: &Engine) -> Option<StoreResult<Record>> {
    let counters = || {
        let next_job_id = engine.db.generate_id().map_err(backend)?;
        let last_court_message_id = match engine.court_message_ids.get(LAST_ID).map_err(backend)? {
            Some(bytes) => id_of("last court-message index id", &bytes)?,
            None => 0,
        };
        Ok(Record::Counters {
            next_job_id,
            last_court_message_id,
        })
    };
    Some(counters())
}

/// The account id in the first 8 bytes of `key`.
fn account_of(what: &str, key: &[u8]) -> StoreResult<MailboxAccountId> {
    let bytes: [u8; 8] = key
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| StoreError::Corrupt(format!("{what}: not an account id")))?;
    MailboxAccountId::try_from(i64::from_be_bytes(bytes))
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}
