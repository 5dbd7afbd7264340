//! An unavailable store (a full disk) shows in the health table as `store`, degraded; the engine
//! holds its outbox scans, tells its observer once, and delivers the waiting jobs once the store
//! is back.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use meldewerk_actors::{ActorHealth, ActorState, Engine, EngineEvents};
use meldewerk_storage::{ReportStatus, Store, StoreCondition};

#[derive(Default)]
struct Heard(Mutex<Vec<String>>);

impl EngineEvents for Heard {
    fn store_unavailable(&self, reason: &str) {
        self.0
            .lock()
            .unwrap()
            .push(format!("unavailable: {reason}"));
    }
    fn store_recovered(&self) {
        self.0.lock().unwrap().push("recovered".into());
    }
}

fn store_health(engine: &Engine) -> ActorHealth {
    engine
        .health()
        .into_iter()
        .find(|h| h.name == "store")
        .expect("a store entry")
}

#[actix_rt::test]
async fn the_engine_waits_for_an_unavailable_store_and_says_so_once() {
    let store = Arc::new(MemStore::default());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let heard = Arc::new(Heard::default());
    let engine = Engine::start_with_events(
        store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            Arc::new(TestSigner),
            transport.clone(),
        )],
        fast_settings(),
        heard.clone(),
    );
    assert_eq!(store_health(&engine).state, ActorState::Running);

    *store.unavailable.lock().unwrap() = Some(StoreCondition::Unavailable {
        since: chrono::Utc::now(),
        reason: "No space left on device".into(),
    });
    let degraded = wait_for("the store entry to be degraded", || async {
        let health = store_health(&engine);
        (health.state == ActorState::Degraded).then_some(health)
    })
    .await;
    assert_eq!(
        degraded.last_error.as_deref(),
        Some("No space left on device")
    );
    // A job due meanwhile waits: the ticks do not scan an unavailable store.
    store.dispatch_report(pending_report("r1")).await.unwrap();
    let beat = degraded.last_heartbeat.unwrap();
    wait_for("two more ticks", || async {
        let later = store_health(&engine).last_heartbeat.unwrap();
        (later > beat + chrono::Duration::milliseconds(40)).then_some(())
    })
    .await;
    assert!(transport.deliveries().is_empty(), "delivered meanwhile");

    *store.unavailable.lock().unwrap() = None;
    let report = wait_final(&*store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Success);
    assert_eq!(store_health(&engine).state, ActorState::Running);
    assert_eq!(
        *heard.0.lock().unwrap(),
        ["unavailable: No space left on device", "recovered"]
    );
}
