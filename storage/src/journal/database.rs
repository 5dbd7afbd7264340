//! The journal's open database: every handle of it and the numbering of its records, so that
//! the [`super::Journal`] can let go of a failed one whole and open it again (see `reopen.rs`).

use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::de::DeserializeOwned;
use sled::transaction::ConflictableTransactionError;

use super::*;
use crate::group_commit::{GroupCommit, Queued};
use crate::sled_gate;

/// The journal's open database: every handle of it, so that dropping the last `Arc` closes it.
pub(super) struct Database {
    /// Commits appends and settlements of concurrent callers together, and flushes the whole
    /// database, so that sled's own metadata is covered as well as the tree.
    pub(super) committer: GroupCommit<JournalError>,
    pub(super) tree: sled::Tree,
    /// The numbers the next record and the next settled record get, read from the tree once at
    /// open (each was a reverse scan per write). Held while a change is numbered and queued, so
    /// that numbers are taken in order and never twice; changes commit in the order they were
    /// queued. A change that fails leaves its numbers unused.
    pub(super) next: Mutex<Next>,
}

/// See [`Journal::next_seq`] and [`Journal::next_feed_position`].
pub(super) struct Next {
    pub(super) seq: u64,
    pub(super) feed_position: u64,
}

impl crate::reopen::WriteFailure for Database {
    fn write_failure(&self) -> Option<String> {
        self.committer.write_failure().map(str::to_owned)
    }
}

impl Database {
    /// Opens the journal database in `dir` with its tree `name`, its numbering read from it.
    pub(super) fn open(dir: &Path, name: &str) -> Result<Database, JournalError> {
        let db = sled_gate::open(dir, CACHE_CAPACITY).map_err(|e| open_error(dir, e))?;
        let tree = db.open_tree(name).map_err(backend)?;
        let next = Next {
            seq: following(&tree, RECORD)?,
            feed_position: following(&tree, FEED)?,
        };
        Ok(Database {
            committer: GroupCommit::start(db, vec![tree.clone()], "journal-commit")
                .map_err(|e| JournalError::Backend(format!("cannot start committing: {e}")))?,
            tree,
            next: Mutex::new(next),
        })
    }

    pub(super) fn tree_name(&self) -> String {
        String::from_utf8_lossy(&self.tree.name()).into_owned()
    }

    /// Writes and flushes a few bytes outside the journal's tree: whether the disk takes
    /// writes. A database opened again after a failure is used only once this went through.
    pub(super) fn probe(&self) -> Result<(), JournalError> {
        {
            let _gate = sled_gate::exclusive();
            self.committer
                .database()
                .insert(PROBE_KEY, &[][..])
                .map_err(backend)?;
        }
        self.flush()
    }

    /// Queues the record `encoded` gives, encoding it under the numbering lock, for the next
    /// round of the committing thread, with the after-commit step `then` makes of its number and
    /// what `encoded` built. `attachment` comes packed: packing it, the slowest part of an append,
    /// is done before the lock.
    pub(super) fn queue_append<R>(
        &self,
        attachment: Option<Vec<u8>>,
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
        encoded: impl FnOnce() -> Result<(Vec<u8>, R), JournalError>,
        then: impl FnOnce(u64, &R) -> Option<AfterCommit>,
    ) -> Result<(Queued<u64, JournalError>, R), JournalError> {
        let indexes: Vec<(Vec<u8>, String)> = indexes
            .iter()
            .map(|(index, key)| (index_key(index, key), format!("{index} {key}")))
            .collect();
        let groups: Vec<Vec<u8>> = groups
            .iter()
            .map(|(group, key)| group_prefix(group, key))
            .collect();
        let (queued, built) = {
            let mut next = self.next();
            let (record, built) = encoded()?;
            let seq = next.seq;
            next.seq += 1;
            let after_commit = then(seq, &built);
            let queued = self.committer.queue_then(
                move |trees| {
                    let tree = &trees[0];
                    for (key, what) in &indexes {
                        // An index key names one record; a second would make the first unfindable.
                        if tree.get(key)?.is_some() {
                            return Err(ConflictableTransactionError::Abort(JournalError::Taken(
                                what.clone(),
                            )));
                        }
                        tree.insert_blind(key.as_slice(), &seq.to_be_bytes()[..])?;
                    }
                    tree.insert_blind(record_key(seq), record.as_slice())?;
                    if let Some(attachment) = &attachment {
                        tree.insert_blind(attachment_key(seq), attachment.as_slice())?;
                    }
                    for prefix in &groups {
                        tree.insert_blind(
                            [prefix.as_slice(), &seq.to_be_bytes()].concat(),
                            &[][..],
                        )?;
                    }
                    Ok(seq)
                },
                after_commit,
            );
            (queued, built)
        };
        Ok((queued, built))
    }

    pub(super) fn get<T: DeserializeOwned>(&self, seq: u64) -> Result<Option<T>, JournalError> {
        self.tree
            .get(record_key(seq))
            .map_err(backend)?
            .map(|raw| decode(&raw))
            .transpose()
    }

    /// Entries from `start` on while their keys begin with `prefix`, at most `limit`.
    pub(super) fn prefixed<'a>(
        &'a self,
        start: Vec<u8>,
        prefix: &'a [u8],
        limit: usize,
    ) -> impl Iterator<Item = Result<(sled::IVec, sled::IVec), JournalError>> + 'a {
        self.tree
            .range(start..)
            .take_while(move |entry| {
                entry
                    .as_ref()
                    .map_or(true, |(key, _)| key.starts_with(prefix))
            })
            .take(limit)
            .map(|entry| entry.map_err(backend))
    }

    // The counters stay right even if a thread panicked while holding them: a number is taken
    // after the record is built and its change queued right after, with nothing in between
    // that could panic.
    pub(super) fn next(&self) -> MutexGuard<'_, Next> {
        self.next.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn flush(&self) -> Result<(), JournalError> {
        self.committer.flush_blocking().map_err(backend)?;
        Ok(())
    }
}

/// One past the number in the last key under `prefix` (a record's sequence number, a feed
/// position), or 0 when there is none.
fn following(tree: &sled::Tree, prefix: &[u8]) -> Result<u64, JournalError> {
    match tree
        .scan_prefix(prefix)
        .next_back()
        .transpose()
        .map_err(backend)?
    {
        Some((key, _)) => Ok(decode_seq(&key[prefix.len()..])? + 1),
        None => Ok(0),
    }
}
