//! What the health modules (`labreport`, `hospreport`, `bedreport`) share, written once, like
//! [`crate::xpersonenstand`] for the civil registry: their identity (delivered to the reporting
//! system through the `demis` transport, results kept 3 days, then 404), and the glue from a
//! module's typed content to the FHIR notification the transport sends: the checks before
//! dispatch, the [`BuiltMessage`] (`application/fhir+json`, the bundle of
//! [`meldewerk_fhir`]) and the engine's [`MessageBuilder`], and the facility a message is sent
//! as ([`Notifier`]), whose deposited certificate the transport presents.
//! A module supplies only its typed [`Content`].

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, FixedOffset, Utc};
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_fhir::resources::Bundle;
use meldewerk_fhir::{IdSource, RandomIds};
use meldewerk_storage::{Bsnr, Environment, Packing, Report, Sender};
use serde_json::Value;

use crate::module_layer::{DispatchProblem, ExpiredAnswer, Field, Form, ModuleInfo, TextPattern};

/// The transport of every health module: the national infectious-disease reporting system.
pub const TRANSPORT: &str = "demis";

/// The media type of a FHIR notification in JSON, as the reporting system takes it.
pub const FHIR_JSON: &str = meldewerk_transports::demis::FHIR_JSON;

/// How long a health module's results keep their payload and receipt: 3 days (spec/02 §8 for
/// `hospreport`, spec/04 for `labreport`), then the nightly cleanup removes them and reads
/// answer 404.
pub const RETENTION: Duration = Duration::from_secs(3 * 24 * 3600);

/// The contract's gender values (`Geschlecht`) of the health modules, with the forms' words:
/// the names of [`meldewerk_fhir::codes::Gender`] (a unit test keeps them equal).
pub const GESCHLECHT: &[(&str, &str)] = &[
    ("NASK", "nicht erhoben"),
    ("ASKU", "erhoben, aber unbekannt"),
    ("MAENNLICH", "männlich"),
    ("WEIBLICH", "weiblich"),
    ("DIVERS", "divers"),
    ("UNBESTIMMT", "unbestimmt"),
];

fn nine_digits(text: &str) -> bool {
    text.len() == 9 && text.bytes().all(|b| b.is_ascii_digit())
}

/// BSNR, IK and LANR: nine digits each (spec/02 §8).
pub static NEUN_ZIFFERN: TextPattern = TextPattern {
    fits: nine_digits,
    rule: "must be exactly 9 digits",
    hint: "9 Ziffern",
    sample: "123456789",
    pattern: "^[0-9]{9}$",
    max_length: None,
};

/// An address as a mail program takes it: one `@`, something before it, a dot in the domain,
/// no white space.
fn email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !text.chars().any(char::is_whitespace)
        && text.chars().count() <= 254
}

/// An email address (spec/02 §7: well-formed, or null or absent).
pub static EMAIL: TextPattern = TextPattern {
    fits: email,
    rule: "must be a well-formed email address (send null or omit it)",
    hint: "z. B. name@beispiel.de",
    sample: "name@beispiel.de",
    pattern: "^[^\\s@]+@[^\\s@.][^\\s@]*\\.[^\\s@]*[^\\s@.]$",
    max_length: Some(254),
};

/// A health module's identity: delivered to the reporting system, results kept for
/// [`RETENTION`], 404 afterwards (as if the report never existed), no mock ids, payloads packed
/// quick.
pub const fn module_info(
    module: &'static str,
    fields: &'static [Field],
    forms: &'static [Form],
) -> ModuleInfo {
    ModuleInfo::new(module, fields, forms, TRANSPORT)
        .retained(Some(RETENTION), ExpiredAnswer::NotFound)
        // Kept three days by default, and every report's payload is written on the sender's
        // way: quick over small (the civil registry's payloads, kept longer, stay small).
        .packed(Packing::Quick)
}

/// The typed content of one kind of health report: read from a form's or a stored submission's
/// JSON, written as a FHIR notification bundle.
pub trait Content: Sized {
    /// Reads the content of a form (`prefix` as the form's) or of a stored submission (`""`);
    /// `Err` names every value that does not fit, at its field where it has one.
    fn read(content: &Value, prefix: &str) -> Result<Self, Vec<DispatchProblem>>;

    /// The notification, resource ids from `ids`, stamped `now`.
    fn bundle(
        &self,
        ids: &mut dyn IdSource,
        now: DateTime<FixedOffset>,
    ) -> Result<Bundle, meldewerk_fhir::BuildError>;
}

/// The notification as the message the transport delivers: its JSON, typed
/// `application/fhir+json`, its message id the bundle's `NotificationBundleId`.
pub fn message(bundle: &Bundle) -> BuiltMessage {
    BuiltMessage {
        message_uuid: bundle
            .identifier
            .as_ref()
            .and_then(|identifier| identifier.value.clone())
            .unwrap_or_default(),
        content_type: FHIR_JSON.into(),
        body: bundle.to_json(),
        sender: None,
    }
}

/// Where a health module's report names the facility that notifies, and the reporting
/// system's environment the module sends to: together the sender of its messages
/// ([`Sender`]), whose deposited certificate the transport presents.
#[derive(Debug, Clone, Copy)]
pub struct Notifier {
    /// JSON pointer to the notifier's BSNR in the report's content.
    pub bsnr_at: &'static str,
    /// The environment the module's reports go to.
    pub environment: Environment,
}

/// Where the laboratory and hospitalisation reports name the notifying facility's BSNR
/// (`MeldendeEinrichtung.BSNR`), as a JSON pointer into the report's content.
pub const MELDENDE_EINRICHTUNG_BSNR: &str = "/MeldendeEinrichtung/BSNR";

/// The settings of a health module that sends as the facility its reports name
/// (`[modules.labreport]`; `hospreport` has these beside its wait): the reporting system's
/// environment its reports go to, and so whose deposited certificate they are sent with.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SendingSettings {
    /// `test` (the default) or `production`.
    pub environment: Environment,
}

impl Default for SendingSettings {
    fn default() -> Self {
        SendingSettings {
            environment: Environment::Test,
        }
    }
}

impl Notifier {
    /// The notifier of a report naming its facility at `MeldendeEinrichtung.BSNR`, sending to
    /// `environment`.
    pub const fn meldende_einrichtung(environment: Environment) -> Notifier {
        Notifier {
            bsnr_at: MELDENDE_EINRICHTUNG_BSNR,
            environment,
        }
    }

    /// The sender of a report of `content`; `None` while its BSNR is missing or not one.
    pub fn sender(&self, content: &Value) -> Option<Sender> {
        let bsnr = content.pointer(self.bsnr_at)?.as_str()?;
        Some(Sender {
            bsnr: Bsnr::parse(bsnr).ok()?,
            environment: self.environment,
        })
    }

    /// `message`, built from `content`, sent as its notifier.
    pub fn stamp(&self, mut message: BuiltMessage, content: &Value) -> BuiltMessage {
        message.sender = self.sender(content);
        message
    }
}

/// The content built now, with fresh ids.
fn built<C: Content>(content: &C) -> Result<BuiltMessage, meldewerk_fhir::BuildError> {
    let now = Utc::now().fixed_offset();
    content.bundle(&mut RandomIds, now).map(|b| message(&b))
}

/// The checks before dispatch: the content reads (every problem at its field) and its bundle
/// builds; the message built is the one to deliver. A bundle the builder refuses although every
/// field read is a problem of the whole report, in the builder's words.
pub fn checked_message<C: Content>(
    content: &Value,
    prefix: &str,
) -> Result<BuiltMessage, Vec<DispatchProblem>> {
    let read = C::read(content, prefix)?;
    built(&read).map_err(|e| {
        vec![DispatchProblem {
            path: None,
            message: format!("Die Meldung kann so nicht übermittelt werden: {e}"),
        }]
    })
}

/// The engine's builder for the notifications of one kind of content, for reports stored
/// without their message.
pub struct Builder<C> {
    content: PhantomData<fn() -> C>,
    notifier: Option<Notifier>,
}

impl<C: Content + 'static> Builder<C> {
    /// The builder, shared: its messages name no sender.
    pub fn shared() -> Arc<dyn MessageBuilder> {
        Arc::new(Builder::<C> {
            content: PhantomData,
            notifier: None,
        })
    }

    /// The builder, shared: its messages are sent as the report's `notifier`.
    pub fn sent_as(notifier: Notifier) -> Arc<dyn MessageBuilder> {
        Arc::new(Builder::<C> {
            content: PhantomData,
            notifier: Some(notifier),
        })
    }
}

impl<C: Content + 'static> MessageBuilder for Builder<C> {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let stored = report
            .submission
            .as_ref()
            .ok_or_else(|| BuildError("the report has no payload any more".into()))?;
        let content = C::read(stored, "").map_err(|problems| {
            let reasons: Vec<String> = problems.into_iter().map(|p| p.message).collect();
            BuildError(format!("unreadable submission: {}", reasons.join("; ")))
        })?;
        let message = built(&content)
            .map_err(|e| BuildError(format!("notification could not be built: {e}")))?;
        Ok(match &self.notifier {
            Some(notifier) => notifier.stamp(message, stored),
            None => message,
        })
    }
}

/// The schema of a disease report's result (`labreport`, `hospreport`; spec/02 §2.2, §2.4), as
/// their [`crate::module_layer::Module::result_body`] writes it, for `module`.
pub fn result_schema(module: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "required": ["reportId", "status", "module", "diseaseCode", "description", "submittedAt", "receiptPdf"],
        "properties": {
            "reportId": {"type": "string"},
            "status": {"enum": ["SUCCESS", "FAILURE"]},
            "module": {"const": module},
            "diseaseCode": {"type": ["string", "null"], "description": "The disease's code, set by the form the report was sent with."},
            "description": {"type": ["string", "null"], "description": "The disease, in words."},
            "submittedAt": {"type": "string", "format": "date-time"},
            "receiptPdf": crate::module_layer::openapi::receipt(
                "The receipt of the public health institute; `SUCCESS` only.",
            ),
            "failureReason": {"type": ["string", "null"], "description": "`FAILURE` only."},
        },
    })
}

/// Documents a disease report's result: its schema (`result`, [`result_schema`] as the module
/// narrowed it) and what a 404 for it means (`not_found`, in the module's words).
pub fn document_result(
    doc: &mut crate::module_layer::openapi::ModuleDocument,
    result: Value,
    not_found: &str,
) {
    doc.schema("ReportResult", result);
    let path = doc.api_path("/reports/{id}");
    doc.describe_response("get", &path, "404", not_found);
}

#[cfg(test)]
mod tests {
    use meldewerk_fhir::beds::{self, BedCounts, BedOccupancyReport};
    use meldewerk_fhir::Facility;
    use serde_json::json;

    use super::*;

    /// A content of the tests: a bed report of `{"occupied": n}`.
    struct Beds(u32);

    impl Content for Beds {
        fn read(content: &Value, prefix: &str) -> Result<Self, Vec<DispatchProblem>> {
            let path = format!("{prefix}occupied");
            content[path.as_str()]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .map(Beds)
                .ok_or_else(|| {
                    vec![DispatchProblem {
                        message: "occupied: Pflichtangabe".into(),
                        path: Some(path),
                    }]
                })
        }

        fn bundle(
            &self,
            ids: &mut dyn IdSource,
            now: DateTime<FixedOffset>,
        ) -> Result<Bundle, meldewerk_fhir::BuildError> {
            let report = BedOccupancyReport {
                report_id: "BED-1".into(),
                report_date: None,
                location_id: "987654".into(),
                location: Facility::default(),
                beds: BedCounts {
                    adults_occupied: self.0,
                    adults_operable: None,
                    children_occupied: 0,
                    children_operable: None,
                },
            };
            beds::build(&report, ids, now)
        }
    }

    #[test]
    fn a_content_that_reads_becomes_a_fhir_message_named_by_its_bundle() {
        let message = checked_message::<Beds>(&json!({"occupied": 3}), "").unwrap();
        assert_eq!(message.content_type, "application/fhir+json");
        let body: Value = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(body["resourceType"], "Bundle");
        assert_eq!(body["identifier"]["value"], json!(message.message_uuid));
        assert!(!message.message_uuid.is_empty());
    }

    #[test]
    fn a_content_that_does_not_read_names_its_field() {
        let problems = checked_message::<Beds>(&json!({}), "").unwrap_err();
        assert_eq!(problems[0].path.as_deref(), Some("occupied"));
    }

    #[test]
    fn emails_and_nine_digits() {
        assert!(email("a.b@klinik.de"));
        for bad in ["", "a@b", "@b.de", "a b@c.de", "a@b@c.de", "a@.de", "a@b."] {
            assert!(!email(bad), "{bad}");
        }
        assert!(nine_digits("123456789"));
        assert!(!nine_digits("12345678") && !nine_digits("12345678x"));
    }

    #[test]
    fn the_engine_builds_from_the_stored_submission() {
        let mut report = Report::new_pending(
            meldewerk_storage::ReportKey {
                owner: "u".into(),
                module: "bedreport".into(),
                id: "BED-1".into(),
            },
            json!({"occupied": 5}),
            None,
            "corr".into(),
            Utc::now(),
        );
        let built = Builder::<Beds>::shared().build(&report).unwrap();
        assert_eq!(built.content_type, FHIR_JSON);
        assert_eq!(built.sender, None);
        report.submission = None;
        assert!(Builder::<Beds>::shared().build(&report).is_err());
    }

    #[test]
    fn a_message_sent_as_its_notifier_names_the_bsnr_of_its_content_and_the_environment() {
        let notifier = Notifier {
            bsnr_at: "/Einrichtung/BSNR",
            environment: Environment::Production,
        };
        let content = json!({"occupied": 5, "Einrichtung": {"BSNR": "123456789"}});
        let report = Report::new_pending(
            meldewerk_storage::ReportKey {
                owner: "u".into(),
                module: "bedreport".into(),
                id: "BED-1".into(),
            },
            content.clone(),
            None,
            "corr".into(),
            Utc::now(),
        );
        let sender = Sender {
            bsnr: Bsnr::parse("123456789").unwrap(),
            environment: Environment::Production,
        };
        let built = Builder::<Beds>::sent_as(notifier).build(&report).unwrap();
        assert_eq!(built.sender.as_ref(), Some(&sender));
        let checked = checked_message::<Beds>(&content, "").unwrap();
        assert_eq!(notifier.stamp(checked, &content).sender, Some(sender));
        // No BSNR, or none of nine digits: no sender (the form refuses such a report before).
        assert_eq!(
            notifier.sender(&json!({"Einrichtung": {"BSNR": "12"}})),
            None
        );
        assert_eq!(notifier.sender(&json!({})), None);
    }
}
