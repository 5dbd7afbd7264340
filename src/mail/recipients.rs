//! Where a mail goes: the operators are configured; an API user's notices go to the address on
//! their account, read when the mail is due, so that an address set or removed meanwhile counts.

use std::sync::Arc;

use futures::future::BoxFuture;
use lettre::message::Mailbox;
use meldewerk_storage::Store;

use crate::accounts::Email;

/// The address of an API user's notices.
pub trait UserAddresses: Send + Sync + 'static {
    /// The address on `user`'s account; `None` when it has none or the user was removed. An
    /// error (the store could not be read) makes the mail wait for its next try.
    fn address(&self, user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>>;

    /// The contact address `user` registered for court messages; none by default.
    fn court_contact(&self, user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
        let _ = user;
        Box::pin(async { Ok(None) })
    }
}

/// The addresses on the accounts in the store.
pub struct AccountAddresses(pub Arc<dyn Store>);

impl UserAddresses for AccountAddresses {
    fn address(&self, user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
        self.read(user, |record| record.email)
    }

    fn court_contact(&self, user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
        self.read(user, |record| record.court_message_contact)
    }
}

impl AccountAddresses {
    /// The address `pick` takes from `user`'s record, read when the mail is due.
    fn read(
        &self,
        user: &str,
        pick: fn(meldewerk_storage::UserRecord) -> Option<String>,
    ) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
        let store = self.0.clone();
        let user = user.to_string();
        Box::pin(async move {
            let record = store.user(&user).await.map_err(|e| e.to_string())?;
            let Some(email) = record.and_then(pick) else {
                return Ok(None);
            };
            match Email::parse(&email) {
                Ok(email) => Ok(Some(Mailbox::new(Some(user), email.address()))),
                // Checked when it was set; a record edited by hand could still hold anything,
                // and trying it again would not mend it.
                Err(_) => {
                    tracing::warn!(user = %crate::telemetry::log_str(&user), "the address on the account is not usable; notice not mailed");
                    Ok(None)
                }
            }
        })
    }
}

/// No user has an address (tests of the operators' mails).
pub struct NoAddresses;

impl UserAddresses for NoAddresses {
    fn address(&self, _user: &str) -> BoxFuture<'static, Result<Option<Mailbox>, String>> {
        Box::pin(async { Ok(None) })
    }
}
