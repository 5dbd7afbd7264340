//! The PostgreSQL engine: the store in a database that several meldewerk nodes share.
//!
//! Every [`crate::Store`] method is one transaction on a pooled connection and returns after its
//! `COMMIT` (with PostgreSQL's default `synchronous_commit = on`, once the commit is on disk), which
//! is the crate's durability contract. Records are stored the way the sled engine stores them,
//! as JSON (`jsonb`; `json` where integrators' text may hold a NUL, which jsonb refuses) of the
//! crate's record types, beside the columns that queries select and order by; payloads (a
//! submission, a built message, a receipt) sit in columns of their own, written once.
//!
//! The schema is versioned ([`migrate`]) and applied when the engine opens, under an advisory
//! lock, so that two nodes starting at once apply it once.
//!
//! The driver's connections run on a runtime of the engine's own (one thread): the store is
//! called from many runtimes (each HTTP worker has one, the actors' arbiters have theirs, tests
//! make their own), and a connection bound to one of those would break when it stops.

mod court_messages;
mod facilities;
mod import;
mod login_failures;
pub mod migrate;
mod nodes;
mod outbox;
mod reports;
mod sessions;
mod store_impl;
#[cfg(feature = "testing")]
pub mod testing;
mod users;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

use crate::{StoreCondition, StoreError, StoreResult};

/// How the engine reaches its database.
#[derive(Clone, Debug)]
pub struct PgSettings {
    /// A libpq connection string or URL: `postgres://user:password@host:5432/meldewerk`, or
    /// `host=/run/postgresql dbname=meldewerk` for a Unix socket.
    pub url: String,
    /// Connections the node keeps open at most.
    pub pool_size: usize,
    /// How long one statement may run before the database cancels it (the request then fails
    /// and nothing of it is stored).
    pub statement_timeout: Duration,
    /// How long a request waits for a free connection, or for a new one to open, before the
    /// store answers unavailable.
    pub connect_timeout: Duration,
    /// This node's name among the nodes on the database: who holds a job's lease, who leads a
    /// piece of periodic work, whose health a row of the node list shows.
    pub node: String,
    /// How long a job's lease, and a lead of periodic work, outlive the node's last heartbeat:
    /// the time after which another node resumes the work of a node that died.
    pub lease: Duration,
    /// Whether this opening is a node, listed among the nodes with a heartbeat of its own;
    /// `false` for a command-line tool that only reads and writes records.
    pub joins: bool,
}

impl PgSettings {
    /// Whether `url` is an address the driver can use (a URL or a connection string).
    pub fn is_address(url: &str) -> bool {
        url.parse::<tokio_postgres::Config>().is_ok()
    }

    /// Where the address points, without user name or password (`database meldewerk on
    /// db.internal:5432`), for what a command prints; an address that does not parse says so
    /// without quoting it.
    pub fn describe(&self) -> String {
        let Ok(config) = self.url.parse::<tokio_postgres::Config>() else {
            return "an address that is no PostgreSQL address".into();
        };
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let host = match host {
                    tokio_postgres::config::Host::Tcp(name) => name.clone(),
                    #[cfg(unix)]
                    tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
                };
                match config.get_ports().get(i).or(config.get_ports().first()) {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                }
            })
            .collect();
        let database = config.get_dbname().unwrap_or("(the user's default)");
        match hosts.as_slice() {
            [] => format!("database {database} on the default host"),
            hosts => format!("database {database} on {}", hosts.join(", ")),
        }
    }

    /// Settings for `url` with the defaults of the service's configuration.
    pub fn new(url: impl Into<String>) -> Self {
        PgSettings {
            url: url.into(),
            pool_size: 16,
            statement_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            node: crate::host_name(),
            lease: Duration::from_secs(30),
            joins: true,
        }
    }
}

/// The PostgreSQL engine of [`crate::Store`].
pub struct PgStore {
    db: Db,
    /// Stops the node's heartbeat when the store is dropped; `None` for a tool.
    _heartbeat: Option<nodes::Heartbeat>,
    /// When this node last swept the login state (sessions, failure counters).
    sweeps: sessions::Sweeps,
}

/// Since when the database could not be reached, and why.
type Unreachable = (DateTime<Utc>, String);

/// What every query needs: the pool, and whether the database answered last time.
#[derive(Clone)]
pub(crate) struct Db {
    pool: Pool,
    /// `None` while the database answers; the first failure to reach it, with its reason.
    unreachable: Arc<Mutex<Option<Unreachable>>>,
    /// When [`Db::condition`] last asked the database whether it answers again.
    last_probe: Arc<Mutex<Option<std::time::Instant>>>,
    /// Keeps the connections' runtime alive as long as the pool.
    _runtime: Arc<ConnectionRuntime>,
    /// This node's name ([`PgSettings::node`]).
    node: Arc<str>,
    /// How long a claim outlives the node's last heartbeat ([`PgSettings::lease`]).
    lease: Duration,
}

impl PgStore {
    /// Opens the engine on the database `settings.url` names, and brings its schema to the
    /// version this build knows ([`migrate::apply`]). Fails when the database cannot be reached
    /// or its schema is newer than this build.
    pub async fn open(settings: &PgSettings) -> StoreResult<PgStore> {
        Ok(Self::open_migrating(settings).await?.0)
    }

    /// [`PgStore::open`], answering also the schema versions it applied (`meldewerk migrate`).
    pub async fn open_migrating(settings: &PgSettings) -> StoreResult<(PgStore, Vec<i32>)> {
        let db = Db::connect(settings)?;
        let applied = migrate::apply(&db).await?;
        let heartbeat = match settings.joins {
            true => Some(nodes::join(&db).await?),
            false => None,
        };
        Ok((PgStore::on(db, heartbeat), applied))
    }

    /// [`PgStore::open`] for a caller that is not async (start-up, the command line): the
    /// work runs on the engine's own runtime while this thread waits for it, so that it may be
    /// called from inside another runtime too.
    pub fn open_blocking(settings: &PgSettings) -> StoreResult<PgStore> {
        let db = Db::connect(settings)?;
        let (done, result) = std::sync::mpsc::channel();
        let migrating = db.clone();
        let joins = settings.joins;
        db.spawn(async move {
            let joined = match migrate::apply(&migrating).await {
                Ok(_) if joins => nodes::join(&migrating).await.map(Some),
                Ok(_) => Ok(None),
                Err(e) => Err(e),
            };
            let _ = done.send(joined);
        });
        let heartbeat = result
            .recv()
            .map_err(|_| StoreError::Backend("the schema migration stopped".into()))??;
        Ok(PgStore::on(db, heartbeat))
    }

    /// The schema's state: the versions applied, and those this build would apply.
    pub async fn schema(&self) -> StoreResult<migrate::SchemaState> {
        migrate::state(&self.db).await
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    fn on(db: Db, heartbeat: Option<nodes::Heartbeat>) -> PgStore {
        PgStore {
            db,
            _heartbeat: heartbeat,
            sweeps: sessions::Sweeps::default(),
        }
    }

    /// Sweeps the login state unless this node did within the last minute (after a write that
    /// adds to it).
    pub(crate) async fn sweep_login_state_if_due(&self) {
        self.sweeps.sweep_if_due(&self.db).await;
    }
}

impl Db {
    /// A pool on `settings.url`; no connection is opened yet.
    pub(crate) fn connect(settings: &PgSettings) -> StoreResult<Db> {
        let mut config: tokio_postgres::Config = settings
            .url
            .parse()
            .map_err(|e| StoreError::Backend(format!("store.url is no PostgreSQL address: {e}")))?;
        let timeout_ms = settings.statement_timeout.as_millis();
        config.options(format!("-c statement_timeout={timeout_ms}"));
        config.application_name("meldewerk");
        config.connect_timeout(settings.connect_timeout);
        let runtime = Arc::new(ConnectionRuntime::start()?);
        let manager = Manager::from_connect(
            config,
            OnOwnRuntime(runtime.clone()),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(settings.connect_timeout))
            .create_timeout(Some(settings.connect_timeout))
            .build()
            .map_err(|e| StoreError::Backend(format!("connection pool: {e}")))?;
        Ok(Db {
            pool,
            unreachable: Arc::new(Mutex::new(None)),
            last_probe: Arc::new(Mutex::new(None)),
            _runtime: runtime,
            node: Arc::from(settings.node.as_str()),
            lease: settings.lease,
        })
    }

    /// This node's name.
    pub(crate) fn node(&self) -> &str {
        &self.node
    }

    /// How long a claim outlives the node's last heartbeat, in seconds, as SQL takes it
    /// (`make_interval(secs => …)`).
    pub(crate) fn lease_secs(&self) -> f64 {
        self.lease.as_secs_f64()
    }

    /// Runs `task` on the engine's runtime.
    pub(crate) fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        self._runtime.handle().spawn(task);
    }

    /// A connection from the pool; `Unavailable` when none can be had (the database is down or
    /// unreachable).
    pub(crate) async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        match self.pool.get().await {
            Ok(client) => Ok(client),
            Err(e) => {
                let reason = format!("the database cannot be reached: {e}");
                self.mark_unreachable(&reason);
                Err(StoreError::Unavailable(reason))
            }
        }
    }

    /// Maps a driver error to the store's, noting a lost connection for [`Db::condition`].
    pub(crate) fn error(&self, e: tokio_postgres::Error) -> StoreError {
        if e.is_closed() || e.code().is_none() && e.as_db_error().is_none() {
            let reason = format!("the database connection failed: {e}");
            self.mark_unreachable(&reason);
            return StoreError::Unavailable(reason);
        }
        match e.code() {
            Some(code) if *code == SqlState::QUERY_CANCELED => {
                StoreError::Backend(format!("a statement ran past store.statement_timeout: {e}"))
            }
            Some(code) if code.code().starts_with("08") || code.code().starts_with("57P") => {
                let reason = format!("the database is unavailable: {e}");
                self.mark_unreachable(&reason);
                StoreError::Unavailable(reason)
            }
            _ => StoreError::Backend(describe(&e)),
        }
    }

    /// Commits `tx` and records that the database answered ([`Db::mark_reachable`]): how every
    /// write ends, so that a commit's error is mapped (and a lost connection noted) alike
    /// everywhere, and no write forgets to clear the unreachable state.
    pub(crate) async fn commit(&self, tx: deadpool_postgres::Transaction<'_>) -> StoreResult<()> {
        tx.commit().await.map_err(|e| self.error(e))?;
        self.mark_reachable();
        Ok(())
    }

    /// Records that a request reached the database (a commit came back): the store serves.
    pub(crate) fn mark_reachable(&self) {
        let mut state = self.unreachable.lock().unwrap_or_else(|p| p.into_inner());
        if state.take().is_some() {
            tracing::info!("the database answers again");
        }
    }

    fn mark_unreachable(&self, reason: &str) {
        let mut state = self.unreachable.lock().unwrap_or_else(|p| p.into_inner());
        if state.is_none() {
            tracing::warn!(%reason, "the database cannot be reached");
            *state = Some((Utc::now(), reason.to_owned()));
        }
    }

    /// Whether the last request reached the database. While it did not, each call (readiness
    /// probes and the engine's watch ask every few seconds) sends one probe at most a second
    /// (`SELECT 1` on a fresh or pooled connection): the answer flips back once the database
    /// answers again, also when no request comes meanwhile.
    pub(crate) fn condition(&self) -> StoreCondition {
        let state = self.unreachable.lock().unwrap_or_else(|p| p.into_inner());
        let Some((since, reason)) = &*state else {
            return StoreCondition::Available;
        };
        let condition = StoreCondition::Unavailable {
            since: *since,
            reason: reason.clone(),
        };
        drop(state);
        self.probe();
        condition
    }

    /// Asks the database whether it answers, unless a probe ran within the last second.
    fn probe(&self) {
        {
            let mut last = self.last_probe.lock().unwrap_or_else(|p| p.into_inner());
            let now = std::time::Instant::now();
            if last.is_some_and(|at| now.duration_since(at) < Duration::from_secs(1)) {
                return;
            }
            *last = Some(now);
        }
        let db = self.clone();
        self._runtime.handle().spawn(async move {
            if let Ok(client) = db.client().await {
                if client.simple_query("SELECT 1").await.is_ok() {
                    db.mark_reachable();
                }
            }
        });
    }
}

/// A driver error with the database's own message and detail, when it sent one.
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {} ({detail})", db.code().code(), db.message()),
            None => format!("{}: {}", db.code().code(), db.message()),
        },
        None => e.to_string(),
    }
}

/// Whether `e` is the database refusing a duplicate key (a unique constraint).
pub(crate) fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

/// A record as stored: JSON of its type.
pub(crate) fn to_json<T: serde::Serialize>(
    what: &str,
    value: &T,
) -> StoreResult<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// A stored record read back; `Corrupt` (naming `what`) when it is not one.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    value: serde_json::Value,
) -> StoreResult<T> {
    serde_json::from_value(value).map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// The runtime the connections live on: one thread of its own, stopped when the last pool
/// that uses it is dropped.
struct ConnectionRuntime(Option<tokio::runtime::Runtime>);

impl ConnectionRuntime {
    fn start() -> StoreResult<Self> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("meldewerk-postgres")
            .enable_all()
            .build()
            .map(|runtime| ConnectionRuntime(Some(runtime)))
            .map_err(|e| StoreError::Backend(format!("the database connections' runtime: {e}")))
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        self.0
            .as_ref()
            .expect("the runtime lives until drop")
            .handle()
    }
}

impl Drop for ConnectionRuntime {
    fn drop(&mut self) {
        // Dropped from inside another runtime (a test, a worker): a blocking shutdown would panic
        // there; the connections end with their tasks.
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Opens each connection on the engine's runtime, where its I/O task then runs.
struct OnOwnRuntime(Arc<ConnectionRuntime>);

impl deadpool_postgres::Connect for OnOwnRuntime {
    fn connect(
        &self,
        pg_config: &tokio_postgres::Config,
    ) -> futures::future::BoxFuture<
        '_,
        Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), tokio_postgres::Error>,
    > {
        let config = pg_config.clone();
        let handle = self.0.handle().clone();
        Box::pin(async move {
            let spawner = handle.clone();
            let opened = handle
                .spawn(async move {
                    let (client, connection) = config.connect(NoTls).await?;
                    let task = spawner.spawn(async move {
                        if let Err(e) = connection.await {
                            tracing::warn!(error = %e, "a database connection ended");
                        }
                    });
                    Ok((client, task))
                })
                .await;
            match opened {
                Ok(result) => result,
                // The runtime is shutting down: the pool is being dropped.
                Err(_) => Err(closed_error().await),
            }
        })
    }
}

/// A driver error saying the connection is closed, for a connect cut short by the engine's
/// shutdown (the driver has no public constructor for its errors).
async fn closed_error() -> tokio_postgres::Error {
    let config: tokio_postgres::Config = "host=/nonexistent/meldewerk-closed"
        .parse()
        .expect("a fixed, valid address");
    match config.connect(NoTls).await {
        Err(e) => e,
        Ok(_) => unreachable!("no server listens at a path that does not exist"),
    }
}
