//! Our own serde types for the FHIR R4 resources DEMIS notifications use, in one place.
//!
//! Only the elements we write or read are modelled (see `docs/decisions.md` for why not a
//! generated crate). The JSON is plain FHIR R4, which R4B parsers accept as well.

mod clinical;
mod datatypes;
mod infrastructure;
mod read;

pub use clinical::*;
pub use datatypes::*;
pub use infrastructure::*;

use serde::Serialize;

/// A resource, told apart by its `resourceType`. Read by [`read`]'s own `Deserialize` (see
/// there); written with `resourceType` first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "resourceType")]
pub enum Resource {
    /// `Bundle`.
    Bundle(Box<Bundle>),
    /// `Composition`.
    Composition(Box<Composition>),
    /// `Patient`.
    Patient(Box<Patient>),
    /// `PractitionerRole`.
    PractitionerRole(Box<PractitionerRole>),
    /// `Organization`.
    Organization(Box<Organization>),
    /// `DiagnosticReport`.
    DiagnosticReport(Box<DiagnosticReport>),
    /// `Observation`.
    Observation(Box<Observation>),
    /// `Specimen`.
    Specimen(Box<Specimen>),
    /// `Encounter`.
    Encounter(Box<Encounter>),
    /// `Condition`.
    Condition(Box<Condition>),
    /// `QuestionnaireResponse`.
    QuestionnaireResponse(Box<QuestionnaireResponse>),
    /// `Parameters`.
    Parameters(Box<Parameters>),
    /// `Binary`.
    Binary(Box<Binary>),
    /// `OperationOutcome`.
    OperationOutcome(Box<OperationOutcome>),
    /// Any other resource type: read (and skipped), never written.
    #[serde(other, skip_serializing)]
    Other,
}

impl Resource {
    /// The `resourceType`, `None` for one we do not model.
    pub fn type_name(&self) -> Option<&'static str> {
        Some(match self {
            Resource::Bundle(_) => "Bundle",
            Resource::Composition(_) => "Composition",
            Resource::Patient(_) => "Patient",
            Resource::PractitionerRole(_) => "PractitionerRole",
            Resource::Organization(_) => "Organization",
            Resource::DiagnosticReport(_) => "DiagnosticReport",
            Resource::Observation(_) => "Observation",
            Resource::Specimen(_) => "Specimen",
            Resource::Encounter(_) => "Encounter",
            Resource::Condition(_) => "Condition",
            Resource::QuestionnaireResponse(_) => "QuestionnaireResponse",
            Resource::Parameters(_) => "Parameters",
            Resource::Binary(_) => "Binary",
            Resource::OperationOutcome(_) => "OperationOutcome",
            Resource::Other => return None,
        })
    }

    /// The logical `id`.
    pub fn id(&self) -> Option<&str> {
        match self {
            Resource::Bundle(r) => r.id.as_deref(),
            Resource::Composition(r) => r.id.as_deref(),
            Resource::Patient(r) => r.id.as_deref(),
            Resource::PractitionerRole(r) => r.id.as_deref(),
            Resource::Organization(r) => r.id.as_deref(),
            Resource::DiagnosticReport(r) => r.id.as_deref(),
            Resource::Observation(r) => r.id.as_deref(),
            Resource::Specimen(r) => r.id.as_deref(),
            Resource::Encounter(r) => r.id.as_deref(),
            Resource::Condition(r) => r.id.as_deref(),
            Resource::QuestionnaireResponse(r) => r.id.as_deref(),
            Resource::Parameters(r) => r.id.as_deref(),
            Resource::Binary(r) => r.id.as_deref(),
            Resource::OperationOutcome(r) => r.id.as_deref(),
            Resource::Other => None,
        }
    }

    /// The profiles the resource claims in `meta.profile`.
    pub fn profiles(&self) -> &[String] {
        let meta = match self {
            Resource::Bundle(r) => &r.meta,
            Resource::Composition(r) => &r.meta,
            Resource::Patient(r) => &r.meta,
            Resource::PractitionerRole(r) => &r.meta,
            Resource::Organization(r) => &r.meta,
            Resource::DiagnosticReport(r) => &r.meta,
            Resource::Observation(r) => &r.meta,
            Resource::Specimen(r) => &r.meta,
            Resource::Encounter(r) => &r.meta,
            Resource::Condition(r) => &r.meta,
            Resource::QuestionnaireResponse(r) => &r.meta,
            Resource::Parameters(r) => &r.meta,
            Resource::Binary(r) => &r.meta,
            Resource::OperationOutcome(r) => &r.meta,
            Resource::Other => return &[],
        };
        meta.as_ref().map_or(&[], |m| m.profile.as_slice())
    }

    /// Whether the resource claims `profile`.
    pub fn has_profile(&self, profile: &str) -> bool {
        self.profiles().iter().any(|p| p == profile)
    }

    /// `Type/id`, the form other entries of the bundle refer to it by.
    pub fn local_reference(&self) -> Option<String> {
        Some(format!("{}/{}", self.type_name()?, self.id()?))
    }
}
