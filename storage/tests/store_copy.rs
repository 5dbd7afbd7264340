//! `meldewerk store copy` at the store's level: a sled store holding every kind of record in
//! every state is exported into an empty PostgreSQL database, and every read of the `Store`
//! trait answers the same on both; the copy continues where sled stopped (a waiting delivery is
//! acknowledged, new ids pass every copied one, a removed user's name stays taken). A database
//! that holds anything is refused and left as it was, and a copy that fails halfway leaves
//! nothing behind.

use std::collections::BTreeSet;

use chrono::{Duration, Utc};
use meldewerk_storage::copy::{Count, Record};
use meldewerk_storage::postgres::testing;
use meldewerk_storage::{
    AfterDelivery, AuditEntry, Bsnr, CustomerScope, Environment, Facility, FacilityCertificate, Ik,
    Job, MailboxAccount, Outcome, PgSettings, PgStore, PostalAddress, Receipt, Report, ReportKey,
    SafeId, SledStore, Store, StoreError, WrappedKey,
};

#[allow(dead_code)] // the contract tests' engines go unused: this test copies between two
mod common;
use common::court::{acc, delete, filter, hydrate, hydrated, index, listed, retry};
use common::{message, reopen, t, user};

const OWNERS: [&str; 2] = ["klinik", "anna"];
const MODULES: [&str; 2] = ["birthnotice", "deathnotice"];

fn key(owner: &str, module: &str, id: &str) -> ReportKey {
    ReportKey {
        owner: owner.into(),
        module: module.into(),
        id: id.into(),
    }
}

fn receipt(id: &str) -> Outcome {
    Outcome::Success {
        receipt: Receipt::pdf(format!("%PDF receipt of {id}").into_bytes()),
        portal: Some("portal-a".into()),
    }
}

/// Dispatches report `id` of `owner` in `module` with its message (UUID `uuid-<id>`); its job.
async fn dispatched(store: &dyn Store, owner: &str, module: &str, id: &str) -> Job {
    let mut report = Report::new_pending(
        key(owner, module, id),
        serde_json::json!({"kind": {"vornamen": format!("Kind {id}")}, "nul": "a\u{0}b"}),
        Some(format!("ref-{id}")),
        format!("idem-{id}"),
        t(10),
    );
    report.message = Some(message(&format!("uuid-{id}")));
    store.dispatch_report(report).await.unwrap()
}

/// [`dispatched`], attempted and accepted by `xpersonenstand`: waiting for its acknowledgement.
async fn awaiting(store: &dyn Store, owner: &str, module: &str, id: &str) -> Job {
    let job = dispatched(store, owner, module, id).await;
    let job = store.begin_attempt(&job).await.unwrap();
    let resend_at = Utc::now() + Duration::hours(1);
    store
        .record_delivered(
            &job,
            "xpersonenstand",
            Some(format!("ref-{id}")),
            Utc::now(),
            AfterDelivery::AwaitAck { resend_at },
        )
        .await
        .unwrap();
    // The job as stored now: its next turn.
    store.job(job.id).await.unwrap().unwrap()
}

fn facility() -> Facility {
    Facility {
        bsnr: Bsnr::parse("123456789").unwrap(),
        name: "Labor Süd".into(),
        address: PostalAddress {
            street: "Hauptstraße 5".into(),
            postal_code: "10117".into(),
            city: "Berlin".into(),
            country: "DE".into(),
        },
        ik: Ik::parse("260326822").unwrap(),
        active: true,
        created_at: t(1),
        updated_at: t(2),
    }
}

fn certificate(environment: Environment) -> FacilityCertificate {
    FacilityCertificate {
        bsnr: Bsnr::parse("123456789").unwrap(),
        environment,
        subject: format!("CN={}", environment.as_str()),
        not_after: t(86_400_000),
        fingerprint_sha256: "ab".repeat(32),
        key: WrappedKey {
            key_id: format!("key-{}", environment.as_str()),
            wrapped: vec![7, 8, 9],
        },
        chain_der: vec![vec![0x30, 1, 2]],
        deposited_at: t(3),
    }
}

fn account(n: i64) -> MailboxAccount {
    MailboxAccount {
        egvp_account_id: acc(n),
        safe_id: SafeId::parse(&format!("DE.Justiz.konto-{n}")).unwrap(),
        name: format!("Betreuungsstelle {n}"),
        active: n == 1,
        created_at: t(4),
        updated_at: t(5),
    }
}

/// Fills `store` with every kind of record in every state; answers every job id it was given.
async fn fill(store: &dyn Store) -> Vec<u64> {
    let mut anna = user("anna", "key-anna");
    anna.customer = Some("K-1".into());
    anna.email = Some("anna@klinik.example".into());
    store.create_user(anna).await.unwrap();
    store
        .create_user(user("klinik", "key-klinik"))
        .await
        .unwrap();
    store.create_user(user("gone", "key-gone")).await.unwrap();

    let mut jobs = Vec::new();
    // Dispatched, never attempted; and attempted once, failed transiently, due later.
    jobs.push(dispatched(store, "klinik", "birthnotice", "fresh").await.id);
    let retrying = dispatched(store, "klinik", "birthnotice", "retrying").await;
    let retrying = store.begin_attempt(&retrying).await.unwrap();
    store
        .reschedule(
            &retrying,
            Utc::now() + Duration::minutes(5),
            Some("connection refused".into()),
        )
        .await
        .unwrap();
    jobs.push(retrying.id);
    // Delivered, waiting for its acknowledgement (the one the target receives below).
    jobs.push(
        awaiting(store, "klinik", "birthnotice", "awaiting")
            .await
            .id,
    );
    // Acknowledged: SUCCESS with a receipt, and FAILURE with a reason; the inbox cursor moves.
    jobs.push(awaiting(store, "anna", "birthnotice", "success").await.id);
    jobs.push(awaiting(store, "anna", "birthnotice", "refused").await.id);
    let acknowledged = vec![
        ("uuid-success".to_owned(), receipt("success")),
        (
            "uuid-refused".to_owned(),
            Outcome::Failure {
                reason: "Standesamt unbekannt".into(),
            },
        ),
    ];
    let finished = store
        .record_acknowledgements("xpersonenstand", acknowledged, Some("c-1".into()), t(20))
        .await
        .unwrap();
    assert_eq!(finished.len(), 2);
    // Given up by the engine; and a success consumed by its poll.
    let failed = dispatched(store, "anna", "birthnotice", "failed").await;
    jobs.push(failed.id);
    let outcome = Outcome::Failure {
        reason: "attempts used up".into(),
    };
    store.record_outcome(&failed, outcome, t(30)).await.unwrap();
    let consumed = awaiting(store, "klinik", "birthnotice", "consumed").await;
    jobs.push(consumed.id);
    let outcome = receipt("consumed");
    store
        .record_outcome(&consumed, outcome, t(31))
        .await
        .unwrap();
    store
        .consume_report(&key("klinik", "birthnotice", "consumed"))
        .await
        .unwrap();
    // Finished and expired by retention (its payload removed).
    let expired = awaiting(store, "klinik", "deathnotice", "expired").await;
    jobs.push(expired.id);
    store
        .record_outcome(&expired, receipt("expired"), t(32))
        .await
        .unwrap();
    assert_eq!(
        store
            .expire_finished_before("deathnotice", t(1000))
            .await
            .unwrap(),
        1
    );
    // A report of the user removed below keeps its owner's name.
    jobs.push(dispatched(store, "gone", "birthnotice", "orphan").await.id);

    for action in ["retry-now", "discard", "pause"] {
        let entry = AuditEntry {
            at: t(40),
            who: "operator".into(),
            action: action.into(),
            target: format!("job {} (klinik/birthnotice/fresh)", jobs[0]),
        };
        store.append_audit(entry).await.unwrap();
    }

    store.put_facility(facility()).await.unwrap();
    let scope = CustomerScope {
        customer: "K-1".into(),
        iks: BTreeSet::from([Ik::parse("260326822").unwrap()]),
    };
    store.set_customer_scope(scope).await.unwrap();
    for environment in [Environment::Test, Environment::Production] {
        store
            .put_certificate(certificate(environment))
            .await
            .unwrap();
    }
    for n in [1, 2] {
        store.put_mailbox_account(account(n)).await.unwrap();
    }
    for (n, name) in [(1, "anna"), (1, "klinik"), (2, "anna"), (2, "gone")] {
        assert!(store.grant_mailbox_account(acc(n), name).await.unwrap());
    }
    assert!(store.remove_user("gone").await.unwrap());

    // Court messages: one hydrated under a mapped case reference, one deleted, one waiting to
    // be tried again, one unread in another account; each account's sync cursor.
    assert!(store
        .map_case_reference(acc(1), "50 XVII 1/26", "job-1")
        .await
        .unwrap());
    let ids = index(
        store,
        1,
        &[listed("m1", 1), listed("m2", 2), listed("m3", 3)],
        50,
    )
    .await;
    index(store, 2, &[listed("m4", 4)], 51).await;
    for (n, cursor) in [(1, "sync-1"), (2, "sync-2")] {
        store
            .index_court_messages(acc(n), "", Vec::new(), Some(cursor.into()), t(52))
            .await
            .unwrap();
    }
    hydrate(store, ids[0], hydrated("50 XVII 1/26"), t(60)).await;
    hydrate(store, ids[1], hydrated("50 XVII 2/26"), t(61)).await;
    delete(store, ids[1], common::court::acknowledged(), t(62)).await;
    hydrate(store, ids[2], retry("mailbox busy", 900), t(63)).await;
    jobs
}

/// Every read of the trait on what [`fill`] stored, as text: equal on two stores that hold the
/// same.
async fn reads(store: &dyn Store) -> Vec<String> {
    let mut out = Vec::new();
    let far = Utc::now() + Duration::days(3650);
    out.push(format!("{:?}", store.users().await.unwrap()));
    for name in ["anna", "klinik", "gone"] {
        out.push(format!("{:?}", store.user(name).await.unwrap()));
    }
    for key_id in ["key-anna", "key-klinik", "key-gone"] {
        out.push(format!("{:?}", store.user_by_key_id(key_id).await.unwrap()));
    }
    let ids = [
        "fresh", "retrying", "awaiting", "success", "refused", "failed", "consumed", "expired",
        "orphan",
    ];
    for owner in OWNERS.iter().chain(&["gone"]) {
        for module in MODULES {
            out.push(format!(
                "{:?}",
                store.pending_ids(owner, module).await.unwrap()
            ));
            for id in ids {
                let key = key(owner, module, id);
                out.push(format!("{:?}", store.report(&key).await.unwrap()));
                out.push(format!(
                    "{:?}",
                    store.report_to_deliver(&key).await.unwrap()
                ));
                out.push(format!("{:?}", store.report_result(&key).await.unwrap()));
                out.push(format!("{:?}", store.report_status(&key).await.unwrap()));
                out.push(format!(
                    "{:?}",
                    store.reports_with_id(module, id).await.unwrap()
                ));
            }
        }
    }
    let jobs = store.jobs(None, 100).await.unwrap();
    for job in &jobs {
        out.push(format!("{:?}", store.job(job.id).await.unwrap()));
    }
    out.push(format!("{jobs:?}"));
    out.push(format!("{:?}", store.outbox_len().await.unwrap()));
    out.push(format!(
        "{:?}",
        store.due_jobs(far, 100, &|_| false).await.unwrap()
    ));
    out.push(format!("{:?}", store.audit(None, 100).await.unwrap()));
    out.push(format!(
        "{:?}",
        store.inbox_cursor("xpersonenstand").await.unwrap()
    ));
    out.push(format!("{:?}", store.facilities(None, 100).await.unwrap()));
    out.push(format!(
        "{:?}",
        store.facility(&facility().bsnr).await.unwrap()
    ));
    out.push(format!("{:?}", store.customer_scope("K-1").await.unwrap()));
    out.push(format!("{:?}", store.certificates().await.unwrap()));
    out.push(format!(
        "{:?}",
        store.mailbox_accounts(None, 100).await.unwrap()
    ));
    for n in [1, 2] {
        let safe_id = account(n).safe_id;
        out.push(format!(
            "{:?}",
            store.mailbox_account(acc(n)).await.unwrap()
        ));
        out.push(format!(
            "{:?}",
            store.mailbox_account_by_safe_id(&safe_id).await.unwrap()
        ));
        out.push(format!(
            "{:?}",
            store.mailbox_account_users(acc(n)).await.unwrap()
        ));
        out.push(format!(
            "{:?}",
            store.mailbox_sync_cursor(acc(n)).await.unwrap()
        ));
        for deleted in [false, true] {
            let of = store.court_messages_of(acc(n), None, 100, deleted).await;
            out.push(format!("{:?}", of.unwrap()));
        }
        for aktenzeichen in ["50 XVII 1/26", "50 XVII 2/26"] {
            let job = store.job_of_case_reference(acc(n), aktenzeichen).await;
            out.push(format!("{:?}", job.unwrap()));
        }
    }
    for name in ["anna", "klinik", "gone"] {
        out.push(format!(
            "{:?}",
            store.mailbox_account_ids_of(name).await.unwrap()
        ));
    }
    let listing = store.court_messages(&filter(&[1, 2]), None, 100).await;
    out.push(format!("{:?}", listing.unwrap()));
    for id in 1..=5 {
        out.push(format!("{:?}", store.court_message(id).await.unwrap()));
    }
    out.push(format!(
        "{:?}",
        store.court_messages_to_hydrate(far, 100).await.unwrap()
    ));
    out.push(format!(
        "{:?}",
        store
            .court_messages_created_before(far, None, 100)
            .await
            .unwrap()
    ));
    out
}

/// A PostgreSQL store on a new, empty database.
async fn empty_target() -> PgStore {
    let url = testing::cluster().fresh_database().await;
    PgStore::open(&PgSettings::new(url)).await.unwrap()
}

#[tokio::test]
async fn a_copy_reads_the_same_as_its_source_and_continues_where_it_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let source = reopen(&dir.path().join("db"));
    let jobs = fill(&source).await;
    let target = empty_target().await;

    let counts = target.import(source.export().unwrap()).await.unwrap();
    for (count, n) in [
        (Count::Users, 2),
        (Count::RemovedUsers, 1),
        (Count::Reports, 9),
        (Count::PendingReports, 7),
        (Count::Messages, 8),
        (Count::Receipts, 2),
        (Count::Jobs, 4),
        (Count::AuditEntries, 3),
        (Count::InboxCursors, 1),
        (Count::MailboxGrants, 3),
        (Count::CourtMessages, 4),
        (Count::DeletedCourtMessages, 1),
        (Count::MailboxSyncCursors, 2),
        (Count::CaseReferences, 1),
    ] {
        assert_eq!(counts.get(count), n, "{}", count.label());
    }
    let (on_sled, on_postgres) = (reads(&source).await, reads(&target).await);
    assert_eq!(on_sled.len(), on_postgres.len());
    for (sled, postgres) in on_sled.iter().zip(&on_postgres) {
        assert_eq!(sled, postgres);
    }

    // The delivery waiting on sled is acknowledged on the copy, by its message's UUID.
    let finished = target
        .record_acknowledgements(
            "xpersonenstand",
            vec![("uuid-awaiting".into(), receipt("awaiting"))],
            Some("c-2".into()),
            Utc::now(),
        )
        .await
        .unwrap();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].key, key("klinik", "birthnotice", "awaiting"));
    // New ids pass every id sled gave, finished jobs' included.
    let job = dispatched(&target, "klinik", "birthnotice", "new").await;
    assert!(
        jobs.iter().all(|&id| job.id > id),
        "{} after {jobs:?}",
        job.id
    );
    let entry = AuditEntry {
        at: t(70),
        who: "operator".into(),
        action: "resume".into(),
        target: "module birthnotice".into(),
    };
    assert_eq!(target.append_audit(entry).await.unwrap(), 4);
    assert_eq!(index(&target, 1, &[listed("m5", 5)], 80).await, vec![5]);
    // A removed user's name stays taken; a live user's key id still names them.
    let taken = target.create_user(user("gone", "key-new")).await;
    assert!(matches!(taken, Err(StoreError::Conflict(_))), "{taken:?}");
    assert!(target.user_by_key_id("key-anna").await.unwrap().is_some());
}

#[tokio::test]
async fn a_target_holding_anything_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let source = reopen(&dir.path().join("db"));
    fill(&source).await;

    let target = empty_target().await;
    target
        .create_user(user("vorher", "key-vorher"))
        .await
        .unwrap();
    let refused = target.import(source.export().unwrap()).await;
    match refused {
        Err(StoreError::Conflict(reason)) => assert!(reason.contains("users"), "{reason}"),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(
        target.users().await.unwrap(),
        vec![user("vorher", "key-vorher")]
    );
    assert!(target.jobs(None, 10).await.unwrap().is_empty());
    assert!(target.audit(None, 10).await.unwrap().is_empty());

    // A copy made already is not made again over itself.
    let copied = empty_target().await;
    copied.import(source.export().unwrap()).await.unwrap();
    let before = reads(&copied).await;
    let again = copied.import(source.export().unwrap()).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "{again:?}");
    assert_eq!(reads(&copied).await, before);
}

#[tokio::test]
async fn a_copy_failing_halfway_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let source: SledStore = reopen(&dir.path().join("db"));
    fill(&source).await;
    let target = empty_target().await;

    // The source's records, then one of them again: the duplicate fails at its insert, after
    // everything before it was written in the same transaction.
    let records: Vec<Record> = source.export().unwrap().map(Result::unwrap).collect();
    let user = records
        .iter()
        .find(|r| matches!(r, Record::User(_)))
        .cloned()
        .unwrap();
    let broken = records.iter().cloned().chain([user]).map(Ok);
    assert!(target.import(broken).await.is_err());
    assert!(target.users().await.unwrap().is_empty());
    assert!(target.jobs(None, 10).await.unwrap().is_empty());
    assert!(target.court_message(1).await.unwrap().is_none());

    // An error of the source stops the copy the same way.
    let failing = records
        .iter()
        .cloned()
        .map(Ok)
        .chain([Err(StoreError::Corrupt("a damaged record".into()))]);
    let failed = target.import(failing).await;
    assert!(matches!(failed, Err(StoreError::Corrupt(_))), "{failed:?}");
    assert!(target.users().await.unwrap().is_empty());

    // The database is as empty as before: the copy goes through now.
    target.import(records.into_iter().map(Ok)).await.unwrap();
    assert_eq!(reads(&target).await, reads(&source).await);
}
