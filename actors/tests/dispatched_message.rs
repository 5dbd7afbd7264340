//! Reports dispatched with their message: the engine delivers the dispatch's bytes without
//! building, signing or storing a message, and counts every attempt as before.

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
        sender: None,
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
async fn the_dispatchs_message_is_delivered_as_it_is() {
    let store = Arc::new(MemStore::default());
    let builder = Arc::new(TestBuilder::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = engine(&store, &builder, &transport);
    let job = store.dispatch_report(dispatched("r1")).await.unwrap();
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
        1,
        "counted first"
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn its_attempts_are_counted_as_ever() {
    let store = Arc::new(MemStore::default());
    let builder = Arc::new(TestBuilder::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Transient("down"); 10], vec![]);
    let engine = engine(&store, &builder, &transport);
    store.dispatch_report(dispatched("r1")).await.unwrap();
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(
        report.failure_reason.as_deref(),
        Some("delivery failed after 3 attempts: transient transport error: down")
    );
    assert_eq!(transport.deliveries().len(), 3);
    // The three attempts, and the count that found none left.
    assert_eq!(store.begun_attempts.load(Ordering::SeqCst), 4);
    engine.shutdown(Duration::from_secs(5)).await;
}
