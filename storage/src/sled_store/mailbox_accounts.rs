//! Court-mailbox accounts and their grants in sled, in four trees:
//!
//! | tree                    | key                     | value                              |
//! |-------------------------|-------------------------|------------------------------------|
//! | `mailbox_accounts`      | account id (8 bytes BE) | [`MailboxAccount`]                 |
//! | `mailbox_safe_ids`      | SAFE-ID, folded         | account id (8 bytes BE)            |
//! | `mailbox_account_users` | account id (8 bytes BE) | the granted user names (JSON list) |
//! | `mailbox_user_accounts` | user name               | the granted account ids (JSON list) |
//!
//! Ids are positive, so their big-endian bytes sort as the numbers do and a page is a range
//! read. A grant is kept twice, once per side, because sled's transactions read single keys (no
//! range scans): removing a user finds every account to take the name from in one record of
//! its own, inside the same transaction. Each change is one transaction, then a flush.

use std::collections::BTreeSet;
use std::ops::Bound;

use sled::transaction::TransactionalTree;

use super::{abort, backend, decode, encode, in_tx, tx_error, Engine, TxResult};
use crate::sled_gate::GatedTransaction;
use crate::{MailboxAccount, MailboxAccountId, MailboxAccountPut, SafeId, StoreError, StoreResult};

fn id_key(id: MailboxAccountId) -> [u8; 8] {
    id.get().to_be_bytes()
}

fn account_what(id: MailboxAccountId) -> String {
    format!("mailbox account {id}")
}

fn id_of(what: &str, bytes: &[u8]) -> StoreResult<MailboxAccountId> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt(format!("{what}: not an account id")))?;
    MailboxAccountId::try_from(i64::from_be_bytes(bytes))
        .map_err(|e| StoreError::Corrupt(format!("{what}: {e}")))
}

/// The set stored under `key` in `tree` (empty if none).
fn set_in<T: serde::de::DeserializeOwned + Ord>(
    tree: &TransactionalTree,
    key: &[u8],
    what: &str,
) -> TxResult<BTreeSet<T>> {
    match tree.get(key)? {
        Some(bytes) => in_tx(decode(what, &bytes)),
        None => Ok(BTreeSet::new()),
    }
}

/// Stores `set` under `key`, or removes the entry when the set is empty.
fn put_set<T: serde::Serialize>(
    tree: &TransactionalTree,
    key: &[u8],
    set: &BTreeSet<T>,
) -> TxResult<()> {
    if set.is_empty() {
        tree.remove_blind(key)?;
    } else {
        tree.insert_blind(key, in_tx(encode(set))?)?;
    }
    Ok(())
}

fn users_what(id: MailboxAccountId) -> String {
    format!("users of mailbox account {id}")
}

fn accounts_what(user: &str) -> String {
    format!("mailbox accounts of user {user}")
}

/// Takes `user`'s name off every account in their grant list and drops the list; called inside
/// the transaction that removes the user.
pub(super) fn drop_user_grants(
    account_users: &TransactionalTree,
    user_accounts: &TransactionalTree,
    user: &str,
) -> TxResult<()> {
    let ids: BTreeSet<MailboxAccountId> =
        set_in(user_accounts, user.as_bytes(), &accounts_what(user))?;
    for id in ids {
        let key = id_key(id);
        let mut users: BTreeSet<String> = set_in(account_users, &key, &users_what(id))?;
        users.remove(user);
        put_set(account_users, &key, &users)?;
    }
    user_accounts.remove_blind(user.as_bytes())?;
    Ok(())
}

impl Engine {
    pub(super) async fn mailbox_put(
        &self,
        mut account: MailboxAccount,
    ) -> StoreResult<MailboxAccountPut> {
        let key = id_key(account.egvp_account_id);
        let what = account_what(account.egvp_account_id);
        let folded = account.safe_id.folded();
        let replaced = (&self.mailbox_accounts, &self.mailbox_safe_ids)
            .gated_transaction(|(accounts, safe_ids)| {
                if let Some(holder) = safe_ids.get(folded.as_bytes())? {
                    if holder.as_ref() != key.as_slice() {
                        let holder = in_tx(id_of("SAFE-ID index", &holder))?;
                        return abort(StoreError::Conflict(format!(
                            "SAFE-ID {} is the mailbox of account {holder}",
                            account.safe_id
                        )));
                    }
                }
                let old = match accounts.get(key)? {
                    Some(bytes) => Some(in_tx(decode::<MailboxAccount>(&what, &bytes))?),
                    None => None,
                };
                let mut stored = account.clone();
                if let Some(old) = &old {
                    stored.created_at = old.created_at;
                    let old_folded = old.safe_id.folded();
                    if old_folded != folded {
                        safe_ids.remove_blind(old_folded.as_bytes())?;
                    }
                }
                safe_ids.insert_blind(folded.as_bytes(), &key)?;
                accounts.insert_blind(&key, in_tx(encode(&stored))?)?;
                Ok(old.map(|old| old.created_at))
            })
            .map_err(tx_error)?;
        self.flush().await?;
        Ok(match replaced {
            Some(created_at) => {
                account.created_at = created_at;
                MailboxAccountPut::Replaced(account)
            }
            None => MailboxAccountPut::Created(account),
        })
    }

    pub(super) fn mailbox_get(&self, id: MailboxAccountId) -> StoreResult<Option<MailboxAccount>> {
        self.mailbox_accounts
            .get(id_key(id))
            .map_err(backend)?
            .map(|bytes| decode(&account_what(id), &bytes))
            .transpose()
    }

    pub(super) fn mailbox_by_safe_id(
        &self,
        safe_id: &SafeId,
    ) -> StoreResult<Option<MailboxAccount>> {
        let Some(id) = self
            .mailbox_safe_ids
            .get(safe_id.folded().as_bytes())
            .map_err(backend)?
        else {
            return Ok(None);
        };
        self.mailbox_get(id_of("SAFE-ID index", &id)?)
    }

    pub(super) fn mailbox_page(
        &self,
        after: Option<MailboxAccountId>,
        limit: usize,
    ) -> StoreResult<Vec<MailboxAccount>> {
        let start = match after {
            Some(after) => Bound::Excluded(id_key(after).to_vec()),
            None => Bound::Unbounded,
        };
        self.mailbox_accounts
            .range::<Vec<u8>, _>((start, Bound::Unbounded))
            .take(limit)
            .map(|entry| {
                let (_, bytes) = entry.map_err(backend)?;
                decode("mailbox account", &bytes)
            })
            .collect()
    }

    pub(super) async fn mailbox_remove(&self, id: MailboxAccountId) -> StoreResult<bool> {
        let key = id_key(id);
        let what = account_what(id);
        let removed = (
            &self.mailbox_accounts,
            &self.mailbox_safe_ids,
            &self.mailbox_account_users,
        )
            .gated_transaction(|(accounts, safe_ids, account_users)| {
                let Some(bytes) = accounts.get(key)? else {
                    return Ok(false);
                };
                let users: BTreeSet<String> = set_in(account_users, &key, &users_what(id))?;
                if !users.is_empty() {
                    let names: Vec<&str> = users.iter().map(String::as_str).collect();
                    return abort(StoreError::Conflict(format!(
                        "{what} is granted to {} ({}); revoke the grants first",
                        if users.len() == 1 {
                            "1 user".to_owned()
                        } else {
                            format!("{} users", users.len())
                        },
                        names.join(", ")
                    )));
                }
                let account: MailboxAccount = in_tx(decode(&what, &bytes))?;
                safe_ids.remove_blind(account.safe_id.folded().as_bytes())?;
                accounts.remove_blind(&key)?;
                Ok(true)
            })
            .map_err(tx_error)?;
        if removed {
            self.flush().await?;
        }
        Ok(removed)
    }

    /// Grants (`grant`) or revokes; whether anything changed.
    pub(super) async fn mailbox_grant(
        &self,
        id: MailboxAccountId,
        user: &str,
        grant: bool,
    ) -> StoreResult<bool> {
        let key = id_key(id);
        let changed = (
            &self.users,
            &self.mailbox_accounts,
            &self.mailbox_account_users,
            &self.mailbox_user_accounts,
        )
            .gated_transaction(|(users, accounts, account_users, user_accounts)| {
                if grant {
                    if accounts.get(key)?.is_none() {
                        return abort(StoreError::NotFound(account_what(id)));
                    }
                    if users.get(user.as_bytes())?.is_none() {
                        return abort(StoreError::NotFound(format!("user {user}")));
                    }
                }
                let mut names: BTreeSet<String> = set_in(account_users, &key, &users_what(id))?;
                let mut ids: BTreeSet<MailboxAccountId> =
                    set_in(user_accounts, user.as_bytes(), &accounts_what(user))?;
                let changed = if grant {
                    names.insert(user.to_owned()) | ids.insert(id)
                } else {
                    names.remove(user) | ids.remove(&id)
                };
                if changed {
                    put_set(account_users, &key, &names)?;
                    put_set(user_accounts, user.as_bytes(), &ids)?;
                }
                Ok(changed)
            })
            .map_err(tx_error)?;
        if changed {
            self.flush().await?;
        }
        Ok(changed)
    }

    pub(super) fn mailbox_users(&self, id: MailboxAccountId) -> StoreResult<Vec<String>> {
        match self
            .mailbox_account_users
            .get(id_key(id))
            .map_err(backend)?
        {
            Some(bytes) => decode(&users_what(id), &bytes),
            None => Ok(Vec::new()),
        }
    }

    pub(super) fn mailbox_ids_of(&self, user: &str) -> StoreResult<Vec<MailboxAccountId>> {
        match self
            .mailbox_user_accounts
            .get(user.as_bytes())
            .map_err(backend)?
        {
            Some(bytes) => decode(&accounts_what(user), &bytes),
            None => Ok(Vec::new()),
        }
    }
}
