//! The simulated Standesamt under a tester's script, through the `Transport` trait as the engine
//! uses it, and its received log paged and filtered.

mod common;

use chrono::Utc;
use common::{outcome_of, unsigned_delivery};
use meldewerk_transports::received::ReceivedQuery;
use meldewerk_transports::script::{Effect, Rule, Script};
use meldewerk_transports::xpersonenstand::{Simulator, SimulatorConfig};
use meldewerk_transports::{Delivery, Outcome, Transport, TransportError};

fn open(dir: &tempfile::TempDir) -> Simulator {
    let config = SimulatorConfig {
        ack_delay_ms: 0,
        require_signature: false,
        ..SimulatorConfig::default()
    };
    Simulator::open(dir.path(), config).expect("open simulator")
}

fn delivery(key: &str, report: &str) -> Delivery {
    Delivery {
        report_id: report.to_owned(),
        ..unsigned_delivery(key)
    }
}

fn transient(message: &str) -> Effect {
    Effect::Transient {
        message: message.to_owned(),
    }
}

#[tokio::test]
async fn transient_faults_for_the_next_deliveries_then_acceptance() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    office
        .push_rule(Rule::next(2, transient("Wartung")))
        .unwrap();

    let d = delivery("k1", "r1");
    for _ in 0..2 {
        assert_eq!(
            office.submit(d.clone()).await.unwrap_err(),
            TransportError::Transient("Wartung".to_owned())
        );
    }
    assert!(
        office.received().unwrap().is_empty(),
        "nothing recorded yet"
    );
    let accepted = common::accepted(office.submit(d.clone()).await);
    assert!(!accepted.duplicate);
    assert_eq!(office.script(), Script::default(), "the rule is used up");
    assert_eq!(office.received().unwrap().len(), 1);
}

#[tokio::test]
async fn repeats_of_an_accepted_key_use_up_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    let d = delivery("k1", "r1");
    common::accepted(office.submit(d.clone()).await);
    office.push_rule(Rule::next(1, Effect::Reset)).unwrap();

    let repeat = common::accepted(office.submit(d.clone()).await);
    assert!(repeat.duplicate, "a repeat gets the original acceptance");
    assert_eq!(office.script().rules[0].count, Some(1));
    assert_eq!(
        office.submit(delivery("k2", "r2")).await.unwrap_err(),
        TransportError::Transient("connection reset by peer (scripted)".to_owned())
    );
    assert!(office.script().rules.is_empty());
}

#[tokio::test]
async fn a_rejection_for_one_report_leaves_the_others_alone() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    let reason = "Standesamt: Beurkundung nicht zuständig";
    office
        .push_rule(Rule::for_report(
            "birthnotice",
            "r-bad",
            Effect::Reject {
                reason: reason.to_owned(),
            },
        ))
        .unwrap();

    assert_eq!(
        common::refused(office.submit(delivery("k1", "r-bad")).await),
        reason
    );
    common::accepted(office.submit(delivery("k2", "r-good")).await);
    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.report_id, "r-good");
}

#[tokio::test]
async fn a_scripted_panic_unwinds_the_caller_and_records_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    let effect = Effect::Panic {
        message: "Fehler im Adapter".to_owned(),
    };
    office.push_rule(Rule::next(1, effect)).unwrap();

    // A task of its own, as the engine's job is: the panic ends it, not the test.
    let submit = |d: Delivery| {
        let office = office.clone();
        tokio::spawn(async move { office.submit(d).await })
    };
    let panicked = submit(delivery("k1", "r1")).await.unwrap_err();
    let payload = panicked.into_panic();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("Fehler im Adapter")
    );
    assert!(office.received().unwrap().is_empty(), "nothing recorded");
    assert!(office.script().rules.is_empty(), "the rule is used up");

    // The retry is a first delivery, not a repeat.
    let accepted = common::accepted(submit(delivery("k1", "r1")).await.unwrap());
    assert!(!accepted.duplicate);
    let received = office.received().unwrap();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].delivered.repeat_submissions, 0);
}

#[tokio::test]
async fn a_lost_acknowledgement_comes_once_the_script_is_reset() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    office.push_rule(Rule::next(1, Effect::AckLost)).unwrap();
    let lost = common::accepted(office.submit(delivery("k1", "r1")).await);
    let fine = common::accepted(office.submit(delivery("k2", "r2")).await);

    for _ in 0..3 {
        assert_eq!(outcome_of(&office, &lost.transport_ref).await, None);
    }
    assert!(matches!(
        outcome_of(&office, &fine.transport_ref).await,
        Some(Outcome::Success { .. })
    ));
    office.reset_script();
    assert!(matches!(
        outcome_of(&office, &lost.transport_ref).await,
        Some(Outcome::Success { .. })
    ));
}

#[tokio::test]
async fn a_standing_ack_delay_holds_messages_already_received() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    let accepted = common::accepted(office.submit(delivery("k1", "r1")).await);
    // Far beyond any test run: nothing may reach the inbox whatever the machine's speed.
    office
        .push_rule(Rule::always(Effect::AckDelay { delay_ms: 600_000 }))
        .unwrap();
    assert_eq!(outcome_of(&office, &accepted.transport_ref).await, None);
    office
        .set_script(Script {
            rules: vec![Rule::always(Effect::AckDelay { delay_ms: 0 })],
            transient_rate: 0.0,
        })
        .unwrap();
    assert!(matches!(
        outcome_of(&office, &accepted.transport_ref).await,
        Some(Outcome::Success { .. })
    ));
}

#[tokio::test]
async fn the_received_log_pages_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let office = open(&dir);
    for (key, report) in [("k0", "a"), ("k1", "b"), ("k2", "a"), ("k3", "c")] {
        common::accepted(office.submit(delivery(key, report)).await);
    }
    let mut other_module = delivery("k4", "a");
    other_module.module = "deathnotice".to_owned();
    common::accepted(office.submit(other_module).await);

    let seqs = |query: ReceivedQuery| common::seqs_of(office.received_page(&query).unwrap());
    let page = common::page_of;
    assert_eq!(seqs(page(2, None)), (vec![0, 1], Some(1)));
    assert_eq!(seqs(page(2, Some(1))), (vec![2, 3], Some(3)));
    assert_eq!(seqs(page(2, Some(3))), (vec![4], None));
    assert_eq!(seqs(page(100, None)), (vec![0, 1, 2, 3, 4], None));

    let report_a = ReceivedQuery {
        report_id: Some("a".to_owned()),
        ..page(1, None)
    };
    assert_eq!(seqs(report_a.clone()), (vec![0], Some(0)));
    assert_eq!(
        seqs(ReceivedQuery {
            after: Some(0),
            limit: 5,
            ..report_a.clone()
        }),
        (vec![2, 4], None)
    );
    assert_eq!(
        seqs(ReceivedQuery {
            module: Some("birthnotice".to_owned()),
            limit: 5,
            ..report_a
        }),
        (vec![0, 2], None)
    );
    assert_eq!(
        seqs(ReceivedQuery {
            module: Some("deathnotice".to_owned()),
            ..page(5, None)
        }),
        (vec![4], None)
    );

    let received = office.received().unwrap();
    let since = |at| ReceivedQuery {
        since: Some(at),
        ..page(10, None)
    };
    assert_eq!(seqs(since(received[3].delivered.received_at)).0, vec![3, 4]);
    assert_eq!(seqs(since(received[0].delivered.received_at)).0.len(), 5);
    assert!(seqs(since(Utc::now() + chrono::TimeDelta::hours(1)))
        .0
        .is_empty());
    assert_eq!(
        office.received_by_report("birthnotice", "a").unwrap().len(),
        2
    );
}
