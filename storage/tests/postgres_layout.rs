//! What the PostgreSQL engine's tables hold, checked in the database itself, as the sled-only
//! tests check sled's trees: a report's state is written without its payload and retention
//! empties the payload's columns; a job whose record cannot be read is passed over by the scans;
//! the retention sweep reads only the reports that are due.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use meldewerk_storage::postgres::testing;
use meldewerk_storage::{
    AfterDelivery, Outcome, PgSettings, PgStore, PreparedMessage, Receipt, Report, ReportKey,
    Store, StoreError,
};

/// A fixed moment `secs` seconds after the tests' epoch.
fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn key(module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: "alice".into(),
        module: module.into(),
        id: id.into(),
    }
}

/// A submission of some 40 KB, so that a state that carried it could not go unnoticed.
fn report(module: &str, id: &str) -> Report {
    Report::new_pending(
        key(module, id),
        serde_json::json!({ "kind": { "vorname": "Erika" }, "anlage": "S".repeat(40_000) }),
        None,
        format!("idem-{id}"),
        t(0),
    )
}

/// A fresh database, the store on it, and a connection of the test's own to look inside.
async fn open() -> (Arc<dyn Store>, tokio_postgres::Client) {
    let url = testing::cluster().fresh_database().await;
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let store = PgStore::open(&PgSettings::new(url)).await.unwrap();
    (Arc::new(store), client)
}

#[tokio::test]
async fn the_state_is_written_without_the_payload_and_retention_empties_it() {
    let (store, sql) = open().await;
    let job = store
        .dispatch_report(report("birthnotice", "geb-1"))
        .await
        .unwrap();
    let built = PreparedMessage {
        message_uuid: "uuid-geb-1".into(),
        content_type: "application/xml".into(),
        body: "M".repeat(30_000).into_bytes(),
        signature: None,
        prepared_at: t(1),
        sender: None,
    };
    let (job, _) = store.begin_attempt_with_message(&job, built).await.unwrap();
    let answer = Outcome::Success {
        receipt: Receipt::pdf(vec![b'R'; 20_000]),
        portal: None,
    };
    let at = Utc::now();
    store
        .record_delivered(&job, "demis", None, at, AfterDelivery::Finished(answer))
        .await
        .unwrap();

    let row = sql
        .query_one(
            "SELECT length(record::text), length(submission::text), length(message_body),
                    length(receipt), message_uuid
             FROM reports WHERE report_id = 'geb-1'::bytea",
            &[],
        )
        .await
        .unwrap();
    let state: i32 = row.get(0);
    assert!(state < 2_000, "the state holds {state} bytes");
    assert!(row.get::<_, i32>(1) > 40_000);
    assert_eq!(row.get::<_, i32>(2), 30_000);
    assert_eq!(row.get::<_, i32>(3), 20_000);
    assert_eq!(row.get::<_, String>(4), "uuid-geb-1");
    let whole = store.report(&key("birthnotice", "geb-1")).await.unwrap();
    assert_eq!(whole.unwrap().receipt, Some(vec![b'R'; 20_000]));

    let expired = store
        .expire_finished_before("birthnotice", at + Duration::days(1))
        .await
        .unwrap();
    assert_eq!(expired, 1);
    let row = sql
        .query_one(
            "SELECT submission IS NULL AND message_body IS NULL AND receipt IS NULL
                    AND message_uuid IS NULL AND expired_at IS NOT NULL AND NOT pending
             FROM reports WHERE report_id = 'geb-1'::bytea",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, bool>(0), "the payload's columns are emptied");
}

#[tokio::test]
async fn a_job_that_cannot_be_read_is_passed_over_and_the_others_are_found() {
    let (store, sql) = open().await;
    let broken = store
        .dispatch_report(report("birthnotice", "kaputt"))
        .await
        .unwrap();
    store
        .dispatch_report(report("birthnotice", "heil"))
        .await
        .unwrap();
    store
        .dispatch_report(report("deathnotice", "tod"))
        .await
        .unwrap();
    let id = i64::try_from(broken.id).unwrap();
    sql.execute(
        "UPDATE jobs SET record = '{\"not\": \"a job\"}' WHERE id = $1",
        &[&id],
    )
    .await
    .unwrap();

    let due = store.due_jobs(Utc::now(), 10, &|_| false).await.unwrap();
    let ids: Vec<&str> = due.iter().map(|job| job.report.id.as_str()).collect();
    assert_eq!(ids, ["heil", "tod"]);
    // Read on its own, it is named corrupt, never taken for another job.
    let read = store.job(broken.id).await;
    assert!(matches!(read, Err(StoreError::Corrupt(_))), "{read:?}");
}

#[tokio::test]
async fn the_sweep_reads_only_the_reports_that_are_due() {
    let (store, sql) = open().await;
    for (id, finished_at) in [("due", t(10)), ("recent", t(100))] {
        let job = store
            .dispatch_report(report("birthnotice", id))
            .await
            .unwrap();
        let answer = Outcome::Success {
            receipt: Receipt::pdf(b"%PDF-1.7".to_vec()),
            portal: None,
        };
        store
            .record_outcome(&job, answer, finished_at)
            .await
            .unwrap();
    }
    // A report the sweep has no business with (it finished after the cutoff), stored in a form
    // no decoder accepts: reading it would fail the sweep.
    sql.execute(
        "INSERT INTO reports (owner, module, report_id, status, pending, finished_at, record)
         VALUES ('alice', 'birthnotice', 'unreadable'::bytea, 'SUCCESS', true, $1,
                 '\"not a report\"')",
        &[&t(200)],
    )
    .await
    .unwrap();
    assert_eq!(
        store
            .expire_finished_before("birthnotice", t(50))
            .await
            .unwrap(),
        1
    );
    let due = store.report(&key("birthnotice", "due")).await.unwrap();
    assert!(due.unwrap().expired_at.is_some());
    let recent = store.report(&key("birthnotice", "recent")).await.unwrap();
    assert!(recent.unwrap().expired_at.is_none());
}
