//! Keeps sled 0.34 out of a deadlock it has under concurrent load.
//!
//! sled guards every database in the process with one global reader-writer lock: transactions
//! and batches take it exclusively, flushes and the log's own flusher threads take it shared. A
//! flush holds its shared lock while it waits for the disk write; once a transaction queues for
//! the exclusive lock, new shared requests (the very threads the flush waits for) queue behind it,
//! and nothing moves again (sled issues #1308, #1412; reproduced here under a few hundred
//! concurrent submissions).
//!
//! The cure is to never let a transaction queue while a flush runs: every sled transaction or
//! batch in meldewerk runs inside [`exclusive`], every flush inside [`shared`], and sled's own
//! periodic flusher is switched off ([`config`]) so that no flush escapes the gate. Flushes still
//! run concurrently with reads (and one database's flush with another's; within a database,
//! [`crate::group_commit`] runs one at a time for all callers, and the transactions callers
//! queue to it).

use std::path::Path;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use sled::transaction::{ConflictableTransactionResult, TransactionResult, Transactional};

static GATE: RwLock<()> = RwLock::new(());

/// Held while a transaction or batch runs.
pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    GATE.write().unwrap_or_else(PoisonError::into_inner)
}

/// Held while a flush runs.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(PoisonError::into_inner)
}

/// sled configuration for `dir` without the periodic background flusher (every flush is ours,
/// and goes through the gate), with a page cache of `cache_capacity` bytes. sled's own default
/// is 1 GiB, which a busy server fills: the cache is most of what the process holds in memory.
pub fn config(dir: &Path, cache_capacity: u64) -> sled::Config {
    sled::Config::new()
        .path(dir)
        .flush_every_ms(None)
        .cache_capacity(cache_capacity)
}

/// Opens the database in `dir` with [`config`], mending the one way sled 0.34 leaves a database
/// it cannot open again: killed while it writes a snapshot (at every open), it leaves
/// `snap.<lsn>.generating` behind, unfinished; its search for the newest snapshot skips only
/// its other temporary name, so the next open reads that file and fails as corrupt. Such a file
/// is removed and the open tried once more: the snapshot before it and the log still hold
/// everything, a snapshot only shortens the replay.
pub(crate) fn open(dir: &Path, cache_capacity: u64) -> sled::Result<sled::Db> {
    match config(dir, cache_capacity).open() {
        Err(sled::Error::Corruption { .. }) if remove_unfinished_snapshots(dir) => {
            config(dir, cache_capacity).open()
        }
        opened => opened,
    }
}

/// sled reports a held lock as a plain I/O error with a message (kind `Other`), so the message is
/// the only reliable sign; `WouldBlock` covers the raw `flock` error should a version pass it on.
pub(crate) fn is_locked(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock
        || io.to_string().contains("could not acquire lock"))
}

/// Removes every `snap.*.generating` in `dir`; whether there was one.
fn remove_unfinished_snapshots(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut removed = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            tracing::warn!(dir = %dir.display(), file = %name, "removing a snapshot left unfinished by a crash; the log still holds everything");
            removed |= std::fs::remove_file(entry.path()).is_ok();
        }
    }
    removed
}

/// Flushes `db` through the gate, blocking the calling thread until the data is on disk.
pub(crate) fn flush_blocking(db: &sled::Db) -> sled::Result<usize> {
    let _gate = shared();
    db.flush()
}

/// `transaction`, run inside the gate.
pub trait GatedTransaction<E> {
    /// The transactional view the closure gets.
    type View;
    /// Runs `f` as one sled transaction while holding the gate exclusively.
    fn gated_transaction<F, A>(&self, f: F) -> TransactionResult<A, E>
    where
        F: Fn(&Self::View) -> ConflictableTransactionResult<A, E>;
}

impl<E, T: Transactional<E>> GatedTransaction<E> for T {
    type View = T::View;

    fn gated_transaction<F, A>(&self, f: F) -> TransactionResult<A, E>
    where
        F: Fn(&Self::View) -> ConflictableTransactionResult<A, E>,
    {
        let _gate = exclusive();
        self.transaction(f)
    }
}
