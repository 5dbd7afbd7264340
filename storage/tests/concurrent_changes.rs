//! Concurrent changes against the `Store` contract, on every engine. The sled engine commits
//! concurrent callers' changes together (one transaction and one flush per round), the PostgreSQL
//! engine runs them in transactions of their own side by side; each caller must still get the
//! answer it would get alone, and one caller's refusal must undo nobody else's change.

use meldewerk_storage::{
    AfterDelivery, Job, JobKind, PreparedMessage, Report, ReportKey, StoreError,
};

mod common;
use common::engines::Place;
use common::{message, t};

const MODULE: &str = "birthnotice";

fn report(id: &str) -> Report {
    Report::new_pending(
        ReportKey {
            owner: "alice".into(),
            module: MODULE.into(),
            id: id.into(),
        },
        serde_json::json!({ "child": { "name": "Erika" } }),
        None,
        format!("idem-{id}"),
        t(0),
    )
}

/// Runs `count` calls of `call` at once on a runtime with several threads and returns their
/// answers in call order.
async fn at_once<T, F, Fut>(count: usize, call: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(count));
    let tasks: Vec<_> = (0..count)
        .map(|i| {
            let (start, call) = (start.clone(), call(i));
            tokio::spawn(async move {
                start.wait().await;
                call.await
            })
        })
        .collect();
    let mut answers = Vec::with_capacity(count);
    for task in tasks {
        answers.push(task.await.unwrap());
    }
    answers
}

async fn a_duplicate_among_concurrent_submissions_is_refused_alone(place: Place) {
    let store = place.open().await;
    // Every fourth submission repeats report "dup"; the others are reports of their own.
    let id = |i: usize| match i % 4 {
        0 => "dup".to_string(),
        _ => format!("r{i}"),
    };
    let answers = at_once(64, |i| {
        let (store, id) = (store.clone(), id(i));
        async move { store.dispatch_report(report(&id)).await }
    })
    .await;

    let stored_dup = answers
        .iter()
        .enumerate()
        .filter(|(i, answer)| id(*i) == "dup" && answer.is_ok())
        .count();
    assert_eq!(stored_dup, 1, "{answers:?}");
    for (i, answer) in answers.iter().enumerate() {
        match answer {
            Ok(job) => assert_eq!(job.report.id, id(i)),
            Err(StoreError::Conflict(_)) => assert_eq!(id(i), "dup"),
            Err(other) => panic!("submission {i} failed: {other}"),
        }
    }
    let mut pending = store.pending_ids("alice", MODULE).await.unwrap();
    pending.sort();
    let mut expected: Vec<String> = (0..64).map(id).collect();
    expected.sort();
    expected.dedup();
    assert_eq!(pending, expected);
    assert_eq!(store.outbox_len().await.unwrap(), expected.len());

    // All of it was on disk when the answers came.
    drop(store);
    let store = place.open().await;
    assert_eq!(store.outbox_len().await.unwrap(), expected.len());
}

async fn concurrent_first_attempts_and_deliveries_each_land_once(place: Place) {
    let store = place.open().await;
    let mut jobs = Vec::new();
    for i in 0..32 {
        jobs.push(
            store
                .dispatch_report(report(&format!("r{i}")))
                .await
                .unwrap(),
        );
    }
    // Each job is attempted twice at once from the same read: the second copy is stale.
    let attempts = at_once(64, |i| {
        let (store, job) = (store.clone(), jobs[i / 2].clone());
        async move {
            store
                .begin_attempt_with_message(&job, message(&format!("m{}", i / 2)))
                .await
        }
    })
    .await;
    for (pair, answers) in attempts.chunks(2).enumerate() {
        let worked: Vec<&(Job, PreparedMessage)> =
            answers.iter().filter_map(|a| a.as_ref().ok()).collect();
        assert_eq!(worked.len(), 1, "job {pair}: {answers:?}");
        assert_eq!(worked[0].0.attempts, 1);
        assert_eq!(worked[0].1.message_uuid, format!("m{pair}"));
        let refused = answers.iter().find_map(|a| a.as_ref().err()).unwrap();
        assert!(matches!(refused, StoreError::NotFound(_)), "{refused:?}");
    }

    let delivered = at_once(32, |i| {
        let (store, job) = (store.clone(), jobs[i].clone());
        async move {
            store
                .record_delivered(
                    &job,
                    "xpersonenstand",
                    Some(format!("ref-{i}")),
                    t(2),
                    AfterDelivery::AwaitAck { resend_at: t(600) },
                )
                .await
        }
    })
    .await;
    assert!(delivered.iter().all(Result::is_ok), "{delivered:?}");

    drop(store);
    let store = place.open().await;
    for (i, job) in jobs.iter().enumerate() {
        let stored = store.job(job.id).await.unwrap().unwrap();
        assert_eq!(
            (stored.kind, stored.not_before),
            (JobKind::AwaitAck, t(600))
        );
        let report = store.report(&job.report).await.unwrap().unwrap();
        assert_eq!(
            report.transport_ref.as_deref(),
            Some(format!("ref-{i}").as_str())
        );
        assert_eq!(report.message.unwrap().message_uuid, format!("m{i}"));
    }
}

contract_tests!(
    multi_thread: a_duplicate_among_concurrent_submissions_is_refused_alone,
    concurrent_first_attempts_and_deliveries_each_land_once,
);
