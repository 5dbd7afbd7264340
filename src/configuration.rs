//! Settings: embedded defaults < `meldewerk.toml` (or `--config FILE`) < `MELDEWERK_*` environment
//! variables, nested keys joined by `__` (`MELDEWERK_TRANSPORTS__XPERSONENSTAND__ACK_DELAY_MS`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::providers::{Env, Format, Toml};
use figment::Figment;
use meldewerk_actors::EngineSettings;
use meldewerk_transports::wire::{check_url, HttpTransportSettings};
use meldewerk_transports::TransportKind;
use serde::{Deserialize, Deserializer};

use crate::auth::client_address::{parse_networks, ForwardedHeader};
use crate::mail::MailSettings;

/// Everything the service can be configured with. Every field has an embedded default, so that
/// `meldewerk serve` runs with no configuration at all.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address the HTTP server binds, `host:port` (port 0 picks a free port).
    pub listen: String,
    /// Directory holding the database, the master key and the simulators' journals.
    pub data_dir: PathBuf,
    /// Public base address (`https://meldungen.example.org`); defaults to `http://{listen}`.
    /// Decides the `Secure` flag of the session cookie.
    pub base_url: Option<String>,
    /// Lifetime of magic-link tokens in seconds.
    pub token_lifetime_secs: u64,
    /// Sessions end after this many seconds without a request.
    pub session_idle_secs: u64,
    /// Master key (base64url, 32 bytes) wrapping the users' keys; when absent the key is kept in
    /// `{data_dir}/master.key` (mode 0600), created on first use.
    pub master_key: Option<String>,
    /// Largest accepted request body in bytes.
    pub max_body_bytes: usize,
    /// Longest time a request body may take to arrive, from the request's head on, in seconds;
    /// then 408 and the connection is closed.
    pub body_timeout_secs: u64,
    /// Seconds to let in-flight requests and deliveries finish on SIGTERM/SIGINT.
    pub shutdown_grace_secs: u64,
    /// Time zone of the people using the service (tz database name): forms take dates and times
    /// in it, pages and receipts show times in it beside UTC.
    pub time_zone: String,
    /// Trusted reverse proxies and HTTPS.
    pub server: ServerSettings,
    /// Operator access to `/admin/api/v1/`.
    pub operator: OperatorSettings,
    /// Read-only access to `/metrics`.
    pub metrics: MetricsSettings,
    /// Password hashing, credential cache and failed-login limits.
    pub security: SecuritySettings,
    /// Log output.
    pub log: LogSettings,
    /// The embedded database.
    pub store: StoreSettings,
    /// The delivery engine.
    pub engine: EngineSettings,
    /// The modules' sections, `[modules.<name>]`: a module's own, or one a family of modules
    /// shares (`[modules.xpersonenstand]`, the civil registry's message header), read by the
    /// modules themselves.
    pub modules: BTreeMap<String, figment::value::Value>,
    /// The transports: simulated in-process, or reached over HTTP.
    pub transports: TransportSettings,
    /// SMTP and operator alerts.
    pub mail: MailSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./data"),
            base_url: None,
            token_lifetime_secs: 3600,
            session_idle_secs: 1800,
            master_key: None,
            max_body_bytes: 256 * 1024,
            body_timeout_secs: 30,
            shutdown_grace_secs: 10,
            time_zone: "Europe/Berlin".into(),
            server: ServerSettings::default(),
            operator: OperatorSettings::default(),
            metrics: MetricsSettings::default(),
            security: SecuritySettings::default(),
            log: LogSettings::default(),
            store: StoreSettings::default(),
            engine: EngineSettings::default(),
            modules: BTreeMap::new(),
            transports: TransportSettings::default(),
            mail: MailSettings::default(),
        }
    }
}

/// The HTTP listener: which reverse proxies may state the client's address, and HTTPS.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Peers (addresses or CIDR ranges) whose forwarding header names the client. In TOML a list;
    /// in the environment a comma-separated string. Empty: the peer is always the client.
    #[serde(deserialize_with = "one_or_many")]
    pub trusted_proxies: Vec<String>,
    /// The header the trusted proxies write: `x-forwarded-for` or `forwarded`.
    pub forwarded_header: ForwardedHeader,
    /// Serve HTTPS with this certificate and key instead of plain HTTP.
    pub tls: Option<TlsSettings>,
}

/// The certificate the service serves HTTPS with, read again on SIGHUP and when either file
/// changes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    /// PEM file with the certificate chain, the server's own certificate first.
    pub certificate: PathBuf,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// Operator credentials. Without a password the operator API answers 401 to everyone.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OperatorSettings {
    /// Operator user name.
    pub username: String,
    /// Operator password; unset disables the operator API.
    pub password: Option<String>,
}

impl Default for OperatorSettings {
    fn default() -> Self {
        OperatorSettings {
            username: "operator".into(),
            password: None,
        }
    }
}

/// Read-only access to `/metrics` for a scraper, apart from the operator login.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSettings {
    /// Bearer token that `GET /metrics` accepts besides the operator credentials (at least
    /// [`MIN_METRICS_TOKEN`] characters); unset: operator credentials only.
    pub token: Option<String>,
}

/// Shortest accepted `metrics.token`: 32 characters, so that guessing it is hopeless (the output
/// of `openssl rand -hex 32` has 64).
pub const MIN_METRICS_TOKEN: usize = 32;

/// Password hashing and login protection.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecuritySettings {
    /// argon2id memory cost in KiB.
    pub argon2_memory_kib: u32,
    /// argon2id iterations.
    pub argon2_iterations: u32,
    /// How many argon2 computations may run at once (each holds a blocking thread).
    pub argon2_concurrency: usize,
    /// Seconds a verified credential is trusted without running argon2 again.
    pub credential_cache_ttl_secs: u64,
    /// Most credentials kept in the cache.
    pub credential_cache_size: usize,
    /// Failed logins allowed per user name and minute before further attempts get 429: from any
    /// one address, and in all from the addresses not known for the name.
    pub failed_logins_per_user_per_minute: u32,
    /// Failed logins allowed per client address and minute before further attempts get 429.
    pub failed_logins_per_address_per_minute: u32,
    /// Seconds an address that logged in as a user stays known for that name: failures from
    /// elsewhere do not block it meanwhile.
    pub known_address_secs: u64,
}

impl Default for SecuritySettings {
    fn default() -> Self {
        SecuritySettings {
            argon2_memory_kib: 19 * 1024,
            argon2_iterations: 2,
            argon2_concurrency: 2,
            credential_cache_ttl_secs: 300,
            credential_cache_size: 10_000,
            failed_logins_per_user_per_minute: 10,
            failed_logins_per_address_per_minute: 30,
            known_address_secs: 86_400,
        }
    }
}

/// Log output settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `text` or `json`.
    pub format: String,
    /// Filter in `tracing` env-filter syntax, e.g. `info` or `meldewerk=debug,info`.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: "text".into(),
            level: "info".into(),
        }
    }
}

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
        }
    }
}

impl StoreSettings {
    /// The page cache in bytes.
    pub fn cache_capacity_bytes(&self) -> u64 {
        self.cache_capacity_mb * 1024 * 1024
    }

    /// The PostgreSQL engine's settings; `None` unless `engine = "postgres"` with a `url`.
    pub fn postgres(&self) -> Option<meldewerk_storage::PgSettings> {
        let url = self
            .url
            .as_ref()
            .filter(|_| self.engine == StoreEngine::Postgres)?;
        Some(self.postgres_at(url.0.clone()))
    }

    /// The PostgreSQL engine's settings for the database at `url`, the rest as configured
    /// (`meldewerk store copy --to URL`).
    pub fn postgres_at(&self, url: String) -> meldewerk_storage::PgSettings {
        meldewerk_storage::PgSettings {
            url,
            pool_size: self.pool_size,
            statement_timeout: Duration::from_secs(self.statement_timeout_secs),
            connect_timeout: Duration::from_secs(self.connect_timeout_secs),
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
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
        Ok(())
    }
}

/// Transport settings, one section per transport of the registry
/// ([`meldewerk_transports::TRANSPORTS`]), `[transports.<name>]`; a transport without a section
/// runs its simulator in-process with its defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct TransportSettings(BTreeMap<String, TransportSection>);

impl TransportSettings {
    /// The section of the transport `name` (the defaults when the configuration has none).
    pub fn section(&self, name: &str) -> TransportSection {
        self.0.get(name).cloned().unwrap_or_default()
    }

    /// Problems of the sections, each a sentence: a section of a transport the service does not
    /// know, or a section its transport refuses.
    fn check(&self) -> Result<(), ConfigError> {
        for (name, section) in &self.0 {
            let Some(kind) = meldewerk_transports::kind(name) else {
                let known: Vec<&str> = meldewerk_transports::TRANSPORTS
                    .iter()
                    .map(|kind| kind.name)
                    .collect();
                return Err(ConfigError(format!(
                    "transports.{name}: no such transport (known: {})",
                    known.join(", ")
                )));
            };
            section.check(kind)?;
        }
        Ok(())
    }
}

/// A transport's section. Without `url` the service runs the simulated authority in-process,
/// behaving as the simulator keys say; with `url` it delivers over HTTP to the authority there
/// (`meldewerk simulate <name>`, which reads the simulator keys from the same section, or a
/// tester's mock), and opens no simulator of its own.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct TransportSection {
    /// Base url of the authority's process, e.g. `http://127.0.0.1:9001`.
    pub url: Option<String>,
    /// Longest wait for a connection to `url`, in milliseconds.
    pub connect_timeout_ms: u64,
    /// Longest one call to `url` may take, in milliseconds (the engine's
    /// `transport_timeout_secs` bounds it too).
    pub request_timeout_ms: u64,
    /// Host names `meldewerk simulate` answers besides loopback names and the address it is bound
    /// to (`Host` header, port not looked at); any other `Host` gets 421, so that a web page
    /// cannot reach the simulator by DNS rebinding.
    #[serde(deserialize_with = "one_or_many")]
    pub allowed_hosts: Vec<String>,
    /// How the simulated authority behaves (in-process, or in `meldewerk simulate`): every other
    /// key of the section, read by the transport's simulator, which refuses keys it does not
    /// know.
    #[serde(flatten)]
    pub simulator: serde_json::Map<String, serde_json::Value>,
}

impl Default for TransportSection {
    fn default() -> Self {
        TransportSection {
            url: None,
            connect_timeout_ms: 5_000,
            request_timeout_ms: 30_000,
            allowed_hosts: Vec::new(),
            simulator: serde_json::Map::new(),
        }
    }
}

impl TransportSection {
    /// Problems of the section of `kind`, each a sentence.
    fn check(&self, kind: &TransportKind) -> Result<(), ConfigError> {
        let name = kind.name;
        let simulator_keys = (kind.simulator_defaults)();
        let simulator_keys = simulator_keys.as_object();
        if let Some(key) = self
            .simulator
            .keys()
            .find(|key| !simulator_keys.is_some_and(|known| known.contains_key(*key)))
        {
            // The simulator's keys as its own type names them, so that the list cannot drift.
            let mut known = vec![
                "url",
                "connect_timeout_ms",
                "request_timeout_ms",
                "allowed_hosts",
            ];
            known.extend(
                simulator_keys
                    .into_iter()
                    .flat_map(|keys| keys.keys().map(String::as_str)),
            );
            return Err(ConfigError(format!(
                "transports.{name}: unknown key {key:?} (known: {})",
                known.join(", ")
            )));
        }
        if let Some(url) = &self.url {
            check_url(url).map_err(|e| ConfigError(format!("transports.{name}.url: {e}")))?;
        }
        for (key, value) in [
            ("connect_timeout_ms", self.connect_timeout_ms),
            ("request_timeout_ms", self.request_timeout_ms),
        ] {
            if value == 0 {
                return Err(ConfigError(format!(
                    "transports.{name}.{key} must be at least 1"
                )));
            }
        }
        Ok(())
    }

    /// The simulator keys as the simulator reads them.
    pub fn simulator_config(&self) -> serde_json::Value {
        serde_json::Value::Object(self.simulator.clone())
    }

    /// How to reach the authority over HTTP, when a `url` is set.
    pub fn http(&self) -> Option<HttpTransportSettings> {
        self.url.as_ref().map(|url| HttpTransportSettings {
            url: url.clone(),
            connect_timeout: Duration::from_millis(self.connect_timeout_ms),
            request_timeout: Duration::from_millis(self.request_timeout_ms),
        })
    }
}

/// A list, or one string of comma-separated entries (what an environment variable can carry).
pub(crate) fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    let list = match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(text) => text.split(',').map(str::to_string).collect(),
        OneOrMany::Many(list) => list,
    };
    Ok(list
        .into_iter()
        .map(|entry| entry.trim().to_string())
        .filter(|entry| !entry.is_empty())
        .collect())
}

/// Why the settings could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(String);

impl Settings {
    /// Loads the settings: defaults, then the TOML file (the given one must exist; without one,
    /// `./meldewerk.toml` is read when present), then the environment.
    pub fn load(config_file: Option<&Path>) -> Result<Settings, ConfigError> {
        let mut figment = Figment::new();
        match config_file {
            Some(file) => {
                if !file.is_file() {
                    return Err(ConfigError(format!(
                        "configuration file {} does not exist",
                        file.display()
                    )));
                }
                figment = figment.merge(Toml::file(file));
            }
            None => figment = figment.merge(Toml::file("meldewerk.toml")),
        }
        let settings: Settings = figment
            .merge(Env::prefixed("MELDEWERK_").split("__"))
            .extract()
            .map_err(|e| ConfigError(e.to_string()))?;
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if let Some(base) = &self.base_url {
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return Err(ConfigError(format!(
                    "base_url must start with http:// or https://, got {base}"
                )));
            }
        }
        if self.token_lifetime_secs == 0 {
            return Err(ConfigError("token_lifetime_secs must be at least 1".into()));
        }
        if self.body_timeout_secs == 0 {
            return Err(ConfigError("body_timeout_secs must be at least 1".into()));
        }
        if self.security.argon2_concurrency == 0 {
            return Err(ConfigError(
                "security.argon2_concurrency must be at least 1".into(),
            ));
        }
        self.store.check()?;
        if self.log.format != "text" && self.log.format != "json" {
            return Err(ConfigError(format!(
                "log.format must be text or json, got {}",
                self.log.format
            )));
        }
        parse_networks(&self.server.trusted_proxies).map_err(ConfigError)?;
        if let Some(token) = &self.metrics.token {
            if token.chars().count() < MIN_METRICS_TOKEN {
                return Err(ConfigError(format!(
                    "metrics.token must have at least {MIN_METRICS_TOKEN} characters"
                )));
            }
        }
        self.mail.check().map_err(ConfigError)?;
        self.transports.check()?;
        Ok(())
    }

    /// The request body deadline of the HTTP servers (service and simulators).
    pub(crate) fn body_deadline(&self) -> crate::routes::body_deadline::BodyDeadline {
        crate::routes::body_deadline::BodyDeadline(Duration::from_secs(self.body_timeout_secs))
    }

    /// Path of the sled database.
    pub fn db_dir(&self) -> PathBuf {
        self.data_dir.join("db")
    }

    /// Path of the journal of the simulated authority behind the transport `name`.
    pub fn simulator_journal_dir(&self, name: &str) -> PathBuf {
        self.data_dir.join("simulators").join(name)
    }
}
