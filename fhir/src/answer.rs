//! The reporting system's answer to `$process-notification`, built (by the simulated
//! reporting system) and read (by the transport) with the same types, shaped like
//! `BedOccupancyExampleResult.json`: a `Parameters` whose `bundle` is the receipt bundle
//! (the receipt document as a `Binary`) and whose `operationOutcome` says how it went.
//!
//! A refusal is the same `Parameters` with only the `operationOutcome`, its issues of
//! severity `error`; [`read`] also takes a bare `OperationOutcome`, the body the real system
//! answers a refused notification with.

use base64::Engine as _;
use chrono::{DateTime, FixedOffset};

use crate::common::*;
use crate::resources::*;
use crate::IdSource;

/// The media type of the receipt document DEMIS sends.
pub const PDF: &str = "application/pdf";

/// What an accepted notification's receipt names and carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The notification bundle's `NotificationBundleId`.
    pub bundle_id: String,
    /// The notification's `NotificationId` (its `Composition.identifier`).
    pub notification_id: String,
    /// The receipt document's media type.
    pub content_type: String,
    /// The receipt document.
    pub document: Vec<u8>,
}

/// What the reporting system answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Accepted, with its receipt.
    Accepted(Receipt),
    /// Refused: the error issues, one per line.
    Rejected(String),
}

/// Why a body is not an answer of the reporting system.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Not a FHIR resource we know.
    #[error("the answer is not a FHIR Parameters or OperationOutcome")]
    NotAnAnswer,
    /// Neither a receipt nor an error.
    #[error("the answer carries neither a receipt nor an error")]
    NoReceipt,
    /// The receipt's data is not base64.
    #[error("the receipt's data is not base64")]
    BadData,
}

const RECEIPT_TITLE: &str = "PDF Quittung";

/// The ids an accepted answer gives the resources of its receipt bundle: drawn once, so that
/// whoever keeps them (and the receipt, the date) can write the same answer again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AcceptedIds {
    /// The receipt's `Composition`.
    pub composition: String,
    /// The `Binary` carrying the receipt document.
    pub binary: String,
}

impl AcceptedIds {
    /// Fresh ids from `ids`.
    pub fn draw(ids: &mut dyn IdSource) -> Self {
        AcceptedIds {
            composition: ids.next_id(),
            binary: ids.next_id(),
        }
    }
}

/// The answer accepting a notification, with `receipt`, its resources named by `ids`, dated
/// `now`. The same arguments give the same answer.
pub fn accepted(receipt: &Receipt, ids: &AcceptedIds, now: DateTime<FixedOffset>) -> Parameters {
    let composition_id = ids.composition.clone();
    let binary_id = ids.binary.clone();
    let composition = Composition {
        id: Some(composition_id),
        meta: Some(Meta::profile(profile("NotificationReceipt"))),
        extension: vec![Extension::identifier(
            &profile("ReceivedNotification"),
            Identifier::new(NOTIFICATION_BUNDLE_ID, receipt.bundle_id.clone()),
        )],
        identifier: None,
        status: "final".into(),
        kind: CodeableConcept::coded(Coding::new(LOINC, "80563-0", "Report")),
        category: Vec::new(),
        subject: None,
        date: date_time(&now),
        author: vec![Reference::to("Organization", "DEMIS")],
        title: "Meldevorgangsquittung".into(),
        relates_to: vec![RelatesTo {
            code: "appends".into(),
            target_reference: Some(Reference::by_identifier(
                Some("Composition"),
                Identifier::new(NOTIFICATION_ID, receipt.notification_id.clone()),
            )),
        }],
        section: vec![Section {
            title: Some(RECEIPT_TITLE.into()),
            code: Some(CodeableConcept::text(RECEIPT_TITLE)),
            entry: vec![Reference::to("Binary", &binary_id)],
        }],
    };
    let demis = Organization {
        id: Some("DEMIS".into()),
        name: Some("DEMIS".into()),
        contact: vec![OrganizationContact {
            name: None,
            telecom: vec![ContactPoint::email("demis-support@rki.de")],
        }],
        ..Default::default()
    };
    let binary = Binary {
        id: Some(binary_id),
        meta: None,
        content_type: receipt.content_type.clone(),
        data: Some(base64::engine::general_purpose::STANDARD.encode(&receipt.document)),
    };
    let bundle = Bundle {
        id: None,
        meta: Some(Meta::profile(profile("ReceiptBundle"))),
        identifier: None,
        kind: "collection".into(),
        timestamp: None,
        entry: [
            Resource::Composition(Box::new(composition)),
            Resource::Organization(Box::new(demis)),
            Resource::Binary(Box::new(binary)),
        ]
        .into_iter()
        .map(entry)
        .collect(),
    };
    answer(
        Some(bundle),
        vec![Issue {
            severity: "information".into(),
            code: "informational".into(),
            details: Some(CodeableConcept::text("All OK")),
            ..Default::default()
        }],
    )
}

/// The answer refusing a notification for `reasons` (one `error` issue each).
pub fn rejected(reasons: &[String]) -> Parameters {
    answer(
        None,
        reasons
            .iter()
            .map(|reason| Issue {
                severity: "error".into(),
                code: "invalid".into(),
                details: Some(CodeableConcept::text(reason)),
                ..Default::default()
            })
            .collect(),
    )
}

/// The bare `OperationOutcome` refusing a notification for `reasons`, as JSON bytes with its
/// `resourceType`: the body the real system answers a refused notification with (HTTP 422).
pub fn refusal_json(reasons: &[String]) -> Vec<u8> {
    let parameters = rejected(reasons);
    let outcome = parameters.resource("operationOutcome");
    // Serialising these types cannot fail: no maps with non-string keys, no failing serialisers.
    outcome
        .and_then(|o| serde_json::to_vec(o).ok())
        .unwrap_or_default()
}

fn answer(bundle: Option<Bundle>, issues: Vec<Issue>) -> Parameters {
    let outcome = OperationOutcome {
        id: None,
        meta: Some(Meta::profile(profile("ProcessNotificationResponse"))),
        text: None,
        issue: issues,
    };
    let mut parameter = Vec::new();
    if let Some(bundle) = bundle {
        parameter.push(Parameter {
            name: "bundle".into(),
            resource: Some(Resource::Bundle(Box::new(bundle))),
        });
    }
    parameter.push(Parameter {
        name: "operationOutcome".into(),
        resource: Some(Resource::OperationOutcome(Box::new(outcome))),
    });
    Parameters {
        id: None,
        meta: None,
        parameter,
    }
}

/// Reads an answer: the receipt of an accepted notification, or the errors of a refused one.
pub fn read(json: &[u8]) -> Result<Answer, AnswerError> {
    let resource: Resource = serde_json::from_slice(json).map_err(|_| AnswerError::NotAnAnswer)?;
    let (bundle, outcome) = match &resource {
        Resource::Parameters(p) => (
            match p.resource("bundle") {
                Some(Resource::Bundle(b)) => Some(b.as_ref()),
                _ => None,
            },
            match p.resource("operationOutcome") {
                Some(Resource::OperationOutcome(o)) => Some(o.as_ref()),
                _ => None,
            },
        ),
        Resource::OperationOutcome(o) => (None, Some(o.as_ref())),
        _ => return Err(AnswerError::NotAnAnswer),
    };
    let errors: Vec<String> = outcome
        .iter()
        .flat_map(|o| o.issue.iter())
        .filter(|i| i.is_error())
        .map(Issue::text)
        .collect();
    if !errors.is_empty() {
        return Ok(Answer::Rejected(errors.join("\n")));
    }
    let bundle = bundle.ok_or(AnswerError::NoReceipt)?;
    receipt(bundle).map(Answer::Accepted)
}

/// The receipt of a receipt bundle: the `Binary` its `PDF Quittung` section names (or the only
/// one), and the notification it acknowledges.
fn receipt(bundle: &Bundle) -> Result<Receipt, AnswerError> {
    let composition = bundle.resources().find_map(|r| match r {
        Resource::Composition(c) => Some(c.as_ref()),
        _ => None,
    });
    let named = composition
        .and_then(|c| {
            c.section
                .iter()
                .flat_map(|s| s.entry.iter())
                .find_map(|e| bundle.resolve(e))
        })
        .filter(|r| matches!(r, Resource::Binary(_)));
    let binary = named
        .or_else(|| {
            bundle
                .resources()
                .find(|r| matches!(r, Resource::Binary(_)))
        })
        .and_then(|r| match r {
            Resource::Binary(b) => Some(b.as_ref()),
            _ => None,
        })
        .ok_or(AnswerError::NoReceipt)?;
    let data = binary
        .data
        .as_deref()
        .filter(|d| !d.is_empty())
        .ok_or(AnswerError::NoReceipt)?;
    let document = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| AnswerError::BadData)?;
    let identifier_of = |system: &str| -> Option<String> {
        let c = composition?;
        let from_extension = c
            .extension
            .iter()
            .filter_map(|e| e.value_identifier.as_ref())
            .chain(
                c.relates_to
                    .iter()
                    .filter_map(|r| r.target_reference.as_ref()?.identifier.as_ref()),
            )
            .find(|i| i.system.as_deref() == Some(system))?;
        from_extension.value.clone()
    };
    Ok(Receipt {
        bundle_id: identifier_of(NOTIFICATION_BUNDLE_ID).unwrap_or_default(),
        notification_id: identifier_of(NOTIFICATION_ID).unwrap_or_default(),
        content_type: binary.content_type.clone(),
        document,
    })
}
