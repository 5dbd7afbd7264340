//! The facility registry's records: facilities by BSNR, and which institution codes (IK) each
//! customer may report for. Operators keep them (CLI and operator API); a module resolves the
//! reporting facility of a submission against them with [`check_facility`].
//!
//! The records live in a file of their own rather than in `model.rs`: they share nothing with
//! reports and jobs, and the identifiers parse themselves ([`Bsnr`], [`Ik`]), so that a stored
//! record never holds a malformed one.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why a BSNR or an IK was refused: it is not exactly nine ASCII digits. The display form
/// names no field (`must be exactly 9 digits`), so that each caller puts the name its input
/// uses in front (`bsnr`, `ik`, `MeldendeEinrichtung.BSNR`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be exactly 9 digits")]
pub struct NotNineDigits;

fn nine_digits(text: &str) -> Result<String, NotNineDigits> {
    if text.len() == 9 && text.bytes().all(|b| b.is_ascii_digit()) {
        Ok(text.to_owned())
    } else {
        Err(NotNineDigits)
    }
}

/// A facility's Betriebsstättennummer: exactly nine ASCII digits (leading zeros kept).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Bsnr(String);

impl Bsnr {
    /// Parses a BSNR.
    pub fn parse(text: &str) -> Result<Bsnr, NotNineDigits> {
        nine_digits(text).map(Bsnr)
    }

    /// The digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An institution code (Institutionskennzeichen): exactly nine ASCII digits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Ik(String);

impl Ik {
    /// Parses an IK.
    pub fn parse(text: &str) -> Result<Ik, NotNineDigits> {
        nine_digits(text).map(Ik)
    }

    /// The digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

macro_rules! digits_conversions {
    ($($name:ident),*) => {$(
        impl TryFrom<String> for $name {
            type Error = NotNineDigits;
            fn try_from(text: String) -> Result<Self, NotNineDigits> {
                $name::parse(&text)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // `pad`, so that widths in format strings (tables) apply.
                f.pad(&self.0)
            }
        }
    )*};
}

digits_conversions!(Bsnr, Ik);

/// A facility's postal address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PostalAddress {
    /// Street and house number.
    pub street: String,
    /// Postal code (five digits in Germany).
    pub postal_code: String,
    /// City.
    pub city: String,
    /// Country, ISO 3166-1 alpha-2 (`DE`).
    pub country: String,
}

/// A facility that reports, registered by the operators under its BSNR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Facility {
    /// Its Betriebsstättennummer, the registry's key.
    pub bsnr: Bsnr,
    /// Its name as reports name it.
    pub name: String,
    /// Its postal address.
    pub address: PostalAddress,
    /// The institution code it reports under; a customer's scope lists these.
    pub ik: Ik,
    /// Whether it may report now. An inactive facility stays registered (its name and address
    /// remain for the reports that named it) but no new report may name it.
    pub active: bool,
    /// When it was first registered; kept when the record is replaced.
    pub created_at: DateTime<Utc>,
    /// When the record was last written.
    pub updated_at: DateTime<Utc>,
}

/// What [`crate::Store::put_facility`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FacilityPut {
    /// There was no facility with the BSNR; this one is stored.
    Created(Facility),
    /// It replaced the facility with the BSNR; stored with the replaced record's `created_at`.
    Replaced(Facility),
}

impl FacilityPut {
    /// The facility as stored.
    pub fn facility(&self) -> &Facility {
        match self {
            FacilityPut::Created(facility) | FacilityPut::Replaced(facility) => facility,
        }
    }
}

/// Which institution codes the API users of one customer may report for. A customer without a
/// stored scope may report for none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomerScope {
    /// The customer id, as `UserRecord::customer` holds it.
    pub customer: String,
    /// The institution codes; a facility whose IK is here is in scope.
    pub iks: BTreeSet<Ik>,
}

/// The field of a submission that names its reporting facility: every refusal names it.
pub const REPORTING_FACILITY_FIELD: &str = "MeldendeEinrichtung.BSNR";

/// Why a submission may not name a facility as its reporting facility.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FacilityRefusal {
    /// No facility has this BSNR.
    Unknown(Bsnr),
    /// The facility is registered but deactivated.
    Inactive(Bsnr),
    /// The user's customer may not report for the facility's IK, or the user has no customer.
    OutOfScope(Bsnr),
}

impl FacilityRefusal {
    /// The entry of a 400 `{"errors": [...]}` answer: it names [`REPORTING_FACILITY_FIELD`] and
    /// the BSNR, nothing else of the facility.
    pub fn message(&self) -> String {
        let field = REPORTING_FACILITY_FIELD;
        match self {
            FacilityRefusal::Unknown(bsnr) => {
                format!("{field} {bsnr} is not a registered facility")
            }
            FacilityRefusal::Inactive(bsnr) => {
                format!("{field} {bsnr} is a deactivated facility and may not report")
            }
            FacilityRefusal::OutOfScope(bsnr) => {
                format!("{field} {bsnr} is not a facility this account may report for")
            }
        }
    }
}

impl std::fmt::Display for FacilityRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// Whether a user of `customer` may name the facility `bsnr` as its reporting facility, given
/// what the store holds: the facility (if registered) and the customer's scope (if any).
///
/// Checked in this order: unknown, out of scope, inactive. Scope comes before the active flag so
/// that a user learns nothing about facilities outside their scope beyond that they are not
/// theirs. A user without a customer (`None`) is out of scope for every facility: scopes are
/// kept per customer, and an account nobody assigned to one has been given none.
pub fn check_facility(
    bsnr: &Bsnr,
    facility: Option<Facility>,
    customer: Option<&str>,
    scope: Option<&CustomerScope>,
) -> Result<Facility, FacilityRefusal> {
    let Some(facility) = facility else {
        return Err(FacilityRefusal::Unknown(bsnr.clone()));
    };
    let in_scope = match (customer, scope) {
        (Some(customer), Some(scope)) => {
            scope.customer == customer && scope.iks.contains(&facility.ik)
        }
        _ => false,
    };
    if !in_scope {
        return Err(FacilityRefusal::OutOfScope(bsnr.clone()));
    }
    if !facility.active {
        return Err(FacilityRefusal::Inactive(bsnr.clone()));
    }
    Ok(facility)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facility(active: bool) -> Facility {
        let at = DateTime::<Utc>::from_timestamp(0, 0).unwrap();
        Facility {
            bsnr: Bsnr::parse("123456789").unwrap(),
            name: "Labor Süd".into(),
            address: PostalAddress {
                street: "Hauptstraße 5".into(),
                postal_code: "10117".into(),
                city: "Berlin".into(),
                country: "DE".into(),
            },
            ik: Ik::parse("260326822").unwrap(),
            active,
            created_at: at,
            updated_at: at,
        }
    }

    fn scope(customer: &str, iks: &[&str]) -> CustomerScope {
        CustomerScope {
            customer: customer.into(),
            iks: iks.iter().map(|ik| Ik::parse(ik).unwrap()).collect(),
        }
    }

    #[test]
    fn identifiers_are_exactly_nine_ascii_digits() {
        assert_eq!(Bsnr::parse("012345678").unwrap().as_str(), "012345678");
        assert_eq!(Ik::parse("260326822").unwrap().to_string(), "260326822");
        for bad in [
            "",
            "12345678",
            "1234567890",
            "12345678a",
            " 12345678",
            "١٢٣٤٥٦٧٨٩",
        ] {
            assert_eq!(Bsnr::parse(bad), Err(NotNineDigits), "{bad:?}");
            assert_eq!(Ik::parse(bad), Err(NotNineDigits), "{bad:?}");
        }
        assert_eq!(NotNineDigits.to_string(), "must be exactly 9 digits");
        // A stored record cannot smuggle a malformed one in either.
        assert!(serde_json::from_str::<Bsnr>("\"12345\"").is_err());
        assert_eq!(
            serde_json::to_string(&Ik::parse("000000001").unwrap()).unwrap(),
            "\"000000001\""
        );
    }

    #[test]
    fn a_facility_in_scope_and_active_resolves() {
        let bsnr = Bsnr::parse("123456789").unwrap();
        let scope = scope("K-1", &["260326822"]);
        assert_eq!(
            check_facility(&bsnr, Some(facility(true)), Some("K-1"), Some(&scope)),
            Ok(facility(true))
        );
    }

    #[test]
    fn refusals_name_the_field_and_come_in_order_unknown_scope_inactive() {
        let bsnr = Bsnr::parse("123456789").unwrap();
        let mine = scope("K-1", &["260326822"]);
        let other = scope("K-1", &["999999999"]);
        let unknown = check_facility(&bsnr, None, Some("K-1"), Some(&mine)).unwrap_err();
        assert_eq!(
            unknown.message(),
            "MeldendeEinrichtung.BSNR 123456789 is not a registered facility"
        );
        // Out of scope wins over inactive: the state of others' facilities is not told.
        let out = check_facility(&bsnr, Some(facility(false)), Some("K-1"), Some(&other));
        assert_eq!(
            out.unwrap_err().message(),
            "MeldendeEinrichtung.BSNR 123456789 is not a facility this account may report for"
        );
        let inactive = check_facility(&bsnr, Some(facility(false)), Some("K-1"), Some(&mine));
        assert_eq!(
            inactive.unwrap_err().message(),
            "MeldendeEinrichtung.BSNR 123456789 is a deactivated facility and may not report"
        );
    }

    #[test]
    fn a_user_without_a_customer_or_a_customer_without_a_scope_is_out_of_scope() {
        let bsnr = Bsnr::parse("123456789").unwrap();
        let mine = scope("K-1", &["260326822"]);
        let refused = Err(FacilityRefusal::OutOfScope(bsnr.clone()));
        assert_eq!(
            check_facility(&bsnr, Some(facility(true)), None, Some(&mine)),
            refused
        );
        assert_eq!(
            check_facility(&bsnr, Some(facility(true)), Some("K-1"), None),
            refused
        );
        // Another customer's scope does not count.
        assert_eq!(
            check_facility(&bsnr, Some(facility(true)), Some("K-2"), Some(&mine)),
            refused
        );
    }
}
