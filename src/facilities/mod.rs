//! The facility registry as operators and modules use it: the checks of a facility's values,
//! shared by the operator API (`routes/admin/facilities.rs`) and the command line
//! (`meldewerk facility …`, [`cli`]), and [`resolve`], which a module calls for the reporting
//! facility a submission names (`MeldendeEinrichtung.BSNR`).

use chrono::{DateTime, Utc};
use meldewerk_storage::{
    Bsnr, Facility, FacilityRefusal, Ik, PostalAddress, Store, StoreError, UserRecord,
    REPORTING_FACILITY_FIELD,
};

/// Longest name, street or city, in characters: room for any real one, a bound on what is stored.
pub(crate) const MAX_TEXT_CHARS: usize = 200;

/// A value as an operator gave it.
#[derive(Clone, Copy)]
pub(crate) enum Given<'a> {
    /// Not given (absent, or null).
    Missing,
    /// This text.
    Text(&'a str),
    /// Given, but not as text; the caller has reported it already.
    Refused,
}

impl<'a> From<Option<&'a str>> for Given<'a> {
    fn from(value: Option<&'a str>) -> Self {
        value.map_or(Given::Missing, Given::Text)
    }
}

impl<'a> Given<'a> {
    fn text(self) -> Option<&'a str> {
        match self {
            Given::Text(text) => Some(text),
            Given::Missing | Given::Refused => None,
        }
    }
}

/// A facility's values as an operator gave them, before they are checked: the members of the
/// API's body, or the options of the command line.
pub(crate) struct FacilityInput<'a> {
    /// `name`.
    pub(crate) name: Given<'a>,
    /// `address.street`.
    pub(crate) street: Given<'a>,
    /// `address.postalCode`.
    pub(crate) postal_code: Given<'a>,
    /// `address.city`.
    pub(crate) city: Given<'a>,
    /// `address.country`.
    pub(crate) country: Given<'a>,
    /// `ik`.
    pub(crate) ik: Given<'a>,
    /// `active`.
    pub(crate) active: bool,
}

/// What each value is called where it came from, for the messages (`address.postalCode` in
/// the API, `--postal-code` on the command line).
pub(crate) struct FieldNames {
    /// The facility's name.
    pub(crate) name: &'static str,
    /// Street and number.
    pub(crate) street: &'static str,
    /// Postal code.
    pub(crate) postal_code: &'static str,
    /// City.
    pub(crate) city: &'static str,
    /// Country.
    pub(crate) country: &'static str,
    /// Institution code.
    pub(crate) ik: &'static str,
    /// What a value not given at all is (`must not be null`, `is required`).
    pub(crate) missing: &'static str,
}

/// How the operator API's body names a facility's values.
pub(crate) const BODY_FIELDS: FieldNames = FieldNames {
    name: "name",
    street: "address.street",
    postal_code: "address.postalCode",
    city: "address.city",
    country: "address.country",
    ik: "ik",
    missing: "must not be null",
};

impl FacilityInput<'_> {
    /// The facility `bsnr` with these values, created or changed `at`; or every problem, each
    /// naming its field as `names` calls it. `errors` may hold problems found before (an
    /// unknown member, a malformed BSNR): the facility is built only if there are none.
    pub(crate) fn check(
        &self,
        bsnr: Option<Bsnr>,
        names: &FieldNames,
        at: DateTime<Utc>,
        errors: &mut Vec<String>,
    ) -> Option<Facility> {
        let name = taken(errors, names.missing, names.name, self.name, text);
        let street = taken(errors, names.missing, names.street, self.street, text);
        let country = taken(errors, names.missing, names.country, self.country, country);
        let in_country = self.country.text();
        let postal_code = taken(
            errors,
            names.missing,
            names.postal_code,
            self.postal_code,
            |code| postal_code(code, in_country),
        );
        let city = taken(errors, names.missing, names.city, self.city, text);
        let ik = taken(errors, names.missing, names.ik, self.ik, |ik| {
            Ik::parse(ik).map_err(|e| e.to_string())
        });
        let (
            Some(bsnr),
            Some(name),
            Some(street),
            Some(postal_code),
            Some(city),
            Some(country),
            Some(ik),
        ) = (bsnr, name, street, postal_code, city, country, ik)
        else {
            return None;
        };
        if !errors.is_empty() {
            return None;
        }
        Some(Facility {
            bsnr,
            name,
            address: PostalAddress {
                street,
                postal_code,
                city,
                country,
            },
            ik,
            active: self.active,
            created_at: at,
            updated_at: at,
        })
    }
}

/// The checked value, or `None` with its problem added to `errors` under `name`; a value not
/// given at all is a problem too (`missing`: `must not be null`, `is required`). Mailbox
/// accounts' values are taken the same way.
pub(crate) fn taken<T>(
    errors: &mut Vec<String>,
    missing: &str,
    name: &str,
    given: Given<'_>,
    check: impl FnOnce(&str) -> Result<T, String>,
) -> Option<T> {
    match given {
        Given::Text(value) => check(value)
            .map_err(|problem| errors.push(format!("{name} {problem}")))
            .ok(),
        Given::Missing => {
            errors.push(format!("{name} {missing}"));
            None
        }
        Given::Refused => None,
    }
}

/// A name, street or city (or a mailbox account's name): not blank, no control characters, at
/// most [`MAX_TEXT_CHARS`].
pub(crate) fn text(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if value.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    if value.chars().count() > MAX_TEXT_CHARS {
        return Err(format!("must have at most {MAX_TEXT_CHARS} characters"));
    }
    Ok(value.to_owned())
}

/// An ISO 3166-1 alpha-2 country code.
fn country(value: &str) -> Result<String, String> {
    if value.len() == 2 && value.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(value.to_owned())
    } else {
        Err("must be a country code of two capital letters (ISO 3166-1 alpha-2, e.g. DE)".into())
    }
}

/// A postal code: five digits in Germany, elsewhere 1 to 12 letters, digits, spaces or hyphens.
fn postal_code(value: &str, country: Option<&str>) -> Result<String, String> {
    if country == Some("DE") {
        return if value.len() == 5 && value.bytes().all(|b| b.is_ascii_digit()) {
            Ok(value.to_owned())
        } else {
            Err("must be 5 digits in Germany (country DE)".into())
        };
    }
    let fits = (1..=12).contains(&value.len())
        && value.trim() == value
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-');
    if fits {
        Ok(value.to_owned())
    } else {
        Err("must have 1 to 12 letters, digits, spaces or hyphens".into())
    }
}

/// A customer id as scopes are kept under: not blank. Users' `customer` values are free text
/// (billing, support), so nothing stricter is asked of them here.
pub(crate) fn customer_id(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("the customer must not be empty".into())
    } else if text.trim() != text {
        Err("the customer must not begin or end with a space".into())
    } else if text.chars().any(char::is_control) {
        Err("the customer must not contain control characters".into())
    } else if text.chars().count() > MAX_CUSTOMER_CHARS {
        Err(format!(
            "the customer must have at most {MAX_CUSTOMER_CHARS} characters"
        ))
    } else {
        Ok(text.to_owned())
    }
}

/// Longest customer id: ids name customers for billing and support, not descriptions.
const MAX_CUSTOMER_CHARS: usize = 100;

/// Why [`resolve`] gave no facility.
#[derive(Debug)]
pub(crate) enum Unresolved {
    /// The submission may not name this facility: the entry of a 400 `{"errors": [...]}`
    /// answer, naming `MeldendeEinrichtung.BSNR`.
    Refused(String),
    /// The store failed (answered as the module answers store failures).
    Store(StoreError),
}

/// The reporting facility `bsnr` (the value of `MeldendeEinrichtung.BSNR`) for a submission of
/// `user`: the registered, active facility within the scope of the user's customer, or why not.
/// A module calls it when it creates a memento and again when the form is submitted, so that a
/// facility deactivated or taken out of scope meanwhile stops new reports. A user without a
/// customer may name no facility (see `docs/decisions.md`).
pub(crate) async fn resolve(
    store: &dyn Store,
    user: &UserRecord,
    bsnr: &str,
) -> Result<Facility, Unresolved> {
    let bsnr = Bsnr::parse(bsnr)
        .map_err(|e| Unresolved::Refused(format!("{REPORTING_FACILITY_FIELD} {e}")))?;
    store
        .resolve_facility(user.customer.as_deref(), &bsnr)
        .await
        .map_err(Unresolved::Store)?
        .map_err(|refusal: FacilityRefusal| Unresolved::Refused(refusal.message()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use meldewerk_storage::{CustomerScope, SledStore, WrappedKey};

    const API: FieldNames = BODY_FIELDS;

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000, 0).unwrap()
    }

    fn input<'a>() -> FacilityInput<'a> {
        FacilityInput {
            name: Given::Text("Labor Süd"),
            street: Given::Text("Hauptstraße 5"),
            postal_code: Given::Text("10117"),
            city: Given::Text("Berlin"),
            country: Given::Text("DE"),
            ik: Given::Text("260326822"),
            active: true,
        }
    }

    fn user(customer: Option<&str>) -> UserRecord {
        UserRecord {
            name: "labor".into(),
            customer: customer.map(str::to_owned),
            email: None,
            password_hash: String::new(),
            memento_key: WrappedKey {
                key_id: "k".into(),
                wrapped: Vec::new(),
            },
            seal: None,
            created_at: at(),
            password_changed_at: at(),
            magic_links: true,
            court_message_contact: None,
        }
    }

    fn bsnr() -> Option<Bsnr> {
        Bsnr::parse("123456789").ok()
    }

    #[test]
    fn valid_values_make_a_facility() {
        let mut errors = Vec::new();
        let facility = input().check(bsnr(), &API, at(), &mut errors).unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(facility.address.postal_code, "10117");
        assert_eq!(facility.ik.as_str(), "260326822");
        assert!(facility.active);
        // Abroad, postal codes take other shapes.
        let abroad = FacilityInput {
            postal_code: Given::Text("1010"),
            country: Given::Text("AT"),
            ..input()
        };
        assert!(abroad.check(bsnr(), &API, at(), &mut errors).is_some());
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        let bad = FacilityInput {
            name: Given::Text(" "),
            street: Given::Missing,
            postal_code: Given::Text("1011"),
            city: Given::Text(&long),
            country: Given::Text("DE"),
            ik: Given::Text("26032682"),
            active: true,
        };
        let mut errors = vec!["found before".to_string()];
        assert!(bad.check(bsnr(), &API, at(), &mut errors).is_none());
        assert_eq!(
            errors,
            [
                "found before",
                "name must not be empty",
                "address.street must not be null",
                "address.postalCode must be 5 digits in Germany (country DE)",
                "address.city must have at most 200 characters",
                "ik must be exactly 9 digits",
            ]
        );
        let mut errors = Vec::new();
        let controls = FacilityInput {
            name: Given::Text("Labor\nSüd"),
            country: Given::Text("de"),
            postal_code: Given::Text(" 1010"),
            ik: Given::Refused,
            ..input()
        };
        assert!(controls.check(bsnr(), &API, at(), &mut errors).is_none());
        assert_eq!(
            errors,
            [
                "name must not contain control characters",
                "address.country must be a country code of two capital letters (ISO 3166-1 alpha-2, e.g. DE)",
                "address.postalCode must have 1 to 12 letters, digits, spaces or hyphens",
            ]
        );
    }

    #[tokio::test]
    async fn resolve_answers_the_facility_or_a_message_naming_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(&dir.path().join("db")).unwrap();
        let facility = input().check(bsnr(), &API, at(), &mut Vec::new()).unwrap();
        store.put_facility(facility.clone()).await.unwrap();
        store
            .set_customer_scope(CustomerScope {
                customer: "K-1".into(),
                iks: [facility.ik.clone()].into(),
            })
            .await
            .unwrap();
        let refused = |result: Result<Facility, Unresolved>| match result {
            Err(Unresolved::Refused(message)) => message,
            other => panic!("not refused: {other:?}"),
        };
        let k1 = user(Some("K-1"));
        assert_eq!(resolve(&store, &k1, "123456789").await.unwrap(), facility);
        assert_eq!(
            refused(resolve(&store, &k1, "12345678").await),
            "MeldendeEinrichtung.BSNR must be exactly 9 digits"
        );
        assert_eq!(
            refused(resolve(&store, &k1, "999999999").await),
            "MeldendeEinrichtung.BSNR 999999999 is not a registered facility"
        );
        assert_eq!(
            refused(resolve(&store, &user(None), "123456789").await),
            "MeldendeEinrichtung.BSNR 123456789 is not a facility this account may report for"
        );
        store
            .put_facility(Facility {
                active: false,
                ..facility
            })
            .await
            .unwrap();
        assert_eq!(
            refused(resolve(&store, &k1, "123456789").await),
            "MeldendeEinrichtung.BSNR 123456789 is a deactivated facility and may not report"
        );
    }
}
