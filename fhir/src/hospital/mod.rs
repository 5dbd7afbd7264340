//! The hospitalisation notification (`NotificationBundleDisease`), built from the hospreport
//! memento and form, shaped like `DiseaseHospitalizationNotificationExample.json`: the disease
//! (`Condition`), the hospital stays (`Encounter`) and the common clinical answers
//! (`QuestionnaireResponse` `DiseaseInformationCommon`: deceased, hospitalised).

mod values;

pub use values::{Department, Symptom, YesNo};

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::{Deserialize, Serialize};

use crate::common::*;
use crate::person::{ContactPerson, NamedPerson, NotifiedPerson};
use crate::resources::*;
use crate::IdSource;

/// The disease a hospitalisation is notified for (the contract's `diseaseCode` of hospreport).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HospitalDisease {
    /// COVID-19 (`cvdd`), the disease of the DEMIS example.
    #[serde(rename = "COVID-19")]
    Covid19,
}

impl HospitalDisease {
    /// The code of DEMIS' `notificationDiseaseCategory`, and the profile suffix.
    fn category(self) -> (Coding, &'static str) {
        match self {
            HospitalDisease::Covid19 => (
                Coding::new(
                    "https://demis.rki.de/fhir/CodeSystem/notificationDiseaseCategory",
                    "cvdd",
                    "Coronavirus-Krankheit-2019 (COVID-19)",
                ),
                "CVDD",
            ),
        }
    }
}

/// Everything a hospitalisation notification carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HospitalisationNotification {
    /// The report's id (`MeldeId`): the notification's `NotificationId`.
    pub report_id: String,
    /// The report date (`MeldeDatum`); the time of building when absent.
    pub report_date: Option<NaiveDate>,
    /// The disease.
    pub disease: HospitalDisease,
    /// The patient (`Patient`): always notified by name.
    pub patient: NamedPerson,
    /// The medical information (`MedizinischeInformationen`).
    pub medical: MedicalInformation,
    /// The clinical information (`KlinischeAngaben`).
    pub clinical: ClinicalInformation,
    /// The notifying hospital (`MeldendeEinrichtung`).
    pub notifier: Facility,
    /// The physician (`Arzt`).
    pub physician: Option<ContactPerson>,
    /// The notification this one follows up.
    pub follows_up: Option<String>,
}

/// `MedizinischeInformationen`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MedicalInformation {
    /// Onset of the disease (`Erkrankungsbeginn`).
    pub onset: Option<NaiveDate>,
    /// Date of diagnosis (`Diagnosedatum`).
    pub diagnosed: Option<NaiveDate>,
    /// Symptoms (`Symptome`).
    pub symptoms: Vec<Symptom>,
    /// A note (`Hinweis`).
    pub note: Option<String>,
}

/// `KlinischeAngaben`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClinicalInformation {
    /// Hospitalised (`Hospitalisiert`).
    pub hospitalised: Option<YesNo>,
    /// The stay (`Hospitalisierung`), written when hospitalised is yes.
    pub hospitalisation: Option<Hospitalisation>,
    /// Deceased (`Verstorben`).
    pub deceased: Option<YesNo>,
    /// Date of death (`Todesdatum`), written when deceased is yes.
    pub date_of_death: Option<NaiveDate>,
}

/// `KlinischeAngaben.Hospitalisierung`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hospitalisation {
    /// Admission (`AufnahmeAm`).
    pub admitted: NaiveDate,
    /// Discharge (`EntlassungAm`).
    pub discharged: Option<NaiveDate>,
    /// The department (`ArtDerHospitalisierung`).
    pub department: Option<Department>,
    /// Intensive care (`IntensivBehandlung`) since (`IntensivBehandlungVon`).
    pub intensive_care_from: Option<NaiveDate>,
    /// A note on the stay.
    pub note: Option<String>,
}

fn encounter(
    id: String,
    patient_id: &str,
    hospital_id: &str,
    start: &NaiveDate,
    end: Option<&NaiveDate>,
    department: Option<Department>,
) -> Encounter {
    Encounter {
        id: Some(id),
        meta: Some(Meta::profile(profile("Hospitalization"))),
        extension: Vec::new(),
        status: if end.is_some() {
            "finished"
        } else {
            "in-progress"
        }
        .into(),
        class: Coding::new(
            "http://terminology.hl7.org/CodeSystem/v3-ActCode",
            "IMP",
            "inpatient encounter",
        ),
        service_type: department.map(|d| CodeableConcept::coded(d.code().coding())),
        subject: Some(Reference::to("Patient", patient_id)),
        period: Some(Period {
            start: Some(date(start)),
            end: end.map(date),
        }),
        service_provider: Some(Reference::to("Organization", hospital_id)),
    }
}

fn coded_answer(value: YesNo, item: Vec<ResponseItem>) -> Answer {
    Answer {
        value_coding: Some(value.code().coding()),
        item,
        ..Default::default()
    }
}

fn section(code: &str, title: &str, entry: Reference) -> Section {
    Section {
        title: Some(title.into()),
        code: Some(CodeableConcept::coded(Coding::new(
            "https://demis.rki.de/fhir/CodeSystem/sectionCode",
            code,
            title,
        ))),
        entry: vec![entry],
    }
}

/// Builds the notification, ids from `ids`, stamped `now`.
///
/// Refuses a stay unless hospitalised is yes, and a date of death unless deceased is yes.
pub fn build(
    input: &HospitalisationNotification,
    ids: &mut dyn IdSource,
    now: DateTime<FixedOffset>,
) -> Result<Bundle, BuildError> {
    let clinical = &input.clinical;
    if clinical.hospitalisation.is_some() && clinical.hospitalised != Some(YesNo::Ja) {
        return Err(BuildError::Contradiction {
            field: "KlinischeAngaben.Hospitalisierung",
            requires: "KlinischeAngaben.Hospitalisiert JA",
        });
    }
    if clinical.date_of_death.is_some() && clinical.deceased != Some(YesNo::Ja) {
        return Err(BuildError::Contradiction {
            field: "KlinischeAngaben.Todesdatum",
            requires: "KlinischeAngaben.Verstorben JA",
        });
    }
    let (category, suffix) = input.disease.category();
    let composition_id = ids.next_id();
    let patient = NotifiedPerson::Named(input.patient.clone()).patient(ids.next_id());
    let patient_id = patient.id.clone().unwrap_or_default();
    let condition_id = ids.next_id();
    let (notifier_role, mut notifier) = notifier(ids, &input.notifier, hospital_type());
    notifier.contact = input
        .physician
        .iter()
        .map(ContactPerson::organization_contact)
        .collect();
    let hospital_id = notifier.id.clone().unwrap_or_default();

    let mut encounters = Vec::new();
    if let Some(stay) = &clinical.hospitalisation {
        let mut ward = encounter(
            ids.next_id(),
            &patient_id,
            &hospital_id,
            &stay.admitted,
            stay.discharged.as_ref(),
            stay.department,
        );
        ward.extension.extend(
            text(&stay.note).map(|n| Extension::string(&profile("HospitalizationNote"), n)),
        );
        encounters.push(ward);
        if let Some(icu) = &stay.intensive_care_from {
            // The example writes the intensive-care stay as an encounter of its own.
            encounters.push(encounter(
                ids.next_id(),
                &patient_id,
                &hospital_id,
                icu,
                stay.discharged.as_ref(),
                Some(Department::Intensivmedizin),
            ));
        }
    }

    let mut items = Vec::new();
    if let Some(deceased) = clinical.deceased {
        let nested = match (deceased, &clinical.date_of_death) {
            (YesNo::Ja, Some(day)) => vec![ResponseItem::answered(
                "deathDate",
                Answer {
                    value_date: Some(date(day)),
                    ..Default::default()
                },
            )],
            _ => Vec::new(),
        };
        items.push(ResponseItem::answered(
            "isDead",
            coded_answer(deceased, nested),
        ));
    }
    if let Some(hospitalised) = clinical.hospitalised {
        let groups = encounters
            .iter()
            .filter_map(|e| e.id.as_deref())
            .map(|id| {
                ResponseItem::group(
                    "hospitalizedGroup",
                    vec![ResponseItem::answered(
                        "hospitalizedEncounter",
                        Answer {
                            value_reference: Some(Reference::to("Encounter", id)),
                            ..Default::default()
                        },
                    )],
                )
            })
            .collect();
        items.push(ResponseItem::answered(
            "hospitalized",
            coded_answer(hospitalised, groups),
        ));
    }
    let common_id = ids.next_id();
    let common = QuestionnaireResponse {
        id: Some(common_id.clone()),
        meta: Some(Meta::profile(profile("DiseaseInformationCommon"))),
        questionnaire: Some(format!("{DEMIS_BASE}Questionnaire/DiseaseQuestionsCommon")),
        status: "completed".into(),
        subject: Some(Reference::to("Patient", &patient_id)),
        item: items,
    };

    let medical = &input.medical;
    let condition = Condition {
        id: Some(condition_id.clone()),
        meta: Some(Meta::profile(profile(&format!("Disease{suffix}")))),
        verification_status: Some(CodeableConcept::coded(Coding::new(
            "http://terminology.hl7.org/CodeSystem/condition-ver-status",
            "confirmed",
            "",
        ))),
        code: Some(CodeableConcept::coded(category)),
        subject: Some(Reference::to("Patient", &patient_id)),
        onset_date_time: medical.onset.as_ref().map(date),
        recorded_date: medical.diagnosed.as_ref().map(date),
        evidence: medical
            .symptoms
            .iter()
            .map(|s| ConditionEvidence {
                code: vec![CodeableConcept::coded(s.code().coding())],
            })
            .collect(),
        note: text(&medical.note)
            .map(|text| Annotation { text })
            .into_iter()
            .collect(),
    };
    let composition = NotificationComposition {
        profile_name: &format!("NotificationDisease{suffix}"),
        category: Coding::new(
            "https://demis.rki.de/fhir/CodeSystem/notificationType",
            "6.1_2",
            "Meldung gemäß IfSG §6 Absatz 1, 2",
        ),
        title: "Meldung gemäß §6 Absatz 1, 2 IfSG",
        report_id: &input.report_id,
        report_date: input.report_date.as_ref(),
        follows_up: input.follows_up.as_deref(),
        patient_id: &patient_id,
        author: &notifier_role,
        section: vec![
            section(
                "diagnosis",
                "Diagnose",
                Reference::to("Condition", &condition_id),
            ),
            section(
                "generalClinAndEpiInformation",
                "Meldetatbestandsübergreifende klinische und epidemiologische Angaben",
                Reference::to("QuestionnaireResponse", &common_id),
            ),
        ],
    }
    .build(composition_id, &now);

    let mut resources = vec![
        Resource::Composition(Box::new(composition)),
        Resource::Patient(Box::new(patient)),
        Resource::Condition(Box::new(condition)),
        Resource::Organization(Box::new(notifier)),
        Resource::PractitionerRole(Box::new(notifier_role)),
    ];
    resources.extend(
        encounters
            .into_iter()
            .map(|e| Resource::Encounter(Box::new(e))),
    );
    resources.push(Resource::QuestionnaireResponse(Box::new(common)));
    Ok(document(ids, "NotificationBundleDisease", &now, resources))
}
