//! The resources of a notification: who is notified about, who notifies, and what was found.

use serde::{Deserialize, Serialize};

use super::datatypes::*;

/// `Composition`: the notification's table of contents (first entry of a document bundle).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Composition {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `extension` (the receipt's `ReceivedNotification`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension: Vec<Extension>,
    /// `identifier`: the notification's id (`NotificationId`).
    pub identifier: Option<Identifier>,
    /// `status`: `final`.
    pub status: String,
    /// `type`.
    #[serde(rename = "type")]
    pub kind: CodeableConcept,
    /// `category`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub category: Vec<CodeableConcept>,
    /// `subject`: the notified person, or the hospital location of a report.
    pub subject: Option<Reference>,
    /// `date` (dateTime).
    pub date: String,
    /// `author`: the notifier's `PractitionerRole`.
    #[serde(default)]
    pub author: Vec<Reference>,
    /// `title`.
    pub title: String,
    /// `relatesTo`: an earlier notification this one follows up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relates_to: Vec<RelatesTo>,
    /// `section`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub section: Vec<Section>,
}

/// `Composition.relatesTo`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatesTo {
    /// `code`: `appends`.
    pub code: String,
    /// `targetReference`.
    pub target_reference: Option<Reference>,
}

/// `Composition.section`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// `title`.
    pub title: Option<String>,
    /// `code`.
    pub code: Option<CodeableConcept>,
    /// `entry`: the resources of the section.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entry: Vec<Reference>,
}

/// `Patient`: the notified person.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Patient {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `name`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub name: Vec<HumanName>,
    /// `telecom`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telecom: Vec<ContactPoint>,
    /// `gender`: `male`, `female`, `other`, `unknown`.
    pub gender: Option<String>,
    /// `_gender`: the German civil-status code qualifying `other`.
    #[serde(rename = "_gender")]
    pub gender_parts: Option<PrimitiveExtensions>,
    /// `birthDate`: `YYYY-MM-DD`, or `YYYY-MM` for a person not notified by name.
    pub birth_date: Option<String>,
    /// `address`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address: Vec<Address>,
}

/// `PractitionerRole`: the notifier's or submitter's role, pointing at its organization.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PractitionerRole {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `organization`.
    pub organization: Option<Reference>,
}

/// `Organization`: a facility (notifier, submitter, receiving office).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Organization {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `identifier`: BSNR, IK, DEMIS participant ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifier: Vec<Identifier>,
    /// `type`.
    #[serde(default, rename = "type", skip_serializing_if = "Vec::is_empty")]
    pub kind: Vec<CodeableConcept>,
    /// `name`.
    pub name: Option<String>,
    /// `telecom`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telecom: Vec<ContactPoint>,
    /// `address`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address: Vec<Address>,
    /// `contact`: the person to ask.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contact: Vec<OrganizationContact>,
}

impl Organization {
    /// The value of the first identifier in `system`.
    pub fn identifier_in(&self, system: &str) -> Option<&str> {
        self.identifier
            .iter()
            .find(|i| i.system.as_deref() == Some(system))
            .and_then(|i| i.value.as_deref())
    }
}

/// `DiagnosticReport`: the laboratory report.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticReport {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `status`: `final`.
    pub status: String,
    /// `code`: the notification category (the pathogen).
    pub code: CodeableConcept,
    /// `subject`: the notified person.
    pub subject: Option<Reference>,
    /// `issued` (instant).
    pub issued: Option<String>,
    /// `result`: the pathogen detections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub result: Vec<Reference>,
    /// `conclusion`: free text.
    pub conclusion: Option<String>,
    /// `conclusionCode`: pathogen detected or not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conclusion_code: Vec<CodeableConcept>,
}

/// `Observation`: one pathogen detection.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `status`: `final`.
    pub status: String,
    /// `category`: `laboratory`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub category: Vec<CodeableConcept>,
    /// `code`: the test (LOINC).
    pub code: CodeableConcept,
    /// `subject`: the notified person.
    pub subject: Option<Reference>,
    /// `valueCodeableConcept`: detected or not.
    pub value_codeable_concept: Option<CodeableConcept>,
    /// `interpretation`: positive or negative.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interpretation: Vec<CodeableConcept>,
    /// `note`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note: Vec<Annotation>,
    /// `method` (SNOMED CT).
    pub method: Option<CodeableConcept>,
    /// `specimen`.
    pub specimen: Option<Reference>,
}

/// `Specimen`: the material examined.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Specimen {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `status`: `available`.
    pub status: Option<String>,
    /// `type`: the material (SNOMED CT).
    #[serde(rename = "type")]
    pub kind: Option<CodeableConcept>,
    /// `subject`: the notified person.
    pub subject: Option<Reference>,
    /// `receivedTime` (dateTime).
    pub received_time: Option<String>,
    /// `collection`.
    pub collection: Option<SpecimenCollection>,
    /// `note`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note: Vec<Annotation>,
}

/// `Specimen.collection`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecimenCollection {
    /// `collector`: the submitter's `PractitionerRole`.
    pub collector: Option<Reference>,
    /// `collectedDateTime`.
    pub collected_date_time: Option<String>,
}

/// `Encounter`: a hospitalisation.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Encounter {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `extension` (DEMIS `HospitalizationNote`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension: Vec<Extension>,
    /// `status`: `in-progress` or `finished`.
    pub status: String,
    /// `class`: inpatient.
    pub class: Coding,
    /// `serviceType`: the department (e.g. intensive care).
    pub service_type: Option<CodeableConcept>,
    /// `subject`: the notified person.
    pub subject: Option<Reference>,
    /// `period`: admission and discharge.
    pub period: Option<Period>,
    /// `serviceProvider`: the hospital.
    pub service_provider: Option<Reference>,
}

/// `Condition`: the diagnosed disease.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `verificationStatus`.
    pub verification_status: Option<CodeableConcept>,
    /// `code`: the notifiable disease.
    pub code: Option<CodeableConcept>,
    /// `subject`: the notified person.
    pub subject: Option<Reference>,
    /// `onsetDateTime`.
    pub onset_date_time: Option<String>,
    /// `recordedDate`: date of diagnosis.
    pub recorded_date: Option<String>,
    /// `evidence`: the symptoms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<ConditionEvidence>,
    /// `note`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub note: Vec<Annotation>,
}

/// `Condition.evidence`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConditionEvidence {
    /// `code`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code: Vec<CodeableConcept>,
}

/// `QuestionnaireResponse`: structured answers (bed counts, clinical information).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuestionnaireResponse {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `questionnaire`: canonical URL of the questionnaire answered.
    pub questionnaire: Option<String>,
    /// `status`: `completed`.
    pub status: String,
    /// `subject`.
    pub subject: Option<Reference>,
    /// `item`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item: Vec<ResponseItem>,
}

impl QuestionnaireResponse {
    /// The answers of the top-level item `link_id`.
    pub fn answers(&self, link_id: &str) -> &[Answer] {
        self.item
            .iter()
            .find(|i| i.link_id == link_id)
            .map_or(&[], |i| i.answer.as_slice())
    }
}

/// `QuestionnaireResponse.item`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseItem {
    /// `linkId`.
    pub link_id: String,
    /// `answer`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer: Vec<Answer>,
    /// `item`: nested groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item: Vec<ResponseItem>,
}

impl ResponseItem {
    /// An item with one answer.
    pub fn answered(link_id: &str, answer: Answer) -> Self {
        ResponseItem {
            link_id: link_id.into(),
            answer: vec![answer],
            item: Vec::new(),
        }
    }

    /// A group of nested items.
    pub fn group(link_id: &str, item: Vec<ResponseItem>) -> Self {
        ResponseItem {
            link_id: link_id.into(),
            answer: Vec::new(),
            item,
        }
    }
}

/// `QuestionnaireResponse.item.answer`, with the value types the notifications use (one set).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// `valueInteger`.
    pub value_integer: Option<i64>,
    /// `valueDate`.
    pub value_date: Option<String>,
    /// `valueString`.
    pub value_string: Option<String>,
    /// `valueCoding`.
    pub value_coding: Option<Coding>,
    /// `valueReference`.
    pub value_reference: Option<Reference>,
    /// `item`: items nested under this answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub item: Vec<ResponseItem>,
}
