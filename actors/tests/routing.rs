//! How jobs reach module actors without waiting for the outbox's periodic scan: a new job is
//! routed as it is queued, a full module is refilled as its jobs end, and a resume lets a paused
//! module's jobs go at once. The scan interval is set to ten minutes, so every report that
//! finishes within the tests' deadline got there without a tick.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{Engine, EngineSettings};
use meldewerk_storage::{ReportStatus, Store};

/// An engine whose periodic scan comes only every ten minutes, after its first scan (at start)
/// found the empty outbox.
async fn without_ticks(max_in_flight: usize) -> (Arc<MemStore>, Arc<ScriptedTransport>, Engine) {
    let settings = EngineSettings {
        scan_interval_ms: 600_000,
        max_in_flight,
        ..fast_settings()
    };
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = start_engine(store.clone(), transport.clone(), settings);
    actix_rt::time::sleep(Duration::from_millis(100)).await;
    (store, transport, engine)
}

/// Stores a new report and hands its job to the engine, as the form does.
async fn queue(store: &MemStore, engine: &Engine, id: &str) {
    let job = store.dispatch_report(pending_report(id)).await.unwrap();
    engine.queued(job);
}

#[actix_rt::test]
async fn a_queued_job_is_delivered_without_a_scan() {
    let (store, transport, engine) = without_ticks(64).await;
    queue(&store, &engine, "new").await;
    let report = wait_final(&*store, &key("new")).await;
    assert_eq!(report.status, ReportStatus::Success);
    assert_eq!(transport.deliveries().len(), 1);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_backlog_larger_than_a_module_takes_drains_as_jobs_end() {
    let (store, transport, engine) = without_ticks(8).await;
    // Queued far faster than delivered: most find the module full and are left to the scans
    // that refill it.
    for i in 0..60 {
        queue(&store, &engine, &format!("r{i}")).await;
    }
    for i in 0..60 {
        let report = wait_final(&*store, &key(&format!("r{i}"))).await;
        assert_eq!(report.status, ReportStatus::Success, "report r{i}");
    }
    assert_eq!(transport.deliveries().len(), 60, "each delivered once");
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_resumed_module_delivers_at_once() {
    let (store, transport, engine) = without_ticks(64).await;
    assert_eq!(engine.pause(MODULE).await.unwrap(), Some(true));
    queue(&store, &engine, "held").await;
    // Held for the pause; nothing reaches the transport.
    actix_rt::time::sleep(Duration::from_millis(200)).await;
    assert!(transport.deliveries().is_empty(), "delivered while paused");

    assert_eq!(engine.resume(MODULE).await.unwrap(), Some(true));
    let report = wait_final(&*store, &key("held")).await;
    assert_eq!(report.status, ReportStatus::Success);
    engine.shutdown(Duration::from_secs(5)).await;
}
