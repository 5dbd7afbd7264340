//! A checkpoint after a clean stop, so that the next start replays nothing.
//!
//! sled 0.34 writes the snapshot of its page table only when a database is opened, and every open
//! replays the log written since the last snapshot: a server that wrote 100,000 reports since it
//! started replays all of that at its next start (about a second, and more the more was written).
//! Opening the database once more after a clean stop writes that snapshot while the service is
//! stopping, where a second does not matter, and the next start reads it and replays nothing.
//! A crash skips this step and the next start replays the log as before. Nothing is lost either
//! way: the snapshot only shortens the replay (and one left unfinished by a kill during the
//! checkpoint is removed at the next open, see [`crate::sled_gate::open`]).

use std::path::Path;
use std::time::{Duration, Instant};

/// Page cache for the checkpoint's open: it reads no data, only the log.
const CACHE_CAPACITY: u64 = 8 * 1024 * 1024;

/// Opens the sled database in `dir` and closes it again, waiting up to `wait` for the process's
/// own handles to let go of its lock (sled's threads release it a moment after the last handle
/// is dropped). Returns how long the open took, the wait for the lock left out; a directory
/// without a database is left alone.
pub fn checkpoint(dir: &Path, wait: Duration) -> Result<Duration, String> {
    // sled would create a database where there is none.
    if !dir.join("conf").is_file() {
        return Ok(Duration::ZERO);
    }
    let deadline = Instant::now() + wait;
    loop {
        let started = Instant::now();
        match crate::sled_gate::open(dir, CACHE_CAPACITY) {
            Ok(db) => {
                // Dropping flushes, and every flush goes through the gate.
                let _gate = crate::sled_gate::shared();
                drop(db);
                return Ok(started.elapsed());
            }
            Err(e) if crate::sled_gate::is_locked(&e) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) if crate::sled_gate::is_locked(&e) => {
                return Err(format!("{} is still open after {wait:?}", dir.display()));
            }
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_keeps_the_data_and_leaves_a_missing_database_alone() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none");
        assert_eq!(checkpoint(&missing, Duration::ZERO), Ok(Duration::ZERO));
        assert!(!missing.exists(), "no database is created");

        let path = dir.path().join("db");
        let db = crate::sled_gate::config(&path, CACHE_CAPACITY)
            .open()
            .unwrap();
        for i in 0u32..1000 {
            db.insert(i.to_be_bytes(), vec![7u8; 100]).unwrap();
        }
        db.flush().unwrap();
        // Still open: the lock is held, and the checkpoint gives up after its wait.
        let refused = checkpoint(&path, Duration::from_millis(50)).unwrap_err();
        assert!(refused.contains("still open"), "{refused}");
        drop(db);
        checkpoint(&path, Duration::from_secs(5)).unwrap();
        let db = crate::sled_gate::config(&path, CACHE_CAPACITY)
            .open()
            .unwrap();
        assert_eq!(db.len(), 1000);
        assert_eq!(db.get(999u32.to_be_bytes()).unwrap().unwrap().len(), 100);
    }

    #[test]
    fn a_snapshot_left_unfinished_by_a_kill_is_removed_and_the_data_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let db = crate::sled_gate::open(&path, CACHE_CAPACITY).unwrap();
        db.insert(b"report", b"stored".to_vec()).unwrap();
        db.flush().unwrap();
        drop(db);
        checkpoint(&path, Duration::from_secs(5)).unwrap();
        // What a kill while sled writes its next snapshot leaves: a few bytes, sorted last.
        let unfinished = path.join("snap.7FFFFFFFFFFFFFFF.generating");
        std::fs::write(&unfinished, b"snap!").unwrap();
        let refused = crate::sled_gate::config(&path, CACHE_CAPACITY).open();
        assert!(
            matches!(refused, Err(sled::Error::Corruption { .. })),
            "sled alone does not open it: {refused:?}"
        );
        let db = crate::sled_gate::open(&path, CACHE_CAPACITY).unwrap();
        assert_eq!(db.get(b"report").unwrap().unwrap(), b"stored".as_slice());
        assert!(!unfinished.exists());
    }
}
