//! The store's contract tests run against every engine: a test takes the [`Place`] a store lives
//! in, opens it (again, for a reopen), and [`contract_tests!`] runs it once on sled and once on
//! PostgreSQL (a database of its own on the test process's cluster).

use std::sync::Arc;

use meldewerk_storage::postgres::testing;
use meldewerk_storage::{PgSettings, PgStore, Store};
use tempfile::TempDir;

/// Where a store lives: what a reopen opens again.
pub enum Place {
    /// A sled data directory.
    Sled(TempDir),
    /// A PostgreSQL database's address.
    Postgres(String),
}

impl Place {
    /// A new, empty sled data directory.
    pub async fn sled() -> Place {
        Place::Sled(tempfile::tempdir().unwrap())
    }

    /// A new, empty PostgreSQL database.
    pub async fn postgres() -> Place {
        Place::Postgres(testing::cluster().fresh_database().await)
    }

    /// Opens the store that lives here (a reopen after the last one is dropped: sled's lock is
    /// waited for).
    pub async fn open(&self) -> Arc<dyn Store> {
        match self {
            Place::Sled(dir) => Arc::new(super::reopen(&dir.path().join("db"))),
            Place::Postgres(url) => Arc::new(
                PgStore::open(&PgSettings::new(url.clone()))
                    .await
                    .unwrap_or_else(|e| panic!("opening {url}: {e}")),
            ),
        }
    }
}

/// `contract_tests!(a, b)` runs each `async fn a(place: Place)` of the file as two tests,
/// `a::sled` and `a::postgres`. `contract_tests!(multi_thread: a, b)` runs them on a runtime
/// with four worker threads, for tests of callers acting at the same time.
#[macro_export]
macro_rules! contract_tests {
    (multi_thread: $($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sled() {
                    super::$name($crate::common::engines::Place::sled().await).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    super::$name($crate::common::engines::Place::postgres().await).await
                }
            }
        )*
    };
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test]
                async fn sled() {
                    super::$name($crate::common::engines::Place::sled().await).await
                }

                #[tokio::test]
                async fn postgres() {
                    super::$name($crate::common::engines::Place::postgres().await).await
                }
            }
        )*
    };
}
