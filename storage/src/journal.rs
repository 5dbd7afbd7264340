//! A journal: an append-only, durable log of records with secondary indexes, in a sled database
//! of its own.
//!
//! The simulated authorities keep what they received in one, apart from the service's store, so
//! that after the service crashed and retried, a test can still ask the authority what it really
//! received and how often. Every simulator uses this one implementation; the sled handling
//! (the deadlock gate, lock detection, flushing) stays inside this crate.
//!
//! Layout of the single tree:
//! - `m/<seq>` → the record as JSON; `seq` is a big-endian counter, so a prefix scan yields
//!   records in the order they were appended;
//! - `i/<index>\0<key>` → `seq`, one entry per secondary key (an idempotency key, a reference).
//!
//! A record and its index entries go in with one atomic batch: a crash can never leave a record
//! without its index entry (for a simulator, that would turn a retry into a second delivery).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::sled_gate;

const RECORD: &[u8] = b"m/";
const INDEX: &[u8] = b"i/";

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
}

/// Durable, ordered records of type `T` with secondary indexes. Callers serialise their own
/// read-modify-write sequences (a journal does not lock records).
pub struct Journal<T> {
    /// Kept so that flushing covers sled's own metadata as well as the tree.
    db: sled::Db,
    tree: sled::Tree,
    record: PhantomData<fn() -> T>,
}

impl<T: Serialize + DeserializeOwned> Journal<T> {
    /// Opens (or creates) the journal `name` in `dir`. [`JournalError::Locked`] while another
    /// process has the directory open.
    pub fn open(dir: &Path, name: &str) -> Result<Self, JournalError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| JournalError::Backend(format!("cannot create {}: {e}", dir.display())))?;
        let db = sled_gate::config(dir)
            .open()
            .map_err(|e| open_error(dir, e))?;
        let tree = db.open_tree(name).map_err(backend)?;
        Ok(Journal {
            db,
            tree,
            record: PhantomData,
        })
    }

    /// The record whose index `index` holds `key`, with its sequence number.
    pub fn find(&self, index: &str, key: &str) -> Result<Option<(u64, T)>, JournalError> {
        let Some(raw) = self.tree.get(index_key(index, key)).map_err(backend)? else {
            return Ok(None);
        };
        let seq = decode_seq(&raw)?;
        let record = self.get(seq)?.ok_or_else(|| {
            JournalError::Corrupt(format!("index {index} points to missing record #{seq}"))
        })?;
        Ok(Some((seq, record)))
    }

    /// The record with sequence number `seq`.
    pub fn get(&self, seq: u64) -> Result<Option<T>, JournalError> {
        self.tree
            .get(record_key(seq))
            .map_err(backend)?
            .map(|raw| decode(&raw))
            .transpose()
    }

    /// Appends `record` with its index entries atomically and flushes; returns its sequence
    /// number. Durable on return.
    pub fn append(&self, record: &T, indexes: &[(&str, &str)]) -> Result<u64, JournalError> {
        let seq = match self
            .tree
            .scan_prefix(RECORD)
            .next_back()
            .transpose()
            .map_err(backend)?
        {
            Some((key, _)) => decode_seq(&key[RECORD.len()..])? + 1,
            None => 0,
        };
        let mut batch = sled::Batch::default();
        batch.insert(record_key(seq), encode(record)?);
        for (index, key) in indexes {
            batch.insert(index_key(index, key), seq.to_be_bytes().to_vec());
        }
        {
            let _gate = sled_gate::exclusive();
            self.tree.apply_batch(batch).map_err(backend)?;
        }
        self.flush()?;
        Ok(seq)
    }

    /// Overwrites record `seq` (its index entries stay) and flushes. Durable on return.
    pub fn replace(&self, seq: u64, record: &T) -> Result<(), JournalError> {
        self.tree
            .insert(record_key(seq), encode(record)?)
            .map_err(backend)?;
        self.flush()
    }

    /// Records in append order, starting at sequence number `from`, at most `limit`.
    pub fn range(&self, from: u64, limit: usize) -> Result<Vec<(u64, T)>, JournalError> {
        self.tree
            .range(record_key(from)..)
            .take_while(|entry| {
                entry
                    .as_ref()
                    .map_or(true, |(key, _)| key.starts_with(RECORD))
            })
            .take(limit)
            .map(|entry| {
                let (key, raw) = entry.map_err(backend)?;
                Ok((decode_seq(&key[RECORD.len()..])?, decode(&raw)?))
            })
            .collect()
    }

    /// Every record in append order.
    pub fn all(&self) -> Result<Vec<T>, JournalError> {
        Ok(self
            .range(0, usize::MAX)?
            .into_iter()
            .map(|(_, record)| record)
            .collect())
    }

    fn flush(&self) -> Result<(), JournalError> {
        sled_gate::flush_blocking(&self.db).map_err(backend)?;
        Ok(())
    }
}

fn record_key(seq: u64) -> Vec<u8> {
    [RECORD, &seq.to_be_bytes()].concat()
}

fn index_key(index: &str, key: &str) -> Vec<u8> {
    [INDEX, index.as_bytes(), b"\0", key.as_bytes()].concat()
}

fn decode_seq(raw: &[u8]) -> Result<u64, JournalError> {
    let bytes: [u8; 8] = raw
        .try_into()
        .map_err(|_| JournalError::Corrupt("sequence number is not 8 bytes".to_owned()))?;
    Ok(u64::from_be_bytes(bytes))
}

fn encode<T: Serialize>(record: &T) -> Result<Vec<u8>, JournalError> {
    serde_json::to_vec(record)
        .map_err(|e| JournalError::Backend(format!("cannot encode record: {e}")))
}

fn decode<T: DeserializeOwned>(raw: &[u8]) -> Result<T, JournalError> {
    serde_json::from_slice(raw)
        .map_err(|e| JournalError::Corrupt(format!("undecodable record: {e}")))
}

fn backend(e: sled::Error) -> JournalError {
    JournalError::Backend(e.to_string())
}

/// sled reports a held lock only as an I/O error with a message; recognising it lets the caller
/// tell "another process runs this simulator" apart from real damage.
fn open_error(dir: &Path, e: sled::Error) -> JournalError {
    match &e {
        sled::Error::Io(io)
            if io.kind() == std::io::ErrorKind::WouldBlock
                || io.to_string().contains("could not acquire lock") =>
        {
            JournalError::Locked(PathBuf::from(dir))
        }
        _ => JournalError::Backend(format!("cannot open {}: {e}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_reopen_in_order_with_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        {
            let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
            assert_eq!(journal.append(&"a".into(), &[("key", "k1")]).unwrap(), 0);
            assert_eq!(
                journal
                    .append(&"b".into(), &[("key", "k2"), ("ref", "r2")])
                    .unwrap(),
                1
            );
            journal.replace(0, &"a2".into()).unwrap();
        }
        let journal: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        assert_eq!(journal.all().unwrap(), vec!["a2".to_string(), "b".into()]);
        assert_eq!(journal.find("ref", "r2").unwrap(), Some((1, "b".into())));
        assert_eq!(journal.find("key", "k1").unwrap(), Some((0, "a2".into())));
        assert_eq!(journal.find("ref", "k1").unwrap(), None);
        assert_eq!(journal.range(1, 10).unwrap(), vec![(1, "b".to_string())]);
        assert_eq!(journal.range(0, 1).unwrap().len(), 1);
    }

    #[test]
    fn a_second_open_of_the_same_directory_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let _first: Journal<String> = Journal::open(dir.path(), "j").unwrap();
        let second = Journal::<String>::open(dir.path(), "j");
        assert!(
            matches!(second, Err(JournalError::Locked(_))),
            "{:?}",
            second.err()
        );
    }
}
