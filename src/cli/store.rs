//! What every command of the command line shares: its error, the store and master key of a
//! stopped server's data directory, and secrets read from standard input.

use std::io::Read;
use std::sync::Arc;

use crate::configuration::Settings;
use crate::crypto::MasterKey;
use crate::startup;

/// A command-line failure: the message is printed, the exit code is 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);

/// A failure of any kind as a command-line failure, its text as it says it.
pub(crate) fn err(e: impl std::fmt::Display) -> CliError {
    CliError(e.to_string())
}

/// The store of `settings`: its PostgreSQL database, or the sled database of its data directory;
/// there, unless `create_data_dir`, a directory without a database is an error (a mistyped
/// `--data-dir` must not start an empty one).
pub(crate) fn open_store(
    settings: &Settings,
    create_data_dir: bool,
) -> Result<Arc<dyn meldewerk_storage::Store>, CliError> {
    let sled = settings.postgres().is_none();
    if sled && !create_data_dir && !settings.db_dir().is_dir() {
        return Err(CliError(format!(
            "data directory {} has no meldewerk database (add a user or start the server first, or pass --data-dir)",
            settings.data_dir.display()
        )));
    }
    // A command is no node: it takes no part in the nodes' work.
    startup::open_store_as(settings, false).map_err(err)
}

/// The master key of `settings` (configured, or the data directory's file).
pub(crate) fn master_key(settings: &Settings) -> Result<MasterKey, CliError> {
    MasterKey::load_or_create(&settings.data_dir, settings.master_key.as_deref()).map_err(err)
}

/// Standard input whole, which holds the `what` when `flag` (`--{what}-stdin`) says so.
pub(crate) fn read_stdin(flag: bool, what: &str) -> Result<String, CliError> {
    if !flag {
        return Err(CliError(format!(
            "give the {what} on standard input with --{what}-stdin"
        )));
    }
    let mut raw = String::new();
    std::io::stdin().read_to_string(&mut raw).map_err(err)?;
    Ok(raw)
}
