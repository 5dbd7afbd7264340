//! Helpers shared by the store's integration tests.

use std::path::Path;
use std::time::{Duration, Instant};

/// Opens the database with sled itself, the way an older version of the store left it or a
/// damaged disk might, and lets `change` alter it. A store dropped just before may hold sled's
/// file lock for a moment longer (sled's I/O threads let go of the database after their last
/// write), so opening is tried for a few seconds.
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
