//! Group commit: one thread per database runs the transactions its callers queue, many in one
//! sled transaction, and flushes once for all of them and for every caller that asked for a
//! flush since the last round.
//!
//! Why both halves: sled 0.34 writes and syncs a log buffer per `flush()` call, and it also
//! writes two more for every transaction or batch whatever its size (`pin_log` seals the current
//! buffer before and after the transaction's marker, each one a disk write on sled's I/O pool).
//! Counted at the system calls, a report cost 8.6 buffer writes with one transaction per change,
//! most of them a few bytes long. Here concurrent changes share both: one transaction, its two
//! buffers, and one flush per round.
//!
//! A caller either queues a transaction ([`GroupCommit::commit`]) or, after a change of its own,
//! takes a ticket ([`GroupCommit::flush`]). Each round takes everything queued and every ticket
//! issued so far, runs the queued transactions together, flushes, and answers them all: durable
//! on return. Should the combined transaction abort (one caller's change is refused), each runs
//! alone so that every caller gets its own answer and no refusal undoes another's change. Async
//! callers wait without holding a thread.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use sled::transaction::{
    ConflictableTransactionResult, TransactionError, Transactional, TransactionalTree,
};
use tokio::sync::{oneshot, watch};

use crate::sled_gate;

/// A queued transaction over the trees the group commit was started with, in their order.
/// `Fn`, not `FnOnce`: sled runs it again after a conflict, and a round runs it alone again
/// after another's refusal.
type Work<E> = Box<dyn Fn(&[TransactionalTree]) -> ConflictableTransactionResult<(), E> + Send>;

/// What a queued transaction comes to: committed and flushed, refused, or failed.
type Outcome<E> = Result<(), TransactionError<E>>;

/// The committing thread of one database, its queue and the tickets of its callers.
pub(crate) struct GroupCommit<E> {
    shared: Arc<Shared<E>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared<E> {
    db: sled::Db,
    /// The trees a queued transaction sees, in the order given to [`GroupCommit::start`].
    trees: Vec<sled::Tree>,
    requests: Mutex<Requests<E>>,
    wake: Condvar,
    rounds: watch::Sender<Round>,
}

struct Requests<E> {
    /// Tickets handed out so far.
    issued: u64,
    queued: Vec<Change<E>>,
    stopping: bool,
}

struct Change<E> {
    work: Work<E>,
    answer: oneshot::Sender<Outcome<E>>,
}

/// The last flush done: every ticket up to `covers` was issued before it started.
#[derive(Clone, Default)]
struct Round {
    covers: u64,
    failure: Option<Arc<str>>,
}

impl<E: Send + 'static> GroupCommit<E> {
    /// Starts the committing thread of `db`, named `name`; queued transactions work on `trees`
    /// (all of `db`). The thread ends when this value is dropped.
    pub(crate) fn start(
        db: sled::Db,
        trees: Vec<sled::Tree>,
        name: &str,
    ) -> std::io::Result<GroupCommit<E>> {
        let shared = Arc::new(Shared {
            db,
            trees,
            requests: Mutex::new(Requests {
                issued: 0,
                queued: Vec::new(),
                stopping: false,
            }),
            wake: Condvar::new(),
            rounds: watch::Sender::new(Round::default()),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || worker.serve())?;
        Ok(GroupCommit {
            shared,
            thread: Some(thread),
        })
    }

    /// Runs `change` as a transaction in the next round, with other callers' changes, and
    /// returns its result once it is on disk. `change` gets the trees given to
    /// [`GroupCommit::start`], in their order; it may run more than once, and its result counts
    /// only from the run that committed.
    pub(crate) async fn commit<A, F>(&self, change: F) -> Result<A, TransactionError<E>>
    where
        A: Send + 'static,
        F: Fn(&[TransactionalTree]) -> ConflictableTransactionResult<A, E> + Send + 'static,
    {
        self.queue(change).outcome().await
    }

    /// Queues `change` like [`GroupCommit::commit`] and returns at once: changes queued one
    /// after the other commit in that order, so a caller that numbers its changes under a lock
    /// of its own queues them under it and waits outside.
    pub(crate) fn queue<A, F>(&self, change: F) -> Queued<A, E>
    where
        A: Send + 'static,
        F: Fn(&[TransactionalTree]) -> ConflictableTransactionResult<A, E> + Send + 'static,
    {
        let output = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&output);
        let work: Work<E> = Box::new(move |trees| {
            let value = change(trees)?;
            *lock(&slot) = Some(value);
            Ok(())
        });
        let (answer, answered) = oneshot::channel();
        self.shared.queue(Change { work, answer });
        Queued { output, answered }
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
        round_result(&round)
    }

    /// [`GroupCommit::flush`] for callers on a thread of their own.
    pub(crate) fn flush_blocking(&self) -> sled::Result<()> {
        futures::executor::block_on(self.flush())
    }
}

/// A change queued with [`GroupCommit::queue`]; its outcome once its round is done.
pub(crate) struct Queued<A, E> {
    output: Arc<Mutex<Option<A>>>,
    answered: oneshot::Receiver<Outcome<E>>,
}

impl<A, E> Queued<A, E> {
    /// The change's result, once it is on disk.
    pub(crate) async fn outcome(self) -> Result<A, TransactionError<E>> {
        self.answered
            .await
            .map_err(|_| TransactionError::Storage(stopped()))??;
        let value = lock(&self.output).take();
        // Committed means the work ran to its end, so the slot is filled.
        value.ok_or_else(|| {
            TransactionError::Storage(sled::Error::ReportableBug(
                "a committed change left no result".into(),
            ))
        })
    }

    /// [`Queued::outcome`] for callers on a thread of their own.
    pub(crate) fn outcome_blocking(self) -> Result<A, TransactionError<E>> {
        futures::executor::block_on(self.outcome())
    }
}

impl<E: Send + 'static> Shared<E> {
    fn requests(&self) -> MutexGuard<'_, Requests<E>> {
        lock(&self.requests)
    }

    fn ticket(&self) -> u64 {
        let mut requests = self.requests();
        requests.issued += 1;
        self.wake.notify_one();
        requests.issued
    }

    fn queue(&self, queued: Change<E>) {
        let mut requests = self.requests();
        if requests.stopping {
            // Dropping the answer tells the caller the thread has stopped.
            return;
        }
        requests.queued.push(queued);
        self.wake.notify_one();
    }

    fn serve(&self) {
        let mut covered = 0;
        loop {
            let (target, queued) = {
                let mut requests = self.requests();
                while requests.issued == covered && requests.queued.is_empty() && !requests.stopping
                {
                    requests = self
                        .wake
                        .wait(requests)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if requests.issued == covered && requests.queued.is_empty() {
                    return;
                }
                (requests.issued, std::mem::take(&mut requests.queued))
            };
            let outcomes = self.run(&queued);
            // A panic inside sled must not end this thread: every caller waits on it.
            let flushed = catch_unwind(AssertUnwindSafe(|| sled_gate::flush_blocking(&self.db)));
            let failure = match flushed {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(Arc::from(e.to_string())),
                Err(_) => Some(Arc::from("the flush panicked")),
            };
            covered = target;
            let round = Round {
                covers: target,
                failure,
            };
            for (queued, outcome) in queued.into_iter().zip(outcomes) {
                let outcome = outcome.and_then(|()| round_result(&round).map_err(Into::into));
                // A caller that gave up waiting has nobody to tell.
                let _ = queued.answer.send(outcome);
            }
            self.rounds.send_replace(round);
        }
    }

    /// Runs the queued transactions as one; if that is refused or fails, each on its own.
    fn run(&self, queued: &[Change<E>]) -> Vec<Outcome<E>> {
        if queued.len() > 1 {
            let together =
                self.transaction(|trees| queued.iter().try_for_each(|queued| (queued.work)(trees)));
            if together.is_ok() {
                return queued.iter().map(|_| Ok(())).collect();
            }
        }
        queued
            .iter()
            .map(|queued| self.transaction(|trees| (queued.work)(trees)))
            .collect()
    }

    fn transaction(
        &self,
        work: impl Fn(&[TransactionalTree]) -> ConflictableTransactionResult<(), E>,
    ) -> Outcome<E> {
        catch_unwind(AssertUnwindSafe(|| {
            let _gate = sled_gate::exclusive();
            self.trees
                .as_slice()
                .transaction(|trees: &Vec<TransactionalTree>| work(trees))
        }))
        .unwrap_or_else(|_| {
            Err(TransactionError::Storage(sled::Error::ReportableBug(
                "a queued transaction panicked".into(),
            )))
        })
    }
}

impl<E> Drop for GroupCommit<E> {
    /// Serves the tickets and transactions still open, then ends the thread, so that the
    /// database is closed (and its file lock released) once the last handle is gone.
    fn drop(&mut self) {
        {
            let mut requests = lock(&self.shared.requests);
            requests.stopping = true;
            self.shared.wake.notify_one();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn round_result(round: &Round) -> sled::Result<()> {
    match &round.failure {
        None => Ok(()),
        Some(e) => Err(sled::Error::Io(std::io::Error::other(e.to_string()))),
    }
}

fn stopped() -> sled::Error {
    sled::Error::Io(std::io::Error::other(
        "the store's committing thread has stopped",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sled::transaction::ConflictableTransactionError;

    fn open(dir: &std::path::Path) -> sled::Db {
        sled_gate::config(dir, 1 << 20).open().unwrap()
    }

    fn start(db: &sled::Db) -> GroupCommit<String> {
        let tree = db.open_tree("t").unwrap();
        GroupCommit::start(db.clone(), vec![tree], "test-commit").unwrap()
    }

    /// Inserts `key` unless it is there: a change that can be refused.
    fn insert_new(
        key: u32,
    ) -> impl Fn(&[TransactionalTree]) -> ConflictableTransactionResult<u32, String> {
        move |trees| {
            if trees[0].get(key.to_be_bytes())?.is_some() {
                return Err(ConflictableTransactionError::Abort(format!("{key} taken")));
            }
            trees[0].insert(&key.to_be_bytes(), &b"x"[..])?;
            Ok(key)
        }
    }

    #[tokio::test]
    async fn concurrent_callers_are_all_served_and_see_their_change() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let flusher = Arc::new(start(&db));
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn queued_changes_commit_together_and_a_refusal_undoes_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        db.open_tree("t")
            .unwrap()
            .insert(7u32.to_be_bytes(), &b"old"[..])
            .unwrap();
        let committer = Arc::new(start(&db));
        // Key 7 is taken, so its change is refused; the other 199 land, whichever round
        // they shared with it.
        let tasks: Vec<_> = (0..200u32)
            .map(|i| {
                let committer = Arc::clone(&committer);
                tokio::spawn(async move { committer.commit(insert_new(i)).await })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await.unwrap() {
                Ok(key) => assert_eq!(key, i as u32),
                Err(TransactionError::Abort(reason)) => {
                    assert_eq!((i, reason.as_str()), (7, "7 taken"))
                }
                Err(other) => panic!("change {i} failed: {other}"),
            }
        }
        drop(committer);
        drop(db);
        let tree = open(dir.path()).open_tree("t").unwrap();
        assert_eq!(tree.len(), 200);
        assert_eq!(tree.get(7u32.to_be_bytes()).unwrap().unwrap(), &b"old"[..]);
    }

    #[test]
    fn a_change_sees_the_changes_queued_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let committer = Arc::new(start(&db));
        // Two callers race for one key: exactly one wins, the other is told it is taken.
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..2)
                .map(|_| scope.spawn(|| committer.queue(insert_new(1)).outcome_blocking()))
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let won = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(won, 1, "{outcomes:?}");
    }

    #[test]
    fn dropping_it_ends_the_thread_and_closes_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = start(&open(dir.path()));
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
