//! Creating, changing and removing users in the sled engine (reading them is in
//! `store_impl.rs`, through the cache of `read_cache.rs`): each change one transaction over the
//! users, their key ids, the retired names and (on removal) the mailbox grants, then a flush.

use super::{abort, decode, encode, in_tx, mailbox_accounts, tx_error, Engine};
use crate::sled_gate::GatedTransaction;
use crate::{StoreError, StoreResult, UserRecord};

/// How errors name user `name`.
pub(super) fn user_what(name: &str) -> String {
    format!("user {name}")
}

impl Engine {
    pub(super) async fn user_create(&self, user: UserRecord) -> StoreResult<()> {
        let value = encode(&user)?;
        let name = user.name.as_bytes();
        let key_id = user.memento_key.key_id.as_bytes();
        let created = (&self.users, &self.user_key_ids, &self.retired_users)
            .gated_transaction(|(users, key_ids, retired)| {
                if users.get(name)?.is_some() {
                    return abort(StoreError::Conflict(user_what(&user.name)));
                }
                // Reports stay with the name of a removed user; a new account under that name
                // would read them.
                if retired.get(name)?.is_some() {
                    return abort(StoreError::Conflict(format!(
                        "{} (the name of a removed user)",
                        user_what(&user.name)
                    )));
                }
                // Key ids are random, so a clash is a bug; resolving it would hand one user's
                // tokens to another.
                if key_ids.get(key_id)?.is_some() {
                    return abort(StoreError::Conflict(format!(
                        "memento key id {}",
                        user.memento_key.key_id
                    )));
                }
                users.insert_blind(name, value.as_slice())?;
                key_ids.insert_blind(key_id, name)?;
                Ok(())
            })
            .map_err(tx_error);
        self.user_cache.invalidate(&user.name);
        created?;
        self.flush().await
    }

    pub(super) async fn user_update(&self, user: UserRecord) -> StoreResult<()> {
        let value = encode(&user)?;
        let name = user.name.as_bytes();
        let new_key_id = user.memento_key.key_id.as_bytes();
        let updated = (&self.users, &self.user_key_ids)
            .gated_transaction(|(users, key_ids)| {
                let Some(old) = users.get(name)? else {
                    return abort(StoreError::NotFound(user_what(&user.name)));
                };
                let old: UserRecord = in_tx(decode(&user_what(&user.name), &old))?;
                let old_key_id = old.memento_key.key_id.as_bytes();
                if old_key_id != new_key_id {
                    if key_ids.get(new_key_id)?.is_some() {
                        return abort(StoreError::Conflict(format!(
                            "memento key id {}",
                            user.memento_key.key_id
                        )));
                    }
                    // Only drop the index entry if it is ours: never unhook another user.
                    if key_ids.get(old_key_id)?.as_deref() == Some(name) {
                        key_ids.remove_blind(old_key_id)?;
                    }
                }
                key_ids.insert_blind(new_key_id, name)?;
                users.insert_blind(name, value.as_slice())?;
                Ok(())
            })
            .map_err(tx_error);
        self.user_cache.invalidate(&user.name);
        updated?;
        self.flush().await
    }

    pub(super) async fn user_remove(&self, name: &str) -> StoreResult<bool> {
        let removed = (
            &self.users,
            &self.user_key_ids,
            &self.retired_users,
            &self.mailbox_account_users,
            &self.mailbox_user_accounts,
        )
            .gated_transaction(|(users, key_ids, retired, account_users, user_accounts)| {
                let Some(old) = users.remove(name.as_bytes())? else {
                    return Ok(false);
                };
                retired.insert_blind(name.as_bytes(), &[])?;
                mailbox_accounts::drop_user_grants(account_users, user_accounts, name)?;
                let old: UserRecord = in_tx(decode(&user_what(name), &old))?;
                let key_id = old.memento_key.key_id.as_bytes();
                if key_ids.get(key_id)?.as_deref() == Some(name.as_bytes()) {
                    key_ids.remove_blind(key_id)?;
                }
                Ok(true)
            })
            .map_err(tx_error);
        self.user_cache.invalidate(name);
        let removed = removed?;
        if removed {
            self.flush().await?;
        }
        Ok(removed)
    }
}
