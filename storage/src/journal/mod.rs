//! A journal: an append-only, durable log of records with secondary indexes, in a sled database
//! of its own.
//!
//! The simulated authorities keep what they received in one, apart from the service's store, so
//! that after the service crashed and retried, a test can still ask the authority what it really
//! received and how often. Every simulator uses this one implementation; the sled handling
//! (the deadlock gate, lock detection, flushing) stays inside this crate.
//!
//! Layout of the single tree:
//! - `m/<seq>` → the record as JSON, packed (`packed.rs`; plain JSON in journals written before);
//!   `seq` is a big-endian counter, so a prefix scan yields records in the order they were
//!   appended;
//! - `i/<index>\0<key>` → `seq`, one entry per secondary key (an idempotency key, a reference);
//! - `g/<group>\0<key length><key><seq>` → nothing, one entry per grouping key that many records
//!   may share (a report id, a module). The key's length (four bytes, big-endian) comes first so
//!   that one key can never be the prefix of another's entries; `seq` last keeps a group's
//!   records in append order under one prefix scan.
//!
//! - `a/<seq>` → packed bytes (`packed.rs`): a record's **attachment**, kept apart so
//!   that the record's later states (a [`Journal::replace`], a [`Journal::settle`]) never write
//!   it again (a simulator's received message body: most of a record's bytes, written once);
//! - `f/<position>` → `seq`: the **feed**, records in the order they were settled (a simulator's
//!   decided messages, as the authority drops their acknowledgements into the portal's inbox);
//!   `position` is a big-endian counter of its own, so a reader keeps its place with one number.
//!
//! A record and its index entries go in with one transaction: a crash can never leave a record
//! without its index entry (for a simulator, that would turn a retry into a second delivery).
//! An index key names one record: an append that names a taken one is refused
//! ([`JournalError::Taken`]), so two concurrent appends for one idempotency key cannot both land.
//! Settling is one transaction too: a record's new state, its feed entry and its leaving a
//! group. Concurrent callers' appends and settlements are committed together and share one
//! flush (`group_commit/`).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;

use sled::transaction::TransactionError;

use crate::group_commit::Queued;
use crate::packed::Packing;
use crate::reopen::{Reopening, WriteFailure};

const RECORD: &[u8] = b"m/";
const INDEX: &[u8] = b"i/";
const GROUP: &[u8] = b"g/";
const FEED: &[u8] = b"f/";
const ATTACHMENT: &[u8] = b"a/";

/// Page cache of a journal's database. A simulator reads back mostly what it wrote moments ago
/// (the acknowledgement of a fresh message), so a small cache serves it; sled's default of 1 GiB
/// would let every simulator grow as large as the service's own store.
const CACHE_CAPACITY: u64 = 16 * 1024 * 1024;

/// Key of [`Database::probe`]'s write, in sled's default tree (the journal keeps nothing there).
const PROBE_KEY: &[u8] = b"writable";

/// Why a journal could not be opened or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    /// Another process (or another instance in this process) has the journal open.
    #[error("the journal at {0} is in use by another process")]
    Locked(PathBuf),
    /// The journal could not be read or written.
    #[error("journal error: {0}")]
    Backend(String),
    /// The journal holds an entry that cannot be decoded.
    #[error("journal is corrupt: {0}")]
    Corrupt(String),
    /// The journal takes no requests now: a write failed (a full disk) and its database has not
    /// been opened again yet; nothing of the call was stored.
    #[error("the journal is unavailable ({0}); nothing was stored")]
    Unavailable(String),
    /// An append named an index key (`index key`) that already names another record; nothing
    /// was appended.
    #[error("the journal already holds a record under {0}")]
    Taken(String),
}

/// Durable, ordered records of type `T` with secondary indexes. Callers serialise their own
/// read-modify-write sequences (a journal does not lock records).
///
/// A write that fails (a full disk) takes the journal's database out: every call then fails with
/// [`JournalError::Unavailable`] until the database has been opened again from disk and took a
/// write, which happens by itself (see `reopen.rs`).
pub struct Journal<T> {
    db: Arc<Reopening<Database>>,
    /// How records and attachments are packed.
    packing: Packing,
    record: PhantomData<fn() -> T>,
}

/// What runs on the committing thread once an append is committed.
type AfterCommit = Box<dyn FnOnce() + Send>;

/// A record queued by [`Journal::queue_attached_with`], on its way to disk.
pub struct PendingAppend<T> {
    queued: Queued<u64, JournalError>,
    record: T,
    /// Told if the append's write fails.
    db: Arc<Reopening<Database>>,
    open: Arc<Database>,
}

impl<T> PendingAppend<T> {
    /// The record as it was built when its number was taken (it may not be on disk yet).
    pub fn record(&self) -> &T {
        &self.record
    }

    /// The record's sequence number and the record, once it is on disk; the append's error
    /// (such as [`JournalError::Taken`]) if it was refused.
    pub async fn durable(self) -> Result<(u64, T), JournalError> {
        let outcome = self.queued.outcome().await.map_err(transaction_error);
        // No flush of its own here: it would hold the async caller's thread, and the round's
        // flush has told whether the database still writes.
        let seq = taken_out_if_failed(&self.db, &self.open, outcome)?;
        Ok((seq, self.record))
    }
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Opens (or creates) the journal `name` in `dir`, its values packed small.
    /// [`JournalError::Locked`] while another process has the directory open.
    pub fn open(dir: &Path, name: &str) -> Result<Self, JournalError> {
        Self::open_packed(dir, name, Packing::Small)
    }

    /// [`open`](Self::open), with new records and attachments packed `packing`'s way (what is
    /// stored already reads either way).
    pub fn open_packed(dir: &Path, name: &str, packing: Packing) -> Result<Self, JournalError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| JournalError::Backend(format!("cannot create {}: {e}", dir.display())))?;
        let first = Database::open(dir, name)?;
        let (dir, name) = (dir.to_path_buf(), name.to_string());
        let again = move || {
            let open = Database::open(&dir, &name).map_err(|e| e.to_string())?;
            open.probe().map_err(|e| e.to_string())?;
            Ok(open)
        };
        Ok(Journal {
            db: Arc::new(Reopening::new(
                format!("journal {}", first.tree_name()),
                first,
                Box::new(again),
            )),
            packing,
            record: PhantomData,
        })
    }

    /// Runs `f` on the open database; a failed write takes it out (see [`checked`]).
    fn on<R>(
        &self,
        f: impl FnOnce(&Database) -> Result<R, JournalError>,
    ) -> Result<R, JournalError> {
        let open = self
            .db
            .current()
            .map_err(|failure| JournalError::Unavailable(failure.reason))?;
        let result = f(&open);
        checked(&self.db, &open, result)
    }

    /// The record whose index `index` holds `key`, with its sequence number.
    pub fn find(&self, index: &str, key: &str) -> Result<Option<(u64, T)>, JournalError> {
        self.on(|db| {
            let Some(raw) = db.tree.get(index_key(index, key)).map_err(backend)? else {
                return Ok(None);
            };
            let seq = decode_seq(&raw)?;
            let record = db.get(seq)?.ok_or_else(|| {
                JournalError::Corrupt(format!("index {index} points to missing record #{seq}"))
            })?;
            Ok(Some((seq, record)))
        })
    }

    /// Whether the index `index` holds `key`: [`find`](Self::find) without reading the record.
    /// A lookup in memory for the most part, for async callers: a failed read is passed on
    /// without the flush that [`find`](Self::find) makes to learn whether the database still
    /// writes (it would hold the caller's thread); the next append tells.
    pub fn contains(&self, index: &str, key: &str) -> Result<bool, JournalError> {
        let open = self
            .db
            .current()
            .map_err(|failure| JournalError::Unavailable(failure.reason))?;
        let found = open
            .tree
            .contains_key(index_key(index, key))
            .map_err(backend);
        taken_out_if_failed(&self.db, &open, found)
    }

    /// The record with sequence number `seq`.
    pub fn get(&self, seq: u64) -> Result<Option<T>, JournalError> {
        self.on(|db| db.get(seq))
    }

    /// Appends `record` with its index entries atomically and flushes; returns its sequence
    /// number. Durable on return. [`JournalError::Taken`] if one of the index keys names a
    /// record already.
    pub fn append(&self, record: &T, indexes: &[(&str, &str)]) -> Result<u64, JournalError> {
        self.append_grouped(record, indexes, &[])
    }

    /// Like [`append`](Self::append), and also files the record under each `(group, key)` of
    /// `groups`, where many records may share a key; [`find_all`](Self::find_all) and
    /// [`range_in`](Self::range_in) read them back without touching other records.
    pub fn append_grouped(
        &self,
        record: &T,
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
    ) -> Result<u64, JournalError> {
        self.append_inner(None, indexes, groups, || {
            Ok((encode(record, self.packing)?, ()))
        })
        .map(|(seq, ())| seq)
    }

    /// Like [`append_grouped`](Self::append_grouped), with `attachment` kept apart from the
    /// record under its sequence number ([`attachment`](Self::attachment) reads it), in the same
    /// transaction: large bytes the record's later states do not carry again.
    pub fn append_attached(
        &self,
        record: &T,
        attachment: &[u8],
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
    ) -> Result<u64, JournalError> {
        self.append_inner(Some(attachment), indexes, groups, || {
            Ok((encode(record, self.packing)?, ()))
        })
        .map(|(seq, ())| seq)
    }

    /// Like [`append_attached`](Self::append_attached), with the record built by `build` at
    /// the moment its number is taken: records appended concurrently are numbered in the order
    /// they were built, so a time `build` stamps grows with the numbers (which
    /// [`partition_point`](Self::partition_point) over that time relies on). Returns the number
    /// and the record. Durable on return.
    pub fn append_attached_with(
        &self,
        attachment: &[u8],
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
        build: impl FnOnce() -> T,
    ) -> Result<(u64, T), JournalError> {
        self.append_inner(Some(attachment), indexes, groups, || {
            let record = build();
            Ok((encode(&record, self.packing)?, record))
        })
    }

    /// The attachment of record `seq`, if it was appended with one.
    pub fn attachment(&self, seq: u64) -> Result<Option<Vec<u8>>, JournalError> {
        self.on(|db| {
            let Some(stored) = db.tree.get(attachment_key(seq)).map_err(backend)? else {
                return Ok(None);
            };
            let bytes = crate::packed::unpack(&stored)
                .map_err(|e| JournalError::Corrupt(format!("attachment of record #{seq}: {e}")))?;
            Ok(Some(bytes.into_owned()))
        })
    }

    /// Like [`append_attached`](Self::append_attached), for async callers, with the record built
    /// by `build` at the moment its number is taken: records appended concurrently are numbered
    /// in the order they were built, so a time `build` stamps grows with the numbers (which
    /// [`partition_point`](Self::partition_point) over that time relies on). The record is
    /// queued at once, and the [`PendingAppend`] returned tells when it is on disk without
    /// holding a thread while the disk is written. `committed` runs on the journal's committing
    /// thread with the record's number and the record as soon as it is committed and flushed,
    /// whether or not anyone still waits (a failed flush drops it unrun): dropping the
    /// `PendingAppend` does not cancel the append. A refused append ([`JournalError::Taken`],
    /// reported by [`PendingAppend::durable`]) drops `committed` unrun.
    pub fn queue_attached_with(
        &self,
        attachment: &[u8],
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
        build: impl FnOnce() -> T,
        committed: impl FnOnce(u64, &T) + Send + 'static,
    ) -> Result<PendingAppend<T>, JournalError>
    where
        T: Clone + Send + 'static,
    {
        let open = self
            .db
            .current()
            .map_err(|failure| JournalError::Unavailable(failure.reason))?;
        let (queued, record) = open.queue_append(
            Some(self.packing.pack(attachment)),
            indexes,
            groups,
            || {
                let record = build();
                Ok((encode(&record, self.packing)?, record))
            },
            |seq, record| {
                let record = record.clone();
                Some(Box::new(move || committed(seq, &record)))
            },
        )?;
        Ok(PendingAppend {
            queued,
            record,
            db: Arc::clone(&self.db),
            open,
        })
    }

    /// Appends the record `encoded` gives and waits until it is on disk (see
    /// [`queue_append`](Self::queue_append)).
    fn append_inner<R>(
        &self,
        attachment: Option<&[u8]>,
        indexes: &[(&str, &str)],
        groups: &[(&str, &str)],
        encoded: impl FnOnce() -> Result<(Vec<u8>, R), JournalError>,
    ) -> Result<(u64, R), JournalError> {
        let attachment = attachment.map(|bytes| self.packing.pack(bytes));
        self.on(|db| {
            let (queued, built) =
                db.queue_append(attachment, indexes, groups, encoded, |_, _| None)?;
            let seq = queued.outcome_blocking().map_err(transaction_error)?;
            Ok((seq, built))
        })
    }
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Overwrites record `seq` (its index entries stay) and flushes. Durable on return.
    pub fn replace(&self, seq: u64, record: &T) -> Result<(), JournalError> {
        self.on(|db| {
            db.tree
                .insert(record_key(seq), encode(record, self.packing)?)
                .map_err(backend)?;
            db.flush()
        })
    }

    /// Overwrites each record `seq` with its new state, appends it to the feed, and takes it out
    /// of every `(group, key)` of `leave` — all in one transaction, flushed. Durable on return.
    /// Settlements and appends are numbered in the order they are called and commit in that
    /// order (positions are counted on from the last).
    pub fn settle(&self, records: &[(u64, T)], leave: &[(&str, &str)]) -> Result<(), JournalError> {
        if records.is_empty() {
            return Ok(());
        }
        let records: Vec<(u64, Vec<u8>)> = records
            .iter()
            .map(|(seq, record)| Ok((*seq, encode(record, self.packing)?)))
            .collect::<Result<_, JournalError>>()?;
        let leave: Vec<Vec<u8>> = leave
            .iter()
            .map(|(group, key)| group_prefix(group, key))
            .collect();
        self.on(|db| {
            let queued = {
                let mut next = db.next();
                let first = next.feed_position;
                next.feed_position += records.len() as u64;
                db.committer.queue(move |trees| {
                    let tree = &trees[0];
                    for (position, (seq, record)) in (first..).zip(&records) {
                        let seq_bytes = seq.to_be_bytes();
                        tree.insert_blind(record_key(*seq), record.as_slice())?;
                        tree.insert_blind(
                            [FEED, &position.to_be_bytes()].concat(),
                            &seq_bytes[..],
                        )?;
                        for prefix in &leave {
                            tree.remove_blind([prefix.as_slice(), &seq_bytes].concat())?;
                        }
                    }
                    Ok(())
                })
            };
            queued.outcome_blocking().map_err(transaction_error)
        })
    }

    /// Settled records in feed order, starting at feed position `from`, at most `limit`:
    /// `(position, seq, record)`. Reads only the feed entries returned and their records.
    pub fn feed(&self, from: u64, limit: usize) -> Result<Vec<(u64, u64, T)>, JournalError> {
        self.on(|db| {
            db.prefixed([FEED, &from.to_be_bytes()].concat(), FEED, limit)
                .map(|entry| {
                    let (key, raw) = entry?;
                    let position = decode_seq(&key[FEED.len()..])?;
                    let seq = decode_seq(&raw)?;
                    let record = db.get(seq)?.ok_or_else(|| {
                        JournalError::Corrupt(format!(
                            "feed position {position} points to missing record #{seq}"
                        ))
                    })?;
                    Ok((position, seq, record))
                })
                .collect()
        })
    }

    /// The feed position the next settled record will get.
    pub fn next_feed_position(&self) -> Result<u64, JournalError> {
        self.on(|db| Ok(db.next().feed_position))
    }

    /// Records in append order, starting at sequence number `from`, at most `limit`.
    pub fn range(&self, from: u64, limit: usize) -> Result<Vec<(u64, T)>, JournalError> {
        self.on(|db| {
            db.prefixed(record_key(from), RECORD, limit)
                .map(|entry| {
                    let (key, raw) = entry?;
                    Ok((decode_seq(&key[RECORD.len()..])?, decode(&raw)?))
                })
                .collect()
        })
    }

    /// Every record filed under `key` in `group`, in append order.
    pub fn find_all(&self, group: &str, key: &str) -> Result<Vec<(u64, T)>, JournalError> {
        self.range_in(group, key, 0, usize::MAX)
    }

    /// Records filed under `key` in `group`, in append order, starting at sequence number `from`,
    /// at most `limit`. Reads only the group's entries from `from` on and the records returned.
    pub fn range_in(
        &self,
        group: &str,
        key: &str,
        from: u64,
        limit: usize,
    ) -> Result<Vec<(u64, T)>, JournalError> {
        let prefix = group_prefix(group, key);
        let start = [prefix.as_slice(), &from.to_be_bytes()].concat();
        self.on(|db| {
            db.prefixed(start, &prefix, limit)
                .map(|entry| {
                    let (entry_key, _) = entry?;
                    let seq = decode_seq(&entry_key[prefix.len()..])?;
                    let record = db.get(seq)?.ok_or_else(|| {
                        JournalError::Corrupt(format!(
                            "group {group} points to missing record #{seq}"
                        ))
                    })?;
                    Ok((seq, record))
                })
                .collect()
        })
    }

    /// The sequence number the next record will get. Records are never removed, but a number
    /// can stay without a record: an append that failed or was refused, or one still being
    /// committed.
    pub fn next_seq(&self) -> Result<u64, JournalError> {
        self.on(|db| Ok(db.next().seq))
    }

    /// The first sequence number whose record does not satisfy `pred`, by binary search; `pred`
    /// must hold for a prefix of the journal and fail for the rest (say, "received before t" over
    /// records appended in time order). Reads about log2(n) records instead of all of them.
    /// A number without a record counts as the first record after it: reading on from the
    /// result never misses a record that fails `pred`.
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> Result<u64, JournalError> {
        let (mut low, mut high) = (0, self.next_seq()?);
        while low < high {
            let middle = low + (high - low) / 2;
            match self.range(middle, 1)?.pop() {
                Some((seq, record)) if seq < high && pred(&record) => low = seq + 1,
                _ => high = middle,
            }
        }
        Ok(low)
    }

    /// Every record in append order.
    pub fn all(&self) -> Result<Vec<T>, JournalError> {
        Ok(self
            .range(0, usize::MAX)?
            .into_iter()
            .map(|(_, record)| record)
            .collect())
    }
}

/// Passes `result` on; a failure of the database's storage takes `open` out, so that the
/// journal is opened again from disk (and answers as unavailable meanwhile). Other errors pass as
/// they are.
fn checked<R>(
    db: &Reopening<Database>,
    open: &Arc<Database>,
    result: Result<R, JournalError>,
) -> Result<R, JournalError> {
    // Whether the database still writes (see `SledStore`'s `checked`).
    if matches!(result, Err(JournalError::Backend(_))) && open.write_failure().is_none() {
        let _ = open.committer.flush_blocking();
    }
    taken_out_if_failed(db, open, result)
}

/// Passes `result` on, or, if the database's writes fail, takes it out and answers as
/// unavailable. For the outcome of a round: that round's flush has told already.
fn taken_out_if_failed<R>(
    db: &Reopening<Database>,
    open: &Arc<Database>,
    result: Result<R, JournalError>,
) -> Result<R, JournalError> {
    if !matches!(result, Err(JournalError::Backend(_))) {
        return result;
    }
    match open.write_failure() {
        Some(failure) => {
            db.failed(open, &failure);
            Err(JournalError::Unavailable(failure))
        }
        None => result,
    }
}

fn record_key(seq: u64) -> Vec<u8> {
    [RECORD, &seq.to_be_bytes()].concat()
}

fn attachment_key(seq: u64) -> Vec<u8> {
    [ATTACHMENT, &seq.to_be_bytes()].concat()
}

fn index_key(index: &str, key: &str) -> Vec<u8> {
    [INDEX, index.as_bytes(), b"\0", key.as_bytes()].concat()
}

fn group_prefix(group: &str, key: &str) -> Vec<u8> {
    // A key longer than 4 GiB cannot reach here: records are JSON held in memory.
    let length = u32::try_from(key.len()).unwrap_or(u32::MAX);
    [
        GROUP,
        group.as_bytes(),
        b"\0",
        &length.to_be_bytes(),
        key.as_bytes(),
    ]
    .concat()
}

fn decode_seq(raw: &[u8]) -> Result<u64, JournalError> {
    let bytes: [u8; 8] = raw
        .try_into()
        .map_err(|_| JournalError::Corrupt("sequence number is not 8 bytes".to_owned()))?;
    Ok(u64::from_be_bytes(bytes))
}

/// A record as stored: its JSON, packed (a journal is read far less often than it is written,
/// and each record is written twice, appended and settled).
fn encode<T: Serialize>(record: &T, packing: Packing) -> Result<Vec<u8>, JournalError> {
    let json = serde_json::to_vec(record)
        .map_err(|e| JournalError::Backend(format!("cannot encode record: {e}")))?;
    Ok(packing.pack(&json))
}

/// A record from what [`encode`] stored, or from the plain JSON of a journal written before
/// records were packed.
fn decode<T: DeserializeOwned>(stored: &[u8]) -> Result<T, JournalError> {
    let json = crate::packed::unpack(stored)
        .map_err(|e| JournalError::Corrupt(format!("unreadable record: {e}")))?;
    serde_json::from_slice(&json)
        .map_err(|e| JournalError::Corrupt(format!("undecodable record: {e}")))
}

fn backend(e: sled::Error) -> JournalError {
    JournalError::Backend(e.to_string())
}

fn transaction_error(e: TransactionError<JournalError>) -> JournalError {
    match e {
        TransactionError::Abort(e) => e,
        TransactionError::Storage(e) => backend(e),
    }
}

/// sled reports a held lock only as an I/O error with a message; recognising it lets the caller
/// tell "another process runs this simulator" apart from real damage.
fn open_error(dir: &Path, e: sled::Error) -> JournalError {
    if crate::sled_gate::is_locked(&e) {
        JournalError::Locked(PathBuf::from(dir))
    } else {
        JournalError::Backend(format!("cannot open {}: {e}", dir.display()))
    }
}

mod database;
#[cfg(test)]
mod tests;

use database::Database;
