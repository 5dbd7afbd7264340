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
//! on return. Should one caller's change refuse (abort), it is taken out, the others run together
//! again, and it runs alone after them, so that every caller gets its own answer and no refusal
//! undoes another's change. A storage error fails the round's changes. Async callers wait
//! without holding a thread.

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
    /// The first storage error of a round (a failed flush, a transaction sled refused for its
    /// storage): sled 0.34 keeps it for good, so the database writes nothing from then on.
    write_failure: std::sync::OnceLock<String>,
}

struct Requests<E> {
    /// Tickets handed out so far.
    issued: u64,
    queued: Vec<Change<E>>,
    stopping: bool,
}

struct Change<E> {
    work: Work<E>,
    /// Run by the committing thread once the change is committed and flushed: what must follow
    /// a durable commit even if the caller stops waiting (a count kept beside the database).
    committed: Option<Box<dyn FnOnce() + Send>>,
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
            write_failure: std::sync::OnceLock::new(),
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
    /// only from the run that committed. `committed` runs on the committing thread as soon as
    /// the change is on disk, whether or not the caller still waits for its answer (for what
    /// must follow a commit, such as a count kept beside the database).
    pub(crate) async fn commit<A, F>(
        &self,
        change: F,
        committed: impl FnOnce() + Send + 'static,
    ) -> Result<A, TransactionError<E>>
    where
        A: Send + 'static,
        F: Fn(&[TransactionalTree]) -> ConflictableTransactionResult<A, E> + Send + 'static,
    {
        self.queue_then(change, Some(Box::new(committed)))
            .outcome()
            .await
    }

    /// Queues `change` like [`GroupCommit::commit`] and returns at once: changes queued one
    /// after the other commit in that order, so a caller that numbers its changes under a lock
    /// of its own queues them under it and waits outside.
    pub(crate) fn queue<A, F>(&self, change: F) -> Queued<A, E>
    where
        A: Send + 'static,
        F: Fn(&[TransactionalTree]) -> ConflictableTransactionResult<A, E> + Send + 'static,
    {
        self.queue_then(change, None)
    }

    /// [`GroupCommit::queue`] with a step run on the committing thread as soon as the change is
    /// on disk, whether or not anyone waits for the outcome (see
    /// [`GroupCommit::commit`]). A change that is refused or fails drops the step unrun.
    pub(crate) fn queue_then<A, F>(
        &self,
        change: F,
        committed: Option<Box<dyn FnOnce() + Send>>,
    ) -> Queued<A, E>
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
        self.shared.queue(Change {
            work,
            committed,
            answer,
        });
        Queued { output, answered }
    }

    /// The error of the write that failed, once one did: every later write fails too (see
    /// `reopen.rs`), whoever was waiting for it.
    pub(crate) fn write_failure(&self) -> Option<&str> {
        self.shared.write_failure.get().map(String::as_str)
    }

    /// The database it commits to.
    pub(crate) fn database(&self) -> &sled::Db {
        &self.shared.db
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
        block_on(self.flush())
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
        block_on(self.outcome())
    }
}

/// Waits for `future` on this thread. Unconstrained by tokio's cooperative budget: a caller
/// inside a runtime's task that has used its budget up would otherwise get its wake-up deferred
/// to the runtime's scheduler, which this blocked thread never hands back to, and wait forever.
fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(tokio::task::unconstrained(future))
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
            let mut queued = queued;
            let outcomes = self.run(&queued);
            // A panic inside sled must not end this thread: every caller waits on it.
            let flushed = catch_unwind(AssertUnwindSafe(|| sled_gate::flush_blocking(&self.db)));
            let failure: Option<Arc<str>> = match flushed {
                Ok(Ok(_)) => None,
                Ok(Err(e)) => Some(Arc::from(e.to_string())),
                Err(_) => Some(Arc::from("the flush panicked")),
            };
            // sled's own storage errors, not the ones this file makes of a panicking change.
            let refused_storage = outcomes.iter().find_map(|outcome| match outcome {
                Err(TransactionError::Storage(e))
                    if !matches!(e, sled::Error::ReportableBug(_)) =>
                {
                    Some(e.to_string())
                }
                _ => None,
            });
            if let Some(error) = failure.as_deref().map(str::to_owned).or(refused_storage) {
                let _ = self.write_failure.set(error);
            }
            // Steps follow what is on disk: after a failed flush the change may be lost with
            // the database's memory (see `reopen.rs`), and must not have been acted on.
            if failure.is_none() {
                for (change, outcome) in queued.iter_mut().zip(&outcomes) {
                    if let (Ok(()), Some(committed)) = (outcome, change.committed.take()) {
                        // Nor a panicking after-commit step: the change itself is committed.
                        if catch_unwind(AssertUnwindSafe(committed)).is_err() {
                            tracing::error!("a step after a commit panicked; the commit stands");
                        }
                    }
                }
            }
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

    /// Runs the queued changes as one transaction. A change that refuses (or panics) is taken
    /// out and the rest run together again; the ones taken out then run alone, after them, each
    /// for an answer of its own. A storage error fails them all: sled may have applied part of
    /// the transaction in memory, and running changes again on top of that could answer for
    /// writes that a restart would not find.
    fn run(&self, queued: &[Change<E>]) -> Vec<Outcome<E>> {
        let mut together: Vec<usize> = (0..queued.len()).collect();
        let mut alone = Vec::new();
        let mut outcomes: Vec<Option<Outcome<E>>> = queued.iter().map(|_| None).collect();
        while !together.is_empty() {
            if together.len() == 1 {
                alone.append(&mut together);
                break;
            }
            // The change running when the transaction ended early is the one that refused or
            // panicked.
            let refused = std::cell::Cell::new(None);
            let run = self.transaction(|trees| {
                together.iter().try_for_each(|&i| {
                    refused.set(Some(i));
                    (queued[i].work)(trees)
                })
            });
            match run {
                Ran::Done(Ok(())) => {
                    for &i in &together {
                        outcomes[i] = Some(Ok(()));
                    }
                    together.clear();
                }
                Ran::Done(Err(TransactionError::Storage(e))) => {
                    for &i in &together {
                        outcomes[i] = Some(Err(TransactionError::Storage(e.clone())));
                    }
                    together.clear();
                }
                Ran::Done(Err(TransactionError::Abort(_))) | Ran::Panicked => {
                    let Some(culprit) = refused.get() else {
                        // It ended before any change started (inside sled): each on its own.
                        alone.append(&mut together);
                        break;
                    };
                    together.retain(|&i| i != culprit);
                    alone.push(culprit);
                }
            }
        }
        alone.sort_unstable();
        for i in alone {
            outcomes[i] = Some(match self.transaction(|trees| (queued[i].work)(trees)) {
                Ran::Done(outcome) => outcome,
                Ran::Panicked => Err(TransactionError::Storage(sled::Error::ReportableBug(
                    "a queued change panicked".into(),
                ))),
            });
        }
        outcomes
            .into_iter()
            .map(|outcome| {
                outcome.unwrap_or_else(|| {
                    Err(TransactionError::Storage(sled::Error::ReportableBug(
                        "a queued change was never run".into(),
                    )))
                })
            })
            .collect()
    }

    fn transaction(
        &self,
        work: impl Fn(&[TransactionalTree]) -> ConflictableTransactionResult<(), E>,
    ) -> Ran<E> {
        catch_unwind(AssertUnwindSafe(|| {
            let _gate = sled_gate::exclusive();
            self.trees
                .as_slice()
                .transaction(|trees: &Vec<TransactionalTree>| work(trees))
        }))
        .map_or(Ran::Panicked, Ran::Done)
    }
}

/// How one sled transaction of the committing thread ended.
enum Ran<E> {
    Done(Outcome<E>),
    Panicked,
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
            // An after-commit step may hold the last handle: the thread then ends by itself.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
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
mod tests;
