//! Helpers shared by the store's integration tests.

pub mod court;
#[allow(dead_code)] // not every test file runs on both engines
pub mod engines;

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use meldewerk_storage::{PreparedMessage, UserRecord, WrappedKey};

/// A fixed moment `secs` seconds after the tests' epoch.
#[allow(dead_code)] // not every test file needs it
pub fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

/// A user `name` whose memento key has id `key_id`, created at `t(0)`.
#[allow(dead_code)] // not every test file needs it
pub fn user(name: &str, key_id: &str) -> UserRecord {
    UserRecord {
        name: name.into(),
        customer: None,
        email: None,
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        memento_key: WrappedKey {
            key_id: key_id.into(),
            wrapped: vec![1, 2, 3],
        },
        seal: None,
        created_at: t(0),
        password_changed_at: t(0),
        magic_links: true,
        court_message_contact: None,
    }
}

/// A small built message with UUID `uuid`, prepared at `t(1)`.
#[allow(dead_code)] // not every test file needs it
pub fn message(uuid: &str) -> PreparedMessage {
    PreparedMessage {
        message_uuid: uuid.into(),
        content_type: "application/xml".into(),
        body: format!("<msg id=\"{uuid}\"/>").into_bytes(),
        signature: None,
        prepared_at: t(1),
        sender: None,
    }
}

/// Opens the database with sled itself, the way an older version of the store left it or a
/// damaged disk might, and lets `change` alter it. A store dropped just before may hold sled's
/// file lock for a moment longer (sled's I/O threads let go of the database after their last
/// write), so opening is tried for a few seconds.
#[allow(dead_code)] // not every test file needs it
pub fn with_raw_db(path: &Path, change: impl FnOnce(&sled::Db)) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let db = loop {
        match sled::Config::new().path(path).open() {
            Ok(db) => break db,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("cannot open {}: {e}", path.display()),
        }
    };
    change(&db);
    db.flush().unwrap();
}

/// Opens the store in `path`, trying for a few seconds while the handle dropped a moment before
/// (sled's threads, or a raw database of [`with_raw_db`]) still holds its lock.
#[allow(dead_code)] // not every test file needs it
pub fn reopen(path: &Path) -> meldewerk_storage::SledStore {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match meldewerk_storage::SledStore::open(path) {
            Ok(store) => return store,
            Err(meldewerk_storage::StoreError::Locked(_)) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("cannot open {}: {e}", path.display()),
        }
    }
}
