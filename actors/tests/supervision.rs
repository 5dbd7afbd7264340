//! Panics become counted restarts; the actors stay alive and the outbox keeps the work.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use meldewerk_actors::{ActorState, Engine, EngineSettings};
use meldewerk_storage::{ReportStatus, Store};

fn module_health(engine: &Engine) -> meldewerk_actors::ActorHealth {
    engine
        .health()
        .into_iter()
        .find(|h| h.name == format!("module:{MODULE}"))
        .expect("module actor registered")
}

#[actix_rt::test]
async fn transport_panic_restarts_the_actor_and_the_job_completes() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Panic], vec![AckStep::Panic]);
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
    assert_eq!(report.status, ReportStatus::Success, "{report:?}");
    let health = module_health(&engine);
    assert!(health.restarts >= 1, "{health:?}");
    assert!(health.last_error.unwrap().contains("panics on submit"));
    // The panicking inbox fetch restarted the inbox actor, not the module's.
    let inbox = engine
        .health()
        .into_iter()
        .find(|h| h.name == "inbox:scripted")
        .expect("inbox actor registered");
    assert!(inbox.restarts >= 1, "{inbox:?}");
    assert!(inbox
        .last_error
        .unwrap()
        .contains("panics on acknowledgements"));

    // Still alive: another report goes through the same actor.
    store.dispatch_report(pending_report("r2")).await.unwrap();
    engine.wake();
    assert_eq!(
        wait_final(&*store, &key("r2")).await.status,
        ReportStatus::Success
    );
    wait_for("the actor to read as running", || {
        let h = module_health(&engine);
        async move { (h.state == ActorState::Running).then_some(()) }
    })
    .await;
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn builder_that_always_panics_fails_after_max_attempts_and_actor_survives() {
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
        .dispatch_report(pending_report("boom-1"))
        .await
        .unwrap();
    let report = wait_final(&*store, &key("boom-1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    let reason = report.failure_reason.unwrap();
    assert!(
        reason.starts_with("delivery failed after 3 attempts: panic: builder exploded"),
        "{reason}"
    );
    assert!(transport.deliveries().is_empty());
    let health = module_health(&engine);
    assert_eq!(health.restarts, 3, "{health:?}");

    store.dispatch_report(pending_report("fine")).await.unwrap();
    engine.wake();
    assert_eq!(
        wait_final(&*store, &key("fine")).await.status,
        ReportStatus::Success
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn too_many_restarts_mark_the_module_degraded_without_losing_work() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = Engine::start(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(NoSigner),
            transport,
        )],
        EngineSettings {
            max_restarts: 1,
            max_attempts: 2,
            ..fast_settings()
        },
    );
    store
        .dispatch_report(pending_report("boom-1"))
        .await
        .unwrap();
    wait_for("the module to be marked degraded", || {
        let h = module_health(&engine);
        async move { (h.state == ActorState::Degraded).then_some(()) }
    })
    .await;
    // After the pause it works again and finishes the job for good.
    let report = wait_final(&*store, &key("boom-1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    store.dispatch_report(pending_report("fine")).await.unwrap();
    engine.wake();
    assert_eq!(
        wait_final(&*store, &key("fine")).await.status,
        ReportStatus::Success
    );
    engine.shutdown(Duration::from_secs(5)).await;
}
