//! The court-message index against the `Store` contract on every engine,
//! reading: a message is indexed once per account and transport id (ids from 1, increasing,
//! never reused), the sync cursor moves with its page, listings filter by account, creation
//! time and job and page by id, the retention and per-account scans, pages capped, and
//! everything survives a reopen. Hydration and deletion: `court_message_hydration.rs`.

use meldewerk_storage::{
    CourtMessageDeleted, CourtMessageFilter, DeletionCause, Hydration, ListedCourtMessage,
    MAX_COURT_MESSAGE_PAGE,
};

mod common;
use common::court::*;
use common::engines::Place;
use common::t;

async fn a_message_is_indexed_once_with_increasing_ids(place: Place) {
    let store = place.open().await;
    let page = [listed("m-a", 1), listed("m-b", 2)];
    assert_eq!(index(&*store, 1, &page, 10).await, vec![1, 2]);
    let first = get(&*store, 1).await;
    assert_eq!(first.account, acc(1));
    assert_eq!(first.safe_id, "DE.Justiz.1");
    assert_eq!(first.message_id, "m-a");
    assert_eq!(first.created_at, t(1));
    assert_eq!(first.indexed_at, t(10));
    assert_eq!(first.size, 1234);
    assert_eq!(
        first.hydration,
        Hydration::Waiting {
            attempts: 0,
            due_at: t(10),
            last_error: None
        }
    );
    assert_eq!(
        (first.job_id, first.aktenzeichen, first.hydrated_at),
        (None, None, None)
    );

    // The same listing again indexes nothing; a new message (listed twice) gets the next id.
    assert!(index(&*store, 1, &page, 20).await.is_empty());
    let grown = [listed("m-a", 1), listed("m-c", 3), listed("m-c", 3)];
    assert_eq!(index(&*store, 1, &grown, 20).await, vec![3]);
    // The same transport id in another account is another message.
    assert_eq!(index(&*store, 2, &[listed("m-a", 1)], 20).await, vec![4]);

    // A deleted one is not indexed again.
    delete(&*store, 1, acknowledged(), t(30)).await;
    assert!(index(&*store, 1, &page, 40).await.is_empty());
    assert_eq!(index(&*store, 1, &[listed("m-d", 4)], 40).await, vec![5]);
    assert_eq!(store.court_message(6).await.unwrap(), None);
}

async fn a_known_live_message_takes_up_its_first_retrieval_once(place: Place) {
    let store = place.open().await;
    index(&*store, 1, &[listed("m-a", 1), listed("m-b", 2)], 10).await;
    delete(&*store, 2, acknowledged(), t(11)).await;
    let relisted = [
        received(listed("m-a", 1), 12),
        received(listed("m-b", 2), 12),
    ];
    assert!(index(&*store, 1, &relisted, 13).await.is_empty());
    assert_eq!(get(&*store, 1).await.received_at, Some(t(12)));
    assert_eq!(
        get(&*store, 2).await.received_at,
        None,
        "deleted: unchanged"
    );
    // Once known, it stays.
    index(&*store, 1, &[received(listed("m-a", 1), 99)], 14).await;
    assert_eq!(get(&*store, 1).await.received_at, Some(t(12)));
    // A new entry takes it from its listing.
    index(&*store, 1, &[received(listed("m-c", 3), 7)], 15).await;
    assert_eq!(get(&*store, 3).await.received_at, Some(t(7)));
}

async fn the_sync_cursor_is_stored_with_its_page_per_account(place: Place) {
    let store = place.open().await;
    assert_eq!(store.mailbox_sync_cursor(acc(1)).await.unwrap(), None);
    let new = store
        .index_court_messages(
            acc(1),
            "DE.Justiz.1",
            vec![listed("m-a", 1)],
            Some("c1".into()),
            t(5),
        )
        .await
        .unwrap();
    assert_eq!(ids(&new), vec![1]);
    assert_eq!(
        store.mailbox_sync_cursor(acc(1)).await.unwrap().as_deref(),
        Some("c1")
    );
    assert_eq!(store.mailbox_sync_cursor(acc(2)).await.unwrap(), None);
    // An empty page still moves it; no cursor leaves it where it is.
    store
        .index_court_messages(acc(1), "DE.Justiz.1", Vec::new(), Some("c2".into()), t(6))
        .await
        .unwrap();
    assert_eq!(
        store.mailbox_sync_cursor(acc(1)).await.unwrap().as_deref(),
        Some("c2")
    );
    store
        .index_court_messages(acc(1), "DE.Justiz.1", vec![listed("m-b", 2)], None, t(7))
        .await
        .unwrap();
    assert_eq!(
        store.mailbox_sync_cursor(acc(1)).await.unwrap().as_deref(),
        Some("c2")
    );
}

async fn listings_filter_by_account_creation_and_job_and_page_by_id(place: Place) {
    let store = place.open().await;
    // Ids interleave between the accounts: 1 (acc 1), 2 (acc 2), 3 (acc 1), 4 (acc 3), 5 (acc 2).
    index(&*store, 1, &[listed("a", 10)], 0).await;
    index(&*store, 2, &[listed("b", 20)], 0).await;
    index(&*store, 1, &[listed("c", 30)], 0).await;
    index(&*store, 3, &[listed("d", 40)], 0).await;
    index(&*store, 2, &[listed("e", 50)], 0).await;
    let list = |f: CourtMessageFilter, after: Option<u64>, limit: usize| {
        let store = &store;
        async move { ids(&store.court_messages(&f, after, limit).await.unwrap()) }
    };
    assert_eq!(list(filter(&[1, 2]), None, 100).await, vec![1, 2, 3, 5]);
    assert_eq!(list(filter(&[2, 1, 2]), None, 100).await, vec![1, 2, 3, 5]);
    assert_eq!(list(filter(&[3]), None, 100).await, vec![4]);
    assert!(list(filter(&[]), None, 100).await.is_empty());
    assert!(list(filter(&[9]), None, 100).await.is_empty());
    // Pages: `after` is exclusive, and a page ends at its limit.
    assert_eq!(list(filter(&[1, 2]), None, 2).await, vec![1, 2]);
    assert_eq!(list(filter(&[1, 2]), Some(2), 2).await, vec![3, 5]);
    assert!(list(filter(&[1, 2]), Some(5), 2).await.is_empty());
    assert!(list(filter(&[1, 2]), Some(u64::MAX), 2).await.is_empty());
    assert!(list(filter(&[1, 2]), None, 0).await.is_empty());
    // `since` is exclusive.
    let since = CourtMessageFilter {
        since: Some(t(20)),
        ..filter(&[1, 2, 3])
    };
    assert_eq!(list(since, None, 100).await, vec![3, 4, 5]);

    // Job ids: only hydrated messages whose case reference maps to one of them.
    assert!(store
        .map_case_reference(acc(1), "1 XVII 1/26", "job-a")
        .await
        .unwrap());
    assert!(store
        .map_case_reference(acc(2), "2 XVII 2/26", "job-b")
        .await
        .unwrap());
    hydrate(&*store, 1, hydrated("1 XVII 1/26"), t(60)).await;
    hydrate(&*store, 2, hydrated("2 XVII 2/26"), t(60)).await;
    hydrate(&*store, 3, hydrated("unmapped"), t(60)).await;
    let jobs = |jobs: &[&str]| CourtMessageFilter {
        job_ids: Some(jobs.iter().map(|j| j.to_string()).collect()),
        ..filter(&[1, 2, 3])
    };
    assert_eq!(list(jobs(&["job-a"]), None, 100).await, vec![1]);
    assert_eq!(list(jobs(&["job-b", "job-a"]), None, 100).await, vec![1, 2]);
    assert!(list(jobs(&[]), None, 100).await.is_empty());
    assert!(list(jobs(&["job-c"]), None, 100).await.is_empty());
    // A job id that starts another is another job.
    assert!(list(jobs(&["job"]), None, 100).await.is_empty());
    assert!(list(jobs(&["job-a "]), None, 100).await.is_empty());
    // The accounts still apply.
    let elsewhere = CourtMessageFilter {
        job_ids: Some(vec!["job-a".into(), "job-b".into()]),
        ..filter(&[2])
    };
    assert_eq!(list(elsewhere, None, 100).await, vec![2]);
    assert_eq!(list(jobs(&["job-a", "job-b"]), Some(1), 100).await, vec![2]);

    // Deleted messages are never listed.
    delete(&*store, 2, acknowledged(), t(70)).await;
    delete(&*store, 3, DeletionCause::GoneFromServer, t(70)).await;
    assert_eq!(list(filter(&[1, 2]), None, 100).await, vec![1, 5]);
    assert_eq!(list(filter(&[1, 2]), None, 1).await, vec![1]);
    assert_eq!(list(filter(&[1, 2]), Some(1), 1).await, vec![5]);
    assert!(list(jobs(&["job-b"]), None, 100).await.is_empty());
}

async fn pages_are_capped(place: Place) {
    let store = place.open().await;
    let many: Vec<ListedCourtMessage> = (0..MAX_COURT_MESSAGE_PAGE as i64 + 5)
        .map(|n| listed(&format!("m-{n}"), n))
        .collect();
    assert_eq!(index(&*store, 1, &many, 0).await.len(), many.len());
    let all = store
        .court_messages(&filter(&[1]), None, usize::MAX)
        .await
        .unwrap();
    assert_eq!(all.len(), MAX_COURT_MESSAGE_PAGE);
    assert_eq!(all.last().unwrap().id, MAX_COURT_MESSAGE_PAGE as u64);
    let rest = store
        .court_messages(
            &filter(&[1]),
            Some(MAX_COURT_MESSAGE_PAGE as u64),
            usize::MAX,
        )
        .await
        .unwrap();
    assert_eq!(rest.len(), 5);
    for page in [
        store
            .court_messages_of(acc(1), None, usize::MAX, true)
            .await
            .unwrap(),
        store
            .court_messages_to_hydrate(t(0), usize::MAX)
            .await
            .unwrap(),
        store
            .court_messages_created_before(t(100_000), None, usize::MAX)
            .await
            .unwrap(),
    ] {
        assert_eq!(page.len(), MAX_COURT_MESSAGE_PAGE);
    }
}

async fn the_retention_scan_answers_live_messages_created_before_the_cutoff(place: Place) {
    let store = place.open().await;
    index(
        &*store,
        1,
        &[listed("a", 10), listed("b", 50), listed("c", 20)],
        0,
    )
    .await;
    index(&*store, 2, &[listed("d", 30), listed("e", 40)], 0).await;
    delete(&*store, 4, DeletionCause::Retention, t(60)).await;
    let before = |cutoff: i64, after: Option<u64>, limit: usize| {
        let store = &store;
        async move {
            ids(&store
                .court_messages_created_before(t(cutoff), after, limit)
                .await
                .unwrap())
        }
    };
    assert_eq!(
        before(40, None, 10).await,
        vec![1, 3],
        "exclusive, deleted left out"
    );
    assert_eq!(before(41, None, 10).await, vec![1, 3, 5]);
    assert_eq!(before(41, None, 1).await, vec![1]);
    assert_eq!(before(41, Some(1), 1).await, vec![3]);
    assert_eq!(before(41, Some(3), 10).await, vec![5]);
    assert!(before(41, Some(u64::MAX), 10).await.is_empty());
    assert!(before(10, None, 10).await.is_empty());
}

async fn one_accounts_messages_with_and_without_deleted_ones(place: Place) {
    let store = place.open().await;
    index(&*store, 1, &[listed("a", 0), listed("b", 0)], 0).await;
    index(&*store, 2, &[listed("c", 0)], 0).await;
    index(&*store, 1, &[listed("d", 0)], 0).await;
    delete(&*store, 2, DeletionCause::GoneFromServer, t(1)).await;
    let of = |n: i64, after: Option<u64>, limit: usize, deleted: bool| {
        let store = &store;
        async move {
            ids(&store
                .court_messages_of(acc(n), after, limit, deleted)
                .await
                .unwrap())
        }
    };
    assert_eq!(of(1, None, 10, true).await, vec![1, 2, 4]);
    assert_eq!(of(1, None, 10, false).await, vec![1, 4]);
    assert_eq!(of(1, Some(1), 1, true).await, vec![2]);
    assert_eq!(of(1, Some(1), 1, false).await, vec![4]);
    assert_eq!(of(2, None, 10, false).await, vec![3]);
    assert!(of(3, None, 10, true).await.is_empty());
    assert!(of(1, None, 0, true).await.is_empty());
}

async fn the_index_survives_a_reopen_and_ids_continue(place: Place) {
    let before;
    {
        let store = place.open().await;
        store
            .index_court_messages(
                acc(1),
                "DE.Justiz.1",
                vec![listed("a", 1), listed("b", 2), listed("c", 3)],
                Some("c-1".into()),
                t(10),
            )
            .await
            .unwrap();
        store
            .map_case_reference(acc(1), "AZ", "job-a")
            .await
            .unwrap();
        hydrate(&*store, 1, hydrated("AZ"), t(11)).await;
        hydrate(&*store, 2, retry("later", 99), t(11)).await;
        // The highest id is deleted: it is not given out again.
        delete(&*store, 3, acknowledged(), t(12)).await;
        before = store
            .court_messages_of(acc(1), None, 10, true)
            .await
            .unwrap();
    }
    let store = place.open().await;
    assert_eq!(
        store
            .court_messages_of(acc(1), None, 10, true)
            .await
            .unwrap(),
        before
    );
    assert_eq!(
        store.mailbox_sync_cursor(acc(1)).await.unwrap().as_deref(),
        Some("c-1")
    );
    assert_eq!(
        store
            .job_of_case_reference(acc(1), "AZ")
            .await
            .unwrap()
            .as_deref(),
        Some("job-a")
    );
    assert_eq!(get(&*store, 1).await.job_id.as_deref(), Some("job-a"));
    assert!(to_hydrate(&*store, 98).await.is_empty());
    assert_eq!(to_hydrate(&*store, 99).await, vec![2]);
    assert_eq!(
        ids(&store.court_messages(&filter(&[1]), None, 10).await.unwrap()),
        vec![1, 2]
    );
    // Known messages stay known; new ones continue after the last id ever given out.
    assert_eq!(
        index(
            &*store,
            1,
            &[listed("a", 1), listed("c", 3), listed("d", 4)],
            20
        )
        .await,
        vec![4]
    );
}

/// Syncs running at once (on PostgreSQL on two stores, as on two nodes; several of one account,
/// as after a failover) give each message one id: ids from 1 without gaps, each
/// (account, transport id) once, every new entry answered by exactly one sync.
async fn syncs_at_once_give_each_message_one_id(place: Place) {
    let store = place.open().await;
    let other = match &place {
        Place::Postgres(_) => place.open().await,
        Place::Sled(_) => store.clone(),
    };
    let mut syncs = Vec::new();
    for round in 0..3 {
        for n in 1..=4 {
            let store = if (round + n) % 2 == 0 {
                store.clone()
            } else {
                other.clone()
            };
            syncs.push(tokio::spawn(async move {
                let page: Vec<ListedCourtMessage> =
                    (0..8).map(|m| listed(&format!("m-{m}"), m)).collect();
                store
                    .index_court_messages(acc(n), "DE.Justiz.x", page, None, t(round))
                    .await
                    .unwrap()
            }));
        }
    }
    let mut answered = Vec::new();
    for sync in syncs {
        answered.extend(ids(&sync.await.unwrap()));
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=32).collect::<Vec<u64>>());
    for n in 1..=4 {
        let of = store
            .court_messages_of(acc(n), None, 100, true)
            .await
            .unwrap();
        let mut transport: Vec<&str> = of.iter().map(|m| m.message_id.as_str()).collect();
        transport.sort_unstable();
        assert_eq!(
            transport,
            (0..8).map(|m| format!("m-{m}")).collect::<Vec<_>>()
        );
    }
    assert_eq!(index(&*other, 1, &[listed("new", 0)], 9).await, vec![33]);
}

/// Hydrations and deletions of one entry at once (on PostgreSQL on two stores) take turns: one
/// hydration is recorded, a deletion wins or comes after it, and the entry says so.
async fn changes_to_one_entry_at_once_take_turns(place: Place) {
    let store = place.open().await;
    let other = match &place {
        Place::Postgres(_) => place.open().await,
        Place::Sled(_) => store.clone(),
    };
    let page: Vec<ListedCourtMessage> = (0..10).map(|m| listed(&format!("m-{m}"), m)).collect();
    index(&*store, 1, &page, 0).await;
    for id in 1..=10u64 {
        let (a, b, c) = (store.clone(), other.clone(), store.clone());
        let first = tokio::spawn(async move { a.record_hydration(id, hydrated("AZ"), t(5)).await });
        let second =
            tokio::spawn(async move { b.record_hydration(id, retry("later", 50), t(5)).await });
        let deletion = tokio::spawn(async move {
            c.delete_court_message(id, DeletionCause::Retention, t(6))
                .await
        });
        let first = first.await.unwrap().unwrap();
        let second = second.await.unwrap().unwrap();
        let deletion = deletion.await.unwrap().unwrap();
        let entry = get(&*store, id).await;
        assert!(matches!(deletion, CourtMessageDeleted::Deleted(_)));
        assert!(entry.deleted.is_some());
        // At most one of the two outcomes, the one the entry holds; the other found it done.
        match (first, second) {
            (Some(_), Some(_)) => {
                // The retry first, then the hydration of the entry waiting again.
                assert_eq!(entry.hydration, Hydration::Hydrated);
            }
            (Some(recorded), None) => assert_eq!(recorded.hydration, entry.hydration),
            (None, Some(recorded)) => assert_eq!(recorded.hydration, entry.hydration),
            (None, None) => assert!(matches!(
                entry.hydration,
                Hydration::Waiting { attempts: 0, .. }
            )),
        }
    }
    assert!(to_hydrate(&*store, 1000).await.is_empty());
}

contract_tests!(
    a_message_is_indexed_once_with_increasing_ids,
    a_known_live_message_takes_up_its_first_retrieval_once,
    the_sync_cursor_is_stored_with_its_page_per_account,
    listings_filter_by_account_creation_and_job_and_page_by_id,
    pages_are_capped,
    the_retention_scan_answers_live_messages_created_before_the_cutoff,
    one_accounts_messages_with_and_without_deleted_ones,
    the_index_survives_a_reopen_and_ids_continue,
    syncs_at_once_give_each_message_one_id,
    changes_to_one_entry_at_once_take_turns,
);
