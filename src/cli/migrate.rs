//! `meldewerk migrate`: brings the PostgreSQL store's schema to this build's version and shows
//! where it stands. Nodes do the same when they start; an operator runs it first to see the
//! change happen (and fail, if it does) before any node serves.

use meldewerk_storage::postgres::migrate::MIGRATIONS;
use meldewerk_storage::PgStore;

use super::store::{err, CliError};
use crate::configuration::Settings;

/// Applies what is pending and answers the schema's state, version by version.
pub(crate) async fn run(settings: &Settings) -> Result<String, CliError> {
    let Some(mut postgres) = settings.postgres() else {
        return Ok(format!(
            "store.engine is sled: the database in {} keeps its own layout and needs no migration",
            settings.db_dir().display()
        ));
    };
    postgres.joins = false;
    let (store, applied_now) = PgStore::open_migrating(&postgres).await.map_err(err)?;
    let state = store.schema().await.map_err(err)?;
    let mut out = match applied_now.as_slice() {
        [] => "schema up to date, nothing applied".to_owned(),
        versions => format!(
            "applied version{} {}",
            if versions.len() == 1 { "" } else { "s" },
            versions
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    for (version, at) in &state.applied {
        let name = MIGRATIONS
            .iter()
            .find(|m| m.version == *version)
            .map_or("", |m| m.name);
        out.push_str(&format!(
            "\n{version:>4}  applied {}  {name}",
            at.format("%Y-%m-%dT%H:%M:%SZ")
        ));
    }
    Ok(out)
}
