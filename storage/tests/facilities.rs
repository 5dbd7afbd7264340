//! The facility registry and customer scopes against the `Store` contract, on every engine:
//! put creates or replaces (keeping `created_at`), pages come in BSNR order, removal, scopes,
//! the resolving call with each refusal, and everything still there after a reopen.

use meldewerk_storage::{
    Bsnr, CustomerScope, Facility, FacilityPut, FacilityRefusal, Ik, PostalAddress, Store,
};

mod common;
use common::engines::Place;
use common::t;

fn bsnr(text: &str) -> Bsnr {
    Bsnr::parse(text).unwrap()
}

fn facility(number: &str, ik: &str, active: bool, at: i64) -> Facility {
    Facility {
        bsnr: bsnr(number),
        name: format!("Labor {number}"),
        address: PostalAddress {
            street: "Hauptstraße 5".into(),
            postal_code: "10117".into(),
            city: "Berlin".into(),
            country: "DE".into(),
        },
        ik: Ik::parse(ik).unwrap(),
        active,
        created_at: t(at),
        updated_at: t(at),
    }
}

fn scope(customer: &str, iks: &[&str]) -> CustomerScope {
    CustomerScope {
        customer: customer.into(),
        iks: iks.iter().map(|ik| Ik::parse(ik).unwrap()).collect(),
    }
}

/// Stores each facility; panics unless the store takes it.
async fn put_all(store: &dyn Store, facilities: impl IntoIterator<Item = Facility>) {
    for facility in facilities {
        store.put_facility(facility).await.unwrap();
    }
}

async fn put_creates_then_replaces_keeping_when_it_was_created(place: Place) {
    let store = place.open().await;
    let first = facility("123456789", "260326822", true, 0);
    assert_eq!(
        store.put_facility(first.clone()).await.unwrap(),
        FacilityPut::Created(first.clone())
    );
    let mut changed = facility("123456789", "260326823", false, 50);
    changed.name = "Labor Nord".into();
    let put = store.put_facility(changed.clone()).await.unwrap();
    let expected = Facility {
        created_at: t(0),
        ..changed
    };
    assert_eq!(put, FacilityPut::Replaced(expected.clone()));
    assert_eq!(put.facility(), &expected);
    assert_eq!(
        store.facility(&bsnr("123456789")).await.unwrap(),
        Some(expected)
    );
    assert_eq!(store.facility(&bsnr("000000000")).await.unwrap(), None);
}

async fn facilities_are_listed_in_bsnr_order_page_by_page(place: Place) {
    let store = place.open().await;
    let stored = [
        "300000000",
        "012345678",
        "200000000",
        "100000000",
        "999999999",
    ]
    .map(|number| facility(number, "260326822", true, 0));
    put_all(&*store, stored).await;
    let numbers = |page: Vec<Facility>| -> Vec<String> {
        page.into_iter().map(|f| f.bsnr.to_string()).collect()
    };
    let first = store.facilities(None, 2).await.unwrap();
    assert_eq!(numbers(first.clone()), ["012345678", "100000000"]);
    let second = store.facilities(Some(&first[1].bsnr), 2).await.unwrap();
    assert_eq!(numbers(second.clone()), ["200000000", "300000000"]);
    let third = store.facilities(Some(&second[1].bsnr), 2).await.unwrap();
    assert_eq!(numbers(third), ["999999999"]);
    assert!(store
        .facilities(Some(&bsnr("999999999")), 2)
        .await
        .unwrap()
        .is_empty());
    // `after` need not be a stored BSNR.
    assert_eq!(
        numbers(
            store
                .facilities(Some(&bsnr("150000000")), 10)
                .await
                .unwrap()
        ),
        ["200000000", "300000000", "999999999"]
    );
}

async fn remove_says_whether_there_was_one(place: Place) {
    let store = place.open().await;
    put_all(&*store, [facility("123456789", "260326822", true, 0)]).await;
    assert!(store.remove_facility(&bsnr("123456789")).await.unwrap());
    assert!(!store.remove_facility(&bsnr("123456789")).await.unwrap());
    assert_eq!(store.facility(&bsnr("123456789")).await.unwrap(), None);
}

async fn a_scope_is_replaced_whole_and_an_empty_one_removes_it(place: Place) {
    let store = place.open().await;
    assert_eq!(store.customer_scope("K-1").await.unwrap(), None);
    store
        .set_customer_scope(scope("K-1", &["260326822", "260326823"]))
        .await
        .unwrap();
    store
        .set_customer_scope(scope("K-1", &["111111111"]))
        .await
        .unwrap();
    store
        .set_customer_scope(scope("K-2", &["260326822"]))
        .await
        .unwrap();
    assert_eq!(
        store.customer_scope("K-1").await.unwrap(),
        Some(scope("K-1", &["111111111"]))
    );
    store.set_customer_scope(scope("K-1", &[])).await.unwrap();
    assert_eq!(store.customer_scope("K-1").await.unwrap(), None);
    assert_eq!(
        store.customer_scope("K-2").await.unwrap(),
        Some(scope("K-2", &["260326822"]))
    );
}

async fn resolving_answers_the_facility_or_the_refusal(place: Place) {
    let store = place.open().await;
    put_all(
        &*store,
        [
            facility("123456789", "260326822", true, 0),
            facility("223456789", "260326822", false, 0),
            facility("323456789", "999999999", true, 0),
        ],
    )
    .await;
    store
        .set_customer_scope(scope("K-1", &["260326822"]))
        .await
        .unwrap();
    let resolve = |customer: Option<&'static str>, number: &'static str| {
        let store = store.clone();
        async move {
            store
                .resolve_facility(customer, &bsnr(number))
                .await
                .unwrap()
        }
    };
    assert_eq!(
        resolve(Some("K-1"), "123456789").await,
        Ok(facility("123456789", "260326822", true, 0))
    );
    assert_eq!(
        resolve(Some("K-1"), "000000001").await,
        Err(FacilityRefusal::Unknown(bsnr("000000001")))
    );
    assert_eq!(
        resolve(Some("K-1"), "223456789").await,
        Err(FacilityRefusal::Inactive(bsnr("223456789")))
    );
    assert_eq!(
        resolve(Some("K-1"), "323456789").await,
        Err(FacilityRefusal::OutOfScope(bsnr("323456789")))
    );
    // No customer, or a customer nobody gave a scope: out of scope for every facility.
    assert_eq!(
        resolve(None, "123456789").await,
        Err(FacilityRefusal::OutOfScope(bsnr("123456789")))
    );
    assert_eq!(
        resolve(Some("K-9"), "123456789").await,
        Err(FacilityRefusal::OutOfScope(bsnr("123456789")))
    );
}

async fn the_registry_is_on_disk_after_a_reopen(place: Place) {
    {
        let store = place.open().await;
        put_all(&*store, [facility("123456789", "260326822", true, 0)]).await;
        store
            .set_customer_scope(scope("K-1", &["260326822"]))
            .await
            .unwrap();
    }
    let store = place.open().await;
    assert_eq!(
        store.facility(&bsnr("123456789")).await.unwrap(),
        Some(facility("123456789", "260326822", true, 0))
    );
    assert_eq!(
        store.customer_scope("K-1").await.unwrap(),
        Some(scope("K-1", &["260326822"]))
    );
}

async fn timestamps_come_back_to_the_nanosecond(place: Place) {
    let store = place.open().await;
    // Finer than PostgreSQL's timestamps keep.
    let at = |secs: i64, nanos: i64| t(secs) + chrono::Duration::nanoseconds(nanos);
    let first = Facility {
        created_at: at(0, 123_456_789),
        updated_at: at(0, 123_456_789),
        ..facility("123456789", "260326822", true, 0)
    };
    store.put_facility(first.clone()).await.unwrap();
    assert_eq!(
        store.facility(&bsnr("123456789")).await.unwrap(),
        Some(first)
    );
    let changed = Facility {
        updated_at: at(9, 987_654_321),
        ..facility("123456789", "260326822", false, 9)
    };
    let expected = Facility {
        created_at: at(0, 123_456_789),
        ..changed.clone()
    };
    assert_eq!(
        store.put_facility(changed).await.unwrap(),
        FacilityPut::Replaced(expected.clone())
    );
    assert_eq!(store.facilities(None, 10).await.unwrap(), vec![expected]);
}

async fn puts_at_once_create_a_facility_once(place: Place) {
    let store = place.open().await;
    // Eight puts of one new facility, each on a task of its own: one creates it, the others
    // replace it and keep its `created_at`.
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .put_facility(facility("123456789", "260326822", true, n))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut puts = Vec::new();
    for task in tasks {
        puts.push(task.await.unwrap());
    }
    let created: Vec<&Facility> = puts
        .iter()
        .filter_map(|put| match put {
            FacilityPut::Created(facility) => Some(facility),
            FacilityPut::Replaced(_) => None,
        })
        .collect();
    assert_eq!(created.len(), 1, "{puts:?}");
    let created_at = created[0].created_at;
    assert!(puts
        .iter()
        .all(|put| put.facility().created_at == created_at));
    let stored = store.facility(&bsnr("123456789")).await.unwrap().unwrap();
    assert_eq!(stored.created_at, created_at);
}

/// A facility's change is read back at once, also after the facility was read before it (the
/// sled store keeps records it read in memory; a change must not leave the old one there). A
/// scope's change after a read is checked by `a_scope_is_replaced_whole_and_an_empty_one_removes_it`.
async fn a_change_is_read_at_once_after_a_read(place: Place) {
    let store = place.open().await;
    let number = bsnr("123456789");
    put_all(&*store, [facility("123456789", "260326822", true, 0)]).await;
    assert!(store.facility(&number).await.unwrap().unwrap().active);
    put_all(&*store, [facility("123456789", "260326822", false, 10)]).await;
    assert!(!store.facility(&number).await.unwrap().unwrap().active);
    assert!(store.remove_facility(&number).await.unwrap());
    assert_eq!(store.facility(&number).await.unwrap(), None);
}

contract_tests!(
    put_creates_then_replaces_keeping_when_it_was_created,
    a_change_is_read_at_once_after_a_read,
    facilities_are_listed_in_bsnr_order_page_by_page,
    remove_says_whether_there_was_one,
    a_scope_is_replaced_whole_and_an_empty_one_removes_it,
    resolving_answers_the_facility_or_the_refusal,
    the_registry_is_on_disk_after_a_reopen,
    timestamps_come_back_to_the_nanosecond,
    puts_at_once_create_a_facility_once,
);
