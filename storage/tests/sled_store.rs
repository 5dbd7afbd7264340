//! Behaviour of the engines against the `Store` contract (users, reports, the outbox, retention),
//! and what is the sled engine's own (its lock on the data directory, its size on disk).

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use meldewerk_storage::{
    AfterDelivery, Consumed, Job, JobKind, Outcome, Receipt, Report, ReportKey, ReportResult,
    ReportStatus, SledStore, Store, StoreError,
};

mod common;
use common::engines::Place;
use common::{message, t, user};

const MODULE: &str = "birthnotice";

fn key(owner: &str, module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: owner.into(),
        module: module.into(),
        id: id.into(),
    }
}

fn report(owner: &str, module: &str, id: &str) -> Report {
    Report::new_pending(
        key(owner, module, id),
        serde_json::json!({ "child": { "name": "Erika" } }),
        Some("ref-1".into()),
        format!("idem-{owner}-{id}"),
        t(0),
    )
}

/// A job value for `report`, as a caller holding no job from the store would make it.
fn job_for(report: ReportKey) -> Job {
    Job {
        id: 999,
        report,
        kind: JobKind::Deliver,
        attempts: 0,
        not_before: t(0),
        last_error: None,
    }
}

fn acknowledged() -> Outcome {
    Outcome::Success {
        receipt: Receipt::pdf(b"%PDF-1.7".to_vec()),
        portal: Some("portal-a".into()),
    }
}

/// Submits a report and records a successful outcome for it, leaving it final and unpolled.
async fn final_report(store: &dyn Store, owner: &str, id: &str, finished_at: DateTime<Utc>) {
    let job = store
        .dispatch_report(report(owner, MODULE, id))
        .await
        .unwrap();
    store
        .record_outcome(&job, acknowledged(), finished_at)
        .await
        .unwrap();
}

fn far_future() -> DateTime<Utc> {
    Utc::now() + Duration::days(365)
}

async fn users_create_update_remove_list(place: Place) {
    let store = place.open().await;
    store.create_user(user("bob", "k-bob")).await.unwrap();
    store.create_user(user("alice", "k-alice-1")).await.unwrap();

    let err = store
        .create_user(user("alice", "k-other"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    // The rejected record must not have left its key id behind.
    assert_eq!(store.user_by_key_id("k-other").await.unwrap(), None);

    assert_eq!(
        store.user("alice").await.unwrap(),
        Some(user("alice", "k-alice-1"))
    );
    assert_eq!(store.user("nobody").await.unwrap(), None);
    assert_eq!(
        store
            .user_by_key_id("k-alice-1")
            .await
            .unwrap()
            .unwrap()
            .name,
        "alice"
    );

    let mut changed = user("alice", "k-alice-2");
    changed.customer = Some("C-42".into());
    store.update_user(changed.clone()).await.unwrap();
    assert_eq!(store.user("alice").await.unwrap(), Some(changed.clone()));
    assert_eq!(store.user_by_key_id("k-alice-1").await.unwrap(), None);
    assert_eq!(
        store.user_by_key_id("k-alice-2").await.unwrap(),
        Some(changed)
    );

    let err = store
        .update_user(user("carol", "k-carol"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    assert_eq!(store.user_by_key_id("k-carol").await.unwrap(), None);

    let names: Vec<_> = store
        .users()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.name)
        .collect();
    assert_eq!(names, ["alice", "bob"]);

    assert!(store.remove_user("bob").await.unwrap());
    assert!(!store.remove_user("bob").await.unwrap());
    assert_eq!(store.user("bob").await.unwrap(), None);
    assert_eq!(store.user_by_key_id("k-bob").await.unwrap(), None);
    assert_eq!(store.users().await.unwrap().len(), 1);
}

async fn user_key_id_clash_is_a_conflict(place: Place) {
    let store = place.open().await;
    store.create_user(user("alice", "k-1")).await.unwrap();
    store.create_user(user("bob", "k-2")).await.unwrap();
    let err = store.create_user(user("carol", "k-1")).await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    let err = store.update_user(user("bob", "k-1")).await.unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    assert_eq!(
        store.user_by_key_id("k-1").await.unwrap().unwrap().name,
        "alice"
    );
    assert_eq!(
        store.user_by_key_id("k-2").await.unwrap().unwrap().name,
        "bob"
    );
}

async fn submit_queues_a_deliver_job_and_rejects_duplicates(place: Place) {
    let store = place.open().await;
    let submitted = report("alice", MODULE, "r1");
    let job = store.dispatch_report(submitted.clone()).await.unwrap();
    assert_eq!(job.kind, JobKind::Deliver);
    assert_eq!(job.attempts, 0);
    assert_eq!(job.report, submitted.key);
    assert_eq!(job.last_error, None);

    assert_eq!(
        store.report(&submitted.key).await.unwrap(),
        Some(submitted.clone())
    );
    assert_eq!(store.outbox_len().await.unwrap(), 1);
    assert_eq!(
        store.due_jobs(far_future(), 10, &|_| false).await.unwrap(),
        vec![job.clone()]
    );

    let err = store
        .dispatch_report(report("alice", MODULE, "r1"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");
    // The failed submission left nothing behind.
    assert_eq!(store.outbox_len().await.unwrap(), 1);
    assert_eq!(store.pending_ids("alice", MODULE).await.unwrap(), ["r1"]);

    // A consumed report still blocks its id.
    store
        .record_outcome(&job, acknowledged(), t(10))
        .await
        .unwrap();
    assert!(matches!(
        store.consume_report(&submitted.key).await.unwrap(),
        Consumed::Result(_)
    ));
    let err = store
        .dispatch_report(report("alice", MODULE, "r1"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict(_)), "{err:?}");

    // The same id under another owner or module is another report.
    store
        .dispatch_report(report("bob", MODULE, "r1"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice", "other", "r1"))
        .await
        .unwrap();
    let second = store
        .dispatch_report(report("alice", MODULE, "r2"))
        .await
        .unwrap();
    assert!(second.id > job.id, "job ids increase");
}

async fn pending_ids_are_per_owner_and_module(place: Place) {
    let store = place.open().await;
    for id in ["c", "a", "b"] {
        store
            .dispatch_report(report("alice", MODULE, id))
            .await
            .unwrap();
    }
    store
        .dispatch_report(report("alice", "deathnotice", "x"))
        .await
        .unwrap();
    store
        .dispatch_report(report("bob", MODULE, "z"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice2", MODULE, "y"))
        .await
        .unwrap();

    assert_eq!(
        store.pending_ids("alice", MODULE).await.unwrap(),
        ["a", "b", "c"]
    );
    assert_eq!(
        store.pending_ids("alice", "deathnotice").await.unwrap(),
        ["x"]
    );
    assert_eq!(store.pending_ids("bob", MODULE).await.unwrap(), ["z"]);
    assert_eq!(store.pending_ids("alice2", MODULE).await.unwrap(), ["y"]);
    assert!(store.pending_ids("carol", MODULE).await.unwrap().is_empty());
}

async fn reports_with_id_finds_every_owner(place: Place) {
    let store = place.open().await;
    store
        .dispatch_report(report("bob", MODULE, "r1"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice", MODULE, "r1"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice", MODULE, "r1\0x"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice", MODULE, "r10"))
        .await
        .unwrap();
    store
        .dispatch_report(report("alice", "other", "r1"))
        .await
        .unwrap();

    assert_eq!(
        store.reports_with_id(MODULE, "r1").await.unwrap(),
        vec![key("alice", MODULE, "r1"), key("bob", MODULE, "r1")]
    );
    assert!(store
        .reports_with_id(MODULE, "nope")
        .await
        .unwrap()
        .is_empty());
}

async fn peek_changes_nothing(place: Place) {
    let store = place.open().await;
    let k = key("alice", MODULE, "r1");
    final_report(&*store, "alice", "r1", t(10)).await;
    let before = store.report(&k).await.unwrap().unwrap();
    assert_eq!(before.status, ReportStatus::Success);
    for _ in 0..3 {
        assert_eq!(store.report(&k).await.unwrap().as_ref(), Some(&before));
    }
    assert!(!before.polled);
    assert_eq!(store.pending_ids("alice", MODULE).await.unwrap(), ["r1"]);
    assert_eq!(
        store.report(&key("alice", MODULE, "nope")).await.unwrap(),
        None
    );
}

/// The poll's reduced read must answer exactly what the full report says, in every state.
async fn report_result_is_the_report_reduced(place: Place) {
    let store = place.open().await;
    let pending = store
        .dispatch_report(report("alice", MODULE, "pending"))
        .await
        .unwrap();
    store.record_prepared(&pending, message("m")).await.unwrap();
    final_report(&*store, "alice", "success", t(10)).await;
    final_report(&*store, "alice", "consumed", t(10)).await;
    store
        .consume_report(&key("alice", MODULE, "consumed"))
        .await
        .unwrap();
    final_report(&*store, "alice", "expired", t(1)).await;
    assert_eq!(store.expire_finished_before(MODULE, t(5)).await.unwrap(), 1);
    let failed = store
        .dispatch_report(report("alice", MODULE, "failed"))
        .await
        .unwrap();
    let reason = Outcome::Failure {
        reason: "rejected".into(),
    };
    store.record_outcome(&failed, reason, t(5)).await.unwrap();

    for id in ["pending", "success", "consumed", "expired", "failed"] {
        let k = key("alice", MODULE, id);
        let full = store.report(&k).await.unwrap().unwrap();
        let reduced = store.report_result(&k).await.unwrap().unwrap();
        assert_eq!(reduced, ReportResult::from(&full), "{id}");
    }
    let success = store
        .report_result(&key("alice", MODULE, "success"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(success.receipt_base64.as_deref(), Some("JVBERi0xLjc="));
    assert_eq!(
        store
            .report_result(&key("alice", MODULE, "nope"))
            .await
            .unwrap(),
        None
    );
}

async fn consume_follows_the_poll_rules(place: Place) {
    let store = place.open().await;
    assert_eq!(
        store
            .consume_report(&key("alice", MODULE, "nope"))
            .await
            .unwrap(),
        Consumed::NotFound
    );

    // A pending report is returned but stays pending and unpolled.
    let pending = report("alice", MODULE, "p");
    store.dispatch_report(pending.clone()).await.unwrap();
    for _ in 0..2 {
        assert_eq!(
            store.consume_report(&pending.key).await.unwrap(),
            Consumed::Result(ReportResult::from(&pending))
        );
    }
    assert_eq!(
        store.report(&pending.key).await.unwrap(),
        Some(pending.clone())
    );

    // A final report is consumed once.
    let k = key("alice", MODULE, "f");
    final_report(&*store, "alice", "f", t(10)).await;
    assert_eq!(
        store.pending_ids("alice", MODULE).await.unwrap(),
        ["f", "p"]
    );
    let Consumed::Result(got) = store.consume_report(&k).await.unwrap() else {
        panic!("final report not returned");
    };
    assert_eq!(got.status, ReportStatus::Success);
    // "%PDF-1.7" in base64, as results carry it.
    assert_eq!(got.receipt_base64.as_deref(), Some("JVBERi0xLjc="));
    assert!(got.polled);
    assert_eq!(store.pending_ids("alice", MODULE).await.unwrap(), ["p"]);
    assert_eq!(
        store.consume_report(&k).await.unwrap(),
        Consumed::AlreadyRetrieved
    );
    assert!(store.report(&k).await.unwrap().unwrap().polled);

    // An expired report says so, consumed or not.
    final_report(&*store, "alice", "e", t(10)).await;
    assert_eq!(
        store.expire_finished_before(MODULE, t(20)).await.unwrap(),
        2
    );
    assert_eq!(
        store
            .consume_report(&key("alice", MODULE, "e"))
            .await
            .unwrap(),
        Consumed::Expired
    );
    assert_eq!(store.consume_report(&k).await.unwrap(), Consumed::Expired);
}

async fn concurrent_consumers_get_a_final_report_once(place: Place) {
    let store = place.open().await;
    let k = key("alice", MODULE, "race");
    final_report(&*store, "alice", "race", t(10)).await;

    let start = Arc::new(tokio::sync::Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            let k = k.clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                store.consume_report(&k).await.unwrap()
            })
        })
        .collect();
    let mut reports = 0;
    let mut already = 0;
    for task in tasks {
        match task.await.unwrap() {
            Consumed::Result(_) => reports += 1,
            Consumed::AlreadyRetrieved => already += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((reports, already), (1, 15));
    assert!(store.pending_ids("alice", MODULE).await.unwrap().is_empty());
}

/// Each thread with a runtime of its own, as the HTTP workers have theirs.
async fn concurrent_threads_get_a_final_report_once(place: Place) {
    let store = place.open().await;
    let k = key("alice", MODULE, "race");
    final_report(&*store, "alice", "race", t(10)).await;

    let start = Arc::new(std::sync::Barrier::new(16));
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let store = store.clone();
            let k = k.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                // Timers on: the PostgreSQL engine's pool times its waits.
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                start.wait();
                rt.block_on(store.consume_report(&k)).unwrap()
            })
        })
        .collect();
    let got: Vec<_> = tokio::task::spawn_blocking(move || {
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let reports = got
        .iter()
        .filter(|c| matches!(c, Consumed::Result(_)))
        .count();
    let already = got
        .iter()
        .filter(|c| matches!(c, Consumed::AlreadyRetrieved))
        .count();
    assert_eq!((reports, already), (1, 15));
}

async fn outbox_lifecycle(place: Place) {
    let store = place.open().await;
    let k = key("alice", MODULE, "r1");
    let job = store
        .dispatch_report(report("alice", MODULE, "r1"))
        .await
        .unwrap();

    let due = store.due_jobs(far_future(), 10, &|_| false).await.unwrap();
    assert_eq!(due, vec![job.clone()]);

    let first = store.begin_attempt(&job).await.unwrap();
    assert_eq!(first.attempts, 1);
    // A copy the job has moved on from is not worked again: another run has it.
    assert!(matches!(
        store.begin_attempt(&job).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.begin_attempt_with_message(&job, message("m-0")).await,
        Err(StoreError::NotFound(_))
    ));
    let second = store.begin_attempt(&first).await.unwrap();
    assert_eq!(second.attempts, 2);
    assert_eq!(
        store.due_jobs(far_future(), 10, &|_| false).await.unwrap(),
        vec![second.clone()]
    );

    let kept = store.record_prepared(&job, message("m-1")).await.unwrap();
    assert_eq!(kept, message("m-1"));
    let again = store.record_prepared(&job, message("m-2")).await.unwrap();
    assert_eq!(again, message("m-1"), "a retry delivers the first message");
    assert_eq!(
        store.report(&k).await.unwrap().unwrap().message,
        Some(message("m-1"))
    );

    let delivered_at = t(100);
    let ack_due = t(200);
    store
        .record_delivered(
            &second,
            "sim",
            Some("transport-7".into()),
            delivered_at,
            AfterDelivery::AwaitAck { resend_at: ack_due },
        )
        .await
        .unwrap();
    let stored = store.report(&k).await.unwrap().unwrap();
    assert_eq!(stored.transport_ref.as_deref(), Some("transport-7"));
    assert_eq!(stored.delivered_at, Some(delivered_at));
    assert_eq!(stored.status, ReportStatus::Pending);
    assert_eq!(store.outbox_len().await.unwrap(), 1);

    assert!(store
        .due_jobs(t(199), 10, &|_| false)
        .await
        .unwrap()
        .is_empty());
    let awaiting = store.due_jobs(ack_due, 10, &|_| false).await.unwrap();
    assert_eq!(
        awaiting,
        vec![Job {
            id: job.id,
            report: k.clone(),
            kind: JobKind::AwaitAck,
            attempts: 0,
            not_before: ack_due,
            last_error: None,
        }]
    );
    let awaiting = store.begin_attempt(&awaiting[0]).await.unwrap();
    assert_eq!(awaiting.attempts, 1);

    store
        .reschedule(&awaiting, t(300), Some("not yet acknowledged".into()))
        .await
        .unwrap();
    assert!(store
        .due_jobs(t(299), 10, &|_| false)
        .await
        .unwrap()
        .is_empty());
    let rescheduled = store.due_jobs(t(300), 10, &|_| false).await.unwrap();
    assert_eq!(rescheduled.len(), 1);
    assert_eq!(rescheduled[0].not_before, t(300));
    assert_eq!(rescheduled[0].attempts, 1);
    assert_eq!(rescheduled[0].kind, JobKind::AwaitAck);
    assert_eq!(
        rescheduled[0].last_error.as_deref(),
        Some("not yet acknowledged")
    );
    assert_eq!(store.outbox_len().await.unwrap(), 1);

    store
        .record_outcome(&rescheduled[0], acknowledged(), t(400))
        .await
        .unwrap();
    assert_eq!(store.outbox_len().await.unwrap(), 0);
    assert!(store
        .due_jobs(far_future(), 10, &|_| false)
        .await
        .unwrap()
        .is_empty());
    let done = store.report(&k).await.unwrap().unwrap();
    assert_eq!(done.status, ReportStatus::Success);
    assert_eq!(done.receipt.as_deref(), Some(&b"%PDF-1.7"[..]));
    assert_eq!(done.portal.as_deref(), Some("portal-a"));
    assert_eq!(done.finished_at, Some(t(400)));
    assert_eq!(done.message, Some(message("m-1")));
    // Final but not consumed: still listed.
    assert_eq!(store.pending_ids("alice", MODULE).await.unwrap(), ["r1"]);

    // The job is gone: every job operation says so, and the outcome is not recorded twice.
    for err in [
        store.begin_attempt(&job).await.unwrap_err(),
        store.reschedule(&job, t(500), None).await.unwrap_err(),
        store
            .record_delivered(
                &job,
                "sim",
                Some("x".into()),
                t(500),
                AfterDelivery::AwaitAck { resend_at: t(600) },
            )
            .await
            .unwrap_err(),
        store
            .record_outcome(
                &job,
                Outcome::Failure {
                    reason: "late".into(),
                },
                t(500),
            )
            .await
            .unwrap_err(),
    ] {
        assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    }
    assert_eq!(store.report(&k).await.unwrap().unwrap(), done);
}

async fn failure_outcome_records_the_reason(place: Place) {
    let store = place.open().await;
    let k = key("alice", MODULE, "r1");
    let job = store
        .dispatch_report(report("alice", MODULE, "r1"))
        .await
        .unwrap();
    store
        .record_outcome(
            &job,
            Outcome::Failure {
                reason: "rejected".into(),
            },
            t(5),
        )
        .await
        .unwrap();
    let done = store.report(&k).await.unwrap().unwrap();
    assert_eq!(done.status, ReportStatus::Failure);
    assert_eq!(done.failure_reason.as_deref(), Some("rejected"));
    assert_eq!(done.finished_at, Some(t(5)));
    assert_eq!(done.receipt, None);
    assert_eq!(store.outbox_len().await.unwrap(), 0);

    let err = store
        .record_prepared(&job_for(key("alice", MODULE, "nope")), message("m"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

async fn due_jobs_come_oldest_first_up_to_the_limit(place: Place) {
    let store = place.open().await;
    let mut jobs = Vec::new();
    for id in ["a", "b", "c", "d"] {
        jobs.push(
            store
                .dispatch_report(report("alice", MODULE, id))
                .await
                .unwrap(),
        );
    }
    // Spread them over time, out of submission order; one before 1970 sorts first.
    let times = [t(30), Utc.timestamp_opt(-100, 0).unwrap(), t(10), t(20)];
    for (job, at) in jobs.iter().zip(times) {
        store.reschedule(job, at, None).await.unwrap();
    }
    let order = |due: Vec<Job>| due.into_iter().map(|j| j.report.id).collect::<Vec<_>>();
    assert_eq!(
        order(store.due_jobs(t(100), 10, &|_| false).await.unwrap()),
        ["b", "c", "d", "a"]
    );
    assert_eq!(
        order(store.due_jobs(t(100), 2, &|_| false).await.unwrap()),
        ["b", "c"]
    );
    assert_eq!(
        order(store.due_jobs(t(20), 10, &|_| false).await.unwrap()),
        ["b", "c", "d"]
    );
    assert!(store
        .due_jobs(t(100), 0, &|_| false)
        .await
        .unwrap()
        .is_empty());
    // Sub-millisecond precision: a job due half a millisecond after `now` is not due.
    let precise = t(50) + Duration::microseconds(500);
    store.reschedule(&jobs[0], precise, None).await.unwrap();
    assert_eq!(
        order(store.due_jobs(t(50), 10, &|_| false).await.unwrap()),
        ["b", "c", "d"]
    );
    assert_eq!(
        order(store.due_jobs(precise, 10, &|_| false).await.unwrap()),
        ["b", "c", "d", "a"]
    );
    assert_eq!(store.outbox_len().await.unwrap(), 4);
}

async fn expiry_removes_payload_of_old_final_reports(place: Place) {
    let store = place.open().await;
    final_report(&*store, "alice", "old", t(10)).await;
    final_report(&*store, "alice", "recent", t(100)).await;
    store
        .dispatch_report(report("alice", MODULE, "pending"))
        .await
        .unwrap();
    let old = key("alice", MODULE, "old");
    store
        .record_prepared(&job_for(old.clone()), message("m"))
        .await
        .unwrap();

    // Retention is per module: another module's sweep leaves these reports alone.
    assert_eq!(
        store
            .expire_finished_before("deathnotice", t(50))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store.expire_finished_before(MODULE, t(50)).await.unwrap(),
        1
    );
    let expired = store.report(&old).await.unwrap().unwrap();
    assert!(expired.expired_at.is_some());
    assert_eq!(expired.submission, None);
    assert_eq!(expired.message, None);
    assert_eq!(expired.receipt, None);
    assert_eq!(expired.status, ReportStatus::Success);
    assert_eq!(expired.finished_at, Some(t(10)));
    assert_eq!(
        store.pending_ids("alice", MODULE).await.unwrap(),
        ["pending", "recent"]
    );
    assert_eq!(store.consume_report(&old).await.unwrap(), Consumed::Expired);

    // Already expired reports are not counted again; pending ones are never expired.
    assert_eq!(
        store.expire_finished_before(MODULE, t(50)).await.unwrap(),
        0
    );
    assert_eq!(
        store
            .expire_finished_before(MODULE, far_future())
            .await
            .unwrap(),
        1
    );
    let pending = store
        .report(&key("alice", MODULE, "pending"))
        .await
        .unwrap()
        .unwrap();
    assert!(pending.expired_at.is_none());
    assert!(pending.submission.is_some());
    assert_eq!(
        store.pending_ids("alice", MODULE).await.unwrap(),
        ["pending"]
    );
}

/// What only sled has beside the contract test below: the changes are in its files.
#[tokio::test]
async fn changes_take_room_in_the_database_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("db")).unwrap();
    store.create_user(user("alice", "k-1")).await.unwrap();
    store
        .dispatch_report(report("alice", MODULE, "new"))
        .await
        .unwrap();
    assert!(store.size_on_disk().unwrap() > 0);
}

/// Users, reports, messages and jobs are all there after a reopen, and ids keep increasing.
async fn state_survives_reopening(place: Place) {
    let (job, awaiting_id) = {
        let store = place.open().await;
        store.create_user(user("alice", "k-1")).await.unwrap();
        final_report(&*store, "alice", "done", t(10)).await;
        let awaiting = store
            .dispatch_report(report("alice", MODULE, "sent"))
            .await
            .unwrap();
        store
            .record_prepared(&awaiting, message("m-1"))
            .await
            .unwrap();
        store
            .record_delivered(
                &awaiting,
                "sim",
                Some("tr-1".into()),
                t(20),
                AfterDelivery::AwaitAck { resend_at: t(30) },
            )
            .await
            .unwrap();
        let job = store
            .dispatch_report(report("alice", MODULE, "new"))
            .await
            .unwrap();
        let job = store.begin_attempt(&job).await.unwrap();
        (job, awaiting.id)
    };

    let store = place.open().await;
    assert_eq!(
        store.user("alice").await.unwrap(),
        Some(user("alice", "k-1"))
    );
    assert_eq!(
        store.user_by_key_id("k-1").await.unwrap().unwrap().name,
        "alice"
    );
    assert_eq!(
        store.pending_ids("alice", MODULE).await.unwrap(),
        ["done", "new", "sent"]
    );
    let sent = store
        .report(&key("alice", MODULE, "sent"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(sent.message, Some(message("m-1")));
    assert_eq!(sent.transport_ref.as_deref(), Some("tr-1"));
    let due = store.due_jobs(far_future(), 10, &|_| false).await.unwrap();
    assert_eq!(due.len(), 2);
    assert!(due.contains(&job));
    // The backlog count is taken from the reopened outbox: "done" finished, two jobs remain.
    assert_eq!(store.outbox_len().await.unwrap(), 2);
    assert!(due
        .iter()
        .any(|j| j.id == awaiting_id && j.kind == JobKind::AwaitAck));

    // Ids keep increasing across restarts, so a new job never takes an old one's place.
    let newer = store
        .dispatch_report(report("alice", MODULE, "later"))
        .await
        .unwrap();
    assert!(newer.id > job.id);
    assert!(matches!(
        store
            .consume_report(&key("alice", MODULE, "done"))
            .await
            .unwrap(),
        Consumed::Result(_)
    ));
}

#[tokio::test]
async fn a_second_open_of_the_same_directory_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let first = SledStore::open(&path).unwrap();
    // sled locks with flock on its own file handle, so a second open in this process is
    // refused just like one from another process.
    match SledStore::open(&path) {
        Err(StoreError::Locked(p)) => assert_eq!(p, path.display().to_string()),
        Err(other) => panic!("expected Locked, got {other:?}"),
        Ok(_) => panic!("expected Locked, the second open succeeded"),
    }
    // A clone shares the open database and the lock rather than taking a new one.
    let clone = first.clone();
    drop(first);
    assert!(matches!(SledStore::open(&path), Err(StoreError::Locked(_))));
    drop(clone);
    // Free once the last handle is gone (sled's threads may hold it a moment longer).
    common::reopen(&path);
}

async fn a_removed_users_name_is_never_given_out_again(place: Place) {
    let store = place.open().await;
    store.create_user(user("alice", "k1")).await.unwrap();
    store
        .dispatch_report(report("alice", "birthnotice", "r1"))
        .await
        .unwrap();
    assert!(store.remove_user("alice").await.unwrap());
    let again = store.create_user(user("alice", "k2")).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    assert!(store.user("alice").await.unwrap().is_none());
    // The old report stays, readable by operators under the old name only.
    assert!(store
        .report(&key("alice", "birthnotice", "r1"))
        .await
        .unwrap()
        .is_some());
    store.create_user(user("alice2", "k3")).await.unwrap();
}

contract_tests!(
    users_create_update_remove_list,
    user_key_id_clash_is_a_conflict,
    submit_queues_a_deliver_job_and_rejects_duplicates,
    pending_ids_are_per_owner_and_module,
    reports_with_id_finds_every_owner,
    peek_changes_nothing,
    report_result_is_the_report_reduced,
    consume_follows_the_poll_rules,
    concurrent_threads_get_a_final_report_once,
    outbox_lifecycle,
    failure_outcome_records_the_reason,
    due_jobs_come_oldest_first_up_to_the_limit,
    expiry_removes_payload_of_old_final_reports,
    state_survives_reopening,
    a_removed_users_name_is_never_given_out_again,
);

contract_tests!(multi_thread: concurrent_consumers_get_a_final_report_once);
