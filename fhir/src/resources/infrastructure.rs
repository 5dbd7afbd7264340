//! The resources around a notification: the bundle that carries it, and the reporting
//! system's answer (`Parameters` with a receipt bundle holding a `Binary`, and an
//! `OperationOutcome`).

use serde::{Deserialize, Serialize};

use super::datatypes::*;
use super::Resource;

/// `Bundle`: a notification (`document`) or a receipt (`collection`).
///
/// Like every resource type here it carries no `resourceType` of its own: [`Resource`] adds
/// it, and so does [`Bundle::to_json`].
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// `id`.
    pub id: Option<String>,
    /// `meta`: the bundle profile names the kind of notification.
    pub meta: Option<Meta>,
    /// `identifier`: `NotificationBundleId`.
    pub identifier: Option<Identifier>,
    /// `type`: `document` for notifications, `collection` for receipts.
    #[serde(rename = "type")]
    pub kind: String,
    /// `timestamp` (instant).
    pub timestamp: Option<String>,
    /// `entry`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entry: Vec<BundleEntry>,
}

impl Bundle {
    /// The resources of the entries, in order.
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.entry.iter().filter_map(|e| e.resource.as_ref())
    }

    /// The entry resource a literal reference `Type/id` points at.
    pub fn resolve(&self, reference: &Reference) -> Option<&Resource> {
        let target = reference.reference.as_deref()?;
        self.resources()
            .find(|r| r.local_reference().as_deref() == Some(target))
    }

    /// The bundle as JSON bytes, with its `resourceType`.
    pub fn to_json(&self) -> Vec<u8> {
        tagged("Bundle", self)
    }
}

/// `Bundle.entry`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleEntry {
    /// `fullUrl`: `https://demis.rki.de/fhir/Type/id`.
    pub full_url: Option<String>,
    /// `resource`.
    pub resource: Option<Resource>,
}

/// `Parameters`: the answer of `$process-notification`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Parameters {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `parameter`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameter: Vec<Parameter>,
}

impl Parameters {
    /// The answer as JSON bytes, with its `resourceType`.
    pub fn to_json(&self) -> Vec<u8> {
        tagged("Parameters", self)
    }

    /// The resource of the parameter called `name`.
    pub fn resource(&self, name: &str) -> Option<&Resource> {
        self.parameter
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.resource.as_ref())
    }
}

/// `Parameters.parameter`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// `name`: `bundle` or `operationOutcome`.
    pub name: String,
    /// `resource`.
    pub resource: Option<Resource>,
}

/// `Binary`: the receipt document.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binary {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `contentType`: the media type, `application/pdf` for receipts.
    pub content_type: String,
    /// `data`: base64.
    pub data: Option<String>,
}

/// `OperationOutcome`: what the reporting system says about a notification.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OperationOutcome {
    /// `id`.
    pub id: Option<String>,
    /// `meta`.
    pub meta: Option<Meta>,
    /// `text`.
    pub text: Option<Narrative>,
    /// `issue`.
    #[serde(default)]
    pub issue: Vec<Issue>,
}

/// `OperationOutcome.issue`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// `severity`: `fatal`, `error`, `warning`, `information`.
    pub severity: String,
    /// `code`: e.g. `invalid`, `required`, `informational`.
    pub code: String,
    /// `details`: the text.
    pub details: Option<CodeableConcept>,
    /// `diagnostics`.
    pub diagnostics: Option<String>,
    /// `expression`: FHIRPath of the element concerned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expression: Vec<String>,
}

impl Issue {
    /// Whether the issue refuses the notification (`fatal` or `error`).
    pub fn is_error(&self) -> bool {
        matches!(self.severity.as_str(), "fatal" | "error")
    }

    /// The issue as one line: its details, diagnostics and location, whichever are given.
    pub fn text(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        if let Some(t) = self.details.as_ref().and_then(|d| d.text.as_deref()) {
            parts.push(t);
        }
        if let Some(d) = self.diagnostics.as_deref() {
            parts.push(d);
        }
        let mut text = if parts.is_empty() {
            self.code.clone()
        } else {
            parts.join(": ")
        };
        if !self.expression.is_empty() {
            text = format!("{text} ({})", self.expression.join(", "));
        }
        text
    }
}

/// `resource` as JSON with `resourceType` first, as a top-level resource is written.
fn tagged<T: Serialize>(resource_type: &'static str, resource: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Tagged<'a, T> {
        #[serde(rename = "resourceType")]
        resource_type: &'static str,
        #[serde(flatten)]
        resource: &'a T,
    }
    // Serialising these types cannot fail: every map key is a string.
    serde_json::to_vec(&Tagged {
        resource_type,
        resource,
    })
    .expect("a resource serialises")
}
