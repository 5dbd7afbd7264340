//! Many reports at once, and retention of final reports.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{Engine, EngineSettings, ModuleSpec};
use meldewerk_storage::{ReportStatus, Store};

#[actix_rt::test]
async fn a_thousand_reports_all_reach_success() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = start_engine(
        store.clone(),
        transport.clone(),
        EngineSettings {
            max_in_flight: 32,
            ..fast_settings()
        },
    );
    for i in 0..1_000 {
        store
            .dispatch_report(pending_report(&format!("r{i}")))
            .await
            .unwrap();
        engine.wake();
    }
    wait_for("the outbox to drain", || async {
        store.jobs().is_empty().then_some(())
    })
    .await;
    for i in 0..1_000 {
        let report = store.report(&key(&format!("r{i}"))).await.unwrap().unwrap();
        assert_eq!(report.status, ReportStatus::Success, "r{i}");
    }
    assert_eq!(
        transport.deliveries().len(),
        1_000,
        "each delivered exactly once"
    );
    wait_for("health to count every report", || {
        let h = engine.health();
        async move {
            h.into_iter()
                .find(|h| h.name == format!("module:{MODULE}") && h.processed == 1_000)
        }
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn retention_expires_final_reports() {
    let store = Arc::new(MemStore::default());
    let engine = Engine::start(
        store.clone(),
        vec![ModuleSpec {
            retention: Some(Duration::ZERO),
            reading: None,
            ..spec(
                Arc::new(TestBuilder::default()),
                Arc::new(NoSigner),
                ScriptedTransport::new(vec![], vec![]),
            )
        }],
        EngineSettings {
            retention_sweep_interval_secs: 1,
            ..fast_settings()
        },
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    let expired = wait_for("retention to expire the report", || async {
        store
            .report(&key("r1"))
            .await
            .unwrap()
            .filter(|r| r.expired_at.is_some())
    })
    .await;
    assert!(expired.submission.is_none() && expired.receipt.is_none());
    wait_for("retention health to count it", || {
        let h = engine.health();
        async move {
            h.into_iter()
                .find(|h| h.name == "retention" && h.processed >= 1)
        }
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}
