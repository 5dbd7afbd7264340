//! Helpers of the court-message index's tests: a store, listed messages, outcomes and the
//! calls they make most, answered without the `Result` (a store error fails the test).
#![allow(dead_code)] // not every test file needs each

use chrono::{DateTime, Utc};
use meldewerk_storage::{
    CourtMessage, CourtMessageDeleted, CourtMessageDirection, CourtMessageFilter, DeletionCause,
    HydrationOutcome, ListedCourtMessage, MailboxAccountId, Store,
};

use super::t;

/// Mailbox account `n`.
pub fn acc(n: i64) -> MailboxAccountId {
    MailboxAccountId::try_from(n).unwrap()
}

/// Message `message_id` as a listing names it, created at `t(created)`, not retrieved yet.
pub fn listed(message_id: &str, created: i64) -> ListedCourtMessage {
    ListedCourtMessage {
        message_id: message_id.into(),
        direction: CourtMessageDirection::Incoming,
        created_at: t(created),
        received_at: None,
        size: 1234,
    }
}

pub fn received(mut message: ListedCourtMessage, at: i64) -> ListedCourtMessage {
    message.received_at = Some(t(at));
    message
}

/// Indexes `messages` of account `n` (SAFE-ID `DE.Justiz.n`) at `t(now)` with no cursor; the
/// new entries' ids.
pub async fn index(
    store: &dyn Store,
    n: i64,
    messages: &[ListedCourtMessage],
    now: i64,
) -> Vec<u64> {
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

pub fn ids(messages: &[CourtMessage]) -> Vec<u64> {
    messages.iter().map(|m| m.id).collect()
}

pub fn filter(accounts: &[i64]) -> CourtMessageFilter {
    CourtMessageFilter {
        accounts: accounts.iter().map(|&n| acc(n)).collect(),
        ..CourtMessageFilter::default()
    }
}

pub fn hydrated(aktenzeichen: &str) -> HydrationOutcome {
    HydrationOutcome::Hydrated {
        aktenzeichen: Some(aktenzeichen.into()),
        received_at: Some(t(500)),
    }
}

pub fn retry(error: &str, due: i64) -> HydrationOutcome {
    HydrationOutcome::Retry {
        error: error.into(),
        due_at: t(due),
    }
}

pub fn acknowledged() -> DeletionCause {
    DeletionCause::Acknowledged {
        user: "anna".into(),
    }
}

/// Records `outcome` for entry `id` at `now`: the entry as it is after, if recorded.
pub async fn hydrate(
    store: &dyn Store,
    id: u64,
    outcome: HydrationOutcome,
    now: DateTime<Utc>,
) -> Option<CourtMessage> {
    store.record_hydration(id, outcome, now).await.unwrap()
}

pub async fn delete(
    store: &dyn Store,
    id: u64,
    cause: DeletionCause,
    now: DateTime<Utc>,
) -> CourtMessageDeleted {
    store.delete_court_message(id, cause, now).await.unwrap()
}

pub async fn get(store: &dyn Store, id: u64) -> CourtMessage {
    store.court_message(id).await.unwrap().unwrap()
}

pub async fn to_hydrate(store: &dyn Store, now: i64) -> Vec<u64> {
    ids(&store
        .court_messages_to_hydrate(t(now), usize::MAX)
        .await
        .unwrap())
}
