//! The delivery path with test doubles: success, rejection, retries, resumption, identical bytes.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{ActorState, Engine, EngineSettings};
use meldewerk_storage::{AfterDelivery, ReportStatus, Store};

#[actix_rt::test]
async fn an_authority_deciding_at_once_ends_the_report_with_its_answer() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::deciding_at_once(vec![
        SubmitStep::Transient("busy"),
        SubmitStep::Succeed,
        SubmitStep::Reject("unbekannte Einrichtung"),
        // Accepting for later without an inbox: nobody would collect it, so it is retried.
        SubmitStep::Accept,
        SubmitStep::Succeed,
    ]);
    let engine = start_engine(store.clone(), transport.clone(), fast_settings());
    dispatch(&store, &engine, "now-1").await;
    let report = wait_final(&*store, &key("now-1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    assert_eq!(
        report.receipt.as_deref(),
        Some(&b"%PDF receipt at once"[..])
    );
    assert_eq!(
        report.receipt_media_type.as_deref(),
        Some("application/pdf")
    );
    assert_eq!(report.transport_ref.as_deref(), Some("now-idem-now-1"));
    assert!(report.delivered_at.is_some());
    assert!(store.jobs().is_empty(), "the job left the outbox");
    assert_eq!(
        transport.deliveries().len(),
        2,
        "one transient fault, then the answer"
    );

    dispatch(&store, &engine, "now-2").await;
    let refused = wait_final(&*store, &key("now-2")).await;
    assert_eq!(refused.status, ReportStatus::Failure);
    assert_eq!(
        refused.failure_reason.as_deref(),
        Some("unbekannte Einrichtung")
    );

    dispatch(&store, &engine, "now-3").await;
    let late = wait_final(&*store, &key("now-3")).await;
    assert_eq!(late.status, ReportStatus::Success);

    // Ended on the one path: counted in the module's health; no collector for an inbox it lacks.
    let health = wait_for("module health to count the reports", || {
        let h = engine.health();
        async move {
            h.into_iter()
                .find(|h| h.name == format!("module:{MODULE}") && h.processed == 3)
        }
    })
    .await;
    assert_eq!(health.failed, 1);
    assert!(engine
        .health()
        .iter()
        .all(|h| !h.name.starts_with("inbox:")));
    assert_eq!(transport.fetches.load(Ordering::SeqCst), 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_watcher_hears_the_end_of_its_report_and_only_of_it() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::deciding_at_once(vec![
        SubmitStep::Succeed,
        SubmitStep::Reject("Meldung unvollständig"),
    ]);
    let engine = start_engine(store.clone(), transport.clone(), fast_settings());
    // Watched before dispatch, so that no end can come first; two watchers of one report.
    let first = engine.watch(key("w-1"));
    let second = engine.watch(key("w-1"));
    let other = engine.watch(key("w-2"));
    dispatch(&store, &engine, "w-1").await;
    let ended = first
        .ended(Duration::from_secs(10))
        .await
        .expect("w-1 ended");
    assert_eq!((ended.key, ended.failure), (key("w-1"), None));
    let again = second
        .ended(Duration::from_secs(10))
        .await
        .expect("told to both");
    assert_eq!(again.key, key("w-1"));
    // w-2 was never dispatched: its watcher gives up after its limit, nothing else happens.
    assert!(other.ended(Duration::from_millis(50)).await.is_none());

    let refused = engine.watch(key("w-3"));
    dispatch(&store, &engine, "w-3").await;
    let ended = refused
        .ended(Duration::from_secs(10))
        .await
        .expect("w-3 ended");
    assert_eq!(ended.failure.as_deref(), Some("Meldung unvollständig"));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn submitted_report_is_delivered_acknowledged_and_succeeds() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![AckStep::Pending, AckStep::Pending]);
    let builder = Arc::new(TestBuilder::default());
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            builder.clone(),
            Arc::new(TestSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    let receipt = report.receipt.expect("receipt stored");
    assert!(receipt.starts_with(b"%PDF"));
    assert_eq!(report.portal.as_deref(), Some("sim-portal"));
    assert!(report.transport_ref.is_some() && report.delivered_at.is_some());
    assert!(store.jobs().is_empty(), "the job left the outbox");

    let deliveries = transport.deliveries();
    assert_eq!(deliveries.len(), 1);
    let d = &deliveries[0];
    let message = report.message.expect("message stored");
    assert_eq!(d.body, message.body);
    assert_eq!(d.message_uuid, message.message_uuid);
    assert_eq!(d.idempotency_key, "idem-r1");
    assert_eq!((d.module.as_str(), d.report_id.as_str()), (MODULE, "r1"));
    let sig = d
        .signature
        .as_ref()
        .expect("signature travels with the delivery");
    assert_eq!((sig.kind.as_str(), sig.signer.as_str()), ("seal", "klinik"));
    // Two fetches found the decision pending, the third brought the acknowledgement.
    assert!(transport.ack_calls.load(Ordering::SeqCst) >= 3);

    let health = wait_for("module health to count the report", || {
        let h = engine.health();
        async move {
            h.into_iter()
                .find(|h| h.name == format!("module:{MODULE}") && h.processed == 1)
        }
    })
    .await;
    assert_eq!(health.failed, 0);
    assert_eq!(health.state, ActorState::Running);
    engine.shutdown(Duration::from_secs(5)).await;
    assert!(engine
        .health()
        .iter()
        .all(|h| h.state == ActorState::Stopped));
}

#[actix_rt::test]
async fn transport_rejection_ends_in_failure_with_reason() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Reject("schema invalid")], vec![]);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(report.failure_reason.as_deref(), Some("schema invalid"));
    assert!(transport.deliveries()[0].signature.is_none());
    let failed = wait_for("health to count the failure", || {
        let h = engine.health();
        async move { h.into_iter().find(|h| h.failed == 1) }
    })
    .await;
    assert_eq!(failed.name, format!("module:{MODULE}"));
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn rejected_acknowledgement_ends_in_failure_with_reason() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(
        vec![],
        vec![AckStep::Pending, AckStep::Reject("unknown registry office")],
    );
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport,
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("unknown registry office")
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn build_error_ends_in_failure_with_its_reason() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store
        .dispatch_report(pending_report("invalid-1"))
        .await
        .unwrap();
    let report = wait_final(&*store, &key("invalid-1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("submission is missing the child's name")
    );
    assert!(transport.deliveries().is_empty());
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn transient_errors_are_retried_with_identical_bytes_then_succeed() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(
        vec![
            SubmitStep::Transient("timeout"),
            SubmitStep::Transient("unavailable"),
        ],
        vec![AckStep::Transient("ack timeout")],
    );
    let builder = Arc::new(TestBuilder::default());
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            builder.clone(),
            Arc::new(TestSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success, "{report:?}");
    let deliveries = transport.deliveries();
    assert_eq!(deliveries.len(), 3, "two transient failures, then accepted");
    let message = report.message.unwrap();
    for d in &deliveries {
        assert_eq!(
            d.body, message.body,
            "every retry delivers the stored bytes"
        );
        assert_eq!(d.message_uuid, message.message_uuid);
        assert_eq!(d.idempotency_key, "idem-r1");
    }
    assert_eq!(builder.calls.load(Ordering::SeqCst), 1, "built once");
    assert_eq!(store.prepared_calls.load(Ordering::SeqCst), 1);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn persistent_transient_errors_fail_after_max_attempts() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Transient("down"); 10], vec![]);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("delivery failed after 3 attempts: transient transport error: down")
    );
    assert_eq!(transport.deliveries().len(), 3);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn slow_acknowledgement_does_not_exhaust_attempts() {
    let store = Arc::new(MemStore::default());
    // Far more fetches without the acknowledgement than max_attempts (3), with transient fetch
    // errors in between.
    let mut acks = vec![AckStep::Pending; 12];
    acks.insert(4, AckStep::Transient("flaky"));
    acks.insert(8, AckStep::Transient("flaky"));
    let transport = ScriptedTransport::new(vec![], acks);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success, "{report:?}");
    assert!(transport.ack_calls.load(Ordering::SeqCst) >= 15);
    assert_eq!(transport.deliveries().len(), 1, "never delivered again");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn jobs_in_the_store_before_start_are_resumed() {
    let store = Arc::new(MemStore::default());
    for id in ["a", "b", "c"] {
        store.dispatch_report(pending_report(id)).await.unwrap();
    }
    // One of them had been delivered by an earlier run and awaits its acknowledgement.
    let job = store
        .jobs()
        .into_iter()
        .find(|j| j.report.id == "c")
        .unwrap();
    let now = chrono::Utc::now();
    let message = meldewerk_storage::PreparedMessage {
        message_uuid: "uuid-c".into(),
        content_type: "application/xml".into(),
        body: b"<msg id=\"c\"/>".to_vec(),
        signature: None,
        prepared_at: now,
        sender: None,
    };
    store.record_prepared(&job, message).await.unwrap();
    store
        .record_delivered(
            &job,
            "scripted",
            Some("ref-idem-c".into()),
            now,
            AfterDelivery::AwaitAck {
                resend_at: now + chrono::Duration::hours(1),
            },
        )
        .await
        .unwrap();

    let transport = ScriptedTransport::new(vec![], vec![]);
    transport.accepted_earlier("idem-c", "uuid-c", "ref-idem-c");
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        // A long scan interval: only the scan at start-up can find them in time.
        EngineSettings {
            scan_interval_ms: 3_600_000,
            ..fast_settings()
        },
    );
    wait_for("the start-up scan to deliver a and b", || async {
        (transport.deliveries().len() == 2).then_some(())
    })
    .await;
    // The inbox brings all three acknowledgements, c's without delivering it again.
    for id in ["a", "b", "c"] {
        wait_for(&format!("report {id} to be acknowledged"), || {
            let store = store.clone();
            async move {
                let r = store.report(&key(id)).await.unwrap().unwrap();
                (r.status == ReportStatus::Success).then_some(())
            }
        })
        .await;
    }
    assert_eq!(transport.deliveries().len(), 2);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn unknown_module_jobs_are_left_in_the_outbox() {
    let store = Arc::new(MemStore::default());
    let mut other = pending_report("x");
    other.key.module = "unserved".to_string();
    store.dispatch_report(other.clone()).await.unwrap();
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            ScriptedTransport::new(vec![], vec![]),
        )],
        fast_settings(),
    );
    assert_eq!(
        wait_final(&*store, &key("r1")).await.status,
        ReportStatus::Success
    );
    let outbox = wait_for("the unserved job to show up in health", || {
        let h = engine.health();
        async move {
            h.into_iter()
                .find(|h| h.name == "outbox" && h.last_error.is_some() && h.backlog == 1)
        }
    })
    .await;
    assert!(outbox.last_error.unwrap().contains("unserved"));
    let jobs = store.jobs();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].attempts, 0, "never worked");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn shutdown_leaves_unfinished_jobs_in_the_outbox() {
    let store = Arc::new(MemStore::default());
    // Acknowledgements never come: the job is waiting when the engine stops.
    let transport = ScriptedTransport::new(vec![], vec![AckStep::Pending; 100_000]);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport.clone(),
        )],
        fast_settings(),
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    wait_for("the inbox to be fetched while the report waits", || async {
        (transport.ack_calls.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
    assert!(engine
        .health()
        .iter()
        .all(|h| h.state == ActorState::Stopped));
    engine.wake(); // harmless after shutdown
    let jobs = store.jobs();
    assert_eq!(jobs.len(), 1);
    let report = store.report(&key("r1")).await.unwrap().unwrap();
    assert_eq!(report.status, ReportStatus::Pending);
}
