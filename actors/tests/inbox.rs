//! The acknowledgement collector against an inbox that does not know its cursor or does not
//! answer: a stored cursor the office never handed out (another office, a fresh journal) makes
//! it start again from the office's oldest entry instead of stranding the waiting reports, and an
//! inbox that keeps failing shows the collector degraded and alerts once, until it answers again.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use common::*;
use meldewerk_actors::{ActorHealth, ActorState, Engine, EngineEvents};
use meldewerk_storage::{ReportStatus, Store};
use meldewerk_transports::TransportError;

/// Records the degradations the engine tells of.
#[derive(Default)]
struct Degradations(Mutex<Vec<(String, Option<String>)>>);

impl Degradations {
    fn told(&self) -> Vec<(String, Option<String>)> {
        self.0.lock().unwrap().clone()
    }
}

impl EngineEvents for Degradations {
    fn actor_degraded(&self, actor: &str, last_error: Option<&str>) {
        let entry = (actor.to_string(), last_error.map(str::to_string));
        self.0.lock().unwrap().push(entry);
    }
}

fn start(
    store: &Arc<MemStore>,
    transport: &Arc<ScriptedTransport>,
    events: &Arc<Degradations>,
) -> Engine {
    let modules = vec![spec(
        Arc::new(TestBuilder::default()),
        Arc::new(TestSigner),
        transport.clone(),
    )];
    Engine::start_with_events(store.clone(), modules, fast_settings(), events.clone())
}

fn collector(engine: &Engine) -> ActorHealth {
    engine
        .health()
        .into_iter()
        .find(|h| h.name == "inbox:scripted")
        .expect("the collector is registered")
}

async fn wait_for_collector(engine: &Engine, what: &str, state: ActorState) -> ActorHealth {
    wait_for(what, || {
        let health = collector(engine);
        async move { (health.state == state).then_some(health) }
    })
    .await
}

#[actix_rt::test]
async fn a_cursor_the_office_never_handed_out_starts_the_collection_again_from_its_start() {
    let store = Arc::new(MemStore::default());
    // Where an earlier office's inbox ended; this office's feed is empty.
    store
        .record_acknowledgements("scripted", vec![], Some("10".to_string()), Utc::now())
        .await
        .unwrap();
    let transport = ScriptedTransport::new(vec![SubmitStep::Accept], vec![]);
    let events = Arc::new(Degradations::default());
    let engine = start(&store, &transport, &events);
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();

    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    // The office's own cursor is stored now: after its one acknowledgement.
    let cursor = store.inbox_cursor("scripted").await.unwrap();
    assert_eq!(cursor.as_deref(), Some("1"));
    let health = collector(&engine);
    assert_eq!(health.state, ActorState::Running, "{health:?}");
    assert!(events.told().is_empty(), "{:?}", events.told());
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn an_inbox_outage_degrades_the_collector_and_alerts_once_until_it_answers() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![SubmitStep::Accept], vec![]);
    *transport.inbox_down.lock().unwrap() =
        Some(TransportError::Transient("connection refused".into()));
    let events = Arc::new(Degradations::default());
    let engine = start(&store, &transport, &events);
    store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();

    let degraded =
        wait_for_collector(&engine, "the collector to degrade", ActorState::Degraded).await;
    let error = "inbox fetch failed: connection refused";
    assert_eq!(degraded.last_error.as_deref(), Some(error));
    // However many fetches fail, one alert for the episode.
    let failed = transport.fetches.load(Ordering::SeqCst);
    wait_for("more failed fetches", || {
        let fetches = transport.fetches.load(Ordering::SeqCst);
        async move { (fetches > failed + 5).then_some(()) }
    })
    .await;
    let told = vec![("inbox:scripted".to_string(), Some(error.to_string()))];
    assert_eq!(events.told(), told);
    assert_eq!(
        store.report(&key("r1")).await.unwrap().unwrap().status,
        ReportStatus::Pending
    );

    *transport.inbox_down.lock().unwrap() = None;
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    wait_for_collector(&engine, "the collector to run again", ActorState::Running).await;
    assert_eq!(events.told(), told);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn an_inbox_that_refuses_even_its_start_degrades_the_collector() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    *transport.inbox_down.lock().unwrap() = Some(TransportError::Refused("closed".into()));
    let events = Arc::new(Degradations::default());
    let engine = start(&store, &transport, &events);

    let degraded =
        wait_for_collector(&engine, "the collector to degrade", ActorState::Degraded).await;
    let error = "the inbox refused the fetch: closed";
    assert_eq!(degraded.last_error.as_deref(), Some(error));
    wait_for("the alert", || {
        let told = events.told();
        async move { (!told.is_empty()).then_some(()) }
    })
    .await;
    assert_eq!(
        events.told(),
        vec![("inbox:scripted".to_string(), Some(error.to_string()))]
    );
    engine.shutdown(Duration::from_secs(5)).await;
}
