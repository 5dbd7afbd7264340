//! `meldewerk store copy`: everything the sled database of a stopped server's data directory
//! holds, copied into an empty PostgreSQL database, for an operator moving from one node to
//! several. The storage crate does the work (the sled engine's export, the PostgreSQL engine's
//! import, one transaction that checks the counts before it commits); this says where from and
//! where to, and what came of it.
//!
//! The database's address may carry a password: it is never printed, only its host and
//! database name ([`PgSettings::describe`]).

use std::time::Instant;

use clap::Subcommand;
use meldewerk_storage::copy::Count;
use meldewerk_storage::{PgSettings, PgStore, SledStore};

use super::store::{err, CliError};
use crate::configuration::{Settings, StoreUrl};

/// `meldewerk store …`
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Copy everything the sled database of the data directory holds (users, reports with their
    /// payloads, the outbox, the audit log, cursors, facilities, certificates, mailbox accounts,
    /// the court-message index) into an empty PostgreSQL database, ids kept. The server must be
    /// stopped. Court-message archives are files and are not copied.
    Copy {
        /// The PostgreSQL database to copy into (default: store.url of the configuration). A
        /// password given here shows in the process list: prefer store.url or
        /// MELDEWERK_STORE__URL.
        #[arg(long, value_name = "URL", value_parser = store_url)]
        to: Option<StoreUrl>,
    },
}

/// `--to` kept as a [`StoreUrl`], so that no debug output shows it.
fn store_url(text: &str) -> Result<StoreUrl, String> {
    Ok(StoreUrl(text.to_owned()))
}

/// Runs a `store` command and answers what to print.
pub(crate) async fn run(settings: &Settings, command: StoreCommand) -> Result<String, CliError> {
    let StoreCommand::Copy { to } = command;
    let target = target(settings, to)?;
    let db_dir = settings.db_dir();
    if !db_dir.is_dir() {
        return Err(CliError(format!(
            "data directory {} has no sled database to copy (pass --data-dir)",
            settings.data_dir.display()
        )));
    }
    // sled's lock: a running server keeps the data directory, and the copy is refused.
    let source =
        SledStore::open_with_cache(&db_dir, settings.store.cache_capacity_bytes()).map_err(err)?;
    let store = PgStore::open(&target).await.map_err(|e| {
        CliError(format!(
            "cannot open the PostgreSQL store ({}): {e}",
            target.describe()
        ))
    })?;
    let started = Instant::now();
    let counts = store
        .import(source.export().map_err(err)?)
        .await
        .map_err(|e| CliError(format!("nothing was copied: {e}")))?;
    let mut out = format!(
        "copied {} into {} in {:.2} s; every count matches:",
        db_dir.display(),
        target.describe(),
        started.elapsed().as_secs_f64()
    );
    for count in Count::ALL {
        out.push_str(&format!(
            "\n  {:<26} {:>10}",
            count.label(),
            counts.get(count)
        ));
    }
    out.push_str(&archive_hint(settings));
    Ok(out)
}

/// The database to copy into: `--to`, else `store.url` (whatever `store.engine` says: the
/// configuration of the nodes to come may well be the one the copy runs with).
fn target(settings: &Settings, to: Option<StoreUrl>) -> Result<PgSettings, CliError> {
    let Some(url) = to.or_else(|| settings.store.url.clone()) else {
        return Err(CliError(
            "name the PostgreSQL database to copy into: --to URL, or store.url in the \
             configuration (MELDEWERK_STORE__URL)"
                .into(),
        ));
    };
    // The parser's message may quote the address, password and all.
    if !PgSettings::is_address(&url.0) {
        return Err(CliError(
            "the target is no PostgreSQL address (postgres://user@host/database, or host=... \
             dbname=...)"
                .into(),
        ));
    }
    let mut target = settings.store.postgres_at(url.0, &settings.node);
    // A copy is no node: it takes no part in the nodes' work.
    target.joins = false;
    // The copy is one transaction of many statements; none of them should be cut off by a
    // timeout meant for requests, least of all the final counts over every table.
    target.statement_timeout = target
        .statement_timeout
        .max(std::time::Duration::from_secs(3600));
    target.pool_size = 1;
    Ok(target)
}

/// What the copy leaves to the operator: the court-message archives, which are files.
fn archive_hint(settings: &Settings) -> String {
    let folder = match crate::modules::archive_folder(&settings.modules, &settings.data_dir) {
        Ok(folder) => folder.display().to_string(),
        Err(e) => format!("(the configured folder: {e})"),
    };
    format!(
        "\ncourt-message archives are files, not in the store, and were not copied: move the \
         folder {folder} to a volume every node mounts, and set [modules.guardianship] \
         archive_dir to it on every node"
    )
}
