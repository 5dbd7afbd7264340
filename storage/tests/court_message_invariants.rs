//! Random sequences of indexing, hydration outcomes and deletions keep the court-message index's
//! invariants on every engine: each (account, transport message id) is indexed once, ids run
//! from 1 without gaps, and the hydration queue holds exactly the live waiting entries, earliest
//! due first. Each sequence runs on sled and on PostgreSQL, each engine's own index structures
//! are checked against the entries (sled's trees, PostgreSQL's columns), and both engines must
//! end with the same entries.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use meldewerk_storage::{
    CourtMessage, CourtMessageDirection, CourtMessageFilter, DeletionCause, Hydration,
    HydrationOutcome, ListedCourtMessage, MailboxAccountId, Store, MAX_COURT_MESSAGE_PAGE,
};
use proptest::prelude::*;

mod common;
use common::engines::Place;
use common::{t, with_raw_db};

const ACCOUNTS: [i64; 3] = [1, 2, 3];

#[derive(Debug, Clone)]
enum Op {
    /// A sync of account `ACCOUNTS[.0]` listing these transport ids.
    Index(usize, Vec<u8>),
    /// An outcome (0 hydrated, 1 unreadable, 2 retry, 3 failed) for the entry with this id,
    /// retried this many seconds later.
    Hydrate(u64, u8, i64),
    /// A deletion of the entry with this id.
    Delete(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..ACCOUNTS.len(), prop::collection::vec(0u8..6, 0..4))
            .prop_map(|(account, ids)| Op::Index(account, ids)),
        (0u64..12, 0u8..4, -50i64..50).prop_map(|(id, kind, due)| Op::Hydrate(id, kind, due)),
        (0u64..12).prop_map(Op::Delete),
    ]
}

fn outcome(kind: u8, due_at: DateTime<Utc>) -> HydrationOutcome {
    match kind {
        0 => HydrationOutcome::Hydrated {
            aktenzeichen: Some("AZ".into()),
            received_at: None,
        },
        1 => HydrationOutcome::Unreadable {
            error: "unreadable".into(),
            received_at: None,
        },
        2 => HydrationOutcome::Retry {
            error: "later".into(),
            due_at,
        },
        _ => HydrationOutcome::Failed {
            error: "failed".into(),
        },
    }
}

/// Every entry of the index, deleted ones too, by id.
async fn all(store: &dyn Store) -> BTreeMap<u64, CourtMessage> {
    let mut all = BTreeMap::new();
    for n in ACCOUNTS {
        let account = MailboxAccountId::try_from(n).unwrap();
        for message in store
            .court_messages_of(account, None, MAX_COURT_MESSAGE_PAGE, true)
            .await
            .unwrap()
        {
            assert_eq!(message.account, account);
            all.insert(message.id, message);
        }
    }
    all
}

async fn check(store: &dyn Store, indexed: &BTreeMap<(i64, String), u64>) {
    let all = all(store).await;
    // Once per (account, transport id), ids 1..=n.
    let keys: BTreeSet<(i64, String)> = all
        .values()
        .map(|m| (m.account.get(), m.message_id.clone()))
        .collect();
    assert_eq!(keys.len(), all.len(), "a message indexed twice");
    assert_eq!(
        all.keys().copied().collect::<Vec<_>>(),
        (1..=all.len() as u64).collect::<Vec<_>>()
    );
    for ((account, message_id), id) in indexed {
        assert_eq!(
            (all[id].account.get(), &all[id].message_id),
            (*account, message_id)
        );
    }
    // The queue holds exactly the live waiting entries, earliest due first.
    let waiting: BTreeSet<u64> = all
        .values()
        .filter(|m| m.deleted.is_none() && matches!(m.hydration, Hydration::Waiting { .. }))
        .map(|m| m.id)
        .collect();
    let queue = store
        .court_messages_to_hydrate(t(1_000_000), MAX_COURT_MESSAGE_PAGE)
        .await
        .unwrap();
    assert_eq!(queue.iter().map(|m| m.id).collect::<BTreeSet<_>>(), waiting);
    assert_eq!(queue.len(), waiting.len());
    let due: Vec<DateTime<Utc>> = queue
        .iter()
        .map(|m| match m.hydration {
            Hydration::Waiting { due_at, .. } => due_at,
            _ => unreachable!("checked above"),
        })
        .collect();
    assert!(
        due.windows(2).all(|w| w[0] <= w[1]),
        "out of order: {due:?}"
    );
    // Listings answer the live entries, and by job the live ones mapped to one.
    let everywhere = CourtMessageFilter {
        accounts: ACCOUNTS
            .iter()
            .map(|&n| MailboxAccountId::try_from(n).unwrap())
            .collect(),
        ..CourtMessageFilter::default()
    };
    let listed = |filter: CourtMessageFilter| async move {
        store
            .court_messages(&filter, None, MAX_COURT_MESSAGE_PAGE)
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect::<Vec<_>>()
    };
    let live = all.values().filter(|m| m.deleted.is_none());
    assert_eq!(
        listed(everywhere.clone()).await,
        live.clone().map(|m| m.id).collect::<Vec<_>>()
    );
    let by_job = CourtMessageFilter {
        job_ids: Some(vec!["job-1".into(), "job-2".into(), "job-3".into()]),
        ..everywhere
    };
    assert_eq!(
        listed(by_job).await,
        live.filter(|m| m.job_id.is_some())
            .map(|m| m.id)
            .collect::<Vec<_>>()
    );
}

/// Runs `ops` on a new store in `place`, checking the invariants after each; answers every
/// entry at the end.
async fn run(place: Place, ops: Vec<Op>) -> BTreeMap<u64, CourtMessage> {
    let store = place.open().await;
    let mut indexed: BTreeMap<(i64, String), u64> = BTreeMap::new();
    // Hydrations name `AZ`: a job's in accounts 1 and 2, none in account 3.
    for n in [1, 2] {
        let account = MailboxAccountId::try_from(n).unwrap();
        assert!(store
            .map_case_reference(account, "AZ", &format!("job-{n}"))
            .await
            .unwrap());
    }
    for (step, op) in ops.into_iter().enumerate() {
        let now = t(step as i64 * 10);
        match op {
            Op::Index(account, transport_ids) => {
                let n = ACCOUNTS[account];
                let listed: Vec<ListedCourtMessage> = transport_ids
                    .iter()
                    .map(|id| ListedCourtMessage {
                        message_id: format!("m-{id}"),
                        direction: CourtMessageDirection::Incoming,
                        created_at: t(0),
                        received_at: None,
                        size: 1,
                    })
                    .collect();
                let account = MailboxAccountId::try_from(n).unwrap();
                let new = store
                    .index_court_messages(account, "DE.Justiz.x", listed.clone(), None, now)
                    .await
                    .unwrap();
                // Exactly the ones not seen before, each once, in listing order, next ids.
                let mut expected = Vec::new();
                for message in &listed {
                    let key = (n, message.message_id.clone());
                    if !indexed.contains_key(&key) {
                        let id = indexed.len() as u64 + 1;
                        indexed.insert(key, id);
                        expected.push((id, message.message_id.clone()));
                    }
                }
                let got: Vec<(u64, String)> =
                    new.into_iter().map(|m| (m.id, m.message_id)).collect();
                assert_eq!(got, expected);
            }
            Op::Hydrate(id, kind, due) => {
                let before = store.court_message(id).await.unwrap();
                let recorded = store
                    .record_hydration(id, outcome(kind, now + chrono::Duration::seconds(due)), now)
                    .await
                    .unwrap();
                let was_waiting = before.is_some_and(|m| {
                    m.deleted.is_none() && matches!(m.hydration, Hydration::Waiting { .. })
                });
                assert_eq!(recorded.is_some(), was_waiting);
            }
            Op::Delete(id) => {
                store
                    .delete_court_message(id, DeletionCause::Retention, now)
                    .await
                    .unwrap();
                if let Some(message) = store.court_message(id).await.unwrap() {
                    assert!(message.deleted.is_some());
                }
            }
        }
        check(&*store, &indexed).await;
    }
    let all = all(&*store).await;
    drop(store);
    match &place {
        Place::Sled(dir) => check_sled_trees(&dir.path().join("db"), &all),
        Place::Postgres(url) => check_postgres_columns(url, &all).await,
    }
    all
}

/// Reads pass over a stale index entry, so sled's trees themselves are looked at: the queue
/// holds exactly the live waiting entries, each under its due time; the live index the live
/// entries; the job index the live ones mapped to a job.
fn check_sled_trees(path: &std::path::Path, all: &BTreeMap<u64, CourtMessage>) {
    let live = || all.values().filter(|m| m.deleted.is_none());
    let queue: BTreeSet<(u64, u64)> = live()
        .filter_map(|m| match m.hydration {
            Hydration::Waiting { due_at, .. } => Some((millis_key(due_at), m.id)),
            _ => None,
        })
        .collect();
    let by_account: BTreeSet<(u64, u64)> = live().map(|m| (m.account.get() as u64, m.id)).collect();
    let by_job: BTreeSet<(Vec<u8>, u64)> = live()
        .filter_map(|m| m.job_id.as_ref().map(|job| (job.as_bytes().to_vec(), m.id)))
        .collect();
    with_raw_db(path, |db| {
        // Each key of `tree` as (what comes before the index id, the index id).
        let split = |tree: &str| -> Vec<(Vec<u8>, u64)> {
            let tree = db.open_tree(tree).unwrap();
            tree.iter()
                .map(|entry| {
                    let (key, _) = entry.unwrap();
                    let (head, id) = key.split_at(key.len() - 8);
                    (head.to_vec(), u64::from_be_bytes(id.try_into().unwrap()))
                })
                .collect()
        };
        let numbered = |tree: &str| -> BTreeSet<(u64, u64)> {
            split(tree)
                .into_iter()
                .map(|(head, id)| (u64::from_be_bytes(head.try_into().unwrap()), id))
                .collect()
        };
        assert_eq!(numbered("court_messages_waiting"), queue);
        assert_eq!(numbered("court_messages_live"), by_account);
        let stored_jobs: BTreeSet<(Vec<u8>, u64)> = split("court_messages_by_job")
            .into_iter()
            .map(|(job, id)| (job[4..].to_vec(), id))
            .collect();
        assert_eq!(stored_jobs, by_job);
    });
}

/// PostgreSQL's queries select by the columns beside each record, so those are looked at: the
/// due time is set exactly for the live waiting entries (to the exact time, split into its
/// microsecond and the nanoseconds past it), `live` exactly for the live ones, the job for the
/// mapped ones; and the last id given out is the highest.
async fn check_postgres_columns(url: &str, all: &BTreeMap<u64, CourtMessage>) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let mut queue = BTreeSet::new();
    let mut by_account = BTreeSet::new();
    let mut by_job = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for row in client
        .query(
            "SELECT id, account_id, live, due_at, due_ns, job_id FROM court_messages",
            &[],
        )
        .await
        .unwrap()
    {
        let id = row.get::<_, i64>(0) as u64;
        ids.insert(id);
        if row.get::<_, bool>(2) {
            by_account.insert((row.get::<_, i64>(1) as u64, id));
            if let Some(job) = row.get::<_, Option<String>>(5) {
                by_job.insert((job.into_bytes(), id));
            }
        }
        let due_at: Option<DateTime<Utc>> = row.get(3);
        let due_ns: Option<i32> = row.get(4);
        if let (Some(due_at), Some(due_ns)) = (due_at, due_ns) {
            assert!((0..1000).contains(&due_ns), "due_ns {due_ns}");
            queue.insert((due_at + chrono::Duration::nanoseconds(due_ns.into()), id));
        } else {
            assert_eq!((due_at, due_ns), (None, None), "half a due time");
        }
    }
    let live = || all.values().filter(|m| m.deleted.is_none());
    let expected_queue: BTreeSet<(DateTime<Utc>, u64)> = live()
        .filter_map(|m| match m.hydration {
            Hydration::Waiting { due_at, .. } => Some((due_at, m.id)),
            _ => None,
        })
        .collect();
    assert_eq!(queue, expected_queue);
    let expected_live: BTreeSet<(u64, u64)> =
        live().map(|m| (m.account.get() as u64, m.id)).collect();
    assert_eq!(by_account, expected_live);
    let expected_jobs: BTreeSet<(Vec<u8>, u64)> = live()
        .filter_map(|m| m.job_id.as_ref().map(|job| (job.as_bytes().to_vec(), m.id)))
        .collect();
    assert_eq!(by_job, expected_jobs);
    assert_eq!(ids, all.keys().copied().collect::<BTreeSet<_>>());
    let last: i64 = client
        .query_one("SELECT last_id FROM court_message_last_id", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(last as u64, all.len() as u64);
    drop(client);
    let _ = connection.await;
}

/// `at`'s milliseconds as the queue's keys hold them (sign bit flipped).
fn millis_key(at: DateTime<Utc>) -> u64 {
    (at.timestamp_millis() as u64) ^ (1 << 63)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_changes_keep_the_index_consistent(ops in prop::collection::vec(op(), 1..16)) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let on_sled = run(Place::sled().await, ops.clone()).await;
                let on_postgres = run(Place::postgres().await, ops).await;
                assert_eq!(on_sled, on_postgres, "the engines end with different entries");
            });
    }
}
