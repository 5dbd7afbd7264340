//! Facilities' certificates: one row per site and environment, the record (wrapped key and chain
//! together) replaced whole, so that a site's certificate and key always belong together.
//!
//! Items are `pub(in crate::postgres)` so that `facilities` can re-export them to the engine's
//! `store_impl.rs`, which calls every method of this area as `facilities::<method>`.

use super::{from_json, raced, to_json, Db, RACE_RETRIES};
use crate::*;

/// How errors name the certificate of `bsnr` for `environment`, as the sled engine does.
fn what(bsnr: &str, environment: &str) -> String {
    format!("certificate {bsnr}/{environment}")
}

/// Stores the certificate in place of the one there was, in one transaction: the old row is
/// locked before it is overwritten, and a create another node beat is retried as a replace, so
/// that of two deposits at once exactly one answers that there was none.
pub(in crate::postgres) async fn put_certificate(
    db: &Db,
    certificate: FacilityCertificate,
) -> StoreResult<bool> {
    let bsnr = certificate.bsnr.as_str();
    let environment = certificate.environment.as_str();
    let what = what(bsnr, environment);
    let record = to_json(&what, &certificate)?;
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(e))?;
    for _ in 0..RACE_RETRIES {
        let replaced = tx
            .execute(
                "UPDATE certificates SET record = $3 WHERE bsnr = $1 AND environment = $2",
                &[&bsnr, &environment, &record],
            )
            .await
            .map_err(|e| db.error(e))?
            > 0;
        if !replaced {
            let inserted = tx
                .execute(
                    "INSERT INTO certificates (bsnr, environment, record) VALUES ($1, $2, $3)
                     ON CONFLICT (bsnr, environment) DO NOTHING",
                    &[&bsnr, &environment, &record],
                )
                .await
                .map_err(|e| db.error(e))?;
            if inserted == 0 {
                // Another node deposited one since the update looked; the next update (a
                // statement of its own, so a snapshot of its own) replaces it.
                continue;
            }
        }
        db.commit(tx).await?;
        return Ok(replaced);
    }
    Err(raced(&what))
}

/// Reads the certificate of one site and environment.
pub(in crate::postgres) async fn certificate(
    db: &Db,
    bsnr: &Bsnr,
    environment: Environment,
) -> StoreResult<Option<FacilityCertificate>> {
    let client = db.client().await?;
    let row = client
        .query_opt(
            "SELECT record FROM certificates WHERE bsnr = $1 AND environment = $2",
            &[&bsnr.as_str(), &environment.as_str()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    row.map(|row| from_json(&what(bsnr.as_str(), environment.as_str()), row.get(0)))
        .transpose()
}

/// Every certificate, by site (byte order, as sled's keys), test before production (the order
/// of [`Environment`], which operators read in).
pub(in crate::postgres) async fn certificates(db: &Db) -> StoreResult<Vec<FacilityCertificate>> {
    let client = db.client().await?;
    let rows = client
        .query(
            "SELECT bsnr, environment, record FROM certificates
             ORDER BY bsnr, environment = 'production'",
            &[],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    rows.into_iter()
        .map(|row| from_json(&what(row.get(0), row.get(1)), row.get(2)))
        .collect()
}

/// Removes the certificate in one statement (its own transaction); the row count says whether
/// there was one.
pub(in crate::postgres) async fn remove_certificate(
    db: &Db,
    bsnr: &Bsnr,
    environment: Environment,
) -> StoreResult<bool> {
    let client = db.client().await?;
    let removed = client
        .execute(
            "DELETE FROM certificates WHERE bsnr = $1 AND environment = $2",
            &[&bsnr.as_str(), &environment.as_str()],
        )
        .await
        .map_err(|e| db.error(e))?;
    db.mark_reachable();
    Ok(removed > 0)
}
