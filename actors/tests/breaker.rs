//! The circuit breaker in the engine and the acknowledgement inbox beside it: an outage of the
//! inbox, however long, fails no report and opens no breaker (fetches are one per interval, not a
//! storm), and the report completes once the inbox answers again; a delivery outage opens the
//! breaker and its probes use up no attempts.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{BreakerState, EngineSettings};
use meldewerk_storage::{ReportStatus, Store};

/// An engine that allows three attempts and opens its breaker at the first transient fault (one
/// second open), with one report submitted.
async fn start_one_report(
    store: &Arc<MemStore>,
    transport: Arc<ScriptedTransport>,
) -> meldewerk_actors::Engine {
    let engine = start_engine(
        store.clone(),
        transport,
        EngineSettings {
            max_attempts: 3,
            breaker_failures: 1,
            breaker_open_secs: 1,
            ..fast_settings()
        },
    );
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();
    engine
}

/// Waits until report r1 is final and checks that it succeeded.
async fn assert_succeeds(store: &Arc<MemStore>) {
    let report = wait_final(&**store, &key("r1")).await;
    assert_eq!(
        report.status,
        ReportStatus::Success,
        "{:?}",
        report.failure_reason
    );
}

#[actix_rt::test]
async fn an_inbox_outage_uses_up_no_attempts_and_opens_no_breaker() {
    let store = Arc::new(MemStore::default());
    // Accepted, then the inbox is down for six fetches, then it answers.
    let down: Vec<AckStep> = (0..6).map(|_| AckStep::Transient("down")).collect();
    let transport = ScriptedTransport::new(vec![SubmitStep::Accept], down);
    let engine = start_one_report(&store, transport.clone()).await;
    wait_for("the inbox actor to show the outage", || {
        let error = engine
            .health()
            .into_iter()
            .find(|h| h.name == "inbox:scripted")
            .and_then(|h| h.last_error);
        async move { error.filter(|e| e.contains("inbox fetch failed")) }
    })
    .await;
    // With three attempts allowed, six failed fetches would fail the report if they counted.
    assert_succeeds(&store).await;
    assert!(transport.ack_calls.load(Ordering::SeqCst) >= 7);
    assert_eq!(transport.deliveries().len(), 1);
    assert_eq!(engine.transports()[0].breaker, BreakerState::Closed);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_delivery_outage_opens_the_breaker_and_its_probes_use_up_no_attempts() {
    let store = Arc::new(MemStore::default());
    let down: Vec<SubmitStep> = (0..6).map(|_| SubmitStep::Transient("down")).collect();
    let transport = ScriptedTransport::new(down, vec![]);
    let engine = start_one_report(&store, transport.clone()).await;
    wait_for("the breaker to open", || {
        let open = engine
            .transports()
            .iter()
            .any(|t| t.breaker != BreakerState::Closed);
        async move { open.then_some(()) }
    })
    .await;
    // Six failed calls with three attempts allowed: only the probes after the first made them.
    assert_succeeds(&store).await;
    assert_eq!(transport.deliveries().len(), 7);
    assert_eq!(engine.transports()[0].breaker, BreakerState::Closed);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_probe_that_panics_uses_up_no_attempt_either() {
    let store = Arc::new(MemStore::default());
    // One failed attempt opens the breaker; the next three calls are probes, and they panic.
    let steps = vec![
        SubmitStep::Transient("down"),
        SubmitStep::Panic,
        SubmitStep::Panic,
        SubmitStep::Panic,
        SubmitStep::Accept,
    ];
    let transport = ScriptedTransport::new(steps, vec![]);
    let engine = start_one_report(&store, transport.clone()).await;
    // Four calls before the acceptance with three attempts allowed: it fails if the panics count.
    assert_succeeds(&store).await;
    assert_eq!(transport.deliveries().len(), 5);
    engine.shutdown(Duration::from_secs(5)).await;
}
