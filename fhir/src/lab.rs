//! The laboratory notification (`NotificationBundleLaboratory`), built from the labreport
//! memento and the disease form's findings, shaped like `LaboratoryNotificationExample.json`.

use chrono::{DateTime, FixedOffset, NaiveDate};

use crate::codes::{Disease, Interpretation};
use crate::common::*;
use crate::person::{ContactPerson, NotifiedPerson};
use crate::resources::*;
use crate::IdSource;

/// Everything a laboratory notification carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaboratoryNotification {
    /// The report's id (`reportId`): the notification's `NotificationId`.
    pub report_id: String,
    /// The disease of the form submitted.
    pub disease: Disease,
    /// The report date (`MeldungsDatum`); the time of building when absent.
    pub report_date: Option<NaiveDate>,
    /// The notification this one follows up (`MeldungsVerweisId`).
    pub follows_up: Option<String>,
    /// The notified person.
    pub patient: NotifiedPerson,
    /// The notifying facility (`MeldendeEinrichtung`, its name and address from the registry).
    pub notifier: Facility,
    /// The reporting person (`MeldendePerson`).
    pub notifier_person: Option<ContactPerson>,
    /// The facility that sent the material (`EinsendendeEinrichtung`).
    pub submitter: Option<Facility>,
    /// The findings of the form, one or more.
    pub findings: Vec<Finding>,
    /// The material examined.
    pub specimen: SpecimenDetails,
    /// The laboratory's free-text conclusion.
    pub conclusion: Option<String>,
}

/// One pathogen detection, with codes of the disease's table ([`crate::codes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The test's LOINC code.
    pub test: String,
    /// The method's SNOMED CT code.
    pub method: String,
    /// Detected or not.
    pub interpretation: Interpretation,
    /// A note.
    pub note: Option<String>,
}

/// The material examined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecimenDetails {
    /// The material's SNOMED CT code.
    pub material: String,
    /// When it was taken.
    pub collected: Option<DateTime<FixedOffset>>,
    /// When the laboratory received it.
    pub received: Option<DateTime<FixedOffset>>,
    /// A note.
    pub note: Option<String>,
}

fn laboratory_type() -> Coding {
    Coding::new(
        ORGANIZATION_TYPE,
        "laboratory",
        "Erregerdiagnostische Untersuchungsstelle",
    )
}

fn laboratory_report_code() -> Coding {
    Coding::new(LOINC, "11502-2", "Laboratory report")
}

fn note(note: &Option<String>) -> Vec<Annotation> {
    text(note)
        .map(|text| Annotation { text })
        .into_iter()
        .collect()
}

/// Builds the notification, ids from `ids`, stamped `now`.
///
/// Refuses a notification without findings, and codes the disease's table does not offer.
pub fn build(
    input: &LaboratoryNotification,
    ids: &mut dyn IdSource,
    now: DateTime<FixedOffset>,
) -> Result<Bundle, BuildError> {
    let codes = input.disease.codes();
    let suffix = codes.profile_suffix;
    if input.findings.is_empty() {
        return Err(BuildError::Missing { field: "findings" });
    }
    let material =
        codes
            .material(&input.specimen.material)
            .ok_or_else(|| BuildError::UnknownCode {
                field: "specimen.material",
                code: input.specimen.material.clone(),
            })?;
    let mut tests = Vec::new();
    for finding in &input.findings {
        let test = codes
            .test(&finding.test)
            .ok_or_else(|| BuildError::UnknownCode {
                field: "findings.test",
                code: finding.test.clone(),
            })?;
        let method = codes
            .method(&finding.method)
            .ok_or_else(|| BuildError::UnknownCode {
                field: "findings.method",
                code: finding.method.clone(),
            })?;
        tests.push((finding, test, method));
    }

    let composition_id = ids.next_id();
    let patient = input.patient.patient(ids.next_id());
    let patient_id = patient.id.clone().unwrap_or_default();
    let (notifier_role, mut notifier) = notifier(ids, &input.notifier, laboratory_type());
    notifier.contact = input
        .notifier_person
        .iter()
        .map(ContactPerson::organization_contact)
        .collect();
    let submitter = input.submitter.as_ref().map(|facility| {
        let organization = facility.organization(ids.next_id(), "SubmittingFacility", None);
        let role = role(
            ids.next_id(),
            "SubmittingRole",
            organization.id.as_deref().unwrap_or_default(),
        );
        (role, organization)
    });
    let report_id = ids.next_id();
    let observation_ids: Vec<String> = tests.iter().map(|_| ids.next_id()).collect();
    let specimen_id = ids.next_id();

    let specimen = Specimen {
        id: Some(specimen_id.clone()),
        meta: Some(Meta::profile(profile(&format!("Specimen{suffix}")))),
        status: Some("available".into()),
        kind: Some(CodeableConcept::coded(material.coding())),
        subject: Some(Reference::to("Patient", &patient_id)),
        received_time: input.specimen.received.as_ref().map(date_time),
        collection: Some(SpecimenCollection {
            collector: submitter
                .as_ref()
                .and_then(|(role, _)| role.id.as_deref())
                .map(|id| Reference::to("PractitionerRole", id)),
            collected_date_time: input.specimen.collected.as_ref().map(date_time),
        }),
        note: note(&input.specimen.note),
    };
    let observations: Vec<Observation> = tests
        .iter()
        .zip(&observation_ids)
        .map(|((finding, test, method), id)| Observation {
            id: Some(id.clone()),
            meta: Some(Meta::profile(profile(&format!(
                "PathogenDetection{suffix}"
            )))),
            status: "final".into(),
            category: vec![CodeableConcept::coded(Coding {
                system: Some("http://terminology.hl7.org/CodeSystem/observation-category".into()),
                code: Some("laboratory".into()),
                display: None,
            })],
            code: CodeableConcept::coded(test.coding()),
            subject: Some(Reference::to("Patient", &patient_id)),
            value_codeable_concept: Some(CodeableConcept::coded(
                finding.interpretation.value().coding(),
            )),
            interpretation: vec![CodeableConcept::coded(
                finding.interpretation.code().coding(),
            )],
            note: note(&finding.note),
            method: Some(CodeableConcept::coded(method.coding())),
            specimen: Some(Reference::to("Specimen", &specimen_id)),
        })
        .collect();
    let overall = if input
        .findings
        .iter()
        .any(|f| f.interpretation == Interpretation::Positive)
    {
        Interpretation::Positive
    } else {
        Interpretation::Negative
    };
    let report = DiagnosticReport {
        id: Some(report_id.clone()),
        meta: Some(Meta::profile(profile(&format!("LaboratoryReport{suffix}")))),
        status: "final".into(),
        code: CodeableConcept::coded(codes.pathogen.coding()),
        subject: Some(Reference::to("Patient", &patient_id)),
        issued: Some(instant(&now)),
        result: observation_ids
            .iter()
            .map(|id| Reference::to("Observation", id))
            .collect(),
        conclusion: text(&input.conclusion),
        conclusion_code: vec![CodeableConcept::coded(overall.conclusion().coding())],
    };
    let composition = NotificationComposition {
        profile_name: "NotificationLaboratory",
        category: laboratory_report_code(),
        title: "Erregernachweismeldung",
        report_id: &input.report_id,
        report_date: input.report_date.as_ref(),
        follows_up: input.follows_up.as_deref(),
        patient_id: &patient_id,
        author: &notifier_role,
        section: vec![Section {
            title: None,
            code: Some(CodeableConcept::coded(laboratory_report_code())),
            entry: vec![Reference::to("DiagnosticReport", &report_id)],
        }],
    }
    .build(composition_id, &now);

    let mut resources = vec![
        Resource::Composition(Box::new(composition)),
        Resource::Patient(Box::new(patient)),
        Resource::PractitionerRole(Box::new(notifier_role)),
        Resource::Organization(Box::new(notifier)),
    ];
    if let Some((role, organization)) = submitter {
        resources.push(Resource::PractitionerRole(Box::new(role)));
        resources.push(Resource::Organization(Box::new(organization)));
    }
    resources.push(Resource::DiagnosticReport(Box::new(report)));
    resources.extend(
        observations
            .into_iter()
            .map(|o| Resource::Observation(Box::new(o))),
    );
    resources.push(Resource::Specimen(Box::new(specimen)));
    Ok(document(
        ids,
        "NotificationBundleLaboratory",
        &now,
        resources,
    ))
}
