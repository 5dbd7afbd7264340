//! Facilities' certificates against the `Store` contract, on every engine: one per site and
//! environment, replaced whole, listed by site test first, kept across a restart; and, in the
//! sled engine, a damaged record named by its site and environment.

use meldewerk_storage::{
    Bsnr, Environment, FacilityCertificate, SledStore, Store, StoreError, WrappedKey,
};

mod common;
use common::engines::Place;
use common::{reopen, t};

fn certificate(bsnr: &str, environment: Environment, subject: &str) -> FacilityCertificate {
    FacilityCertificate {
        bsnr: site(bsnr),
        environment,
        subject: subject.into(),
        not_after: t(86_400_000),
        fingerprint_sha256: "ab".repeat(32),
        key: WrappedKey {
            key_id: format!("key-{subject}"),
            wrapped: vec![7, 8, 9],
        },
        chain_der: vec![vec![0x30, 1, 2], vec![0x30, 3]],
        deposited_at: t(0),
    }
}

fn site(bsnr: &str) -> Bsnr {
    Bsnr::parse(bsnr).unwrap()
}

/// The certificate of 123456789 in `environment`, as stored.
async fn stored(store: &dyn Store, environment: Environment) -> Option<FacilityCertificate> {
    store
        .certificate(&site("123456789"), environment)
        .await
        .unwrap()
}

async fn test_and_production_are_kept_apart_and_a_deposit_replaces_the_one_before(place: Place) {
    let store = place.open().await;
    let store = &*store;
    let test = certificate("123456789", Environment::Test, "CN=test");
    assert_eq!(stored(store, Environment::Test).await, None);

    assert!(!store.put_certificate(test.clone()).await.unwrap());
    assert_eq!(stored(store, Environment::Test).await, Some(test.clone()));
    // The other environment of the same site has none.
    assert_eq!(stored(store, Environment::Production).await, None);

    let production = certificate("123456789", Environment::Production, "CN=production");
    assert!(!store.put_certificate(production.clone()).await.unwrap());
    let renewed = certificate("123456789", Environment::Test, "CN=renewed");
    assert!(store.put_certificate(renewed.clone()).await.unwrap());
    assert_eq!(
        stored(store, Environment::Test).await,
        Some(renewed.clone())
    );
    assert_eq!(
        stored(store, Environment::Production).await,
        Some(production.clone())
    );

    assert!(store
        .remove_certificate(&site("123456789"), Environment::Test)
        .await
        .unwrap());
    assert!(!store
        .remove_certificate(&site("123456789"), Environment::Test)
        .await
        .unwrap());
    assert_eq!(store.certificates().await.unwrap(), vec![production]);
}

async fn certificates_are_listed_by_site_test_first_and_survive_a_restart(place: Place) {
    let deposited = vec![
        certificate("111111111", Environment::Test, "a"),
        certificate("111111111", Environment::Production, "b"),
        certificate("222222222", Environment::Test, "c"),
    ];
    {
        let store = place.open().await;
        // Deposited out of order.
        for c in deposited.iter().rev() {
            store.put_certificate(c.clone()).await.unwrap();
        }
        assert_eq!(store.certificates().await.unwrap(), deposited);
    }
    let store = place.open().await;
    assert_eq!(store.certificates().await.unwrap(), deposited);
}

#[tokio::test]
async fn a_damaged_record_is_refused_with_its_site_and_environment_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let store = SledStore::open(&db).unwrap();
        let record = certificate("123456789", Environment::Production, "a");
        store.put_certificate(record).await.unwrap();
    }
    common::with_raw_db(&db, |raw| {
        let tree = raw.open_tree("certificates").unwrap();
        tree.insert(b"123456789\0production", b"{not json".as_slice())
            .unwrap();
    });
    let store = reopen(&db);
    let error = store
        .certificate(&site("123456789"), Environment::Production)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("certificate 123456789/production"),
        "{error}"
    );
    assert_eq!(Environment::Test.to_string(), "test");
    assert_eq!(Environment::Production.to_string(), "production");
}

async fn deposits_at_once_find_one_certificate_there_before_them(place: Place) {
    let store = place.open().await;
    // Eight deposits for one site and environment, each on a task of its own: the first finds
    // none, every other the one before it.
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let store = store.clone();
            let mut deposit = certificate("123456789", Environment::Test, &format!("CN={n}"));
            // Finer than PostgreSQL's timestamps keep.
            deposit.deposited_at = t(n) + chrono::Duration::nanoseconds(123_456_789);
            tokio::spawn(async move {
                let replaced = store.put_certificate(deposit.clone()).await.unwrap();
                (replaced, deposit)
            })
        })
        .collect();
    let mut deposits = Vec::new();
    for task in tasks {
        deposits.push(task.await.unwrap());
    }
    let first = deposits.iter().filter(|(replaced, _)| !replaced).count();
    assert_eq!(first, 1, "{deposits:?}");
    let stored = stored(&*store, Environment::Test).await.unwrap();
    assert!(
        deposits.iter().any(|(_, deposit)| *deposit == stored),
        "{stored:?}"
    );
    assert_eq!(store.certificates().await.unwrap(), vec![stored]);
}

/// The PostgreSQL engine names a damaged record as the sled engine does.
#[tokio::test]
async fn a_damaged_record_in_postgresql_is_refused_with_its_site_and_environment_named() {
    let place = Place::postgres().await;
    let Place::Postgres(url) = &place else {
        unreachable!("a PostgreSQL place")
    };
    let store = place.open().await;
    let record = certificate("123456789", Environment::Production, "a");
    store.put_certificate(record).await.unwrap();
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    client
        .execute(
            "UPDATE certificates SET record = jsonb_set(record, '{subject}', '1')",
            &[],
        )
        .await
        .unwrap();
    drop(client);
    connection.await.unwrap().unwrap();
    for error in [
        store
            .certificate(&site("123456789"), Environment::Production)
            .await
            .unwrap_err(),
        store.certificates().await.unwrap_err(),
    ] {
        assert!(
            matches!(&error, StoreError::Corrupt(what) if what.contains("certificate 123456789/production")),
            "{error}"
        );
    }
}

contract_tests!(
    test_and_production_are_kept_apart_and_a_deposit_replaces_the_one_before,
    certificates_are_listed_by_site_test_first_and_survive_a_restart,
    deposits_at_once_find_one_certificate_there_before_them,
);
