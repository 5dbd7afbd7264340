//! The court-message index of the sled engine against the `Store` contract: a message is indexed
//! once per account and transport id (ids from 1, increasing, never reused), the sync cursor
//! moves with its page, listings filter by account, creation time and job and page by id, the
//! hydration queue answers due entries earliest first, every hydration outcome is recorded (and
//! nothing for an entry gone, deleted or done), case references map to jobs at hydration,
//! deletion is soft and idempotent, and everything survives a reopen.

use chrono::Duration;
use meldewerk_storage::{
    CourtMessage, CourtMessageDeleted, CourtMessageDirection, CourtMessageFilter, DeletionCause,
    Hydration, HydrationOutcome, ListedCourtMessage, MailboxAccountId, SledStore, Store,
    MAX_COURT_MESSAGE_ERROR, MAX_COURT_MESSAGE_PAGE,
};
use tempfile::TempDir;

mod common;
use common::{reopen, t};

fn open_in(dir: &TempDir) -> SledStore {
    SledStore::open(&dir.path().join("db")).unwrap()
}

fn acc(n: i64) -> MailboxAccountId {
    MailboxAccountId::try_from(n).unwrap()
}

/// Message `message_id` as a listing names it, created at `t(created)`, not retrieved yet.
fn listed(message_id: &str, created: i64) -> ListedCourtMessage {
    ListedCourtMessage {
        message_id: message_id.into(),
        direction: CourtMessageDirection::Incoming,
        created_at: t(created),
        received_at: None,
        size: 1234,
    }
}

fn received(mut message: ListedCourtMessage, at: i64) -> ListedCourtMessage {
    message.received_at = Some(t(at));
    message
}

/// Indexes `messages` of account `n` (SAFE-ID `DE.Justiz.n`) at `t(now)` with no cursor; the
/// new entries' ids.
async fn index(store: &SledStore, n: i64, messages: &[ListedCourtMessage], now: i64) -> Vec<u64> {
    store
        .index_court_messages(
            acc(n),
            &format!("DE.Justiz.{n}"),
            messages.to_vec(),
            None,
            t(now),
        )
        .await
        .unwrap()
        .iter()
        .map(|m| m.id)
        .collect()
}

fn ids(messages: &[CourtMessage]) -> Vec<u64> {
    messages.iter().map(|m| m.id).collect()
}

fn filter(accounts: &[i64]) -> CourtMessageFilter {
    CourtMessageFilter {
        accounts: accounts.iter().map(|&n| acc(n)).collect(),
        ..CourtMessageFilter::default()
    }
}

fn hydrated(aktenzeichen: &str) -> HydrationOutcome {
    HydrationOutcome::Hydrated {
        aktenzeichen: Some(aktenzeichen.into()),
        received_at: Some(t(500)),
    }
}

fn retry(error: &str, due: i64) -> HydrationOutcome {
    HydrationOutcome::Retry {
        error: error.into(),
        due_at: t(due),
    }
}

fn acknowledged() -> DeletionCause {
    DeletionCause::Acknowledged {
        user: "anna".into(),
    }
}

async fn get(store: &SledStore, id: u64) -> CourtMessage {
    store.court_message(id).await.unwrap().unwrap()
}

async fn to_hydrate(store: &SledStore, now: i64) -> Vec<u64> {
    ids(&store
        .court_messages_to_hydrate(t(now), usize::MAX)
        .await
        .unwrap())
}

#[tokio::test]
async fn a_message_is_indexed_once_with_increasing_ids() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    let page = [listed("m-a", 1), listed("m-b", 2)];
    assert_eq!(index(&store, 1, &page, 10).await, vec![1, 2]);
    let first = get(&store, 1).await;
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
    assert!(index(&store, 1, &page, 20).await.is_empty());
    let grown = [listed("m-a", 1), listed("m-c", 3), listed("m-c", 3)];
    assert_eq!(index(&store, 1, &grown, 20).await, vec![3]);
    // The same transport id in another account is another message.
    assert_eq!(index(&store, 2, &[listed("m-a", 1)], 20).await, vec![4]);

    // A deleted one is not indexed again.
    store
        .delete_court_message(1, acknowledged(), t(30))
        .await
        .unwrap();
    assert!(index(&store, 1, &page, 40).await.is_empty());
    assert_eq!(index(&store, 1, &[listed("m-d", 4)], 40).await, vec![5]);
    assert_eq!(store.court_message(6).await.unwrap(), None);
}

#[tokio::test]
async fn a_known_live_message_takes_up_its_first_retrieval_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    index(&store, 1, &[listed("m-a", 1), listed("m-b", 2)], 10).await;
    store
        .delete_court_message(2, acknowledged(), t(11))
        .await
        .unwrap();
    let relisted = [
        received(listed("m-a", 1), 12),
        received(listed("m-b", 2), 12),
    ];
    assert!(index(&store, 1, &relisted, 13).await.is_empty());
    assert_eq!(get(&store, 1).await.received_at, Some(t(12)));
    assert_eq!(get(&store, 2).await.received_at, None, "deleted: unchanged");
    // Once known, it stays.
    index(&store, 1, &[received(listed("m-a", 1), 99)], 14).await;
    assert_eq!(get(&store, 1).await.received_at, Some(t(12)));
    // A new entry takes it from its listing.
    index(&store, 1, &[received(listed("m-c", 3), 7)], 15).await;
    assert_eq!(get(&store, 3).await.received_at, Some(t(7)));
}

#[tokio::test]
async fn the_sync_cursor_is_stored_with_its_page_per_account() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
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

#[tokio::test]
async fn listings_filter_by_account_creation_and_job_and_page_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    // Ids interleave between the accounts: 1 (acc 1), 2 (acc 2), 3 (acc 1), 4 (acc 3), 5 (acc 2).
    index(&store, 1, &[listed("a", 10)], 0).await;
    index(&store, 2, &[listed("b", 20)], 0).await;
    index(&store, 1, &[listed("c", 30)], 0).await;
    index(&store, 3, &[listed("d", 40)], 0).await;
    index(&store, 2, &[listed("e", 50)], 0).await;
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
    store
        .record_hydration(1, hydrated("1 XVII 1/26"), t(60))
        .await
        .unwrap();
    store
        .record_hydration(2, hydrated("2 XVII 2/26"), t(60))
        .await
        .unwrap();
    store
        .record_hydration(3, hydrated("unmapped"), t(60))
        .await
        .unwrap();
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
    store
        .delete_court_message(2, acknowledged(), t(70))
        .await
        .unwrap();
    store
        .delete_court_message(3, DeletionCause::GoneFromServer, t(70))
        .await
        .unwrap();
    assert_eq!(list(filter(&[1, 2]), None, 100).await, vec![1, 5]);
    assert_eq!(list(filter(&[1, 2]), None, 1).await, vec![1]);
    assert_eq!(list(filter(&[1, 2]), Some(1), 1).await, vec![5]);
    assert!(list(jobs(&["job-b"]), None, 100).await.is_empty());
}

#[tokio::test]
async fn pages_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    let many: Vec<ListedCourtMessage> = (0..MAX_COURT_MESSAGE_PAGE as i64 + 5)
        .map(|n| listed(&format!("m-{n}"), n))
        .collect();
    assert_eq!(index(&store, 1, &many, 0).await.len(), many.len());
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

#[tokio::test]
async fn the_hydration_queue_answers_due_entries_earliest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    index(&store, 1, &[listed("a", 0), listed("b", 0)], 10).await;
    index(&store, 2, &[listed("c", 0)], 20).await;
    assert!(to_hydrate(&store, 9).await.is_empty(), "none due yet");
    assert_eq!(to_hydrate(&store, 10).await, vec![1, 2]);
    assert_eq!(to_hydrate(&store, 20).await, vec![1, 2, 3]);
    let limited = store.court_messages_to_hydrate(t(20), 2).await.unwrap();
    assert_eq!(ids(&limited), vec![1, 2]);
    // Retries move their entries to their new due times.
    store
        .record_hydration(1, retry("timeout", 100), t(21))
        .await
        .unwrap();
    store
        .record_hydration(2, retry("timeout", 50), t(21))
        .await
        .unwrap();
    assert_eq!(to_hydrate(&store, 49).await, vec![3]);
    assert_eq!(to_hydrate(&store, 50).await, vec![3, 2]);
    assert_eq!(to_hydrate(&store, 100).await, vec![3, 2, 1]);
    // Due half a millisecond after `now`: not due yet, though its key holds `now`'s millisecond.
    let later = t(200) + Duration::microseconds(500);
    store
        .record_hydration(
            3,
            HydrationOutcome::Retry {
                error: "x".into(),
                due_at: later,
            },
            t(22),
        )
        .await
        .unwrap();
    assert_eq!(to_hydrate(&store, 200).await, vec![2, 1]);
    assert_eq!(
        ids(&store.court_messages_to_hydrate(later, 10).await.unwrap()),
        vec![2, 1, 3]
    );
    // Due before 1970 sorts first.
    index(&store, 1, &[listed("old", 0)], -2_000_000_000).await;
    assert_eq!(to_hydrate(&store, 200).await, vec![4, 2, 1]);
    // Hydrated, unreadable, failed and deleted entries leave the queue.
    store
        .record_hydration(4, hydrated("AZ"), t(201))
        .await
        .unwrap();
    store
        .record_hydration(
            2,
            HydrationOutcome::Failed {
                error: "gone".into(),
            },
            t(201),
        )
        .await
        .unwrap();
    store
        .delete_court_message(1, DeletionCause::Retention, t(201))
        .await
        .unwrap();
    assert_eq!(to_hydrate(&store, 1000).await, vec![3]);
    store
        .record_hydration(
            3,
            HydrationOutcome::Unreadable {
                error: "not XJustiz".into(),
                received_at: None,
            },
            t(202),
        )
        .await
        .unwrap();
    assert!(to_hydrate(&store, 1000).await.is_empty());
}

#[tokio::test]
async fn every_hydration_outcome_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    let page = [
        listed("a", 0),
        received(listed("b", 0), 3),
        listed("c", 0),
        listed("d", 0),
    ];
    index(&store, 1, &page, 10).await;

    // Hydrated: its case reference, now, and the first retrieval if it had none.
    let one = store
        .record_hydration(1, hydrated("AZ 1"), t(20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(one.hydration, Hydration::Hydrated);
    assert_eq!(one.hydrated_at, Some(t(20)));
    assert_eq!(one.aktenzeichen.as_deref(), Some("AZ 1"));
    assert_eq!(one.received_at, Some(t(500)));
    assert!(one.archived());
    assert_eq!(one.error(), None);
    assert_eq!(get(&store, 1).await, one);
    let two = store
        .record_hydration(2, hydrated("AZ 2"), t(20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(two.received_at, Some(t(3)), "kept");
    let none = HydrationOutcome::Hydrated {
        aktenzeichen: None,
        received_at: None,
    };
    // Retry: attempts counted, the error kept (bounded), then hydrated after all.
    let long = "ä".repeat(MAX_COURT_MESSAGE_ERROR);
    let three = store
        .record_hydration(3, retry(&long, 30), t(21))
        .await
        .unwrap()
        .unwrap();
    let Hydration::Waiting {
        attempts: 1,
        due_at,
        last_error: Some(error),
    } = &three.hydration
    else {
        panic!("not waiting: {three:?}");
    };
    assert_eq!(*due_at, t(30));
    assert!(error.len() <= MAX_COURT_MESSAGE_ERROR + '…'.len_utf8());
    assert!(error.ends_with('…') && long.starts_with(error.trim_end_matches('…')));
    assert_eq!(three.error(), Some(error.as_str()));
    assert!(!three.archived());
    let three = store
        .record_hydration(3, retry("again", 40), t(31))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        three.hydration,
        Hydration::Waiting { attempts: 2, .. }
    ));
    let three = store
        .record_hydration(3, none.clone(), t(41))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (three.hydration, three.aktenzeichen, three.job_id),
        (Hydration::Hydrated, None, None)
    );
    assert_eq!(three.hydrated_at, Some(t(41)));
    // Unreadable: archived, no case reference, `hydrated_at` unset.
    let unreadable = HydrationOutcome::Unreadable {
        error: "bad XML".into(),
        received_at: Some(t(8)),
    };
    let four = store
        .record_hydration(4, unreadable.clone(), t(22))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        four.hydration,
        Hydration::Unreadable {
            error: "bad XML".into()
        }
    );
    assert_eq!((four.hydrated_at, four.aktenzeichen.clone()), (None, None));
    assert_eq!(four.received_at, Some(t(8)));
    assert!(four.archived());
    assert_eq!(four.error(), Some("bad XML"));

    // Nothing is recorded for an entry that is done, missing or deleted.
    for id in [1, 3, 4] {
        assert_eq!(
            store
                .record_hydration(id, none.clone(), t(50))
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .record_hydration(id, retry("x", 60), t(50))
                .await
                .unwrap(),
            None
        );
    }
    assert_eq!(get(&store, 4).await, four, "unchanged");
    assert_eq!(
        store
            .record_hydration(99, none.clone(), t(50))
            .await
            .unwrap(),
        None
    );
    index(&store, 1, &[listed("e", 0), listed("f", 0)], 10).await;
    store
        .delete_court_message(5, acknowledged(), t(51))
        .await
        .unwrap();
    assert_eq!(
        store
            .record_hydration(5, none.clone(), t(52))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        get(&store, 5).await.hydration,
        Hydration::Waiting {
            attempts: 0,
            due_at: t(10),
            last_error: None
        }
    );
    // Failed: leaves the queue for good.
    let failed = HydrationOutcome::Failed {
        error: "404 every time".into(),
    };
    let six = store
        .record_hydration(6, failed, t(53))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        six.hydration,
        Hydration::Failed {
            error: "404 every time".into()
        }
    );
    assert_eq!(six.error(), Some("404 every time"));
    assert!(!six.archived());
    assert_eq!(store.record_hydration(6, none, t(54)).await.unwrap(), None);
}

#[tokio::test]
async fn case_references_map_to_jobs_at_hydration() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    assert_eq!(
        store.job_of_case_reference(acc(1), "AZ 1").await.unwrap(),
        None
    );
    assert!(store
        .map_case_reference(acc(1), "AZ 1", "job-a")
        .await
        .unwrap());
    // The first mapping stays.
    assert!(!store
        .map_case_reference(acc(1), "AZ 1", "job-b")
        .await
        .unwrap());
    assert_eq!(
        store
            .job_of_case_reference(acc(1), "AZ 1")
            .await
            .unwrap()
            .as_deref(),
        Some("job-a")
    );
    // Per account.
    assert_eq!(
        store.job_of_case_reference(acc(2), "AZ 1").await.unwrap(),
        None
    );
    index(
        &store,
        1,
        &[listed("a", 0), listed("b", 0), listed("c", 0)],
        10,
    )
    .await;
    index(&store, 2, &[listed("a", 0)], 10).await;
    let mapped = store
        .record_hydration(1, hydrated("AZ 1"), t(20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mapped.job_id.as_deref(), Some("job-a"));
    let unmapped = store
        .record_hydration(2, hydrated("AZ 9"), t(20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(unmapped.job_id, None);
    let other_account = store
        .record_hydration(4, hydrated("AZ 1"), t(20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(other_account.job_id, None);
    // A mapping made later applies to messages hydrated from then on, not to earlier ones.
    assert!(store
        .map_case_reference(acc(1), "AZ 9", "job-c")
        .await
        .unwrap());
    assert_eq!(get(&store, 2).await.job_id, None);
    let later = store
        .record_hydration(3, hydrated("AZ 9"), t(21))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(later.job_id.as_deref(), Some("job-c"));
}

#[tokio::test]
async fn deletion_is_soft_and_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    index(&store, 1, &[listed("a", 0)], 10).await;
    store
        .record_hydration(1, hydrated("AZ"), t(11))
        .await
        .unwrap();
    let CourtMessageDeleted::Deleted(deleted) = store
        .delete_court_message(1, acknowledged(), t(12))
        .await
        .unwrap()
    else {
        panic!("not deleted");
    };
    let deletion = deleted.deleted.clone().unwrap();
    assert_eq!((deletion.at, deletion.cause), (t(12), acknowledged()));
    assert!(!deleted.archived());
    assert_eq!(
        deleted.aktenzeichen.as_deref(),
        Some("AZ"),
        "the entry stays"
    );
    assert_eq!(get(&store, 1).await, deleted);
    // Again, by any cause: unchanged.
    assert_eq!(
        store
            .delete_court_message(1, DeletionCause::Retention, t(13))
            .await
            .unwrap(),
        CourtMessageDeleted::AlreadyDeleted(deleted.clone())
    );
    assert_eq!(get(&store, 1).await, deleted);
    assert_eq!(
        store
            .delete_court_message(2, acknowledged(), t(13))
            .await
            .unwrap(),
        CourtMessageDeleted::NotFound
    );
}

#[tokio::test]
async fn the_retention_scan_answers_live_messages_created_before_the_cutoff() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    index(
        &store,
        1,
        &[listed("a", 10), listed("b", 50), listed("c", 20)],
        0,
    )
    .await;
    index(&store, 2, &[listed("d", 30), listed("e", 40)], 0).await;
    store
        .delete_court_message(4, DeletionCause::Retention, t(60))
        .await
        .unwrap();
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

#[tokio::test]
async fn one_accounts_messages_with_and_without_deleted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(&dir);
    index(&store, 1, &[listed("a", 0), listed("b", 0)], 0).await;
    index(&store, 2, &[listed("c", 0)], 0).await;
    index(&store, 1, &[listed("d", 0)], 0).await;
    store
        .delete_court_message(2, DeletionCause::GoneFromServer, t(1))
        .await
        .unwrap();
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

#[tokio::test]
async fn the_index_survives_a_reopen_and_ids_continue() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let before;
    {
        let store = open_in(&dir);
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
        store
            .record_hydration(1, hydrated("AZ"), t(11))
            .await
            .unwrap();
        store
            .record_hydration(2, retry("later", 99), t(11))
            .await
            .unwrap();
        // The highest id is deleted: it is not given out again.
        store
            .delete_court_message(3, acknowledged(), t(12))
            .await
            .unwrap();
        before = store
            .court_messages_of(acc(1), None, 10, true)
            .await
            .unwrap();
    }
    let store = reopen(&path);
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
    assert_eq!(get(&store, 1).await.job_id.as_deref(), Some("job-a"));
    assert!(to_hydrate(&store, 98).await.is_empty());
    assert_eq!(to_hydrate(&store, 99).await, vec![2]);
    assert_eq!(
        ids(&store.court_messages(&filter(&[1]), None, 10).await.unwrap()),
        vec![1, 2]
    );
    // Known messages stay known; new ones continue after the last id ever given out.
    assert_eq!(
        index(
            &store,
            1,
            &[listed("a", 1), listed("c", 3), listed("d", 4)],
            20
        )
        .await,
        vec![4]
    );
}
