//! `birthdata`: the parents' supplementary birth data for the civil registry office
//! (xPersonenstand `portal2StA.Geburt.081021`), paired with the hospital's birth notice (081020)
//! through `zuordnungGeburtsanzeige`. Errors are RFC 9457 problem details.

mod fields;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_xml::xpersonenstand::{write_geburt_081021, Geburtsdaten, XmlError};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::module_layer::fields::{at_most_one, label};
use crate::module_layer::{
    DispatchProblem, ErrorStyle, ExpiredAnswer, Form, Module, ModuleInfo, ModuleSetup,
    SetupError, SignatureRule, Violation,
};
use crate::xpersonenstand::XPersonenstandSettings;

static INFO: LazyLock<ModuleInfo> = LazyLock::new(|| ModuleInfo {
    segment: "birthdata",
    mock_prefix: None,
    echoes_client_reference: false,
    fields: fields::FIELDS.as_slice(),
    forms: &[Form {
        path: "/forms/birthdata",
        prefix: "",
        title: "Geburtsdaten der Eltern",
        submit: "Daten absenden",
        sent_title: "Geburtsdaten abgesendet",
        sent_text: "Die Daten {id} wurden zur Übermittlung an das Standesamt übergeben. \
                    Sie können dieses Fenster schließen.",
        // The parents' data carry no declaration of their own (the hospital's notice does): the
        // portal signs them as sender.
        signature: SignatureRule::Portal,
    }],
    transport: "xpersonenstand",
    expired: ExpiredAnswer::Gone,
});

/// `[modules.birthdata]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    /// Seconds a final result keeps its payload before reads answer 410 report-expired; 30 days
    /// when not set.
    retention_secs: Option<u64>,
    /// Base of the problem type URIs (`{problems_base}/problems/validation-error`); the service's
    /// base URL when not set.
    problems_base: Option<String>,
}

/// The birth-data module.
struct Birthdata {
    retention: Duration,
    style: ErrorStyle,
    xpersonenstand: XPersonenstandSettings,
}

/// Builds the module from its configuration section.
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings: Settings = setup.settings(INFO.segment)?;
    let base = settings
        .problems_base
        .unwrap_or_else(|| setup.base_url.to_owned());
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(SetupError {
            module: INFO.segment.into(),
            reason: format!("problems_base must be an http(s) URL, got {base}"),
        });
    }
    Ok(Arc::new(Birthdata {
        retention: Duration::from_secs(settings.retention_secs.unwrap_or(30 * 24 * 3600)),
        style: ErrorStyle::Problem {
            base: base.trim_end_matches('/').to_owned(),
        },
        xpersonenstand: setup.xpersonenstand.clone(),
    }))
}

/// The choices of the schema: at most one branch each (the form asks for one before dispatch).
const CHOICES: &[(&str, &[&str])] = &[
    ("anschriftAutor", &["gebaeude", "postfach"]),
    ("zustaendigeElterngeldstelle.anschrift", &["gebaeude", "postfach"]),
    ("mutter.staatsangehoerigkeit", &["code", "nichtGelisteterWert"]),
    ("mutter.weitereStaatsangehoerigkeit", &["code", "nichtGelisteterWert"]),
    ("elternteil2.staatsangehoerigkeit", &["code", "nichtGelisteterWert"]),
    ("elternteil2.weitereStaatsangehoerigkeit", &["code", "nichtGelisteterWert"]),
    ("kind.name.familienname", &["name", "nichtVorhanden"]),
    ("kind.name.vornamen", &["name", "nichtVorhanden"]),
];

impl Module for Birthdata {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn error_style(&self) -> &ErrorStyle {
        &self.style
    }

    fn retention(&self) -> Option<Duration> {
        Some(self.retention)
    }

    fn check_request(&self, request: &Map<String, Value>) -> Vec<Violation> {
        let mut violations: Vec<Violation> = CHOICES
            .iter()
            .filter_map(|(path, members)| at_most_one(request, path, members))
            .collect();
        let ehe = request.get("ehe").is_some_and(|v| !v.is_null());
        let verheiratet = request.get("elternVerheiratet") == Some(&Value::Bool(true));
        if ehe && !verheiratet {
            violations.push(Violation::whole(
                "ehe may only be given together with elternVerheiratet: true",
            ));
        }
        violations
    }

    fn check_dispatch(&self, _form: &Form, content: &Value) -> Vec<DispatchProblem> {
        let daten = match serde_json::from_value::<Geburtsdaten>(content.clone()) {
            Ok(daten) => daten,
            Err(e) => return vec![problem(None, format!("Die Angaben passen nicht zusammen: {e}"))],
        };
        let missing = daten.missing_for_dispatch();
        if !missing.is_empty() {
            return missing
                .into_iter()
                .map(|path| {
                    let message = format!("{}: Pflichtangabe", label(INFO.fields, path));
                    problem(Some(path), message)
                })
                .collect();
        }
        match write(&daten, &self.xpersonenstand) {
            Ok(_) => Vec::new(),
            Err(XmlError::InvalidValue { field, reason }) => {
                let message = format!("{}: {reason}", label(INFO.fields, field));
                vec![problem(Some(field), message)]
            }
            Err(e) => vec![problem(
                None,
                format!("Die Daten können so nicht übermittelt werden: {e}"),
            )],
        }
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        Arc::new(Builder {
            settings: self.xpersonenstand.clone(),
        })
    }
}

fn problem(path: Option<&str>, message: String) -> DispatchProblem {
    DispatchProblem {
        path: path.map(str::to_owned),
        message,
    }
}

/// Writes the data with a fresh header; returns the message UUID and the XML.
fn write(daten: &Geburtsdaten, settings: &XPersonenstandSettings) -> Result<(String, String), XmlError> {
    let kopf = settings.header(None);
    let xml = write_geburt_081021(&kopf, daten)?;
    Ok((kopf.nachrichten_uuid.to_string(), xml))
}

/// The engine's builder for `birthdata` reports.
struct Builder {
    settings: XPersonenstandSettings,
}

impl MessageBuilder for Builder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let daten: Geburtsdaten = crate::module_layer::submission(report)?;
        let (message_uuid, xml) = write(&daten, &self.settings)
            .map_err(|e| BuildError(format!("message could not be built: {e}")))?;
        Ok(BuiltMessage {
            message_uuid,
            content_type: "application/xml".into(),
            body: xml.into_bytes(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        crate::module_layer::fields::assert_table_fits::<Geburtsdaten>(&fields::FIELDS, "");
    }
}
