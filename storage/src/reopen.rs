//! A database that survives its own failure: once a write fails (a full disk, a file system gone
//! read-only), the open database is let go and opened again from disk, by itself, as soon as the
//! disk takes writes again.
//!
//! Why reopen rather than retry: sled 0.34 remembers the first I/O error of a database for good
//! (its "global error") and fails every later write with it, so a database that once met a full
//! disk never writes again. And its memory may hold what the failed write was about to make
//! durable: a transaction is applied in memory before the flush that failed, so reads would
//! answer for a change the disk never got (a refused submission read back as `PENDING`, a
//! retry answered "already sent", and the report gone after a restart). Reopening reads the
//! disk, which holds exactly what was answered as done.
//!
//! While it is failed, every caller is refused at once with the failure (a
//! [`Failure`]), reads included, so that nobody is answered from the memory of the failed
//! database. A thread of its own tries to open the database again, with a growing pause (up to
//! [`MAX_PAUSE`]); an open counts only once a write and flush went through (`open` is expected
//! to prove that), so that a disk still full keeps the failure standing instead of failing every
//! few writes anew.

use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// Longest pause between two attempts to open the database again.
const MAX_PAUSE: Duration = Duration::from_secs(5);
/// First pause after a failure: a full disk is rarely freed within it, but a file lock held a
/// moment longer by the failed database's threads is.
const FIRST_PAUSE: Duration = Duration::from_millis(100);

/// Why a database cannot be used right now, and since when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// When the write failed that took the database out.
    pub since: DateTime<Utc>,
    /// The error of that write.
    pub reason: String,
}

/// What a database held by [`Reopening`] says about its writes.
pub(crate) trait WriteFailure {
    /// The error of a write that failed, once one did (whoever waited for it, or nobody):
    /// from then on the database is taken out at the next call.
    fn write_failure(&self) -> Option<String>;
}

/// Opens the database anew; an error is the reason it cannot be used yet.
type Open<T> = Box<dyn Fn() -> Result<T, String> + Send + Sync>;

/// The database in use (`T` holds every handle of it), or why there is none.
pub(crate) struct Reopening<T> {
    shared: Arc<Shared<T>>,
}

struct Shared<T> {
    /// What the log calls it: `store`, `journal xpersonenstand`.
    what: String,
    slot: RwLock<Slot<T>>,
    open: Open<T>,
}

enum Slot<T> {
    Open(Arc<T>),
    Failed(Failure),
}

impl<T: WriteFailure + Send + Sync + 'static> Reopening<T> {
    /// Wraps the database `first`, opened by `open` (which it calls again after a failure).
    pub(crate) fn new(what: impl Into<String>, first: T, open: Open<T>) -> Self {
        Reopening {
            shared: Arc::new(Shared {
                what: what.into(),
                slot: RwLock::new(Slot::Open(Arc::new(first))),
                open,
            }),
        }
    }

    /// The database to work on, or why there is none. Hold it only for one operation: a failed
    /// database is let go once the last operation on it has ended.
    pub(crate) fn current(&self) -> Result<Arc<T>, Failure> {
        let engine = match &*self
            .shared
            .slot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
        {
            Slot::Open(engine) => Arc::clone(engine),
            Slot::Failed(failure) => return Err(failure.clone()),
        };
        // A write nobody waited for may have failed: its memory must not answer either.
        if let Some(reason) = engine.write_failure() {
            self.failed(&engine, &reason);
            return Err(self.failure().unwrap_or(Failure {
                since: Utc::now(),
                reason,
            }));
        }
        Ok(engine)
    }

    /// Whether it is failed, and why.
    pub(crate) fn failure(&self) -> Option<Failure> {
        self.current().err()
    }

    /// `engine` failed to write: from now on nobody is answered from it, and the database is
    /// opened again once it can be. A failure of an engine already replaced changes nothing.
    pub(crate) fn failed(&self, engine: &Arc<T>, reason: &str) {
        {
            let mut slot = self
                .shared
                .slot
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            match &*slot {
                Slot::Open(current) if Arc::ptr_eq(current, engine) => {}
                _ => return,
            }
            *slot = Slot::Failed(Failure {
                since: Utc::now(),
                reason: reason.to_string(),
            });
        }
        tracing::error!(
            what = %self.shared.what,
            error = %reason,
            "a write failed: refusing every request until the database is opened again from disk \
             (it is tried by itself, as soon as the disk takes writes)"
        );
        let shared = Arc::downgrade(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("store-reopen".into())
            .spawn(move || reopen(shared));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the thread that reopens the database");
        }
    }
}

/// Tries to open the database again until it works or the database is no longer wanted.
fn reopen<T: WriteFailure + Send + Sync + 'static>(shared: Weak<Shared<T>>) {
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_PAUSE);
        // Gone: the service stopped meanwhile.
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match (shared.open)() {
            Ok(engine) => {
                *shared.slot.write().unwrap_or_else(PoisonError::into_inner) =
                    Slot::Open(Arc::new(engine));
                tracing::warn!(
                    what = %shared.what,
                    after_secs = started.elapsed().as_secs(),
                    "the database was opened again from disk and takes writes; requests are served again"
                );
                return;
            }
            // The failure keeps the error of the write that failed: an attempt refused because the
            // failed database still holds its lock would only mislead an operator.
            Err(reason) => {
                tracing::debug!(what = %shared.what, error = %reason, "the database cannot be opened yet");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    impl WriteFailure for usize {
        fn write_failure(&self) -> Option<String> {
            None
        }
    }

    /// A database whose write fails in the background once its mutex holds an error.
    struct Background(Arc<std::sync::Mutex<Option<String>>>);

    impl WriteFailure for Background {
        fn write_failure(&self) -> Option<String> {
            self.0.lock().unwrap().clone()
        }
    }

    #[test]
    fn a_write_that_failed_in_the_background_takes_the_database_out_at_the_next_call() {
        let failing = Arc::new(std::sync::Mutex::new(None));
        let open_again: Open<Background> = Box::new(|| Err("disk full".into()));
        let db = Reopening::new("test", Background(failing.clone()), open_again);
        assert!(db.current().is_ok());
        *failing.lock().unwrap() = Some("No space left on device".into());
        let failure = db.current().err().expect("refused");
        assert_eq!(failure.reason, "No space left on device");
        assert!(db.failure().is_some());
    }

    /// An "engine" that counts how often it was opened; opens fail while `refuse` says so.
    fn counting(refuse: Arc<AtomicUsize>) -> (Reopening<usize>, Arc<AtomicUsize>) {
        let opened = Arc::new(AtomicUsize::new(1));
        let count = Arc::clone(&opened);
        let open: Open<usize> = Box::new(move || {
            if refuse.load(Ordering::SeqCst) > 0 {
                refuse.fetch_sub(1, Ordering::SeqCst);
                return Err("disk full".into());
            }
            Ok(count.fetch_add(1, Ordering::SeqCst) + 1)
        });
        (Reopening::new("test", 1, open), opened)
    }

    fn wait_open(db: &Reopening<usize>) -> Arc<usize> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(engine) = db.current() {
                return engine;
            }
            assert!(Instant::now() < deadline, "never reopened");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_failed_database_refuses_everyone_until_it_is_opened_again() {
        let (db, opened) = counting(Arc::new(AtomicUsize::new(2)));
        let first = db.current().unwrap();
        db.failed(&first, "No space left on device");
        let failure = db.failure().expect("failed");
        assert_eq!(failure.reason, "No space left on device");
        // Two opens are refused, the third takes.
        let engine = wait_open(&db);
        assert_eq!(*engine, 2);
        assert_eq!(opened.load(Ordering::SeqCst), 2);
        assert!(db.failure().is_none());
    }

    #[test]
    fn a_failure_of_a_replaced_engine_changes_nothing() {
        let (db, _) = counting(Arc::new(AtomicUsize::new(0)));
        let first = db.current().unwrap();
        db.failed(&first, "io");
        let second = wait_open(&db);
        // A late report about the first engine must not take the second out.
        db.failed(&first, "io");
        assert!(db.failure().is_none());
        assert!(Arc::ptr_eq(&second, &db.current().unwrap()));
    }
}
