//! The circuit breaker in the engine: an outage of the acknowledgement side, however long, fails
//! no report (neither refused jobs nor the breaker's probes use up attempts), and the report
//! completes once the transport answers again.

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{BreakerState, EngineSettings};
use meldewerk_storage::{ReportStatus, Store};

#[actix_rt::test]
async fn probes_on_acknowledgements_use_up_no_attempts() {
    let store = Arc::new(MemStore::default());
    // Accepted, then the acknowledgement side is down for six polls, then it answers.
    let down: Vec<AckStep> = (0..6).map(|_| AckStep::Transient("down")).collect();
    let transport = ScriptedTransport::new(vec![SubmitStep::Accept], down);
    let engine = start_engine(
        store.clone(),
        transport.clone(),
        EngineSettings {
            max_attempts: 3,
            breaker_failures: 1,
            breaker_open_secs: 1,
            ..fast_settings()
        },
    );
    store.submit_report(pending_report("r1")).await.unwrap();
    engine.wake();
    wait_for("the breaker to open", || {
        let open = engine
            .transports()
            .iter()
            .any(|t| t.breaker != BreakerState::Closed);
        async move { open.then_some(()) }
    })
    .await;
    // With three attempts allowed, six failed polls would fail the report if probes counted.
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(
        report.status,
        ReportStatus::Success,
        "{:?}",
        report.failure_reason
    );
    assert!(transport.ack_calls.load(Ordering::SeqCst) >= 7);
    assert_eq!(
        engine.transports()[0].breaker,
        BreakerState::Closed,
        "the answer closed the breaker"
    );
    engine.shutdown(Duration::from_secs(5)).await;
}
