//! Reports dispatched with their message: the engine delivers the dispatch's bytes without
//! building or writing anything first, and counts every later attempt as before.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::Engine;
use meldewerk_storage::{PreparedMessage, Report, ReportStatus, Store};

/// A report as the form dispatch stores it: with its built and signed message.
fn dispatched(id: &str) -> Report {
    let mut report = pending_report(id);
    report.message = Some(PreparedMessage {
        message_uuid: format!("uuid-{id}"),
        content_type: "application/xml".into(),
        body: format!("<msg id=\"{id}\" built=\"at dispatch\"/>").into_bytes(),
        signature: None,
        prepared_at: chrono::Utc::now(),
    });
    report
}

fn engine(
    store: &Arc<MemStore>,
    builder: &Arc<TestBuilder>,
    transport: &Arc<ScriptedTransport>,
) -> Engine {
    Engine::start(
        store.clone(),
        vec![spec(builder.clone(), Arc::new(NoSigner), transport.clone())],
        fast_settings(),
    )
}

#[actix_rt::test]
async fn the_dispatchs_message_is_delivered_without_a_write_before_it() {
    let store = Arc::new(MemStore::default());
    let builder = Arc::new(TestBuilder::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = engine(&store, &builder, &transport);
    let job = store.submit_report(dispatched("r1")).await.unwrap();
    engine.queued(job);

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success, "{report:?}");
    let deliveries = transport.deliveries();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(
        deliveries[0].body,
        b"<msg id=\"r1\" built=\"at dispatch\"/>"
    );
    assert_eq!(deliveries[0].message_uuid, "uuid-r1");
    assert_eq!(
        builder.calls.load(Ordering::SeqCst),
        0,
        "nothing built again"
    );
    assert_eq!(store.prepared_calls.load(Ordering::SeqCst), 0);
    assert_eq!(
        store.begun_attempts.load(Ordering::SeqCst),
        0,
        "the dispatch counted the first attempt"
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn the_dispatchs_count_is_the_first_of_the_attempts() {
    let store = Arc::new(MemStore::default());
    let builder = Arc::new(TestBuilder::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Transient("down"); 10], vec![]);
    let engine = engine(&store, &builder, &transport);
    store.submit_report(dispatched("r1")).await.unwrap();
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("delivery failed after 3 attempts: transient transport error: down")
    );
    assert_eq!(transport.deliveries().len(), 3);
    // The two retries, and the count that found none left.
    assert_eq!(store.begun_attempts.load(Ordering::SeqCst), 3);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn after_a_restart_the_interrupted_first_attempt_counts_again() {
    let store = Arc::new(MemStore::default());
    let builder = Arc::new(TestBuilder::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Transient("down"); 10], vec![]);
    store.submit_report(dispatched("r1")).await.unwrap();
    // The process that dispatched it died, perhaps during the delivery: its count may be used.
    store.instance.fetch_add(1, Ordering::SeqCst);
    let engine = engine(&store, &builder, &transport);
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("delivery failed after 3 attempts: transient transport error: down")
    );
    assert_eq!(transport.deliveries().len(), 2, "attempts 2 and 3");
    assert_eq!(store.begun_attempts.load(Ordering::SeqCst), 3);
    engine.shutdown(Duration::from_secs(5)).await;
}
