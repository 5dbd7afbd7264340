//! TODO area

use chrono::{DateTime, Utc};

use super::Db;
use crate::*;

pub(super) async fn create_user(db: &Db, user: UserRecord) -> StoreResult<()> {
    let _ = (db, user);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn update_user(db: &Db, user: UserRecord) -> StoreResult<()> {
    let _ = (db, user);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn remove_user(db: &Db, name: &str) -> StoreResult<bool> {
    let _ = (db, name);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn user(db: &Db, name: &str) -> StoreResult<Option<UserRecord>> {
    let _ = (db, name);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn user_by_key_id(db: &Db, key_id: &str) -> StoreResult<Option<UserRecord>> {
    let _ = (db, key_id);
    Err(StoreError::Backend("not yet".into()))
}

pub(super) async fn users(db: &Db) -> StoreResult<Vec<UserRecord>> {
    let _ = (db);
    Err(StoreError::Backend("not yet".into()))
}
