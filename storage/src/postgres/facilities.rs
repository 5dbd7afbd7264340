//! TODO area

use chrono::{DateTime, Utc};

use super::Db;
use crate::*;

pub(super) async fn put_facility(db: &Db, facility: Facility) -> StoreResult<FacilityPut> {
    let _ = (db, facility);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn facility(db: &Db, bsnr: &Bsnr) -> StoreResult<Option<Facility>> {
    let _ = (db, bsnr);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn facilities(
    db: &Db,
    after: Option<&Bsnr>,
    limit: usize,
) -> StoreResult<Vec<Facility>> {
    let _ = (db, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn remove_facility(db: &Db, bsnr: &Bsnr) -> StoreResult<bool> {
    let _ = (db, bsnr);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn set_customer_scope(db: &Db, scope: CustomerScope) -> StoreResult<()> {
    let _ = (db, scope);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn customer_scope(db: &Db, customer: &str) -> StoreResult<Option<CustomerScope>> {
    let _ = (db, customer);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn put_certificate(
    db: &Db,
    certificate: FacilityCertificate,
) -> StoreResult<bool> {
    let _ = (db, certificate);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn certificate(
    db: &Db,
    bsnr: &Bsnr,
    environment: Environment,
) -> StoreResult<Option<FacilityCertificate>> {
    let _ = (db, bsnr, environment);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn certificates(db: &Db) -> StoreResult<Vec<FacilityCertificate>> {
    let _ = (db);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn remove_certificate(
    db: &Db,
    bsnr: &Bsnr,
    environment: Environment,
) -> StoreResult<bool> {
    let _ = (db, bsnr, environment);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn put_mailbox_account(
    db: &Db,
    account: MailboxAccount,
) -> StoreResult<MailboxAccountPut> {
    let _ = (db, account);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_account(
    db: &Db,
    id: MailboxAccountId,
) -> StoreResult<Option<MailboxAccount>> {
    let _ = (db, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_account_by_safe_id(
    db: &Db,
    safe_id: &SafeId,
) -> StoreResult<Option<MailboxAccount>> {
    let _ = (db, safe_id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_accounts(
    db: &Db,
    after: Option<MailboxAccountId>,
    limit: usize,
) -> StoreResult<Vec<MailboxAccount>> {
    let _ = (db, after, limit);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn remove_mailbox_account(db: &Db, id: MailboxAccountId) -> StoreResult<bool> {
    let _ = (db, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn grant_mailbox_account(
    db: &Db,
    id: MailboxAccountId,
    user: &str,
) -> StoreResult<bool> {
    let _ = (db, id, user);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn revoke_mailbox_account(
    db: &Db,
    id: MailboxAccountId,
    user: &str,
) -> StoreResult<bool> {
    let _ = (db, id, user);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_account_users(
    db: &Db,
    id: MailboxAccountId,
) -> StoreResult<Vec<String>> {
    let _ = (db, id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn mailbox_account_ids_of(
    db: &Db,
    user: &str,
) -> StoreResult<Vec<MailboxAccountId>> {
    let _ = (db, user);
    Err(StoreError::Backend("not yet".into()))
}
