//! The engine with the real sled store and the simulated Standesamt, each in a temporary dir.

mod common;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::*;
use meldewerk_actors::{BuildError, Engine, EngineSettings, MessageSigner, ModuleSpec};
use meldewerk_storage::{MessageSignature, Report, ReportStatus, SledStore, Store};
use meldewerk_transports::xpersonenstand::{Simulator, SimulatorConfig};
use ring::rand::SystemRandom;
use ring::signature::{Ed25519KeyPair, KeyPair};

/// Seals with a real Ed25519 key, as the office verifies it.
struct Ed25519Seal {
    key: Ed25519KeyPair,
}

impl Ed25519Seal {
    fn generate() -> Arc<Self> {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        Arc::new(Ed25519Seal {
            key: Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap(),
        })
    }
}

#[async_trait]
impl MessageSigner for Ed25519Seal {
    async fn sign(
        &self,
        report: &Report,
        body: &[u8],
    ) -> Result<Option<MessageSignature>, BuildError> {
        Ok(Some(MessageSignature {
            kind: "seal".to_string(),
            algorithm: "Ed25519".to_string(),
            value: self.key.sign(body).as_ref().to_vec(),
            public_key: self.key.public_key().as_ref().to_vec(),
            signer: report.key.owner.clone(),
        }))
    }
}

struct Setup {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    store: Arc<SledStore>,
    office: Simulator,
}

fn setup(ack_delay_ms: u64, failure_rate: f64) -> Setup {
    let store_dir = tempfile::tempdir().unwrap();
    let office_dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(store_dir.path()).unwrap());
    let office = Simulator::open(
        office_dir.path(),
        SimulatorConfig {
            ack_delay_ms,
            failure_rate,
            ..SimulatorConfig::default()
        },
    )
    .unwrap();
    Setup {
        _dirs: (store_dir, office_dir),
        store,
        office,
    }
}

fn start(s: &Setup, seal: Arc<Ed25519Seal>, settings: EngineSettings) -> Engine {
    Engine::start(
        s.store.clone(),
        vec![spec(
            Arc::new(TestBuilder::default()),
            seal,
            Arc::new(s.office.clone()),
        )],
        settings,
    )
}

#[actix_rt::test]
async fn reports_reach_success_through_sled_and_the_simulated_office() {
    let _watchdog = watchdog(
        "reports_reach_success_through_sled_and_the_simulated_office",
        Duration::from_secs(90),
    );
    let s = setup(30, 0.0);
    let engine = start(&s, Ed25519Seal::generate(), fast_settings());
    for i in 0..25 {
        s.store
            .dispatch_report(pending_report(&format!("r{i}")))
            .await
            .unwrap();
        engine.wake();
    }
    for i in 0..25 {
        let id = format!("r{i}");
        let report = wait_final(&*s.store, &key(&id)).await;
        assert_eq!(report.status, ReportStatus::Success, "{id}: {report:?}");
        assert!(report.receipt.unwrap().starts_with(b"%PDF"));
        assert_eq!(
            report.portal.as_deref(),
            Some("meldewerk-sim-xpersonenstand")
        );
        let received = s.office.received_by_report(MODULE, &id).unwrap();
        assert_eq!(received.len(), 1, "{id} received once");
        assert_eq!(received[0].delivered.body, report.message.unwrap().body);
    }
    assert_eq!(s.store.outbox_len().await.unwrap(), 0);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn unsigned_or_rejected_messages_fail_with_the_office_reason() {
    let _watchdog = watchdog(
        "unsigned_or_rejected_messages_fail_with_the_office_reason",
        Duration::from_secs(90),
    );
    let s = setup(10, 1.0);
    let engine = start(&s, Ed25519Seal::generate(), fast_settings());
    s.store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();
    let report = wait_final(&*s.store, &key("r1")).await;
    assert_eq!(report.status, ReportStatus::Failure);
    assert!(
        report
            .failure_reason
            .as_deref()
            .unwrap()
            .contains("abgelehnt"),
        "{report:?}"
    );
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn a_new_engine_resumes_what_the_previous_one_left() {
    let _watchdog = watchdog(
        "a_new_engine_resumes_what_the_previous_one_left",
        Duration::from_secs(90),
    );
    // The office acknowledges only after a while: the first engine stops in between.
    let s = setup(400, 0.0);
    let seal = Ed25519Seal::generate();
    for i in 0..5 {
        s.store
            .dispatch_report(pending_report(&format!("r{i}")))
            .await
            .unwrap();
    }
    let first = start(&s, seal.clone(), fast_settings());
    wait_for("the office to receive all five", || async {
        (s.office.received().unwrap().len() == 5).then_some(())
    })
    .await;
    first.shutdown(Duration::from_secs(5)).await;
    assert!(
        s.store.outbox_len().await.unwrap() > 0,
        "acks still outstanding"
    );

    let second = start(&s, seal, fast_settings());
    for i in 0..5 {
        let report = wait_final(&*s.store, &key(&format!("r{i}"))).await;
        assert_eq!(report.status, ReportStatus::Success, "{report:?}");
    }
    let received = s.office.received().unwrap();
    assert_eq!(received.len(), 5, "nothing delivered twice");
    second.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn many_reports_through_sled_with_a_zero_latency_transport() {
    let _watchdog = watchdog("sled volume", Duration::from_secs(90));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SledStore::open(dir.path()).unwrap());
    let transport = ScriptedTransport::new(vec![], vec![]);
    let engine = start_engine(store.clone(), transport.clone(), fast_settings());
    for i in 0..200 {
        store
            .dispatch_report(pending_report(&format!("r{i}")))
            .await
            .unwrap();
        engine.wake();
    }
    for i in 0..200 {
        let report = wait_final(&*store, &key(&format!("r{i}"))).await;
        assert_eq!(report.status, ReportStatus::Success);
    }
    assert_eq!(transport.deliveries().len(), 200);
    engine.shutdown(Duration::from_secs(5)).await;
}

#[actix_rt::test]
async fn retention_expires_final_reports_in_sled() {
    let _watchdog = watchdog(
        "retention_expires_final_reports_in_sled",
        Duration::from_secs(90),
    );
    let s = setup(0, 0.0);
    let engine = Engine::start(
        s.store.clone(),
        vec![ModuleSpec {
            retention: Some(Duration::ZERO),
            reading: None,
            ..spec(
                Arc::new(TestBuilder::default()),
                Ed25519Seal::generate(),
                Arc::new(s.office.clone()),
            )
        }],
        EngineSettings {
            retention_sweep_interval_secs: 1,
            ..fast_settings()
        },
    );
    s.store.dispatch_report(pending_report("r1")).await.unwrap();
    engine.wake();
    assert_eq!(
        wait_final(&*s.store, &key("r1")).await.status,
        ReportStatus::Success
    );
    let expired = wait_for("retention to expire the report", || async {
        s.store
            .report(&key("r1"))
            .await
            .unwrap()
            .filter(|r| r.expired_at.is_some())
    })
    .await;
    assert!(expired.submission.is_none());
    engine.shutdown(Duration::from_secs(5)).await;
}
