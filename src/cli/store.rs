//! What every command of the command line shares: its error, and the store of a stopped
//! server's data directory.

use std::sync::Arc;

use crate::configuration::Settings;
use crate::startup;

/// A command-line failure: the message is printed, the exit code is 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CliError(pub String);

/// A failure of any kind as a command-line failure, its text as it says it.
pub(crate) fn err(e: impl std::fmt::Display) -> CliError {
    CliError(e.to_string())
}

/// The store of the data directory of `settings`; unless `create_data_dir`, a directory without
/// a database is an error (a mistyped `--data-dir` must not start an empty one).
pub(crate) fn open_store(
    settings: &Settings,
    create_data_dir: bool,
) -> Result<Arc<dyn meldewerk_storage::Store>, CliError> {
    if !create_data_dir && !settings.db_dir().is_dir() {
        return Err(CliError(format!(
            "data directory {} has no meldewerk database (add a user or start the server first, or pass --data-dir)",
            settings.data_dir.display()
        )));
    }
    startup::open_store(settings).map_err(err)
}
