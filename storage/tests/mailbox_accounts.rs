//! Court-mailbox accounts and grants against the `Store` contract, on every engine: put creates
//! or replaces (keeping `created_at`), one account per SAFE-ID, pages in id order, removal refused
//! while grants exist, grants and revocations per user without leaking to another, a removed
//! user's grants gone with them, the sending check, and everything still there after a reopen.

use std::sync::Arc;

use meldewerk_storage::{
    MailboxAccount, MailboxAccountId, MailboxAccountPut, MailboxRefusal, SafeId, Store, StoreError,
};

mod common;
use common::engines::Place;
use common::{t, user};

fn id(n: i64) -> MailboxAccountId {
    MailboxAccountId::try_from(n).unwrap()
}

fn account(n: i64, safe_id: &str, active: bool, at: i64) -> MailboxAccount {
    MailboxAccount {
        egvp_account_id: id(n),
        safe_id: SafeId::parse(safe_id).unwrap(),
        name: format!("Betreuungsstelle {n}"),
        active,
        created_at: t(at),
        updated_at: t(at),
    }
}

/// A store with users `anna` and `bert` and accounts 1 (`DE.Justiz.eins`) and 2
/// (`DE.BRAK.zwei`), both active.
async fn populated(place: &Place) -> Arc<dyn Store> {
    let store = place.open().await;
    for name in ["anna", "bert"] {
        store
            .create_user(user(name, &format!("key-{name}")))
            .await
            .unwrap();
    }
    store
        .put_mailbox_account(account(1, "DE.Justiz.eins", true, 0))
        .await
        .unwrap();
    store
        .put_mailbox_account(account(2, "DE.BRAK.zwei", true, 0))
        .await
        .unwrap();
    store
}

fn ids(numbers: &[i64]) -> Vec<MailboxAccountId> {
    numbers.iter().map(|&n| id(n)).collect()
}

async fn put_creates_then_replaces_keeping_when_it_was_created(place: Place) {
    let store = place.open().await;
    let first = account(7, "DE.Justiz.sieben", true, 0);
    assert_eq!(
        store.put_mailbox_account(first.clone()).await.unwrap(),
        MailboxAccountPut::Created(first.clone())
    );
    // A new SAFE-ID, name and state; the old SAFE-ID is free again afterwards.
    let changed = account(7, "DE.Justiz.neu", false, 50);
    let put = store.put_mailbox_account(changed.clone()).await.unwrap();
    let expected = MailboxAccount {
        created_at: t(0),
        ..changed
    };
    assert_eq!(put, MailboxAccountPut::Replaced(expected.clone()));
    assert_eq!(put.account(), &expected);
    assert_eq!(
        store.mailbox_account(id(7)).await.unwrap(),
        Some(expected.clone())
    );
    assert_eq!(store.mailbox_account(id(8)).await.unwrap(), None);
    let by = |text: &str| SafeId::parse(text).unwrap();
    assert_eq!(
        store
            .mailbox_account_by_safe_id(&by("DE.Justiz.neu"))
            .await
            .unwrap(),
        Some(expected)
    );
    assert_eq!(
        store
            .mailbox_account_by_safe_id(&by("DE.Justiz.sieben"))
            .await
            .unwrap(),
        None
    );
    store
        .put_mailbox_account(account(8, "DE.Justiz.sieben", true, 0))
        .await
        .unwrap();
}

async fn a_mailbox_belongs_to_one_account_whatever_the_case(place: Place) {
    let store = populated(&place).await;
    for taken in ["DE.Justiz.eins", "DE.JUSTIZ.Eins"] {
        let Err(StoreError::Conflict(message)) =
            store.put_mailbox_account(account(3, taken, true, 0)).await
        else {
            panic!("{taken} was taken");
        };
        assert_eq!(
            message,
            format!("SAFE-ID {taken} is the mailbox of account 1")
        );
    }
    assert_eq!(store.mailbox_account(id(3)).await.unwrap(), None);
    // Replacing an account with its own SAFE-ID is no conflict.
    store
        .put_mailbox_account(account(1, "DE.Justiz.eins", false, 5))
        .await
        .unwrap();
}

async fn accounts_are_listed_in_id_order_page_by_page(place: Place) {
    let store = place.open().await;
    for n in [300, 2, 70_000_000_000, 1, 45] {
        store
            .put_mailbox_account(account(n, &format!("DE.Justiz.a{n}"), true, 0))
            .await
            .unwrap();
    }
    let numbers = |page: &[MailboxAccount]| -> Vec<i64> {
        page.iter().map(|a| a.egvp_account_id.get()).collect()
    };
    let first = store.mailbox_accounts(None, 2).await.unwrap();
    assert_eq!(numbers(&first), [1, 2]);
    let second = store.mailbox_accounts(Some(id(2)), 2).await.unwrap();
    assert_eq!(numbers(&second), [45, 300]);
    let third = store.mailbox_accounts(Some(id(300)), 2).await.unwrap();
    assert_eq!(numbers(&third), [70_000_000_000]);
    assert!(store
        .mailbox_accounts(Some(id(70_000_000_000)), 2)
        .await
        .unwrap()
        .is_empty());
    // `after` need not be a stored id.
    assert_eq!(
        numbers(&store.mailbox_accounts(Some(id(3)), 10).await.unwrap()),
        [45, 300, 70_000_000_000]
    );
}

async fn grants_are_per_user_and_do_not_leak_to_another(place: Place) {
    let store = populated(&place).await;
    assert!(store.grant_mailbox_account(id(1), "anna").await.unwrap());
    assert!(!store.grant_mailbox_account(id(1), "anna").await.unwrap());
    assert!(store.grant_mailbox_account(id(2), "bert").await.unwrap());
    assert!(store.grant_mailbox_account(id(1), "bert").await.unwrap());

    assert_eq!(
        store.mailbox_account_ids_of("anna").await.unwrap(),
        ids(&[1])
    );
    assert_eq!(
        store.mailbox_account_ids_of("bert").await.unwrap(),
        ids(&[1, 2])
    );
    assert_eq!(
        store.mailbox_account_ids_of("carl").await.unwrap(),
        ids(&[])
    );
    assert_eq!(
        store.mailbox_account_users(id(1)).await.unwrap(),
        ["anna", "bert"]
    );
    assert_eq!(store.mailbox_account_users(id(2)).await.unwrap(), ["bert"]);
    let of_anna = store.mailbox_accounts_of("anna").await.unwrap();
    assert_eq!(of_anna, [account(1, "DE.Justiz.eins", true, 0)]);
    assert!(store
        .may_access_mailbox_account("anna", id(1))
        .await
        .unwrap());
    assert!(!store
        .may_access_mailbox_account("anna", id(2))
        .await
        .unwrap());
    assert!(store
        .may_access_mailbox_account("bert", id(2))
        .await
        .unwrap());
    assert!(!store
        .may_access_mailbox_account("carl", id(1))
        .await
        .unwrap());

    assert!(store.revoke_mailbox_account(id(1), "bert").await.unwrap());
    assert!(!store.revoke_mailbox_account(id(1), "bert").await.unwrap());
    assert!(!store.revoke_mailbox_account(id(9), "bert").await.unwrap());
    assert_eq!(
        store.mailbox_account_ids_of("bert").await.unwrap(),
        ids(&[2])
    );
    assert_eq!(store.mailbox_account_users(id(1)).await.unwrap(), ["anna"]);
    assert!(store
        .may_access_mailbox_account("anna", id(1))
        .await
        .unwrap());
}

async fn a_grant_needs_the_account_and_the_user(place: Place) {
    let store = populated(&place).await;
    let not_found = |result: Result<bool, StoreError>| match result {
        Err(StoreError::NotFound(what)) => what,
        other => panic!("not NotFound: {other:?}"),
    };
    assert_eq!(
        not_found(store.grant_mailbox_account(id(9), "anna").await),
        "mailbox account 9"
    );
    assert_eq!(
        not_found(store.grant_mailbox_account(id(1), "carl").await),
        "user carl"
    );
    assert!(store
        .mailbox_account_ids_of("carl")
        .await
        .unwrap()
        .is_empty());
    assert!(store.mailbox_account_users(id(9)).await.unwrap().is_empty());
    // A removed user is no user: their name stays taken, but nothing is granted to it.
    assert!(store.remove_user("bert").await.unwrap());
    assert_eq!(
        not_found(store.grant_mailbox_account(id(1), "bert").await),
        "user bert"
    );
    assert!(store.mailbox_account_users(id(1)).await.unwrap().is_empty());
}

async fn an_account_is_removed_only_once_no_user_is_granted_it(place: Place) {
    let store = populated(&place).await;
    store.grant_mailbox_account(id(1), "anna").await.unwrap();
    store.grant_mailbox_account(id(1), "bert").await.unwrap();
    let Err(StoreError::Conflict(message)) = store.remove_mailbox_account(id(1)).await else {
        panic!("removed while granted");
    };
    assert_eq!(
        message,
        "mailbox account 1 is granted to 2 users (anna, bert); revoke the grants first"
    );
    assert!(store.mailbox_account(id(1)).await.unwrap().is_some());
    store.revoke_mailbox_account(id(1), "anna").await.unwrap();
    store.revoke_mailbox_account(id(1), "bert").await.unwrap();
    assert!(store.remove_mailbox_account(id(1)).await.unwrap());
    assert!(!store.remove_mailbox_account(id(1)).await.unwrap());
    assert_eq!(store.mailbox_account(id(1)).await.unwrap(), None);
    // Its SAFE-ID is free for another account.
    store
        .put_mailbox_account(account(3, "DE.Justiz.eins", true, 0))
        .await
        .unwrap();
}

async fn removing_a_user_drops_their_grants_and_no_one_elses(place: Place) {
    let store = populated(&place).await;
    store.grant_mailbox_account(id(1), "anna").await.unwrap();
    store.grant_mailbox_account(id(2), "anna").await.unwrap();
    store.grant_mailbox_account(id(1), "bert").await.unwrap();
    assert!(store.remove_user("anna").await.unwrap());
    assert!(store
        .mailbox_account_ids_of("anna")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.mailbox_account_users(id(1)).await.unwrap(), ["bert"]);
    assert!(store.mailbox_account_users(id(2)).await.unwrap().is_empty());
    assert_eq!(
        store.mailbox_account_ids_of("bert").await.unwrap(),
        ids(&[1])
    );
    // Account 2 has no grant left: it can go.
    assert!(store.remove_mailbox_account(id(2)).await.unwrap());
}

async fn sending_needs_a_grant_and_an_active_account(place: Place) {
    let store = populated(&place).await;
    store.grant_mailbox_account(id(1), "anna").await.unwrap();
    assert_eq!(
        store.resolve_sending_account("anna", id(1)).await.unwrap(),
        Ok(account(1, "DE.Justiz.eins", true, 0))
    );
    // Another's account and an unknown one are one answer.
    assert_eq!(
        store.resolve_sending_account("anna", id(2)).await.unwrap(),
        Err(MailboxRefusal::NotGranted(id(2)))
    );
    assert_eq!(
        store.resolve_sending_account("anna", id(9)).await.unwrap(),
        Err(MailboxRefusal::NotGranted(id(9)))
    );
    store
        .put_mailbox_account(account(1, "DE.Justiz.eins", false, 0))
        .await
        .unwrap();
    assert_eq!(
        store.resolve_sending_account("anna", id(1)).await.unwrap(),
        Err(MailboxRefusal::Inactive(id(1)))
    );
    // A deactivated account's messages stay visible to its users.
    assert!(store
        .may_access_mailbox_account("anna", id(1))
        .await
        .unwrap());
    assert_eq!(store.mailbox_accounts_of("anna").await.unwrap().len(), 1);
}

async fn accounts_and_grants_are_on_disk_after_a_reopen(place: Place) {
    {
        let store = populated(&place).await;
        store.grant_mailbox_account(id(2), "bert").await.unwrap();
    }
    let store = place.open().await;
    assert_eq!(
        store.mailbox_account(id(2)).await.unwrap(),
        Some(account(2, "DE.BRAK.zwei", true, 0))
    );
    assert_eq!(
        store.mailbox_account_ids_of("bert").await.unwrap(),
        ids(&[2])
    );
    assert_eq!(store.mailbox_account_users(id(2)).await.unwrap(), ["bert"]);
    assert!(matches!(
        store
            .put_mailbox_account(account(5, "DE.BRAK.zwei", true, 0))
            .await,
        Err(StoreError::Conflict(_))
    ));
}

/// `t(secs)` and `nanos` nanoseconds: finer than PostgreSQL's timestamps keep.
fn t_nanos(secs: i64, nanos: i64) -> chrono::DateTime<chrono::Utc> {
    t(secs) + chrono::Duration::nanoseconds(nanos)
}

async fn timestamps_come_back_to_the_nanosecond(place: Place) {
    let store = place.open().await;
    let first = MailboxAccount {
        created_at: t_nanos(0, 123_456_789),
        updated_at: t_nanos(0, 123_456_789),
        ..account(7, "DE.Justiz.sieben", true, 0)
    };
    store.put_mailbox_account(first.clone()).await.unwrap();
    assert_eq!(store.mailbox_account(id(7)).await.unwrap(), Some(first));
    let changed = MailboxAccount {
        updated_at: t_nanos(9, 987_654_321),
        ..account(7, "DE.Justiz.sieben", false, 9)
    };
    let expected = MailboxAccount {
        created_at: t_nanos(0, 123_456_789),
        ..changed.clone()
    };
    assert_eq!(
        store.put_mailbox_account(changed).await.unwrap(),
        MailboxAccountPut::Replaced(expected.clone())
    );
    assert_eq!(store.mailbox_account(id(7)).await.unwrap(), Some(expected));
}

/// Runs `count` calls of `call` at once (each on a task of its own) and answers their results in
/// the order of `0..count`.
async fn at_once<T: Send + 'static, F>(count: i64, call: impl Fn(i64) -> F) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
{
    let tasks: Vec<_> = (0..count).map(|n| tokio::spawn(call(n))).collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

async fn puts_at_once_create_an_account_once_and_give_a_mailbox_to_one(place: Place) {
    let store = place.open().await;
    // Eight puts of one new account: one creates it, the others replace it and keep its
    // `created_at`.
    let puts = at_once(8, |n| {
        let store = store.clone();
        async move {
            store
                .put_mailbox_account(account(7, "DE.Justiz.sieben", true, n))
                .await
                .unwrap()
        }
    })
    .await;
    let created: Vec<&MailboxAccount> = puts
        .iter()
        .filter_map(|put| match put {
            MailboxAccountPut::Created(account) => Some(account),
            MailboxAccountPut::Replaced(_) => None,
        })
        .collect();
    assert_eq!(created.len(), 1, "{puts:?}");
    let created_at = created[0].created_at;
    assert!(puts
        .iter()
        .all(|put| put.account().created_at == created_at));
    let stored = store.mailbox_account(id(7)).await.unwrap().unwrap();
    assert_eq!(stored.created_at, created_at);

    // Eight new accounts with one SAFE-ID (spelt in two cases): one gets it, the others are
    // told which account has it.
    let puts = at_once(8, |n| {
        let store = store.clone();
        let safe_id = if n % 2 == 0 {
            "DE.Justiz.acht"
        } else {
            "DE.JUSTIZ.Acht"
        };
        async move {
            store
                .put_mailbox_account(account(10 + n, safe_id, true, 0))
                .await
        }
    })
    .await;
    let winners: Vec<i64> = puts
        .iter()
        .filter_map(|put| match put {
            Ok(MailboxAccountPut::Created(account)) => Some(account.egvp_account_id.get()),
            _ => None,
        })
        .collect();
    assert_eq!(winners.len(), 1, "{puts:?}");
    let winner = winners[0];
    for (n, put) in puts.iter().enumerate() {
        if 10 + n as i64 == winner {
            continue;
        }
        let safe_id = if n % 2 == 0 {
            "DE.Justiz.acht"
        } else {
            "DE.JUSTIZ.Acht"
        };
        match put {
            Err(StoreError::Conflict(message)) => assert_eq!(
                message,
                &format!("SAFE-ID {safe_id} is the mailbox of account {winner}")
            ),
            other => panic!("account {}: {other:?}", 10 + n),
        }
    }
    let page = store.mailbox_accounts(Some(id(7)), 100).await.unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].egvp_account_id, id(winner));
}

async fn grants_at_once_with_removals_leave_no_grant_behind(place: Place) {
    let store = populated(&place).await;
    let names: Vec<String> = (0..6).map(|n| format!("user{n}")).collect();
    for name in &names {
        store
            .create_user(user(name, &format!("key-{name}")))
            .await
            .unwrap();
    }
    // Each user granted account 1 while being removed: whichever comes first, no grant of a
    // removed user stays.
    let grants = at_once(6, |n| {
        let store = store.clone();
        async move {
            store
                .grant_mailbox_account(id(1), &format!("user{n}"))
                .await
        }
    });
    let removals = at_once(6, |n| {
        let store = store.clone();
        async move { store.remove_user(&format!("user{n}")).await.unwrap() }
    });
    let (grants, removals) = tokio::join!(grants, removals);
    assert!(removals.iter().all(|&removed| removed));
    for (n, grant) in grants.iter().enumerate() {
        match grant {
            Ok(true) => {}
            Err(StoreError::NotFound(what)) => assert_eq!(what, &format!("user user{n}")),
            other => panic!("user{n}: {other:?}"),
        }
    }
    assert!(store.mailbox_account_users(id(1)).await.unwrap().is_empty());

    // A grant of account 2 while it is removed: either the grant comes first and the removal
    // is refused, or the removal does and the grant finds no account.
    let (grant, removal) = tokio::join!(
        {
            let store = store.clone();
            async move { store.grant_mailbox_account(id(2), "bert").await }
        },
        {
            let store = store.clone();
            async move { store.remove_mailbox_account(id(2)).await }
        }
    );
    match (grant, removal) {
        (Ok(true), Err(StoreError::Conflict(_))) => {
            assert_eq!(store.mailbox_account_users(id(2)).await.unwrap(), ["bert"]);
        }
        (Err(StoreError::NotFound(_)), Ok(true)) => {
            assert!(store
                .mailbox_account_ids_of("bert")
                .await
                .unwrap()
                .is_empty());
            assert_eq!(store.mailbox_account(id(2)).await.unwrap(), None);
        }
        other => panic!("{other:?}"),
    }
}

contract_tests!(
    put_creates_then_replaces_keeping_when_it_was_created,
    a_mailbox_belongs_to_one_account_whatever_the_case,
    accounts_are_listed_in_id_order_page_by_page,
    grants_are_per_user_and_do_not_leak_to_another,
    a_grant_needs_the_account_and_the_user,
    an_account_is_removed_only_once_no_user_is_granted_it,
    removing_a_user_drops_their_grants_and_no_one_elses,
    sending_needs_a_grant_and_an_active_account,
    accounts_and_grants_are_on_disk_after_a_reopen,
    timestamps_come_back_to_the_nanosecond,
    puts_at_once_create_an_account_once_and_give_a_mailbox_to_one,
    grants_at_once_with_removals_leave_no_grant_behind,
);
