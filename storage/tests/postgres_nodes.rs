//! Several nodes on one database: a job one node begins is passed over by the others while its
//! lease lives (the heartbeat pushes it on), and is theirs once the node lets go (a stop) or
//! its lease runs out (a node that died); periodic work is led by one node at a time; the node
//! list says who lives, who holds what, and how each node's actors are; a paused module is
//! paused for every node.

mod common;

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use common::message;
use meldewerk_storage::postgres::testing;
use meldewerk_storage::{
    AfterDelivery, Job, Outcome, PgSettings, PgStore, Report, ReportKey, Store, StoreError,
};

fn report(id: &str) -> Report {
    Report::new_pending(
        ReportKey {
            owner: "alice".into(),
            module: "birthnotice".into(),
            id: id.into(),
        },
        serde_json::json!({ "kind": { "vorname": "Erika" } }),
        None,
        format!("idem-{id}"),
        Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
    )
}

/// A node named `name` on the database `url`, its lease `lease` long.
async fn node(url: &str, name: &str, lease: Duration) -> Arc<dyn Store> {
    let settings = PgSettings {
        node: name.into(),
        lease,
        ..PgSettings::new(url)
    };
    Arc::new(PgStore::open(&settings).await.unwrap())
}

/// The ids of the jobs due for `store` now.
async fn due(store: &dyn Store) -> Vec<u64> {
    let later = Utc::now() + chrono::Duration::seconds(1);
    store
        .due_jobs(later, 100, &|_| false)
        .await
        .unwrap()
        .iter()
        .map(|job| job.id)
        .collect()
}

/// A connection of the test's own, to look into the tables.
async fn sql(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_begun_on_one_node_is_passed_over_by_the_others_until_it_is_recorded() {
    let url = testing::cluster().fresh_database().await;
    let a = node(&url, "node-a", Duration::from_secs(60)).await;
    let b = node(&url, "node-b", Duration::from_secs(60)).await;
    let job: Job = a.dispatch_report(report("geb-1")).await.unwrap();
    // Its dispatching node's first: that node routes it at once, and may wait for its outcome.
    assert_eq!(due(&*b).await, Vec::<u64>::new(), "node-a dispatched it");
    assert_eq!(due(&*a).await, vec![job.id]);

    let (begun, _) = a
        .begin_attempt_with_message(&job, message("uuid-geb-1"))
        .await
        .unwrap();
    assert_eq!(due(&*b).await, Vec::<u64>::new(), "node-a holds it");
    // Its own node still finds it (a claim no worker of it holds any more, after a restart).
    assert_eq!(due(&*a).await, vec![job.id]);
    // B's copy is not the job's turn any more: B cannot begin it either.
    assert!(b.begin_attempt(&job).await.is_err());
    // Nor end it (an operator's discard on node-b) or put it back while node-a delivers.
    let discard = Outcome::Failure {
        reason: "discarded".into(),
    };
    let ended = b.record_outcome(&begun, discard, Utc::now()).await;
    match ended {
        Err(StoreError::Busy(why)) => {
            assert!(why.contains("being worked on by node node-a"), "{why}")
        }
        other => panic!("{other:?}"),
    }
    let put_back = b.reschedule(&begun, Utc::now(), None).await;
    assert!(matches!(put_back, Err(StoreError::Busy(_))), "{put_back:?}");

    // A transient fault: put back for later, and free for every node then.
    a.reschedule(&begun, Utc::now(), Some("timeout".into()))
        .await
        .unwrap();
    assert_eq!(due(&*b).await, vec![job.id], "released by the reschedule");

    // B takes it now; the delivery's acceptance releases it again.
    let taken = b
        .due_jobs(Utc::now() + chrono::Duration::seconds(1), 10, &|_| false)
        .await
        .unwrap();
    let begun = b.begin_attempt(&taken[0]).await.unwrap();
    assert_eq!(due(&*a).await, Vec::<u64>::new(), "node-b holds it");
    let resend_at = Utc::now();
    b.record_delivered(
        &begun,
        "xpersonenstand",
        Some("ref".into()),
        Utc::now(),
        AfterDelivery::AwaitAck { resend_at },
    )
    .await
    .unwrap();
    assert_eq!(
        due(&*a).await,
        vec![job.id],
        "waiting for its acknowledgement: nobody's"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopping_node_lets_go_and_a_dead_node_s_lease_runs_out() {
    let url = testing::cluster().fresh_database().await;
    let look = sql(&url).await;
    let b = node(&url, "node-b", Duration::from_secs(60)).await;

    // Stopped on purpose: its claims go at once, and its row says it stopped.
    let a = node(&url, "node-a", Duration::from_secs(60)).await;
    let first = a.dispatch_report(report("geb-1")).await.unwrap();
    a.begin_attempt(&first).await.unwrap();
    assert!(due(&*b).await.is_empty());
    drop(a);
    wait(|| async { due(&*b).await == vec![first.id] }).await;
    let nodes = b.nodes().await.unwrap();
    let gone = nodes.iter().find(|n| n.name == "node-a").unwrap();
    assert!(!gone.alive && gone.stopped_at.is_some(), "{gone:?}");

    // Died: nobody lets go, but nobody pushes the lease on either. (The test ends the lease the
    // way time would; node-c's heartbeat, every 20 s, does not come in between.)
    let c = node(&url, "node-c", Duration::from_secs(60)).await;
    let begun = c
        .begin_attempt(&b.job(first.id).await.unwrap().unwrap())
        .await
        .unwrap();
    assert!(due(&*b).await.is_empty());
    let ended = look
        .execute(
            "UPDATE jobs SET claimed_until = clock_timestamp() - interval '1 second'
             WHERE claimed_by = 'node-c'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(ended, 1);
    assert_eq!(due(&*b).await, vec![first.id], "its lease ran out");
    let resumed = b
        .begin_attempt(&b.job(first.id).await.unwrap().unwrap())
        .await
        .unwrap();
    assert_eq!(
        resumed.attempts,
        begun.attempts + 1,
        "the attempts go on counting"
    );
    // The node that hung comes back: its late reschedule finds the job in other hands, and
    // changes nothing.
    let late = c
        .reschedule(&begun, Utc::now() + chrono::Duration::hours(1), None)
        .await;
    assert!(matches!(late, Err(StoreError::Busy(_))), "{late:?}");
    let stored = b.job(first.id).await.unwrap().unwrap();
    assert!(stored.same_turn(&resumed), "{stored:?}");
    assert!(due(&*c).await.is_empty(), "node-b holds it");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_heartbeat_keeps_a_living_node_s_claims() {
    let url = testing::cluster().fresh_database().await;
    let look = sql(&url).await;
    // A lease of 0.6 s, pushed on every 0.2 s.
    let a = node(&url, "node-a", Duration::from_millis(600)).await;
    let b = node(&url, "node-b", Duration::from_millis(600)).await;
    let job = a.dispatch_report(report("geb-1")).await.unwrap();
    a.begin_attempt(&job).await.unwrap();
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(due(&*b).await.is_empty(), "node-a lives and holds the job");
    }
    let row = look
        .query_one(
            "SELECT claimed_by, claimed_until > clock_timestamp() FROM jobs WHERE id = $1",
            &[&(job.id as i64)],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "node-a");
    assert!(row.get::<_, bool>(1));
    let nodes = b.nodes().await.unwrap();
    let a_row = nodes.iter().find(|n| n.name == "node-a").unwrap();
    assert!(a_row.alive, "{a_row:?}");
    assert_eq!(a_row.claims, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn periodic_work_is_led_by_one_node_at_a_time() {
    let url = testing::cluster().fresh_database().await;
    let a = node(&url, "node-a", Duration::from_millis(300)).await;
    let b = node(&url, "node-b", Duration::from_millis(300)).await;
    let round = Duration::from_millis(200);
    assert!(a.lead("inbox:xpersonenstand", round).await.unwrap());
    assert!(!b.lead("inbox:xpersonenstand", round).await.unwrap());
    assert!(
        a.lead("inbox:xpersonenstand", round).await.unwrap(),
        "renewed"
    );
    // Another task is another lead.
    assert!(b.lead("retention", round).await.unwrap());
    assert!(!a.lead("retention", round).await.unwrap());

    // node-a stops leading (its rounds stop): once round and lease have passed, node-b leads.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(b.lead("inbox:xpersonenstand", round).await.unwrap());
    assert!(!a.lead("inbox:xpersonenstand", round).await.unwrap());

    // A stopping node hands its leads back at once.
    drop(b);
    wait(|| async { a.lead("retention", Duration::from_secs(60)).await.unwrap() }).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_module_paused_through_one_node_is_paused_for_every_node_until_resumed() {
    let url = testing::cluster().fresh_database().await;
    let a = node(&url, "node-a", Duration::from_secs(60)).await;
    let b = node(&url, "node-b", Duration::from_secs(60)).await;
    assert!(a.shared());
    assert!(b.paused_modules().await.unwrap().is_empty());
    a.set_paused("labreport", true).await.unwrap();
    a.set_paused("birthnotice", true).await.unwrap();
    // Pausing again keeps the first pause's node and time.
    b.set_paused("labreport", true).await.unwrap();
    assert_eq!(
        b.paused_modules().await.unwrap(),
        ["birthnotice", "labreport"]
    );
    let row = sql(&url)
        .await
        .query_one(
            "SELECT paused_by FROM paused_modules WHERE module = 'labreport'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "node-a");
    // A resume through either node is every node's; resuming twice changes nothing.
    b.set_paused("labreport", false).await.unwrap();
    b.set_paused("labreport", false).await.unwrap();
    assert_eq!(a.paused_modules().await.unwrap(), ["birthnotice"]);
    // A node that stops leaves the pauses in place.
    drop(a);
    assert_eq!(b.paused_modules().await.unwrap(), ["birthnotice"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_node_reads_every_node_s_published_health() {
    let url = testing::cluster().fresh_database().await;
    let a = node(&url, "node-a", Duration::from_secs(60)).await;
    let b = node(&url, "node-b", Duration::from_secs(60)).await;
    a.publish_health(serde_json::json!({ "actors": [{ "name": "outbox" }] }))
        .await
        .unwrap();
    let nodes = b.nodes().await.unwrap();
    let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["node-a", "node-b"]);
    assert_eq!(nodes[0].health["actors"][0]["name"], "outbox");
    assert!(nodes[1].health.is_null(), "node-b published nothing yet");
    assert!(nodes
        .iter()
        .all(|n| n.alive && n.stopped_at.is_none() && n.claims == 0));

    // A second process under a taken name takes the row over (a restart after a crash looks
    // the same), and the list still has one row per name.
    let again = node(&url, "node-a", Duration::from_secs(60)).await;
    assert_eq!(again.nodes().await.unwrap().len(), 2);

    // A node not heard from for more than a week leaves the list when a node starts.
    let look = sql(&url).await;
    look.execute(
        "UPDATE nodes SET seen_at = clock_timestamp() - interval '8 days' WHERE name = 'node-b'",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(
        again.nodes().await.unwrap().len(),
        2,
        "still listed, as lost"
    );
    let _c = node(&url, "node-c", Duration::from_secs(60)).await;
    let names: Vec<String> = again
        .nodes()
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(names, ["node-a", "node-c"]);
}

/// Waits up to 10 s for `check`.
async fn wait<F, Fut>(check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out");
}
