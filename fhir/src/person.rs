//! The notified person (`Patient`), named or not, and contact persons of a facility.

use chrono::NaiveDate;

use crate::codes::Gender;
use crate::common::{date, profile, text, trimmed, PostalAddress};
use crate::resources::*;

const GENDER_AMTLICH: &str = "http://fhir.de/StructureDefinition/gender-amtlich-de";

/// A birth month (`YYYY-MM`), all a person not notified by name discloses of the birth date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BirthMonth {
    /// Year.
    pub year: u16,
    /// Month, 1 to 12.
    pub month: u8,
}

impl BirthMonth {
    /// Reads `YYYY-MM`; `None` for anything else, and for the year `0000`, which FHIR's `date`
    /// does not have.
    pub fn parse(text: &str) -> Option<BirthMonth> {
        let (year, month) = text.split_once('-')?;
        if year.len() != 4
            || month.len() != 2
            || !(year.chars().chain(month.chars())).all(|c| c.is_ascii_digit())
        {
            return None;
        }
        let month: u8 = month.parse().ok()?;
        let year: u16 = year.parse().ok()?;
        ((1..=12).contains(&month) && year > 0).then_some(BirthMonth { year, month })
    }
}

/// A person's name (`Vorname`, `Nachname`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersonName {
    /// Given names (`Vorname`), as one string.
    pub given: Option<String>,
    /// Family name (`Nachname`, `Name`).
    pub family: Option<String>,
}

/// A person notified by name: the contract's standard patient.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedPerson {
    /// Name.
    pub name: PersonName,
    /// Gender.
    pub gender: Option<Gender>,
    /// Full date of birth.
    pub birth_date: Option<NaiveDate>,
    /// Address of the main residence.
    pub address: Option<PostalAddress>,
    /// Telephone.
    pub phone: Option<String>,
    /// Email.
    pub email: Option<String>,
}

/// A person not notified by name: the contract's anonymous patient (no name, no contact).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnnamedPerson {
    /// Gender.
    pub gender: Option<Gender>,
    /// Birth month and year.
    pub birth_month: Option<BirthMonth>,
    /// Postal code (`PLZ`); only its first three digits are written, as DEMIS redacts it.
    pub postal_code: Option<String>,
    /// Country (`Land`).
    pub country: Option<String>,
}

/// The person a notification is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifiedPerson {
    /// Notified by name (profile `NotifiedPerson`).
    Named(NamedPerson),
    /// Not notified by name (profile `NotifiedPersonNotByName`).
    Unnamed(UnnamedPerson),
}

impl NotifiedPerson {
    /// The person as a `Patient` with id `id`.
    pub(crate) fn patient(&self, id: String) -> Patient {
        match self {
            NotifiedPerson::Named(p) => {
                let mut patient = Patient {
                    id: Some(id),
                    meta: Some(Meta::profile(profile("NotifiedPerson"))),
                    birth_date: p.birth_date.as_ref().map(date),
                    address: p
                        .address
                        .iter()
                        .map(|a| a.to_fhir(Some(("primary", "Hauptwohnsitz"))))
                        .collect(),
                    ..Default::default()
                };
                let (given, family) = (text(&p.name.given), text(&p.name.family));
                if given.is_some() || family.is_some() {
                    patient.name.push(HumanName {
                        purpose: Some("official".into()),
                        family,
                        given: given.into_iter().collect(),
                        ..Default::default()
                    });
                }
                patient
                    .telecom
                    .extend(trimmed(p.phone.as_deref()).map(ContactPoint::phone));
                patient
                    .telecom
                    .extend(trimmed(p.email.as_deref()).map(ContactPoint::email));
                set_gender(&mut patient, p.gender);
                patient
            }
            NotifiedPerson::Unnamed(p) => {
                let mut patient = Patient {
                    id: Some(id),
                    meta: Some(Meta::profile(profile("NotifiedPersonNotByName"))),
                    birth_date: p
                        .birth_month
                        .map(|m| format!("{:04}-{:02}", m.year, m.month)),
                    ..Default::default()
                };
                let postal_code = trimmed(p.postal_code.as_deref());
                let country = text(&p.country);
                if postal_code.is_some() || country.is_some() {
                    patient.address.push(Address {
                        postal_code: postal_code.map(|plz| plz.chars().take(3).collect()),
                        country,
                        ..Default::default()
                    });
                }
                set_gender(&mut patient, p.gender);
                patient
            }
        }
    }
}

fn set_gender(patient: &mut Patient, gender: Option<Gender>) {
    if let Some((code, amtlich)) = gender.and_then(Gender::fhir) {
        patient.gender = Some(code.into());
        patient.gender_parts = amtlich.map(|c| PrimitiveExtensions {
            extension: vec![Extension::coding(GENDER_AMTLICH, c.coding())],
        });
    }
}

/// A contact person of a facility: the reporting person or physician.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContactPerson {
    /// Academic title (`Titel`).
    pub title: Option<String>,
    /// Name.
    pub name: PersonName,
    /// Telephone.
    pub phone: Option<String>,
    /// Email.
    pub email: Option<String>,
}

impl ContactPerson {
    /// `Organization.contact`, as the hospitalisation example writes the contact person.
    pub(crate) fn organization_contact(&self) -> OrganizationContact {
        let parts: Vec<&str> = [
            self.title.as_deref(),
            self.name.given.as_deref(),
            self.name.family.as_deref(),
        ]
        .into_iter()
        .filter_map(trimmed)
        .collect();
        let mut telecom = Vec::new();
        telecom.extend(trimmed(self.phone.as_deref()).map(ContactPoint::phone));
        telecom.extend(trimmed(self.email.as_deref()).map(ContactPoint::email));
        OrganizationContact {
            name: (!parts.is_empty()).then(|| HumanName {
                text: Some(parts.join(" ")),
                family: text(&self.name.family),
                given: text(&self.name.given).into_iter().collect(),
                prefix: text(&self.title).into_iter().collect(),
                ..Default::default()
            }),
            telecom,
        }
    }
}
