//! The FHIR R4 data types the notifications use, with only the elements we write or read.
//!
//! Every optional element is left out of the JSON when empty (FHIR forbids empty objects,
//! arrays and strings). Reading ignores elements we do not model, so a bundle from elsewhere
//! parses as long as the elements we do model have their FHIR types.

use serde::{Deserialize, Serialize};

/// `Meta`: the profiles a resource claims and when it was last changed.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// `lastUpdated` (instant).
    pub last_updated: Option<String>,
    /// `profile`: canonical URLs of StructureDefinitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<String>,
}

impl Meta {
    /// A `Meta` naming one profile.
    pub fn profile(url: impl Into<String>) -> Self {
        Meta {
            last_updated: None,
            profile: vec![url.into()],
        }
    }
}

/// `Identifier`: a value in a naming system.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identifier {
    /// `system`: the naming system's URL.
    pub system: Option<String>,
    /// `value`.
    pub value: Option<String>,
}

impl Identifier {
    /// An identifier `value` in `system`.
    pub fn new(system: &str, value: impl Into<String>) -> Self {
        Identifier {
            system: Some(system.into()),
            value: Some(value.into()),
        }
    }
}

/// `Coding`: one code of a code system.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coding {
    /// `system`: the code system's URL.
    pub system: Option<String>,
    /// `code`.
    pub code: Option<String>,
    /// `display`: the code system's text for the code.
    pub display: Option<String>,
}

impl Coding {
    /// A coding with system, code and (when not empty) display.
    pub fn new(system: &str, code: &str, display: &str) -> Self {
        Coding {
            system: Some(system.into()),
            code: Some(code.into()),
            display: (!display.is_empty()).then(|| display.into()),
        }
    }
}

/// `CodeableConcept`: codings and/or a text.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeableConcept {
    /// `coding`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coding: Vec<Coding>,
    /// `text`.
    pub text: Option<String>,
}

impl CodeableConcept {
    /// A concept of one coding.
    pub fn coded(coding: Coding) -> Self {
        CodeableConcept {
            coding: vec![coding],
            text: None,
        }
    }

    /// A concept of a text only.
    pub fn text(text: &str) -> Self {
        CodeableConcept {
            coding: Vec::new(),
            text: Some(text.into()),
        }
    }

    /// The first coding of `system`, if any.
    pub fn coding_of(&self, system: &str) -> Option<&Coding> {
        self.coding
            .iter()
            .find(|c| c.system.as_deref() == Some(system))
    }
}

/// `Reference`: to a resource of the bundle (`Type/id`) or by a logical identifier.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// `reference`: `Type/id` of an entry of the same bundle.
    pub reference: Option<String>,
    /// `type`: the resource type of a logical reference.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `identifier`: a logical reference.
    pub identifier: Option<Identifier>,
}

impl Reference {
    /// A literal reference `Type/id`.
    pub fn to(resource_type: &str, id: &str) -> Self {
        Reference {
            reference: Some(format!("{resource_type}/{id}")),
            ..Default::default()
        }
    }

    /// A logical reference by identifier.
    pub fn by_identifier(resource_type: Option<&str>, identifier: Identifier) -> Self {
        Reference {
            reference: None,
            kind: resource_type.map(Into::into),
            identifier: Some(identifier),
        }
    }
}

/// `Extension` with the value types the notifications use (at most one is set).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Extension {
    /// `url`: the extension's StructureDefinition.
    pub url: String,
    /// `valueString`.
    pub value_string: Option<String>,
    /// `valueCoding`.
    pub value_coding: Option<Coding>,
    /// `valueReference`.
    pub value_reference: Option<Reference>,
    /// `valueIdentifier`.
    pub value_identifier: Option<Identifier>,
}

impl Extension {
    /// An extension with a string value.
    pub fn string(url: &str, value: impl Into<String>) -> Self {
        Extension {
            url: url.into(),
            value_string: Some(value.into()),
            ..Default::default()
        }
    }

    /// An extension with a coding value.
    pub fn coding(url: &str, value: Coding) -> Self {
        Extension {
            url: url.into(),
            value_coding: Some(value),
            ..Default::default()
        }
    }

    /// An extension with an identifier value.
    pub fn identifier(url: &str, value: Identifier) -> Self {
        Extension {
            url: url.into(),
            value_identifier: Some(value),
            ..Default::default()
        }
    }
}

/// The extensions of a primitive value (JSON `_name` beside `name`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrimitiveExtensions {
    /// `extension`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension: Vec<Extension>,
}

/// `Address`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    /// `extension` (DEMIS: `AddressUse`, `FacilityAddressNotifiedPerson`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extension: Vec<Extension>,
    /// `line`: street and house number.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line: Vec<String>,
    /// `_line`: per line, street name and house number as ISO 21090 extensions.
    #[serde(default, rename = "_line", skip_serializing_if = "Vec::is_empty")]
    pub line_parts: Vec<PrimitiveExtensions>,
    /// `city`.
    pub city: Option<String>,
    /// `postalCode`.
    pub postal_code: Option<String>,
    /// `country`.
    pub country: Option<String>,
}

/// `ContactPoint`: a phone number or an email address.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactPoint {
    /// `system`: `phone` or `email`.
    pub system: Option<String>,
    /// `value`.
    pub value: Option<String>,
    /// `use`: e.g. `work`.
    #[serde(rename = "use")]
    pub purpose: Option<String>,
}

impl ContactPoint {
    /// A phone number.
    pub fn phone(value: &str) -> Self {
        ContactPoint {
            system: Some("phone".into()),
            value: Some(value.into()),
            purpose: None,
        }
    }

    /// An email address.
    pub fn email(value: &str) -> Self {
        ContactPoint {
            system: Some("email".into()),
            value: Some(value.into()),
            purpose: None,
        }
    }

    /// The same contact point with `use`.
    pub fn used_for(mut self, purpose: &str) -> Self {
        self.purpose = Some(purpose.into());
        self
    }
}

/// `HumanName`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HumanName {
    /// `use`: `official` for the notified person.
    #[serde(rename = "use")]
    pub purpose: Option<String>,
    /// `text`: the whole name as written.
    pub text: Option<String>,
    /// `family`.
    pub family: Option<String>,
    /// `given`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub given: Vec<String>,
    /// `prefix`: academic titles.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix: Vec<String>,
}

/// `Period`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Period {
    /// `start` (dateTime).
    pub start: Option<String>,
    /// `end` (dateTime).
    pub end: Option<String>,
}

/// `Annotation`: a free-text note.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    /// `text`.
    pub text: String,
}

/// `ContactDetail`-like contact of an organization (`Organization.contact`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrganizationContact {
    /// `name`.
    pub name: Option<HumanName>,
    /// `telecom`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub telecom: Vec<ContactPoint>,
}

/// `Narrative`: the human-readable text of a resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Narrative {
    /// `status`: `generated`.
    pub status: String,
    /// `div`: XHTML.
    pub div: String,
}
