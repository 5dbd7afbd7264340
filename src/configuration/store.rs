//! `[store]`: where the store lives, and `[node]`: this node among the nodes that share one.

use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// Where the store lives (`[store]`): the embedded sled database in the data directory (one
/// node, the default), or a PostgreSQL database that several nodes share.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    /// `sled` or `postgres`.
    pub engine: StoreEngine,
    /// sled: page cache of the database in MiB, the bound on most of the memory the store holds,
    /// however many reports it keeps.
    pub cache_capacity_mb: u64,
    /// postgres: the database's address, a URL (`postgres://meldewerk@db.internal/meldewerk`) or
    /// a libpq connection string (`host=/run/postgresql dbname=meldewerk`). It may carry a
    /// password; it is never logged.
    pub url: Option<StoreUrl>,
    /// postgres: connections this node keeps open at most.
    pub pool_size: usize,
    /// postgres: seconds one statement may run before the database cancels it (the request
    /// then fails whole).
    pub statement_timeout_secs: u64,
    /// postgres: seconds a request waits for a connection before the store answers
    /// unavailable.
    pub connect_timeout_secs: u64,
    /// postgres: seconds a node's lease on a job it works on, and its lead of periodic work,
    /// outlive its last heartbeat (it beats every third of this): how long before another node
    /// resumes the work of a node that died.
    pub lease_secs: u64,
}

/// The store's engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreEngine {
    /// The embedded database in the data directory: one node.
    Sled,
    /// A PostgreSQL database: one node or several.
    Postgres,
}

/// `store.url`: shown as `<redacted>` in every debug output, since it may hold a password.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct StoreUrl(pub String);

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Largest accepted `store.cache_capacity_mb` (1 TiB): beyond it the value is a typo, and its
/// byte count would no longer fit sled's arithmetic.
const MAX_CACHE_CAPACITY_MB: u64 = 1024 * 1024;

/// Smallest accepted `store.lease_secs`: a node beats every third of the lease, and one beat
/// late must not cost it its claims.
const MIN_LEASE_SECS: u64 = 3;

/// Largest accepted `store.pool_size`: PostgreSQL's own default allows 100 connections for all
/// its clients together.
const MAX_POOL_SIZE: usize = 1000;

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            engine: StoreEngine::Sled,
            cache_capacity_mb: meldewerk_storage::DEFAULT_CACHE_CAPACITY / (1024 * 1024),
            url: None,
            pool_size: 16,
            statement_timeout_secs: 30,
            connect_timeout_secs: 5,
            lease_secs: 30,
        }
    }
}

impl StoreSettings {
    /// The page cache in bytes.
    pub fn cache_capacity_bytes(&self) -> u64 {
        self.cache_capacity_mb * 1024 * 1024
    }

    /// The PostgreSQL engine's settings for the node `node`; `None` unless
    /// `engine = "postgres"` with a `url`.
    pub fn postgres(&self, node: &NodeSettings) -> Option<meldewerk_storage::PgSettings> {
        let url = self
            .url
            .as_ref()
            .filter(|_| self.engine == StoreEngine::Postgres)?;
        Some(self.postgres_at(url.0.clone(), node))
    }

    /// The PostgreSQL engine's settings for the database at `url`, the rest as configured
    /// (`meldewerk store copy --to URL`).
    pub fn postgres_at(&self, url: String, node: &NodeSettings) -> meldewerk_storage::PgSettings {
        meldewerk_storage::PgSettings {
            url,
            pool_size: self.pool_size,
            statement_timeout: Duration::from_secs(self.statement_timeout_secs),
            connect_timeout: Duration::from_secs(self.connect_timeout_secs),
            node: node.name.clone(),
            lease: Duration::from_secs(self.lease_secs),
            joins: true,
        }
    }

    pub(super) fn check(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_CACHE_CAPACITY_MB).contains(&self.cache_capacity_mb) {
            return Err(ConfigError(format!(
                "store.cache_capacity_mb must be between 1 and {MAX_CACHE_CAPACITY_MB}, got {}",
                self.cache_capacity_mb
            )));
        }
        if self.engine == StoreEngine::Postgres && self.url.is_none() {
            return Err(ConfigError(
                "store.engine = \"postgres\" needs store.url, the database's address".into(),
            ));
        }
        if let Some(url) = &self.url {
            if !meldewerk_storage::PgSettings::is_address(&url.0) {
                // The parser's message may quote the address, password and all.
                return Err(ConfigError(
                    "store.url is no PostgreSQL address (postgres://user@host/database, or \
                     host=... dbname=...)"
                        .into(),
                ));
            }
        }
        if !(1..=MAX_POOL_SIZE).contains(&self.pool_size) {
            return Err(ConfigError(format!(
                "store.pool_size must be between 1 and {MAX_POOL_SIZE}, got {}",
                self.pool_size
            )));
        }
        if !(1..=86_400).contains(&self.statement_timeout_secs) {
            return Err(ConfigError(format!(
                "store.statement_timeout_secs must be between 1 and 86400, got {}",
                self.statement_timeout_secs
            )));
        }
        if !(1..=3_600).contains(&self.connect_timeout_secs) {
            return Err(ConfigError(format!(
                "store.connect_timeout_secs must be between 1 and 3600, got {}",
                self.connect_timeout_secs
            )));
        }
        if !(MIN_LEASE_SECS..=3_600).contains(&self.lease_secs) {
            return Err(ConfigError(format!(
                "store.lease_secs must be between {MIN_LEASE_SECS} and 3600, got {}",
                self.lease_secs
            )));
        }
        Ok(())
    }
}

/// This node among the nodes that share one store (`[node]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NodeSettings {
    /// The node's name, unique among the nodes on one database: it holds the node's job leases,
    /// and actor health, `/metrics` and the dashboard say which node they describe by it.
    /// Defaults to the machine's host name.
    pub name: String,
}

impl Default for NodeSettings {
    fn default() -> Self {
        NodeSettings {
            name: meldewerk_storage::host_name(),
        }
    }
}

/// Longest accepted `node.name`.
const MAX_NODE_NAME: usize = 63;

impl NodeSettings {
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if self.name.is_empty() || self.name.len() > MAX_NODE_NAME || !self.name.chars().all(fine) {
            return Err(ConfigError(format!(
                "node.name must be 1 to {MAX_NODE_NAME} letters, digits, '-', '_' or '.', got {:?}",
                self.name
            )));
        }
        Ok(())
    }
}
