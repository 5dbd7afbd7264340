//! What a laboratory report carries, read from a form's content or a stored submission, and
//! written as DEMIS' `NotificationBundleLaboratory` ([`meldewerk_fhir::lab`]).
//!
//! Beside the form's fields, a submission holds what the service added at the submit
//! ([`super::Labreport::look_up`]): `reportId`, the disease of the form (`Krankheit`) and the
//! reporting facility's entry in the registry (`Einrichtungsregister`: name, IK, address), so
//! that the engine builds the same notification from the stored submission.

#![allow(non_snake_case)] // the members are the contract's German names

use chrono::{DateTime, FixedOffset, NaiveDate};
use meldewerk_fhir::codes::{Disease, Gender};
use meldewerk_fhir::lab::{self, Finding, LaboratoryNotification, SpecimenDetails};
use meldewerk_fhir::resources::Bundle;
use meldewerk_fhir::{
    BirthMonth, ContactPerson, Facility, IdSource, NamedPerson, NotifiedPerson, PersonName,
    PostalAddress, UnnamedPerson,
};
use serde::Deserialize;
use serde_json::Value;

use super::fields::{self, label, ERGEBNIS, MATERIAL, METHODE, TEST};
use crate::demis;
use crate::module_layer::DispatchProblem;

/// Members the service adds to a submission (never in a request or a form).
pub(super) const REPORT_ID: &str = "reportId";
/// The disease of the form submitted.
pub(super) const KRANKHEIT: &str = "Krankheit";
/// The reporting facility as the registry has it.
pub(super) const REGISTER: &str = "Einrichtungsregister";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Name {
    Vorname: Option<String>,
    Nachname: Option<String>,
}

impl Name {
    fn person(self) -> PersonName {
        PersonName {
            given: self.Vorname,
            family: self.Nachname,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kontakt {
    Telefon: Option<String>,
    Email: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Adresse {
    Strasse: Option<String>,
    PLZ: Option<String>,
    Stadt: Option<String>,
    Land: Option<String>,
}

impl Adresse {
    fn postal(self) -> PostalAddress {
        PostalAddress {
            street: self.Strasse,
            house_number: None,
            postal_code: self.PLZ,
            city: self.Stadt,
            country: self.Land,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Standard {
    Name: Option<Name>,
    Geschlecht: Option<Gender>,
    Geburtsdatum: Option<NaiveDate>,
    Adresse: Option<Adresse>,
    Kontakt: Option<Kontakt>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Anonym {
    Geschlecht: Option<Gender>,
    GeburtsmonatJahr: Option<String>,
    Adresse: Option<Adresse>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Patient {
    IsAnonym: Option<bool>,
    Standard: Option<Standard>,
    Anonym: Option<Anonym>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MeldendeEinrichtung {
    BSNR: Option<String>,
    Telefon: Option<String>,
    Email: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MeldendePerson {
    Name: Option<Name>,
    Kontakt: Option<Kontakt>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EinsendendeEinrichtung {
    EinrichtungsName: Option<String>,
    Adresse: Option<Adresse>,
    Kontakt: Option<Kontakt>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Befund {
    Test: Option<String>,
    Methode: Option<String>,
    Material: Option<String>,
    Ergebnis: Option<String>,
    Beurteilung: Option<String>,
}

/// The registry's entry of the reporting facility, added at the submit.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Register {
    Name: String,
    IK: String,
    Adresse: Adresse,
}

/// A submission as stored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Submission {
    reportId: Option<String>,
    Krankheit: Option<Disease>,
    Einrichtungsregister: Option<Register>,
    MeldungsDatum: Option<NaiveDate>,
    MeldungsVerweisId: Option<String>,
    Patient: Option<Patient>,
    MeldendeEinrichtung: Option<MeldendeEinrichtung>,
    MeldendePerson: Option<MeldendePerson>,
    EinsendendeEinrichtung: Option<EinsendendeEinrichtung>,
    Befund: Option<Befund>,
}

/// A laboratory report ready to be written.
pub(super) struct Laborbefund(LaboratoryNotification);

/// A problem at the field `path`, in the form's words.
fn at(path: &str, words: &str) -> DispatchProblem {
    DispatchProblem {
        path: Some(path.to_owned()),
        message: format!("{}: {words}", label(path)),
    }
}

/// A missing mandatory value at `path`.
fn mandatory(path: &str) -> DispatchProblem {
    at(path, "Pflichtangabe")
}

/// The rule of the patient's two shapes (spec/02 §2.1): an anonymous patient has only the
/// `Anonym` part, a standard patient only the `Standard` part. `None` when they fit; else the
/// member given against the rule and why, for the API (`Patient.Standard must not …`) and the
/// form alike.
pub(super) fn mixed_patient(
    anonymous: bool,
    standard: bool,
    anonym: bool,
) -> Option<(&'static str, &'static str)> {
    if anonymous && standard {
        Some((
            "Patient.Standard",
            "must not be given for an anonymous patient (Patient.IsAnonym true): an anonymous \
             patient has no name and no contact, only Patient.Anonym",
        ))
    } else if !anonymous && anonym {
        Some((
            "Patient.Anonym",
            "must not be given for a standard patient: set Patient.IsAnonym to true for an \
             anonymous patient, or give Patient.Standard",
        ))
    } else {
        None
    }
}

impl demis::Content for Laborbefund {
    fn read(content: &Value, _prefix: &str) -> Result<Self, Vec<DispatchProblem>> {
        let read: Submission = serde_json::from_value(content.clone()).map_err(|e| {
            vec![DispatchProblem {
                path: None,
                message: format!("Die Angaben passen nicht zusammen: {e}"),
            }]
        })?;
        let mut problems = Vec::new();
        let patient = read.Patient.unwrap_or_default();
        let anonymous = patient.IsAnonym.unwrap_or(false);
        if mixed_patient(
            anonymous,
            patient.Standard.is_some(),
            patient.Anonym.is_some(),
        )
        .is_some()
        {
            let words = if anonymous {
                "Bei einer nichtnamentlichen Meldung bitte nur die Angaben unter „Anonyme Person“ \
                 machen"
            } else {
                "Angaben unter „Anonyme Person“ nur bei einer nichtnamentlichen Meldung (bitte \
                 ankreuzen)"
            };
            problems.push(at("Patient.IsAnonym", words));
        }
        let einrichtung = read.MeldendeEinrichtung.unwrap_or_default();
        if einrichtung.BSNR.is_none() {
            problems.push(mandatory("MeldendeEinrichtung.BSNR"));
        }
        if einrichtung.Telefon.is_none() {
            problems.push(mandatory("MeldendeEinrichtung.Telefon"));
        }
        let befund = read.Befund.unwrap_or_default();
        for (path, value) in [
            (TEST, &befund.Test),
            (METHODE, &befund.Methode),
            (MATERIAL, &befund.Material),
            (ERGEBNIS, &befund.Ergebnis),
        ] {
            if value.is_none() {
                problems.push(mandatory(path));
            }
        }
        let interpretation = befund.Ergebnis.as_deref().map(fields::interpretation);
        if let Some(None) = interpretation {
            problems.push(at(ERGEBNIS, "unbekannter Wert"));
        }
        let (Some(report_id), Some(disease)) = (read.reportId, read.Krankheit) else {
            problems.push(DispatchProblem {
                path: None,
                message: "Die Meldung kennt ihre Kennung oder Krankheit nicht.".into(),
            });
            return Err(problems);
        };
        // The registry's entry is there whenever the BSNR resolved; a BSNR refused has its
        // problem at the field already.
        let register = read.Einrichtungsregister;
        if !problems.is_empty() {
            return Err(problems);
        }
        let patient = if anonymous {
            let anonym = patient.Anonym.unwrap_or_default();
            let adresse = anonym.Adresse.unwrap_or_default();
            NotifiedPerson::Unnamed(UnnamedPerson {
                gender: anonym.Geschlecht,
                birth_month: anonym
                    .GeburtsmonatJahr
                    .as_deref()
                    .and_then(BirthMonth::parse),
                postal_code: adresse.PLZ,
                country: adresse.Land,
            })
        } else {
            let standard = patient.Standard.unwrap_or_default();
            let kontakt = standard.Kontakt.unwrap_or_default();
            NotifiedPerson::Named(NamedPerson {
                name: standard.Name.unwrap_or_default().person(),
                gender: standard.Geschlecht,
                birth_date: standard.Geburtsdatum,
                address: standard.Adresse.map(Adresse::postal),
                phone: kontakt.Telefon,
                email: kontakt.Email,
            })
        };
        let notifier = Facility {
            name: register.as_ref().map(|r| r.Name.clone()),
            bsnr: einrichtung.BSNR,
            ik: register.as_ref().map(|r| r.IK.clone()),
            address: register.map(|r| r.Adresse.postal()),
            phone: einrichtung.Telefon,
            email: einrichtung.Email,
        };
        let notifier_person = read.MeldendePerson.map(|person| {
            let kontakt = person.Kontakt.unwrap_or_default();
            ContactPerson {
                title: None,
                name: person.Name.unwrap_or_default().person(),
                phone: kontakt.Telefon,
                email: kontakt.Email,
            }
        });
        let submitter = read.EinsendendeEinrichtung.map(|sender| {
            let kontakt = sender.Kontakt.unwrap_or_default();
            Facility {
                name: sender.EinrichtungsName,
                address: sender.Adresse.map(Adresse::postal),
                phone: kontakt.Telefon,
                email: kontakt.Email,
                ..Facility::default()
            }
        });
        Ok(Laborbefund(LaboratoryNotification {
            report_id,
            disease,
            report_date: read.MeldungsDatum,
            follows_up: read.MeldungsVerweisId,
            patient,
            notifier,
            notifier_person,
            submitter,
            findings: vec![Finding {
                test: befund.Test.unwrap_or_default(),
                method: befund.Methode.unwrap_or_default(),
                interpretation: interpretation
                    .flatten()
                    .unwrap_or(meldewerk_fhir::codes::Interpretation::Negative),
                note: None,
            }],
            specimen: SpecimenDetails {
                material: befund.Material.unwrap_or_default(),
                collected: None,
                received: None,
                note: None,
            },
            conclusion: befund.Beurteilung,
        }))
    }

    fn bundle(
        &self,
        ids: &mut dyn IdSource,
        now: DateTime<FixedOffset>,
    ) -> Result<Bundle, meldewerk_fhir::BuildError> {
        lab::build(&self.0, ids, now)
    }
}

/// The paths a disease form must have filled however it is filled in.
pub(super) const MANDATORY: [&str; 6] = [
    "MeldendeEinrichtung.BSNR",
    "MeldendeEinrichtung.Telefon",
    TEST,
    METHODE,
    MATERIAL,
    ERGEBNIS,
];
