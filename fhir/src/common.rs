//! What the three kinds of bundle share: URLs and naming systems, time formats, the facility
//! and address input types and their `Organization`, the entries and the document bundle.

use chrono::{DateTime, FixedOffset, NaiveDate};

use crate::resources::*;
use crate::IdSource;

/// The base of every DEMIS URL: profiles, naming systems, code systems and `fullUrl`s.
pub const DEMIS_BASE: &str = "https://demis.rki.de/fhir/";

pub(crate) const NOTIFICATION_BUNDLE_ID: &str =
    "https://demis.rki.de/fhir/NamingSystem/NotificationBundleId";
pub(crate) const NOTIFICATION_ID: &str = "https://demis.rki.de/fhir/NamingSystem/NotificationId";
/// The KBV naming system of the Betriebsstättennummer.
pub(crate) const BSNR_SYSTEM: &str = "https://fhir.kbv.de/NamingSystem/KBV_NS_Base_BSNR";
/// The German base profiles' naming system of the Institutionskennzeichen.
pub(crate) const IK_SYSTEM: &str = "http://fhir.de/sid/arge-ik/iknr";
pub(crate) const INEK_STANDORT_ID: &str = "https://demis.rki.de/fhir/NamingSystem/InekStandortId";
pub(crate) const ORGANIZATION_TYPE: &str = "https://demis.rki.de/fhir/CodeSystem/organizationType";
pub(crate) const LOINC: &str = "http://loinc.org";
pub(crate) const SNOMED: &str = "http://snomed.info/sct";
const ADDRESS_USE_EXTENSION: &str = "https://demis.rki.de/fhir/StructureDefinition/AddressUse";
const ADDRESS_USE: &str = "https://demis.rki.de/fhir/CodeSystem/addressUse";
const STREET_NAME: &str = "http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-streetName";
const HOUSE_NUMBER: &str = "http://hl7.org/fhir/StructureDefinition/iso21090-ADXP-houseNumber";

/// The DEMIS profile URL of a StructureDefinition `name`.
pub(crate) fn profile(name: &str) -> String {
    format!("{DEMIS_BASE}StructureDefinition/{name}")
}

/// An instant as the examples write it: milliseconds and the offset.
pub(crate) fn instant(at: &DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()
}

/// A dateTime to the second.
pub(crate) fn date_time(at: &DateTime<FixedOffset>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

/// A FHIR `date`.
pub(crate) fn date(day: &NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

/// Free text as a bundle carries it: without leading and trailing blanks (FHIR asks for them
/// to be removed, and validators that read `\S` as Unicode refuse a string that starts with a
/// no-break space or a line separator); `None` when nothing else is left.
pub(crate) fn trimmed(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// [`trimmed`], owned.
pub(crate) fn text(value: &Option<String>) -> Option<String> {
    trimmed(value.as_deref()).map(str::to_owned)
}

/// Why a bundle cannot be built from the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// A code the disease's (or the form's) table does not offer.
    #[error("{field}: code {code:?} is not offered here")]
    UnknownCode {
        /// The input field.
        field: &'static str,
        /// The code given.
        code: String,
    },
    /// A value given that another value rules out.
    #[error("{field} requires {requires}")]
    Contradiction {
        /// The input field given.
        field: &'static str,
        /// What it requires.
        requires: &'static str,
    },
    /// A value the bundle cannot be sent without.
    #[error("{field} is required")]
    Missing {
        /// The input field.
        field: &'static str,
    },
}

/// A postal address (facility or person).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostalAddress {
    /// Street (`Strasse`), with the house number unless given apart.
    pub street: Option<String>,
    /// House number (`Hausnummer`) where the input has it apart from the street.
    pub house_number: Option<String>,
    /// Postal code (`PLZ`).
    pub postal_code: Option<String>,
    /// City (`Stadt`, `Ort`).
    pub city: Option<String>,
    /// Country code (`Land`), written as given.
    pub country: Option<String>,
}

impl PostalAddress {
    /// The FHIR address; `use_code` adds DEMIS' `AddressUse` extension (`primary`, …).
    pub(crate) fn to_fhir(&self, use_code: Option<(&str, &str)>) -> Address {
        let mut address = Address {
            extension: use_code
                .map(|(code, display)| {
                    Extension::coding(
                        ADDRESS_USE_EXTENSION,
                        Coding::new(ADDRESS_USE, code, display),
                    )
                })
                .into_iter()
                .collect(),
            city: text(&self.city),
            postal_code: text(&self.postal_code),
            country: text(&self.country),
            ..Default::default()
        };
        let street = trimmed(self.street.as_deref());
        let number = trimmed(self.house_number.as_deref());
        match (street, number) {
            (Some(street), Some(number)) => {
                // The examples write the line whole and its parts as ISO 21090 extensions.
                address.line.push(format!("{street} {number}"));
                address.line_parts.push(PrimitiveExtensions {
                    extension: vec![
                        Extension::string(STREET_NAME, street),
                        Extension::string(HOUSE_NUMBER, number),
                    ],
                });
            }
            (Some(line), None) | (None, Some(line)) => address.line.push(line.into()),
            (None, None) => {}
        }
        address
    }
}

/// A facility: the notifier, the submitter, or the hospital location of a bed report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facility {
    /// Name.
    pub name: Option<String>,
    /// Betriebsstättennummer (`BSNR`).
    pub bsnr: Option<String>,
    /// Institutionskennzeichen (`IK_Nummer`).
    pub ik: Option<String>,
    /// Postal address.
    pub address: Option<PostalAddress>,
    /// Telephone.
    pub phone: Option<String>,
    /// Email.
    pub email: Option<String>,
}

impl Facility {
    /// The facility as an `Organization` of `profile`, typed `organization_type` when given.
    pub(crate) fn organization(
        &self,
        id: String,
        profile_name: &str,
        organization_type: Option<Coding>,
    ) -> Organization {
        let mut identifier = Vec::new();
        if let Some(bsnr) = text(&self.bsnr) {
            identifier.push(Identifier::new(BSNR_SYSTEM, bsnr));
        }
        if let Some(ik) = text(&self.ik) {
            identifier.push(Identifier::new(IK_SYSTEM, ik));
        }
        let mut telecom = Vec::new();
        if let Some(phone) = trimmed(self.phone.as_deref()) {
            telecom.push(ContactPoint::phone(phone).used_for("work"));
        }
        if let Some(email) = trimmed(self.email.as_deref()) {
            telecom.push(ContactPoint::email(email).used_for("work"));
        }
        Organization {
            id: Some(id),
            meta: Some(Meta::profile(profile(profile_name))),
            identifier,
            kind: organization_type
                .map(CodeableConcept::coded)
                .into_iter()
                .collect(),
            name: text(&self.name),
            telecom,
            address: self.address.iter().map(|a| a.to_fhir(None)).collect(),
            contact: Vec::new(),
        }
    }
}

/// The organisation type `hospital` (`Krankenhaus`).
pub(crate) fn hospital_type() -> Coding {
    Coding::new(ORGANIZATION_TYPE, "hospital", "Krankenhaus")
}

/// A `PractitionerRole` of `profile` for the organisation `organization_id`.
pub(crate) fn role(id: String, profile_name: &str, organization_id: &str) -> PractitionerRole {
    PractitionerRole {
        id: Some(id),
        meta: Some(Meta::profile(profile(profile_name))),
        organization: Some(Reference::to("Organization", organization_id)),
    }
}

/// The notifier: its role and its organisation, with fresh ids.
pub(crate) fn notifier(
    ids: &mut dyn IdSource,
    facility: &Facility,
    organization_type: Coding,
) -> (PractitionerRole, Organization) {
    let organization =
        facility.organization(ids.next_id(), "NotifierFacility", Some(organization_type));
    let role = role(
        ids.next_id(),
        "NotifierRole",
        organization.id.as_deref().unwrap_or_default(),
    );
    (role, organization)
}

/// A bundle entry with its `fullUrl`.
pub(crate) fn entry(resource: Resource) -> BundleEntry {
    BundleEntry {
        full_url: resource
            .local_reference()
            .map(|local| format!("{DEMIS_BASE}{local}")),
        resource: Some(resource),
    }
}

/// The notification's `Composition` identifier (`NotificationId`).
pub(crate) fn notification_id(report_id: &str) -> Option<Identifier> {
    Some(Identifier::new(NOTIFICATION_ID, report_id.trim()))
}

/// What the `Composition`s of the two notifications (laboratory, disease) differ in.
pub(crate) struct NotificationComposition<'a> {
    pub(crate) profile_name: &'a str,
    pub(crate) category: Coding,
    pub(crate) title: &'static str,
    pub(crate) report_id: &'a str,
    pub(crate) report_date: Option<&'a NaiveDate>,
    pub(crate) follows_up: Option<&'a str>,
    pub(crate) patient_id: &'a str,
    pub(crate) author: &'a PractitionerRole,
    pub(crate) section: Vec<Section>,
}

impl NotificationComposition<'_> {
    /// The composition with id `id`, dated the report date or else `now`.
    pub(crate) fn build(self, id: String, now: &DateTime<FixedOffset>) -> Composition {
        Composition {
            id: Some(id),
            meta: Some(Meta::profile(profile(self.profile_name))),
            extension: Vec::new(),
            identifier: notification_id(self.report_id),
            status: "final".into(),
            kind: CodeableConcept::coded(Coding::new(LOINC, "34782-3", "Infectious disease Note")),
            category: vec![CodeableConcept::coded(self.category)],
            subject: Some(Reference::to("Patient", self.patient_id)),
            date: self.report_date.map_or_else(|| date_time(now), date),
            author: vec![Reference::to(
                "PractitionerRole",
                self.author.id.as_deref().unwrap_or_default(),
            )],
            title: self.title.into(),
            relates_to: trimmed(self.follows_up)
                .map(follow_up)
                .into_iter()
                .collect(),
            section: self.section,
        }
    }
}

/// `Composition.relatesTo` naming the notification followed up, by its `NotificationId`.
fn follow_up(notification: &str) -> RelatesTo {
    RelatesTo {
        code: "appends".into(),
        target_reference: Some(Reference::by_identifier(
            Some("Composition"),
            Identifier::new(NOTIFICATION_ID, notification.trim()),
        )),
    }
}

/// A `document` bundle of `profile`, stamped `now`, with a fresh `NotificationBundleId`.
pub(crate) fn document(
    ids: &mut dyn IdSource,
    profile_name: &str,
    now: &DateTime<FixedOffset>,
    resources: Vec<Resource>,
) -> Bundle {
    Bundle {
        id: None,
        meta: Some(Meta {
            last_updated: Some(instant(now)),
            profile: vec![profile(profile_name)],
        }),
        identifier: Some(Identifier::new(NOTIFICATION_BUNDLE_ID, ids.next_id())),
        kind: "document".into(),
        timestamp: Some(instant(now)),
        entry: resources.into_iter().map(entry).collect(),
    }
}
