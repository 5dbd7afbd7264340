//! The report's content (a form's, or a stored submission) read into the FHIR crate's
//! [`HospitalisationNotification`], every problem at its field: the checks before dispatch
//! beyond the field table (what a notification cannot go without, and the rules across
//! fields), mapped as `docs/fhir-demis.md` says.

use chrono::{DateTime, FixedOffset, NaiveDate};
use meldewerk_fhir::codes::Gender;
use meldewerk_fhir::hospital::{
    self, ClinicalInformation, HospitalDisease, Hospitalisation, HospitalisationNotification,
    MedicalInformation, Symptom, YesNo,
};
use meldewerk_fhir::resources::Bundle;
use meldewerk_fhir::{ContactPerson, Facility, IdSource, NamedPerson, PersonName, PostalAddress};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::fields::{label, SYMPTOME};
use crate::demis::Content;
use crate::module_layer::fields::{text_at, value_at};
use crate::module_layer::DispatchProblem;

/// The member of the content that holds the report id: the contract's `MeldeId`.
pub(super) const MELDE_ID: &str = "MeldeId";

/// The country code a patient living in Germany gets (`inDeutschland`), as the DEMIS example
/// writes Germany.
const DEUTSCHLAND: &str = "20422";

/// One hospitalisation report, ready to be written as a notification.
pub(super) struct Meldung(pub(super) HospitalisationNotification);

/// Reads the content, collecting every problem.
struct Reader<'a> {
    content: &'a Value,
    problems: Vec<DispatchProblem>,
}

impl<'a> Reader<'a> {
    fn value(&self, path: &str) -> Option<&'a Value> {
        value_at(self.content, path)
    }

    fn text(&self, path: &str) -> Option<String> {
        text_at(self.content, path).map(str::to_owned)
    }

    fn problem(&mut self, path: &str, message: String) {
        self.problems.push(DispatchProblem {
            path: Some(path.to_owned()),
            message,
        });
    }

    fn required(&mut self, path: &str) -> Option<String> {
        let text = self.text(path);
        if text.is_none() {
            self.problem(path, format!("{}: Pflichtangabe", label(path)));
        }
        text
    }

    fn date(&mut self, path: &str) -> Option<NaiveDate> {
        let text = self.text(path)?;
        let day = NaiveDate::parse_from_str(&text, "%Y-%m-%d").ok();
        if day.is_none() {
            self.problem(path, format!("{}: kein gültiges Datum", label(path)));
        }
        day
    }

    /// A value of one of the module's lists, as its typed value (their serde names are the
    /// lists' values).
    fn chosen<T: DeserializeOwned>(&mut self, path: &str) -> Option<T> {
        let text = self.text(path)?;
        let chosen = serde_json::from_value(Value::String(text)).ok();
        if chosen.is_none() {
            self.problem(path, format!("{}: kein zulässiger Wert", label(path)));
        }
        chosen
    }

    fn yes(&self, path: &str) -> bool {
        self.value(path).and_then(Value::as_bool) == Some(true)
    }

    fn patient(&mut self) -> NamedPerson {
        let given = self.required("Patient.Vorname");
        let family = self.required("Patient.Name");
        let in_germany = self.yes("Patient.Adresse.inDeutschland");
        let address = PostalAddress {
            street: self.text("Patient.Adresse.Strasse"),
            house_number: self.text("Patient.Adresse.Hausnummer"),
            postal_code: self.text("Patient.Adresse.PLZ"),
            city: self.text("Patient.Adresse.Stadt"),
            country: in_germany.then(|| DEUTSCHLAND.to_owned()),
        };
        NamedPerson {
            name: PersonName { given, family },
            gender: self.chosen::<Gender>("Patient.Geschlecht"),
            birth_date: self.date("Patient.Geburtsdatum"),
            address: (address != PostalAddress::default()).then_some(address),
            phone: self.text("Patient.Kontakt.Telefon"),
            email: self.text("Patient.Kontakt.Email"),
        }
    }

    fn medical(&mut self) -> MedicalInformation {
        let symptoms = SYMPTOME
            .iter()
            .filter(|(code, _)| self.yes(&format!("MedizinischeInformationen.Symptome.{code}")))
            .filter_map(|(code, _)| serde_json::from_value::<Symptom>(Value::from(*code)).ok())
            .collect();
        MedicalInformation {
            onset: self.date("MedizinischeInformationen.Erkrankungsbeginn"),
            diagnosed: self.date("MedizinischeInformationen.Diagnosedatum"),
            symptoms,
            note: self.text("MedizinischeInformationen.Hinweis"),
        }
    }

    fn clinical(&mut self) -> ClinicalInformation {
        const HOSPITALISIERT: &str = "KlinischeAngaben.Hospitalisiert";
        const STAY: &str = "KlinischeAngaben.Hospitalisierung";
        const AUFNAHME: &str = "KlinischeAngaben.Hospitalisierung.AufnahmeAm";
        const ENTLASSUNG: &str = "KlinischeAngaben.Hospitalisierung.EntlassungAm";
        const ICU: &str = "KlinischeAngaben.Hospitalisierung.IntensivBehandlung";
        const ICU_FROM: &str = "KlinischeAngaben.Hospitalisierung.IntensivBehandlungVon";
        const VERSTORBEN: &str = "KlinischeAngaben.Verstorben";
        const TODESDATUM: &str = "KlinischeAngaben.Todesdatum";

        if self.text(HOSPITALISIERT).is_none() {
            self.required(HOSPITALISIERT);
        }
        let hospitalised = self.chosen::<YesNo>(HOSPITALISIERT);
        let stay_given = self
            .value(STAY)
            .and_then(Value::as_object)
            .is_some_and(|stay| {
                stay.values()
                    .any(|v| !v.is_null() && v != &Value::Bool(false))
            });
        let admitted = self.date(AUFNAHME);
        let discharged = self.date(ENTLASSUNG);
        let department = self.chosen(&format!("{STAY}.ArtDerHospitalisierung"));
        let intensive = self.yes(ICU);
        let intensive_from = self.date(ICU_FROM);
        let mut hospitalisation = None;
        if hospitalised == Some(YesNo::Ja) || stay_given {
            if hospitalised.is_some() && hospitalised != Some(YesNo::Ja) {
                self.problem(
                    HOSPITALISIERT,
                    "Hospitalisiert: muss „ja“ sein, wenn Angaben zur Hospitalisierung gemacht \
                     sind"
                        .into(),
                );
            }
            if admitted.is_none() && self.text(AUFNAHME).is_none() {
                self.required(AUFNAHME);
            }
            if let (Some(from), Some(to)) = (admitted, discharged) {
                if to < from {
                    self.problem(
                        ENTLASSUNG,
                        "Entlassung am: darf nicht vor der Aufnahme liegen".into(),
                    );
                }
            }
            match (intensive, intensive_from) {
                (true, None) if self.text(ICU_FROM).is_none() => {
                    self.required(ICU_FROM);
                }
                (false, Some(_)) => self.problem(
                    ICU,
                    "Intensivbehandlung: bitte ankreuzen, wenn ein Beginn angegeben ist".into(),
                ),
                _ => {}
            }
            if let (Some(from), Some(icu)) = (admitted, intensive_from) {
                if icu < from {
                    self.problem(
                        ICU_FROM,
                        "Intensivbehandlung seit: darf nicht vor der Aufnahme liegen".into(),
                    );
                }
            }
            hospitalisation = admitted.map(|admitted| Hospitalisation {
                admitted,
                discharged,
                department,
                intensive_care_from: intensive.then_some(intensive_from).flatten(),
                note: None,
            });
        }
        let deceased = self.chosen::<YesNo>(VERSTORBEN);
        let date_of_death = self.date(TODESDATUM);
        if date_of_death.is_some() && deceased != Some(YesNo::Ja) {
            self.problem(
                TODESDATUM,
                "Todesdatum: nur anzugeben, wenn „Verstorben“ „ja“ ist".into(),
            );
        }
        ClinicalInformation {
            hospitalised,
            hospitalisation,
            deceased,
            date_of_death: date_of_death.filter(|_| deceased == Some(YesNo::Ja)),
        }
    }

    fn notifier(&mut self) -> Facility {
        let address = PostalAddress {
            street: self.text("MeldendeEinrichtung.Adresse.Strasse"),
            house_number: None,
            postal_code: self.text("MeldendeEinrichtung.Adresse.PLZ"),
            city: self.text("MeldendeEinrichtung.Adresse.Stadt"),
            country: self.text("MeldendeEinrichtung.Adresse.Land"),
        };
        Facility {
            name: self.required("MeldendeEinrichtung.Name"),
            bsnr: self.required("MeldendeEinrichtung.BSNR"),
            ik: self.text("MeldendeEinrichtung.IK_Nummer"),
            address: (address != PostalAddress::default()).then_some(address),
            phone: None,
            email: None,
        }
    }

    fn physician(&mut self) -> Option<ContactPerson> {
        let person = ContactPerson {
            title: self.text("Arzt.Titel"),
            name: PersonName {
                given: self.text("Arzt.Vorname"),
                family: self.text("Arzt.Nachname"),
            },
            phone: self.text("Arzt.Kontakt.Telefon"),
            email: None,
        };
        (person != ContactPerson::default()).then_some(person)
    }
}

impl Content for Meldung {
    /// Reads the whole content (the form has no prefix).
    fn read(content: &Value, _prefix: &str) -> Result<Meldung, Vec<DispatchProblem>> {
        let mut reader = Reader {
            content,
            problems: Vec::new(),
        };
        let report_id = reader.text(MELDE_ID);
        if report_id.is_none() {
            reader.problems.push(DispatchProblem {
                path: None,
                message: "Die Meldung hat keine Meldungs-ID; bitte öffnen Sie den Link erneut."
                    .into(),
            });
        }
        let notification = HospitalisationNotification {
            report_id: report_id.unwrap_or_default(),
            report_date: reader.date("MeldeDatum"),
            disease: HospitalDisease::Covid19,
            patient: reader.patient(),
            medical: reader.medical(),
            clinical: reader.clinical(),
            notifier: reader.notifier(),
            physician: reader.physician(),
            follows_up: None,
        };
        if reader.problems.is_empty() {
            Ok(Meldung(notification))
        } else {
            Err(reader.problems)
        }
    }

    fn bundle(
        &self,
        ids: &mut dyn IdSource,
        now: DateTime<FixedOffset>,
    ) -> Result<Bundle, meldewerk_fhir::BuildError> {
        hospital::build(&self.0, ids, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn complete() -> Value {
        json!({
            "MeldeId": "H-1",
            "Patient": {"Vorname": "Bertha", "Name": "Betroffen",
                        "Adresse": {"Strasse": "Berthastraße", "Hausnummer": "123",
                                    "inDeutschland": true}},
            "MedizinischeInformationen": {"Symptome": {"FIEBER": true, "HUSTEN": false}},
            "KlinischeAngaben": {"Hospitalisiert": "JA",
                "Hospitalisierung": {"AufnahmeAm": "2026-11-21", "IntensivBehandlung": true,
                                     "IntensivBehandlungVon": "2026-11-23",
                                     "ArtDerHospitalisierung": "INNERE_MEDIZIN"},
                "Verstorben": "NEIN"},
            "MeldendeEinrichtung": {"Name": "Klinikum", "BSNR": "123456789"}
        })
    }

    fn paths(content: &Value) -> Vec<String> {
        let problems = Meldung::read(content, "").err().unwrap_or_default();
        problems.into_iter().filter_map(|p| p.path).collect()
    }

    #[test]
    fn a_complete_report_reads_as_the_example_writes_it() {
        let Meldung(n) = Meldung::read(&complete(), "").unwrap();
        assert_eq!(n.report_id, "H-1");
        assert_eq!(n.medical.symptoms, [Symptom::Fieber]);
        let stay = n.clinical.hospitalisation.unwrap();
        assert_eq!(
            stay.intensive_care_from,
            NaiveDate::from_ymd_opt(2026, 11, 23)
        );
        assert_eq!(
            n.patient.address.unwrap().country.as_deref(),
            Some(DEUTSCHLAND)
        );
    }

    #[test]
    fn every_missing_value_and_contradiction_is_named_at_its_field() {
        assert_eq!(
            paths(&json!({"MeldeId": "H-1"})),
            [
                "Patient.Vorname",
                "Patient.Name",
                "KlinischeAngaben.Hospitalisiert",
                "MeldendeEinrichtung.Name",
                "MeldendeEinrichtung.BSNR"
            ]
        );
        let mut content = complete();
        content["KlinischeAngaben"]["Hospitalisiert"] = json!("NEIN");
        content["KlinischeAngaben"]["Todesdatum"] = json!("2026-11-24");
        content["KlinischeAngaben"]["Hospitalisierung"]["EntlassungAm"] = json!("2026-11-01");
        content["KlinischeAngaben"]["Hospitalisierung"]["IntensivBehandlung"] = json!(false);
        assert_eq!(
            paths(&content),
            [
                "KlinischeAngaben.Hospitalisiert",
                "KlinischeAngaben.Hospitalisierung.EntlassungAm",
                "KlinischeAngaben.Hospitalisierung.IntensivBehandlung",
                "KlinischeAngaben.Todesdatum"
            ]
        );
    }
}
