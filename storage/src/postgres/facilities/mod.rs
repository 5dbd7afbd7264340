//! The facility registry and customer scopes (here), facilities' certificates
//! (`certificates.rs`) and court-mailbox accounts with their grants (`mailbox_accounts.rs`): the
//! records operators keep, each stored as JSON of its type beside the key columns that look-ups
//! and listings use (schema in `migrations/0002_facilities.sql`).
//!
//! Several nodes share the database, so nothing here reads and then writes on what it read
//! without holding it: a put locks the row it replaces (`FOR UPDATE`) and creates with
//! `INSERT … ON CONFLICT DO NOTHING`, trying again when another node created the row in between
//! (see [`RACE_RETRIES`]).

mod certificates;
mod mailbox_accounts;

pub(super) use certificates::*;
pub(super) use mailbox_accounts::*;

use super::{from_json, to_json, Db};
use crate::*;

/// How often a put tries again when another node changed the same row between its read and its
/// write (created it, or took its SAFE-ID). Each retry follows another node's committed change,
/// so running out means the row is rewritten without pause: the put fails rather than spin.
const RACE_RETRIES: usize = 8;

/// The error of a put that ran out of [`RACE_RETRIES`]; nothing of it is stored.
fn raced(what: &str) -> StoreError {
    StoreError::Backend(format!(
        "{what} was changed by others {RACE_RETRIES} times while it was being stored; try again"
    ))
}

/// A page size as SQL's `LIMIT` takes it (a `bigint`); beyond it, every row.
fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// How errors name the facility `bsnr`, as the sled engine does.
fn facility_what(bsnr: &str) -> String {
    format!("facility {bsnr}")
}

/// How errors name the scope of `customer`, as the sled engine does.
fn scope_what(customer: &str) -> String {
    format!("scope of customer {customer}")
}

/// Creates or replaces the facility in one transaction: the replaced row is locked while its
/// `created_at` is carried over, and a create that another node beat is retried as a replace.
pub(super) async fn put_facility(db: &Db, facility: Facility) -> StoreResult<FacilityPut> {
    let bsnr = facility.bsnr.as_str();
    let what = facility_what(bsnr);
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    for _ in 0..RACE_RETRIES {
        let old = tx
            .query_opt(
                "SELECT record FROM facilities WHERE bsnr = $1 FOR UPDATE",
                &[&bsnr],
            )
            .await
            .map_err(|e| db.error(e))?;
        let put = match old {
            Some(row) => {
                let old: Facility = from_json(&what, row.get(0))?;
                let stored = Facility {
                    created_at: old.created_at,
                    ..facility.clone()
                };
                tx.execute(
                    "UPDATE facilities SET record = $2 WHERE bsnr = $1",
                    &[&bsnr, &to_json(&what, &stored)?],
                )
                .await
                .map_err(|e| db.error(e))?;
                FacilityPut::Replaced(stored)
            }
            None => {
                let inserted = tx
                    .execute(
                        "INSERT INTO facilities (bsnr, record) VALUES ($1, $2)
                         ON CONFLICT (bsnr) DO NOTHING",
                        &[&bsnr, &to_json(&what, &facility)?],
                    )
                    .await
                    .map_err(|e| db.error(e))?;
                if inserted == 0 {
                    // Another node created it since the read; the next read (a statement of
                    // its own, so a snapshot of its own) sees it.
                    continue;
                }
                FacilityPut::Created(facility.clone())
            }
        };
        db.commit(tx).await?;
        return Ok(put);
    }
    Err(raced(&what))
}

/// Reads one facility by its key.
pub(super) async fn facility(db: &Db, bsnr: &Bsnr) -> StoreResult<Option<Facility>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record FROM facilities WHERE bsnr = $1",
            &[&bsnr.as_str()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&facility_what(bsnr.as_str()), row.get(0)))
        .transpose()
}

/// A page in BSNR order: the key column sorts in byte order (`COLLATE "C"` in the schema), so
/// the page is a range read on the primary key, ordered as sled's tree is.
pub(super) async fn facilities(
    db: &Db,
    after: Option<&Bsnr>,
    limit: usize,
) -> StoreResult<Vec<Facility>> {
    // The empty text sorts before every BSNR: no `after` is a page from the start.
    let after = after.map_or("", Bsnr::as_str);
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT bsnr, record FROM facilities WHERE bsnr > $1 ORDER BY bsnr LIMIT $2",
            &[&after, &sql_limit(limit)],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.into_iter()
        .map(|row| from_json(&facility_what(row.get(0)), row.get(1)))
        .collect()
}

/// Removes the facility in one statement (its own transaction); the row count says whether
/// there was one. Customer scopes stay: they list institution codes, not facilities.
pub(super) async fn remove_facility(db: &Db, bsnr: &Bsnr) -> StoreResult<bool> {
    let client = db.client().await?;
    let removed = client
        .execute("DELETE FROM facilities WHERE bsnr = $1", &[&bsnr.as_str()])
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(removed > 0)
}

/// Replaces the customer's scope whole in one statement (an upsert, so two nodes setting it at
/// once leave one of the two, never a mix); an empty set deletes the row, since a customer
/// without a scope and one with an empty scope may both report for nothing.
pub(super) async fn set_customer_scope(db: &Db, scope: CustomerScope) -> StoreResult<()> {
    let client = db.client().await?;
    let written = if scope.iks.is_empty() {
        client
            .execute(
                "DELETE FROM customer_scopes WHERE customer = $1",
                &[&scope.customer],
            )
            .await
    } else {
        let record = to_json(&scope_what(&scope.customer), &scope)?;
        client
            .execute(
                "INSERT INTO customer_scopes (customer, record) VALUES ($1, $2)
                 ON CONFLICT (customer) DO UPDATE SET record = EXCLUDED.record",
                &[&scope.customer, &record],
            )
            .await
    };
    written.map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(())
}

/// Reads the customer's scope; `None` when none is set.
pub(super) async fn customer_scope(db: &Db, customer: &str) -> StoreResult<Option<CustomerScope>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record FROM customer_scopes WHERE customer = $1",
            &[&customer],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&scope_what(customer), row.get(0)))
        .transpose()
}
