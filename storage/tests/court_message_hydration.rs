//! The court-message index against the `Store` contract on every engine,
//! deletion: the hydration queue answers due entries earliest first, every hydration outcome is
//! recorded (and nothing for an entry gone, deleted or done), case references map to jobs at
//! hydration, and deletion is soft and idempotent. Indexing and reading: `court_messages.rs`.

use chrono::Duration;
use meldewerk_storage::{
    CourtMessageDeleted, DeletionCause, Hydration, HydrationOutcome, MAX_COURT_MESSAGE_ERROR,
};

mod common;
use common::court::*;
use common::engines::Place;
use common::t;

async fn the_hydration_queue_answers_due_entries_earliest_first(place: Place) {
    let store = place.open().await;
    index(&*store, 1, &[listed("a", 0), listed("b", 0)], 10).await;
    index(&*store, 2, &[listed("c", 0)], 20).await;
    assert!(to_hydrate(&*store, 9).await.is_empty(), "none due yet");
    assert_eq!(to_hydrate(&*store, 10).await, vec![1, 2]);
    assert_eq!(to_hydrate(&*store, 20).await, vec![1, 2, 3]);
    let limited = store.court_messages_to_hydrate(t(20), 2).await.unwrap();
    assert_eq!(ids(&limited), vec![1, 2]);
    // Retries move their entries to their new due times.
    hydrate(&*store, 1, retry("timeout", 100), t(21)).await;
    hydrate(&*store, 2, retry("timeout", 50), t(21)).await;
    assert_eq!(to_hydrate(&*store, 49).await, vec![3]);
    assert_eq!(to_hydrate(&*store, 50).await, vec![3, 2]);
    assert_eq!(to_hydrate(&*store, 100).await, vec![3, 2, 1]);
    // Due half a millisecond after `now`: not due yet, though its key holds `now`'s millisecond.
    let later = t(200) + Duration::microseconds(500);
    hydrate(
        &*store,
        3,
        HydrationOutcome::Retry {
            error: "x".into(),
            due_at: later,
        },
        t(22),
    )
    .await;
    assert_eq!(to_hydrate(&*store, 200).await, vec![2, 1]);
    assert_eq!(
        ids(&store.court_messages_to_hydrate(later, 10).await.unwrap()),
        vec![2, 1, 3]
    );
    // Due before 1970 sorts first.
    index(&*store, 1, &[listed("old", 0)], -2_000_000_000).await;
    assert_eq!(to_hydrate(&*store, 200).await, vec![4, 2, 1]);
    // Hydrated, unreadable, failed and deleted entries leave the queue.
    hydrate(&*store, 4, hydrated("AZ"), t(201)).await;
    hydrate(
        &*store,
        2,
        HydrationOutcome::Failed {
            error: "gone".into(),
        },
        t(201),
    )
    .await;
    delete(&*store, 1, DeletionCause::Retention, t(201)).await;
    assert_eq!(to_hydrate(&*store, 1000).await, vec![3]);
    hydrate(
        &*store,
        3,
        HydrationOutcome::Unreadable {
            error: "not XJustiz".into(),
            received_at: None,
        },
        t(202),
    )
    .await;
    assert!(to_hydrate(&*store, 1000).await.is_empty());
}

async fn every_hydration_outcome_is_recorded(place: Place) {
    let store = place.open().await;
    let page = [
        listed("a", 0),
        received(listed("b", 0), 3),
        listed("c", 0),
        listed("d", 0),
    ];
    index(&*store, 1, &page, 10).await;

    // Hydrated: its case reference, now, and the first retrieval if it had none.
    let one = hydrate(&*store, 1, hydrated("AZ 1"), t(20)).await.unwrap();
    assert_eq!(one.hydration, Hydration::Hydrated);
    assert_eq!(one.hydrated_at, Some(t(20)));
    assert_eq!(one.aktenzeichen.as_deref(), Some("AZ 1"));
    assert_eq!(one.received_at, Some(t(500)));
    assert!(one.archived());
    assert_eq!(one.error(), None);
    assert_eq!(get(&*store, 1).await, one);
    let two = hydrate(&*store, 2, hydrated("AZ 2"), t(20)).await.unwrap();
    assert_eq!(two.received_at, Some(t(3)), "kept");
    let none = HydrationOutcome::Hydrated {
        aktenzeichen: None,
        received_at: None,
    };
    // Retry: attempts counted, the error kept (bounded), then hydrated after all.
    let long = "ä".repeat(MAX_COURT_MESSAGE_ERROR);
    let three = hydrate(&*store, 3, retry(&long, 30), t(21)).await.unwrap();
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
    let three = hydrate(&*store, 3, retry("again", 40), t(31))
        .await
        .unwrap();
    assert!(matches!(
        three.hydration,
        Hydration::Waiting { attempts: 2, .. }
    ));
    let three = hydrate(&*store, 3, none.clone(), t(41)).await.unwrap();
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
    let four = hydrate(&*store, 4, unreadable.clone(), t(22))
        .await
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
        assert_eq!(hydrate(&*store, id, none.clone(), t(50)).await, None);
        assert_eq!(hydrate(&*store, id, retry("x", 60), t(50)).await, None);
    }
    assert_eq!(get(&*store, 4).await, four, "unchanged");
    assert_eq!(hydrate(&*store, 99, none.clone(), t(50)).await, None);
    index(&*store, 1, &[listed("e", 0), listed("f", 0)], 10).await;
    delete(&*store, 5, acknowledged(), t(51)).await;
    assert_eq!(hydrate(&*store, 5, none.clone(), t(52)).await, None);
    assert_eq!(
        get(&*store, 5).await.hydration,
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
    let six = hydrate(&*store, 6, failed, t(53)).await.unwrap();
    assert_eq!(
        six.hydration,
        Hydration::Failed {
            error: "404 every time".into()
        }
    );
    assert_eq!(six.error(), Some("404 every time"));
    assert!(!six.archived());
    assert_eq!(hydrate(&*store, 6, none, t(54)).await, None);
}

async fn case_references_map_to_jobs_at_hydration(place: Place) {
    let store = place.open().await;
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
        &*store,
        1,
        &[listed("a", 0), listed("b", 0), listed("c", 0)],
        10,
    )
    .await;
    index(&*store, 2, &[listed("a", 0)], 10).await;
    let mapped = hydrate(&*store, 1, hydrated("AZ 1"), t(20)).await.unwrap();
    assert_eq!(mapped.job_id.as_deref(), Some("job-a"));
    let unmapped = hydrate(&*store, 2, hydrated("AZ 9"), t(20)).await.unwrap();
    assert_eq!(unmapped.job_id, None);
    let other_account = hydrate(&*store, 4, hydrated("AZ 1"), t(20)).await.unwrap();
    assert_eq!(other_account.job_id, None);
    // A mapping made later applies to messages hydrated from then on, not to earlier ones.
    assert!(store
        .map_case_reference(acc(1), "AZ 9", "job-c")
        .await
        .unwrap());
    assert_eq!(get(&*store, 2).await.job_id, None);
    let later = hydrate(&*store, 3, hydrated("AZ 9"), t(21)).await.unwrap();
    assert_eq!(later.job_id.as_deref(), Some("job-c"));
}

async fn deletion_is_soft_and_idempotent(place: Place) {
    let store = place.open().await;
    index(&*store, 1, &[listed("a", 0)], 10).await;
    hydrate(&*store, 1, hydrated("AZ"), t(11)).await;
    let CourtMessageDeleted::Deleted(deleted) = delete(&*store, 1, acknowledged(), t(12)).await
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
    assert_eq!(get(&*store, 1).await, deleted);
    // Again, by any cause: unchanged.
    assert_eq!(
        delete(&*store, 1, DeletionCause::Retention, t(13)).await,
        CourtMessageDeleted::AlreadyDeleted(deleted.clone())
    );
    assert_eq!(get(&*store, 1).await, deleted);
    assert_eq!(
        delete(&*store, 2, acknowledged(), t(13)).await,
        CourtMessageDeleted::NotFound
    );
}

/// Times keep their nanoseconds (PostgreSQL's `timestamptz` holds microseconds): an entry reads
/// back as indexed, a due time a few nanoseconds after `now` is not due, and `since` and the
/// retention cutoff compare exact times.
async fn times_keep_their_nanoseconds(place: Place) {
    let store = place.open().await;
    let ns = |secs: i64, nanos: i64| t(secs) + Duration::nanoseconds(nanos);
    let mut message = received(listed("a", 0), 0);
    message.created_at = ns(1, 123_456_789);
    message.received_at = Some(ns(2, 987_654_321));
    let new = store
        .index_court_messages(acc(1), "DE.Justiz.1", vec![message], None, ns(3, 5))
        .await
        .unwrap();
    assert_eq!(get(&*store, 1).await, new[0]);
    let due = ns(10, 301);
    hydrate(
        &*store,
        1,
        HydrationOutcome::Retry {
            error: "x".into(),
            due_at: due,
        },
        ns(4, 7),
    )
    .await;
    assert!(store
        .court_messages_to_hydrate(ns(10, 300), 10)
        .await
        .unwrap()
        .is_empty());
    let queued = store.court_messages_to_hydrate(due, 10).await.unwrap();
    assert_eq!(ids(&queued), vec![1]);
    assert_eq!(queued[0], get(&*store, 1).await);
    let since = |at| meldewerk_storage::CourtMessageFilter {
        since: Some(at),
        ..filter(&[1])
    };
    let listed_since = |at| {
        let store = &store;
        async move { ids(&store.court_messages(&since(at), None, 10).await.unwrap()) }
    };
    assert_eq!(listed_since(ns(1, 123_456_788)).await, vec![1]);
    assert!(listed_since(ns(1, 123_456_789)).await.is_empty());
    let before = |at| {
        let store = &store;
        async move {
            ids(&store
                .court_messages_created_before(at, None, 10)
                .await
                .unwrap())
        }
    };
    assert!(before(ns(1, 123_456_789)).await.is_empty());
    assert_eq!(before(ns(1, 123_456_790)).await, vec![1]);
}

contract_tests!(
    the_hydration_queue_answers_due_entries_earliest_first,
    every_hydration_outcome_is_recorded,
    case_references_map_to_jobs_at_hydration,
    deletion_is_soft_and_idempotent,
    times_keep_their_nanoseconds,
);
