//! API-user administration, shared by the command line (`meldewerk user …`, `meldewerk seal …`)
//! and the operator API.

use std::sync::Arc;

use chrono::Utc;
use meldewerk_storage::{SealRecord, Store, StoreError, UserRecord};
use ring::signature::{Ed25519KeyPair, KeyPair};

use crate::crypto::{CryptoError, MasterKey, PasswordHasher, MEMENTO_KEY, SEAL_KEY};

/// A user name: 1 to 64 characters of `A-Z a-z 0-9 . _ -`. No colon, so that it always fits an
/// HTTP Basic credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserName(String);

impl UserName {
    /// Parses a user name.
    pub fn parse(name: &str) -> Result<Self, AccountError> {
        let ok = !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if ok {
            Ok(UserName(name.to_string()))
        } else {
            Err(AccountError::InvalidName(name.to_string()))
        }
    }

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A password good enough to protect an API account: 8 to 1024 characters.
pub struct Password(String);

impl Password {
    /// Parses a password (a trailing newline from standard input is not part of it).
    pub fn parse(raw: &str) -> Result<Self, AccountError> {
        let password = raw.strip_suffix('\n').unwrap_or(raw);
        let password = password.strip_suffix('\r').unwrap_or(password);
        let length = password.chars().count();
        if !(8..=1024).contains(&length) {
            return Err(AccountError::WeakPassword);
        }
        Ok(Password(password.to_string()))
    }

    /// The password as text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// A mail address for a user's notices: `local@domain` as SMTP accepts it, at most 254
/// characters (no display name; the account's name is used for that).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(lettre::Address);

impl Email {
    /// Parses an address.
    pub fn parse(text: &str) -> Result<Self, AccountError> {
        // Echoed in the error, so cut: a body may carry megabytes in the field.
        let invalid = || AccountError::InvalidEmail(text.chars().take(100).collect());
        if text.len() > 254 {
            return Err(invalid());
        }
        text.parse::<lettre::Address>()
            .map(Email)
            .map_err(|_| invalid())
    }

    /// The address as text.
    pub fn as_str(&self) -> &str {
        self.0.as_ref()
    }

    /// The address as lettre's type, for a mailbox.
    pub fn address(&self) -> lettre::Address {
        self.0.clone()
    }

    /// The address as text, as it is stored.
    pub fn into_string(self) -> String {
        self.0.to_string()
    }
}

/// Why an account operation failed; each message is meant for the operator who asked.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The name breaks the naming rule.
    #[error("invalid user name {0:?}: use 1 to 64 characters of A-Z a-z 0-9 . _ -")]
    InvalidName(String),
    /// The password is too short or too long.
    #[error("the password must have 8 to 1024 characters")]
    WeakPassword,
    /// The name is taken.
    #[error("user {0} exists already")]
    Duplicate(String),
    /// The name belonged to a removed user: their reports keep it, so it is not given out again.
    #[error("the name {0} belonged to a removed user whose reports remain; choose another name")]
    NameRetired(String),
    /// There is no such user.
    #[error("there is no user {0}")]
    UnknownUser(String),
    /// The mail address is not one SMTP could deliver to.
    #[error("invalid email {0:?}: give one address like name@example.org, at most 254 characters")]
    InvalidEmail(String),
    /// The customer id breaks the rule of customer ids (the one the scopes use).
    #[error("invalid customer: {0}")]
    InvalidCustomer(String),
    /// A supplied seal key is not usable.
    #[error("invalid seal key: {0}")]
    InvalidSeal(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Hashing or wrapping failed.
    #[error(transparent)]
    Crypto(#[from] CryptoError),
}

/// What `user list` shows of an account: nothing secret.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserSummary {
    /// Login name.
    pub name: String,
    /// Customer id, if any.
    #[schema(required = true)]
    pub customer: Option<String>,
    /// Where the user's notices go, if anywhere.
    #[schema(required = true)]
    pub email: Option<String>,
    /// Whether a seal is deposited.
    pub seal: bool,
    /// Whether the user's mementos come with a magic link (`magicLink` is null otherwise).
    pub magic_links: bool,
    /// Creation time.
    pub created_at: chrono::DateTime<Utc>,
    /// Last password change.
    pub password_changed_at: chrono::DateTime<Utc>,
}

impl From<&UserRecord> for UserSummary {
    fn from(u: &UserRecord) -> Self {
        UserSummary {
            name: u.name.clone(),
            customer: u.customer.clone(),
            email: u.email.clone(),
            seal: u.seal.is_some(),
            magic_links: u.magic_links,
            created_at: u.created_at,
            password_changed_at: u.password_changed_at,
        }
    }
}

/// The account operations.
#[derive(Clone)]
pub struct Accounts {
    store: Arc<dyn Store>,
    master: Arc<MasterKey>,
    hasher: PasswordHasher,
    /// Held across every write of a user record (and the read before it). Online, two operator
    /// requests can run at once: without it a seal deposit that read the record before a
    /// password change would write the old memento key back and revive everything the change
    /// revoked, and a change could overwrite a user removed and added again meanwhile.
    updates: Arc<tokio::sync::Mutex<()>>,
}

impl Accounts {
    /// Operations on `store`, wrapping keys under `master`.
    pub fn new(store: Arc<dyn Store>, master: Arc<MasterKey>, hasher: PasswordHasher) -> Self {
        Accounts {
            store,
            master,
            hasher,
            updates: Arc::default(),
        }
    }

    /// Hashes the password and derives the memento key on a blocking thread: argon2 takes tens of
    /// milliseconds of CPU and must not stall an async worker.
    async fn credentials(
        &self,
        password: Password,
    ) -> Result<(String, meldewerk_storage::WrappedKey), AccountError> {
        let hasher = self.hasher.clone();
        let master = self.master.clone();
        tokio::task::spawn_blocking(move || {
            let hash = hasher.hash(password.expose())?;
            let key = hasher.derive_memento_key(password.expose())?;
            Ok((hash, master.wrap(MEMENTO_KEY, &key)))
        })
        .await
        .expect("the hashing task does not panic")
    }

    /// Adds a user and returns what `list` shows of it.
    #[tracing::instrument(skip(self, password, email))]
    pub async fn add(
        &self,
        name: &UserName,
        password: Password,
        customer: Option<String>,
        email: Option<Email>,
    ) -> Result<UserSummary, AccountError> {
        let customer = customer.map(|c| checked_customer(&c)).transpose()?;
        if self.store.user(name.as_str()).await?.is_some() {
            return Err(AccountError::Duplicate(name.as_str().into()));
        }
        let (password_hash, memento_key) = self.credentials(password).await?;
        let now = Utc::now();
        let record = UserRecord {
            name: name.as_str().into(),
            customer,
            email: email.map(Email::into_string),
            password_hash,
            memento_key,
            seal: None,
            created_at: now,
            password_changed_at: now,
            magic_links: true,
            court_message_contact: None,
        };
        let summary = UserSummary::from(&record);
        let _update = self.updates.lock().await;
        match self.store.create_user(record).await {
            Ok(()) => {}
            // Taken by a live user, or retired with a removed one.
            Err(StoreError::Conflict(_)) if self.store.user(name.as_str()).await?.is_none() => {
                return Err(AccountError::NameRetired(name.as_str().into()))
            }
            Err(StoreError::Conflict(_)) => {
                return Err(AccountError::Duplicate(name.as_str().into()))
            }
            Err(other) => return Err(other.into()),
        }
        Ok(summary)
    }

    /// Sets a new password. The memento key is replaced with it, so every memento, magic link
    /// and session made under the old password stops working.
    #[tracing::instrument(skip(self, password))]
    pub async fn change_password(
        &self,
        name: &UserName,
        password: Password,
    ) -> Result<(), AccountError> {
        self.existing(name).await?;
        // argon2 runs before the lock, so that it never holds up other changes.
        let (password_hash, memento_key) = self.credentials(password).await?;
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.password_hash = password_hash;
        record.memento_key = memento_key;
        record.password_changed_at = Utc::now();
        Ok(self.store.update_user(record).await?)
    }

    /// Sets (or with `None` removes) the address the user's notices go to.
    #[tracing::instrument(skip(self, email))]
    pub async fn set_email(
        &self,
        name: &UserName,
        email: Option<Email>,
    ) -> Result<(), AccountError> {
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.email = email.map(Email::into_string);
        Ok(self.store.update_user(record).await?)
    }

    /// Sets (or with `None` removes) the contact address the user registered for court
    /// messages (a mail when one arrives in a mailbox account they are granted).
    #[tracing::instrument(skip(self, contact))]
    pub async fn set_court_message_contact(
        &self,
        name: &UserName,
        contact: Option<Email>,
    ) -> Result<(), AccountError> {
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.court_message_contact = contact.map(Email::into_string);
        Ok(self.store.update_user(record).await?)
    }

    /// Sets (or with `None` removes) the customer the user belongs to: the customer's scope says
    /// which facilities the user may report for, from the user's next request on.
    #[tracing::instrument(skip(self, customer))]
    pub async fn set_customer(
        &self,
        name: &UserName,
        customer: Option<String>,
    ) -> Result<(), AccountError> {
        let customer = customer.map(|c| checked_customer(&c)).transpose()?;
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.customer = customer;
        Ok(self.store.update_user(record).await?)
    }

    /// Sets whether the user's mementos come with a magic link (`false`: an integrator whose
    /// configuration issues no tokens; its memento answers carry `"magicLink": null`).
    #[tracing::instrument(skip(self))]
    pub async fn set_magic_links(&self, name: &UserName, issue: bool) -> Result<(), AccountError> {
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.magic_links = issue;
        Ok(self.store.update_user(record).await?)
    }

    /// Removes a user; their reports stay in the store.
    #[tracing::instrument(skip(self))]
    pub async fn remove(&self, name: &UserName) -> Result<(), AccountError> {
        let _update = self.updates.lock().await;
        if self.store.remove_user(name.as_str()).await? {
            Ok(())
        } else {
            Err(AccountError::UnknownUser(name.as_str().into()))
        }
    }

    /// All users.
    pub async fn list(&self) -> Result<Vec<UserSummary>, AccountError> {
        Ok(self
            .store
            .users()
            .await?
            .iter()
            .map(UserSummary::from)
            .collect())
    }

    /// Deposits a seal for a user: the given Ed25519 PKCS#8 key, or a freshly generated one.
    /// Returns the public key, which the receiving office uses to verify sealed messages.
    #[tracing::instrument(skip(self, pkcs8))]
    pub async fn deposit_seal(
        &self,
        name: &UserName,
        pkcs8: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, AccountError> {
        self.existing(name).await?;
        let pkcs8 = match pkcs8 {
            Some(bytes) => bytes,
            None => Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new())
                .map_err(|_| AccountError::InvalidSeal("key generation failed".into()))?
                .as_ref()
                .to_vec(),
        };
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&pkcs8).map_err(|e| {
            AccountError::InvalidSeal(format!("not an Ed25519 PKCS#8 (DER) key: {e}"))
        })?;
        let public_key = pair.public_key().as_ref().to_vec();
        let _update = self.updates.lock().await;
        let mut record = self.existing(name).await?;
        record.seal = Some(SealRecord {
            algorithm: "Ed25519".into(),
            private_key: self.master.wrap(SEAL_KEY, &pkcs8),
            public_key: public_key.clone(),
            deposited_at: Utc::now(),
        });
        self.store.update_user(record).await?;
        Ok(public_key)
    }

    async fn existing(&self, name: &UserName) -> Result<UserRecord, AccountError> {
        self.store
            .user(name.as_str())
            .await?
            .ok_or_else(|| AccountError::UnknownUser(name.as_str().into()))
    }
}

/// A customer id as the scopes take it, so that a user's customer can match a scope.
fn checked_customer(customer: &str) -> Result<String, AccountError> {
    crate::facilities::customer_id(customer).map_err(AccountError::InvalidCustomer)
}
