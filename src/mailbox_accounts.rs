//! Court-mailbox accounts and their grants as operators manage them: the checks of an account's
//! values and the changes, each recorded in the audit log, shared by the operator API
//! (`routes/admin/mailbox_accounts.rs`) and the command line (`meldewerk mailbox …`), so that
//! both keep the same rules, messages and audit actions.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use meldewerk_storage::{
    MailboxAccount, MailboxAccountId, MailboxAccountPut, SafeId, Store, StoreError,
};

use crate::facilities::{taken, text, Given};

/// How a caller names an account's values in its messages (`safeId` in the API, `--safe-id` on
/// the command line).
pub(crate) struct AccountFieldNames {
    /// The account's id.
    pub(crate) id: &'static str,
    /// The SAFE-ID.
    pub(crate) safe_id: &'static str,
    /// The display name.
    pub(crate) name: &'static str,
    /// What a value not given at all is (`must not be null`, `is required`).
    pub(crate) missing: &'static str,
}

/// An account's values as an operator gave them, before they are checked.
pub(crate) struct AccountInput<'a> {
    /// The SAFE-ID.
    pub(crate) safe_id: Given<'a>,
    /// The display name.
    pub(crate) name: Given<'a>,
    /// Whether the account is in use.
    pub(crate) active: bool,
}

impl AccountInput<'_> {
    /// The account `id` with these values, written `at`; or every problem, each naming its
    /// field as `names` calls it. `errors` may hold problems found before (an unknown member, a
    /// malformed id): the account is built only if there are none.
    pub(crate) fn check(
        &self,
        id: Option<MailboxAccountId>,
        names: &AccountFieldNames,
        at: DateTime<Utc>,
        errors: &mut Vec<String>,
    ) -> Option<MailboxAccount> {
        let safe_id = taken(
            errors,
            names.missing,
            names.safe_id,
            self.safe_id,
            |given| SafeId::parse(given).map_err(|e| e.to_string()),
        );
        let name = taken(errors, names.missing, names.name, self.name, text);
        let (Some(egvp_account_id), Some(safe_id), Some(name), true) =
            (id, safe_id, name, errors.is_empty())
        else {
            return None;
        };
        Some(MailboxAccount {
            egvp_account_id,
            safe_id,
            name,
            active: self.active,
            created_at: at,
            updated_at: at,
        })
    }
}

/// Parses an account id as a path or argument gives it; the problem names the field.
pub(crate) fn parse_id(text: &str, names: &AccountFieldNames) -> Result<MailboxAccountId, String> {
    MailboxAccountId::parse(text).map_err(|e| format!("{} {e}", names.id))
}

/// An account as operators are shown it (API and `mailbox show`/`list --json`): the record and
/// the users granted it, by name, as `users`.
pub(crate) fn account_view<'a>(
    account: &'a MailboxAccount,
    users: &'a [String],
) -> MailboxAccountView<'a> {
    MailboxAccountView { account, users }
}

/// An account as operators are shown it: the record's members and `users`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub(crate) struct MailboxAccountView<'a> {
    #[serde(flatten)]
    account: &'a MailboxAccount,
    /// The users granted the account, by name.
    users: &'a [String],
}

/// How the audit log names an account.
fn target(id: MailboxAccountId) -> String {
    format!("mailbox account {id}")
}

/// Why a change was not made.
#[derive(Debug)]
pub(crate) enum Refused {
    /// 404: the account, the user or the grant does not exist.
    NotFound(String),
    /// 409: the change contradicts what is stored (a SAFE-ID of another account, an account
    /// still granted).
    Conflict(String),
    /// The store failed.
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict(message) => Refused::Conflict(message),
            StoreError::NotFound(what) => Refused::NotFound(format!("there is no {what}")),
            other => Refused::Store(other),
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::NotFound(message) | Refused::Conflict(message) => f.write_str(message),
            Refused::Store(e) => e.fmt(f),
        }
    }
}

/// The message for an account that does not exist.
pub(crate) fn no_account(id: MailboxAccountId) -> String {
    format!("there is no mailbox account {id}")
}

/// The operations, each audited as done by `who` (the operator's name, or the command line's
/// `command line (<login>)`). Only what was done is recorded: a refused change leaves nothing.
pub(crate) struct MailboxAccounts<'a> {
    /// The store.
    pub(crate) store: &'a Arc<dyn Store>,
    /// Who asks, as the audit log names them.
    pub(crate) who: &'a str,
}

impl MailboxAccounts<'_> {
    async fn audit(&self, action: &str, target: String) -> Result<(), StoreError> {
        crate::routes::admin::audit(self.store, self.who, action, target).await
    }

    /// Creates or replaces the account (`add-mailbox-account`, `change-mailbox-account`).
    pub(crate) async fn put(&self, account: MailboxAccount) -> Result<MailboxAccountPut, Refused> {
        let put = self.store.put_mailbox_account(account).await?;
        let action = match &put {
            MailboxAccountPut::Created(_) => "add-mailbox-account",
            MailboxAccountPut::Replaced(_) => "change-mailbox-account",
        };
        self.audit(action, target(put.account().egvp_account_id))
            .await?;
        Ok(put)
    }

    /// Removes the account (`remove-mailbox-account`); refused while users are granted it.
    pub(crate) async fn remove(&self, id: MailboxAccountId) -> Result<(), Refused> {
        if !self.store.remove_mailbox_account(id).await? {
            return Err(Refused::NotFound(no_account(id)));
        }
        self.audit("remove-mailbox-account", target(id)).await?;
        Ok(())
    }

    /// Grants `user` the account (`grant-mailbox-account`); whether the grant is new.
    pub(crate) async fn grant(&self, id: MailboxAccountId, user: &str) -> Result<bool, Refused> {
        let new = self.store.grant_mailbox_account(id, user).await?;
        self.audit(
            "grant-mailbox-account",
            format!("{} to user {user}", target(id)),
        )
        .await?;
        Ok(new)
    }

    /// Takes `user`'s grant back (`revoke-mailbox-account`); 404 if they held none.
    pub(crate) async fn revoke(&self, id: MailboxAccountId, user: &str) -> Result<(), Refused> {
        if !self.store.revoke_mailbox_account(id, user).await? {
            return Err(Refused::NotFound(format!(
                "user {user} holds no grant for mailbox account {id}"
            )));
        }
        self.audit(
            "revoke-mailbox-account",
            format!("{} from user {user}", target(id)),
        )
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: AccountFieldNames = AccountFieldNames {
        id: "egvpAccountId",
        safe_id: "safeId",
        name: "name",
        missing: "must not be null",
    };

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000, 0).unwrap()
    }

    #[test]
    fn valid_values_make_an_account_and_every_problem_is_named_at_once() {
        let id = MailboxAccountId::parse("7").ok();
        let input = AccountInput {
            safe_id: Given::Text("DE.Justiz.7"),
            name: Given::Text("Betreuungsstelle Süd"),
            active: false,
        };
        let account = input.check(id, &NAMES, at(), &mut Vec::new()).unwrap();
        assert_eq!(account.safe_id.as_str(), "DE.Justiz.7");
        assert!(!account.active);
        let bad = AccountInput {
            safe_id: Given::Text("DE.Justiz"),
            name: Given::Missing,
            active: true,
        };
        let mut errors = vec![parse_id("0", &NAMES).unwrap_err()];
        assert!(bad.check(None, &NAMES, at(), &mut errors).is_none());
        assert_eq!(errors[0], "egvpAccountId must be at least 1");
        assert!(errors[1].starts_with("safeId must be a SAFE-ID such as DE.Justiz."));
        assert_eq!(errors[2], "name must not be null");
        assert_eq!(errors.len(), 3);
    }
}
