//! The committing thread: rounds, refusals, after-commit steps, shutdown.

use super::*;
use sled::transaction::ConflictableTransactionError;

fn open(dir: &std::path::Path) -> sled::Db {
    sled_gate::config(dir, 1 << 20).open().unwrap()
}

/// The database in `dir` opened again once every handle of it is dropped. sled holds an
/// exclusive file lock while any handle lives; its own I/O threads let go of theirs a moment
/// after the last flush, so the first tries may fail (seen as a rare failure under load).
fn reopen(dir: &std::path::Path) -> sled::Db {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match sled_gate::config(dir, 1 << 20).open() {
            Ok(db) => return db,
            Err(e) if sled_gate::is_locked(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(e) => panic!("the database stayed open: {e}"),
        }
    }
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
    assert_eq!(reopen(dir.path()).len(), 200);
}

/// A blocking wait called inside a runtime's task that has used up its cooperative budget still
/// returns: tokio would defer the wake-up of such a task to its scheduler, which the blocked
/// thread never hands back to. (Seen as a test hanging after awaiting 200 finished tasks.)
#[tokio::test]
async fn a_blocking_wait_returns_inside_a_task_that_used_up_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let committer = start(&db);
    // Fails the run instead of hanging it, should the wait never return.
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if finished.recv_timeout(std::time::Duration::from_secs(120))
            == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        {
            eprintln!("a blocking wait inside a task never returned");
            std::process::abort();
        }
    });
    // A fresh budget (128 units per poll of a task), then all of it used.
    tokio::task::yield_now().await;
    for _ in 0..128 {
        tokio::task::consume_budget().await;
    }
    db.insert(1u32.to_be_bytes(), &b"x"[..]).unwrap();
    committer.flush_blocking().unwrap();
    assert_eq!(
        committer.queue(insert_new(2)).outcome_blocking().unwrap(),
        2
    );
    done.send(()).unwrap();
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
            tokio::spawn(async move { committer.commit(insert_new(i), || {}).await })
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
    let tree = reopen(dir.path()).open_tree("t").unwrap();
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
fn an_after_commit_step_may_drop_the_last_handle() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let holder = Arc::new(Mutex::new(Some(start(&db))));
    let taken = Arc::clone(&holder);
    let queued = lock(&holder).as_ref().unwrap().queue_then(
        insert_new(7),
        Some(Box::new(move || drop(lock(&taken).take()))),
    );
    // The committing thread dropped its own handle: it must neither wait for itself nor
    // leave the change unanswered.
    assert_eq!(queued.outcome_blocking().unwrap(), 7);
    assert!(lock(&holder).is_none());
    assert!(db
        .open_tree("t")
        .unwrap()
        .contains_key(7u32.to_be_bytes())
        .unwrap());
}

#[test]
fn a_panicking_after_commit_step_ends_neither_the_change_nor_the_thread() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let committer = start(&db);
    let queued = committer.queue_then(insert_new(1), Some(Box::new(|| panic!("step"))));
    assert_eq!(queued.outcome_blocking().unwrap(), 1);
    // The thread goes on serving.
    assert_eq!(
        committer.queue(insert_new(2)).outcome_blocking().unwrap(),
        2
    );
}

#[test]
fn the_after_commit_step_runs_for_committed_changes_even_if_nobody_waits() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let committer = start(&db);
    let counted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Key 1 twice: the second is refused. Each caller gives up after queueing its change: the
    // queued change is dropped unawaited (polling a `commit` once could already find it
    // answered, the committing thread being quicker than the test).
    for key in [1, 2, 1, 3] {
        let counted = Arc::clone(&counted);
        let step: Box<dyn FnOnce() + Send> = Box::new(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        drop(committer.queue_then(insert_new(key), Some(step)));
    }
    committer.flush_blocking().unwrap();
    assert_eq!(counted.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert_eq!(db.open_tree("t").unwrap().len(), 3);
}

#[test]
fn dropping_it_ends_the_thread_and_closes_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let flusher = start(&open(dir.path()));
    flusher.flush_blocking().unwrap();
    drop(flusher);
    reopen(dir.path());
}

/// sled's copy writes blind (`insert_blind`, `remove_blind`, see `vendor/sled/MELDEWERK.md`):
/// the transaction's own reads see such writes, and they commit as `insert` and `remove` do.
#[tokio::test]
async fn blind_writes_are_read_back_in_their_transaction_and_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let tree = db.open_tree("t").unwrap();
    tree.insert("gone", "old").unwrap();
    tree.insert("kept", "old").unwrap();
    let committer = start(&db);
    let seen = committer
        .commit(
            |trees| {
                let t = &trees[0];
                t.insert_blind("kept", "new")?;
                t.insert_blind("added", "new")?;
                t.remove_blind("gone")?;
                Ok((t.get("kept")?, t.get("added")?, t.get("gone")?))
            },
            || {},
        )
        .await
        .unwrap();
    let new = Some(sled::IVec::from("new"));
    assert_eq!(seen, (new.clone(), new.clone(), None));
    assert_eq!(tree.get("kept").unwrap(), new);
    assert_eq!(tree.get("added").unwrap(), new);
    assert_eq!(tree.get("gone").unwrap(), None);
}
