//! Court-mailbox accounts and who may use them: the records the store keeps of them.
//!
//! An account is one mailbox of the electronic court and administration mailbox (EGVP), known to
//! integrators by its `egvp_account_id` (the contract's integer, `absender.egvp_account_id`) and
//! to the mailbox servers by its SAFE-ID. A grant lets one API user see the account's messages
//! and send through it; a user without one sees nothing of the account.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why a text or number is no [`MailboxAccountId`]. The display form names no field, so that
/// each caller puts the name its input uses in front (`egvpAccountId`, `absender.egvp_account_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotAccountId {
    /// Not a whole number written in digits alone (a sign, a fraction, letters, leading zeros).
    #[error("must be a positive whole number, written in digits without leading zeros")]
    Malformed,
    /// Zero or below.
    #[error("must be at least 1")]
    NotPositive,
    /// Beyond what a signed 64-bit column holds.
    #[error("must be at most 9223372036854775807")]
    TooLarge,
}

/// A mailbox account's id: a whole number from 1 to `i64::MAX`, so that every engine (a
/// PostgreSQL `bigint` too) stores it as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct MailboxAccountId(i64);

impl MailboxAccountId {
    /// Parses the id as a path segment or command-line argument writes it: digits only, no sign,
    /// no leading zeros (one spelling per account, as the audit log and URLs name it).
    pub fn parse(text: &str) -> Result<MailboxAccountId, NotAccountId> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            // `-5` is a number, just not a positive one.
            let negative = text
                .strip_prefix('-')
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()));
            return Err(if negative {
                NotAccountId::NotPositive
            } else {
                NotAccountId::Malformed
            });
        }
        if text == "0" {
            return Err(NotAccountId::NotPositive);
        }
        if text.starts_with('0') {
            return Err(NotAccountId::Malformed);
        }
        text.parse::<i64>()
            .map_err(|_| NotAccountId::TooLarge)
            .and_then(MailboxAccountId::try_from)
    }

    /// Reads the id from a JSON value: an integer (`7`, not `7.0` or `"7"`), as the contract
    /// types `absender.egvp_account_id`.
    pub fn from_json(value: &serde_json::Value) -> Result<MailboxAccountId, NotAccountId> {
        match value {
            serde_json::Value::Number(number) => match (number.as_i64(), number.as_u64()) {
                (Some(id), _) => MailboxAccountId::try_from(id),
                (None, Some(_)) => Err(NotAccountId::TooLarge),
                (None, None) => Err(NotAccountId::Malformed),
            },
            _ => Err(NotAccountId::Malformed),
        }
    }

    /// The number.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for MailboxAccountId {
    type Error = NotAccountId;
    fn try_from(id: i64) -> Result<Self, NotAccountId> {
        if id >= 1 {
            Ok(MailboxAccountId(id))
        } else {
            Err(NotAccountId::NotPositive)
        }
    }
}

impl From<MailboxAccountId> for i64 {
    fn from(id: MailboxAccountId) -> i64 {
        id.0
    }
}

impl std::fmt::Display for MailboxAccountId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that widths in format strings (tables) apply.
        f.pad(&self.0.to_string())
    }
}

/// Longest SAFE-ID taken, in bytes: real ones are some 50; a bound on what is stored.
pub const MAX_SAFE_ID_LEN: usize = 128;

/// Why a text is no [`SafeId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "must be a SAFE-ID such as DE.Justiz.1a2b-3c4d or DE.BRAK.1a2b3c (DE, a directory, an id \
     of letters, digits, '.', '-', '_'), or safe-<digits>-<digits>, at most 128 characters"
)]
pub struct NotSafeId;

/// A mailbox's SAFE-ID, the address of the EGVP directory (SAFE).
///
/// Accepted shapes (see `docs/decisions.md`):
/// - `DE.<directory>.<id>`: the directory a letter, then letters, digits or `_` (`Justiz`,
///   `BRAK`, `BRAK_SPT`, `BNotK`, `Justiztest`); the id letters, digits, `.`, `-`, `_`, not
///   beginning or ending with `.` and without `..`;
/// - `safe-<digits>-<digits>` and `govello-<digits>-<digits>`, the older directory's form
///   (further `-<digits>` groups allowed).
///
/// At most [`MAX_SAFE_ID_LEN`] bytes, ASCII only; kept as given (case included).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SafeId(String);

impl SafeId {
    /// Parses a SAFE-ID.
    pub fn parse(text: &str) -> Result<SafeId, NotSafeId> {
        if text.len() > MAX_SAFE_ID_LEN || !(directory_form(text) || legacy_form(text)) {
            return Err(NotSafeId);
        }
        Ok(SafeId(text.to_owned()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form two SAFE-IDs are compared in for uniqueness: ASCII lowercase, so that
    /// `DE.Justiz.x` and `DE.JUSTIZ.x` are not two accounts of one mailbox.
    pub fn folded(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// `DE.<directory>.<id>`.
fn directory_form(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("DE.") else {
        return false;
    };
    let Some((directory, id)) = rest.split_once('.') else {
        return false;
    };
    let directory_ok = directory
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && directory
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let id_ok = !id.is_empty()
        && !id.starts_with('.')
        && !id.ends_with('.')
        && !id.contains("..")
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    directory_ok && id_ok
}

/// `safe-<digits>-<digits>…` or `govello-<digits>-<digits>…`.
fn legacy_form(text: &str) -> bool {
    let Some(rest) = text
        .strip_prefix("safe-")
        .or_else(|| text.strip_prefix("govello-"))
    else {
        return false;
    };
    let groups: Vec<&str> = rest.split('-').collect();
    groups.len() >= 2
        && groups
            .iter()
            .all(|group| !group.is_empty() && group.bytes().all(|b| b.is_ascii_digit()))
}

impl TryFrom<String> for SafeId {
    type Error = NotSafeId;
    fn try_from(text: String) -> Result<Self, NotSafeId> {
        SafeId::parse(&text)
    }
}

impl From<SafeId> for String {
    fn from(id: SafeId) -> String {
        id.0
    }
}

impl std::fmt::Display for SafeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.0)
    }
}

/// A court-mailbox account, configured by the operators.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MailboxAccount {
    /// The id integrators name it by (`absender.egvp_account_id`); the record's key.
    pub egvp_account_id: MailboxAccountId,
    /// The mailbox's address; no two accounts share one (compared as [`SafeId::folded`]).
    pub safe_id: SafeId,
    /// What operators and users call it (`Betreuungsstelle Süd`).
    pub name: String,
    /// Whether it is in use: an inactive account stays configured, its users keep seeing the
    /// messages it holds, but nothing is sent through it.
    pub active: bool,
    /// When it was first configured; kept when the record is replaced.
    pub created_at: DateTime<Utc>,
    /// When the record was last written.
    pub updated_at: DateTime<Utc>,
}

/// What [`crate::Store::put_mailbox_account`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxAccountPut {
    /// There was no account with the id; this one is stored.
    Created(MailboxAccount),
    /// It replaced the account with the id; stored with the replaced record's `created_at`.
    Replaced(MailboxAccount),
}

impl MailboxAccountPut {
    /// The account as stored.
    pub fn account(&self) -> &MailboxAccount {
        match self {
            MailboxAccountPut::Created(account) | MailboxAccountPut::Replaced(account) => account,
        }
    }
}

/// The field of a court form's submission that names the sending account: every refusal names it.
pub const SENDING_ACCOUNT_FIELD: &str = "absender.egvp_account_id";

/// Why a user may not send through an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxRefusal {
    /// No such account, or the user has no grant for it: the two are one answer, so that a user
    /// learns nothing of accounts that are not theirs.
    NotGranted(MailboxAccountId),
    /// The user has a grant, but the account is deactivated.
    Inactive(MailboxAccountId),
}

impl MailboxRefusal {
    /// The entry of a 400 `{"errors": [...]}` answer: it names [`SENDING_ACCOUNT_FIELD`] and the
    /// id, nothing else of the account.
    pub fn message(&self) -> String {
        let field = SENDING_ACCOUNT_FIELD;
        match self {
            MailboxRefusal::NotGranted(id) => {
                format!("{field} {id} is not a mailbox account this user may send through")
            }
            MailboxRefusal::Inactive(id) => {
                format!("{field} {id} is a deactivated mailbox account and sends nothing")
            }
        }
    }
}

impl std::fmt::Display for MailboxRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Whether a user may send through account `id`, given whether they hold a grant for it and the
/// account (if configured). Not granted comes before inactive, so that the state of others'
/// accounts is not told.
pub fn check_sending_account(
    id: MailboxAccountId,
    granted: bool,
    account: Option<MailboxAccount>,
) -> Result<MailboxAccount, MailboxRefusal> {
    match account {
        Some(account) if granted && account.active => Ok(account),
        Some(_) if granted => Err(MailboxRefusal::Inactive(id)),
        _ => Err(MailboxRefusal::NotGranted(id)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_ids_are_positive_integers_in_one_spelling() {
        assert_eq!(MailboxAccountId::parse("7").unwrap().get(), 7);
        assert_eq!(
            MailboxAccountId::parse("9223372036854775807")
                .unwrap()
                .get(),
            i64::MAX
        );
        for (text, problem) in [
            ("0", NotAccountId::NotPositive),
            ("-3", NotAccountId::NotPositive),
            ("", NotAccountId::Malformed),
            ("-", NotAccountId::Malformed),
            ("+3", NotAccountId::Malformed),
            ("007", NotAccountId::Malformed),
            ("1.5", NotAccountId::Malformed),
            ("abc", NotAccountId::Malformed),
            (" 7", NotAccountId::Malformed),
            ("9223372036854775808", NotAccountId::TooLarge),
        ] {
            assert_eq!(MailboxAccountId::parse(text), Err(problem), "{text:?}");
        }
        let json = |text: &str| MailboxAccountId::from_json(&serde_json::from_str(text).unwrap());
        assert_eq!(json("12").unwrap().get(), 12);
        assert_eq!(json("0"), Err(NotAccountId::NotPositive));
        assert_eq!(json("-1"), Err(NotAccountId::NotPositive));
        assert_eq!(json("1.0"), Err(NotAccountId::Malformed));
        assert_eq!(json("\"12\""), Err(NotAccountId::Malformed));
        assert_eq!(json("18446744073709551615"), Err(NotAccountId::TooLarge));
        // A stored record cannot hold another either.
        assert!(serde_json::from_str::<MailboxAccountId>("0").is_err());
        assert_eq!(
            NotAccountId::Malformed.to_string(),
            "must be a positive whole number, written in digits without leading zeros"
        );
    }

    #[test]
    fn safe_ids_of_the_directory_and_the_older_form_are_taken() {
        for good in [
            "DE.Justiz.1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d.a1b2",
            "DE.BRAK.a1b2c3d4e5",
            "DE.BRAK_SPT.x-1",
            "DE.Justiztest.AG_Berlin.Betreuung",
            "safe-1234567890123-12345678",
            "govello-1234567890123-000012345",
        ] {
            assert_eq!(SafeId::parse(good).unwrap().as_str(), good);
        }
        let long = format!("DE.Justiz.{}", "a".repeat(MAX_SAFE_ID_LEN));
        for bad in [
            "",
            "DE.Justiz",
            "DE.Justiz.",
            "DE..x",
            "de.Justiz.x",
            "DE.1Justiz.x",
            "DE.Justiz..x",
            "DE.Justiz.x.",
            "DE.Justiz.a b",
            "DE.Justiz.ä",
            "DE.Justiz.x/../y",
            "DE.Justiz.x\n",
            "safe-123",
            "safe-12-",
            "safe-12-a",
            "Justiz.x",
            long.as_str(),
        ] {
            assert_eq!(SafeId::parse(bad), Err(NotSafeId), "{bad:?}");
        }
        assert!(serde_json::from_str::<SafeId>("\"DE.Justiz\"").is_err());
        assert_eq!(
            SafeId::parse("DE.Justiz.AbC").unwrap().folded(),
            "de.justiz.abc"
        );
    }

    fn account(active: bool) -> MailboxAccount {
        let at = DateTime::<Utc>::from_timestamp(0, 0).unwrap();
        MailboxAccount {
            egvp_account_id: MailboxAccountId::try_from(7).unwrap(),
            safe_id: SafeId::parse("DE.Justiz.7").unwrap(),
            name: "Betreuungsstelle".into(),
            active,
            created_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn sending_needs_a_grant_then_an_active_account() {
        let id = MailboxAccountId::try_from(7).unwrap();
        assert_eq!(
            check_sending_account(id, true, Some(account(true))),
            Ok(account(true))
        );
        let not_granted = MailboxRefusal::NotGranted(id);
        assert_eq!(
            check_sending_account(id, true, None),
            Err(not_granted.clone())
        );
        // Not granted wins over inactive: others' accounts' states are not told.
        assert_eq!(
            check_sending_account(id, false, Some(account(false))),
            Err(not_granted.clone())
        );
        assert_eq!(
            not_granted.message(),
            "absender.egvp_account_id 7 is not a mailbox account this user may send through"
        );
        let inactive = check_sending_account(id, true, Some(account(false))).unwrap_err();
        assert_eq!(
            inactive.to_string(),
            "absender.egvp_account_id 7 is a deactivated mailbox account and sends nothing"
        );
    }
}
