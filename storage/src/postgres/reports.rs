//! TODO area

use chrono::{DateTime, Utc};

use super::Db;
use crate::*;

pub(super) async fn dispatch_report(db: &Db, report: Report) -> StoreResult<Job> {
    let _ = (db, report);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn report(db: &Db, key: &ReportKey) -> StoreResult<Option<Report>> {
    let _ = (db, key);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn report_result(db: &Db, key: &ReportKey) -> StoreResult<Option<ReportResult>> {
    let _ = (db, key);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn report_status(db: &Db, key: &ReportKey) -> StoreResult<Option<ReportStatus>> {
    let _ = (db, key);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn consume_report(db: &Db, key: &ReportKey) -> StoreResult<Consumed> {
    let _ = (db, key);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn pending_ids(db: &Db, owner: &str, module: &str) -> StoreResult<Vec<String>> {
    let _ = (db, owner, module);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn reports_with_id(
    db: &Db,
    module: &str,
    id: &str,
) -> StoreResult<Vec<ReportKey>> {
    let _ = (db, module, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn forget_refused(db: &Db, key: &ReportKey) -> StoreResult<bool> {
    let _ = (db, key);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn expire_finished_before(
    db: &Db,
    module: &str,
    cutoff: DateTime<Utc>,
) -> StoreResult<usize> {
    let _ = (db, module, cutoff);
    Err(StoreError::Backend("not yet".into()))
}
