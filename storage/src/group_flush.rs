//! Group commit: one thread flushes a database for every caller that asked since its last flush.
//!
//! sled writes and syncs a log buffer per `flush()` call, so concurrent callers each pay a disk
//! sync for a few hundred bytes, and each waits on a thread of its own (async callers on the
//! runtime's small blocking pool, which then caps how many changes can be in flight). Here a
//! caller takes a ticket after its change is committed and waits for a flush that *started*
//! after the ticket was issued: that flush covers the change, and every other change committed
//! before it started. Under load one sync serves many changes; alone, a caller waits for one
//! flush as before. Async callers wait without holding a thread.

use std::sync::{Arc, Condvar, Mutex, PoisonError};

use tokio::sync::watch;

use crate::sled_gate;

/// The flushing thread of one database and the tickets of its callers.
pub(crate) struct GroupFlush {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    db: sled::Db,
    requests: Mutex<Requests>,
    wake: Condvar,
    rounds: watch::Sender<Round>,
}

#[derive(Default)]
struct Requests {
    /// Tickets handed out so far.
    issued: u64,
    stopping: bool,
}

/// The last flush done: every ticket up to `covers` was issued before it started.
#[derive(Clone, Default)]
struct Round {
    covers: u64,
    failure: Option<Arc<str>>,
}

impl GroupFlush {
    /// Starts the flushing thread of `db`; it ends when this value is dropped.
    pub(crate) fn start(db: sled::Db) -> std::io::Result<GroupFlush> {
        let shared = Arc::new(Shared {
            db,
            requests: Mutex::default(),
            wake: Condvar::new(),
            rounds: watch::Sender::new(Round::default()),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("store-flush".into())
            .spawn(move || worker.serve())?;
        Ok(GroupFlush {
            shared,
            thread: Some(thread),
        })
    }

    /// Returns once everything committed before the call is on disk.
    pub(crate) async fn flush(&self) -> sled::Result<()> {
        let mut rounds = self.shared.rounds.subscribe();
        let ticket = self.shared.ticket();
        let round = rounds
            .wait_for(|round| round.covers >= ticket)
            .await
            .map_err(|_| stopped())?
            .clone();
        round_result(round)
    }

    /// [`GroupFlush::flush`] for callers on a thread of their own.
    pub(crate) fn flush_blocking(&self) -> sled::Result<()> {
        futures::executor::block_on(self.flush())
    }
}

impl Shared {
    fn ticket(&self) -> u64 {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.issued += 1;
        self.wake.notify_one();
        requests.issued
    }

    fn serve(&self) {
        let mut covered = 0;
        loop {
            let target = {
                let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
                while requests.issued == covered && !requests.stopping {
                    requests = self
                        .wake
                        .wait(requests)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if requests.issued == covered {
                    return;
                }
                requests.issued
            };
            // A panic inside sled must not end this thread: every caller waits on it.
            let flushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                sled_gate::flush_blocking(&self.db)
            }));
            let failure = match flushed {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(Arc::from(e.to_string())),
                Err(_) => Some(Arc::from("the flush panicked")),
            };
            covered = target;
            self.rounds.send_replace(Round {
                covers: target,
                failure,
            });
        }
    }
}

impl Drop for GroupFlush {
    /// Serves the tickets still open, then ends the thread, so that the database is closed (and
    /// its file lock released) once the last handle is gone.
    fn drop(&mut self) {
        {
            let mut requests = self
                .shared
                .requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            requests.stopping = true;
            self.shared.wake.notify_one();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn round_result(round: Round) -> sled::Result<()> {
    match round.failure {
        None => Ok(()),
        Some(e) => Err(sled::Error::Io(std::io::Error::other(e.to_string()))),
    }
}

fn stopped() -> sled::Error {
    sled::Error::Io(std::io::Error::other(
        "the store's flushing thread has stopped",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &std::path::Path) -> sled::Db {
        sled_gate::config(dir, 1 << 20).open().unwrap()
    }

    #[tokio::test]
    async fn concurrent_callers_are_all_served_and_see_their_change() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let flusher = Arc::new(GroupFlush::start(db.clone()).unwrap());
        let tasks: Vec<_> = (0..200u32)
            .map(|i| {
                let (db, flusher) = (db.clone(), Arc::clone(&flusher));
                tokio::spawn(async move {
                    db.insert(i.to_be_bytes(), &b"x"[..]).unwrap();
                    flusher.flush().await
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        flusher.flush_blocking().unwrap();
        drop(flusher);
        drop(db);
        assert_eq!(open(dir.path()).len(), 200);
    }

    #[test]
    fn dropping_it_ends_the_thread_and_closes_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = GroupFlush::start(open(dir.path())).unwrap();
        flusher.flush_blocking().unwrap();
        drop(flusher);
        // sled holds an exclusive file lock while any handle of the database lives; its own I/O
        // threads let go of theirs a moment after the last flush, so the first tries may fail.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while sled_gate::config(dir.path(), 1 << 20).open().is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the database stayed open"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
