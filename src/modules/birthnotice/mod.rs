//! `birthnotice`: birth notification by a hospital to the civil registry office
//! (xPersonenstand `portal2StA.Geburt.081020`), signed or sealed.

mod fields;
mod message;

use std::sync::Arc;
use std::time::Duration;

use meldewerk_actors::MessageBuilder;
use meldewerk_xml::xpersonenstand::Geburtsanzeige;
use serde::Deserialize;
use serde_json::Value;

use crate::module_layer::{
    DispatchProblem, ErrorStyle, ExpiredAnswer, Form, Module, ModuleInfo, ModuleSetup, SetupError,
    SignatureRule,
};
use crate::xpersonenstand::XPersonenstandSettings;

static INFO: ModuleInfo = ModuleInfo {
    segment: "birthnotice",
    mock_prefix: Some("BIRTHNOTICE"),
    echoes_client_reference: true,
    fields: fields::FIELDS,
    forms: &[Form {
        path: "/forms/birthnotice",
        prefix: "",
        title: "Geburtsanzeige",
        submit: "Geburtsanzeige absenden",
        sent_title: "Geburtsanzeige abgesendet",
        sent_text: "Die Anzeige {id} wurde zur Übermittlung an das Standesamt übergeben. \
                    Sie können dieses Fenster schließen.",
        signature: SignatureRule::SealOrEndUser,
    }],
    transport: "xpersonenstand",
    expired: ExpiredAnswer::Gone,
};

/// `[modules.birthnotice]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    /// Seconds a final result keeps its payload before reads answer 410 report-expired.
    retention_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            retention_secs: 30 * 24 * 3600,
        }
    }
}

/// The birth-notice module.
struct Birthnotice {
    settings: Settings,
    xpersonenstand: XPersonenstandSettings,
}

/// Builds the module from its configuration section.
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    Ok(Arc::new(Birthnotice {
        settings: setup.settings(INFO.segment)?,
        xpersonenstand: setup.xpersonenstand.clone(),
    }))
}

impl Module for Birthnotice {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn error_style(&self) -> &ErrorStyle {
        &ErrorStyle::Plain
    }

    fn retention(&self) -> Option<Duration> {
        Some(Duration::from_secs(self.settings.retention_secs))
    }

    fn check_dispatch(&self, _form: &Form, content: &Value) -> Vec<DispatchProblem> {
        let anzeige = match serde_json::from_value::<Geburtsanzeige>(content.clone()) {
            Ok(anzeige) => anzeige,
            Err(e) => {
                return vec![DispatchProblem {
                    path: None,
                    message: format!("Die Angaben passen nicht zusammen: {e}"),
                }]
            }
        };
        let missing = anzeige.missing_for_dispatch();
        if !missing.is_empty() {
            return missing
                .into_iter()
                .map(|path| DispatchProblem {
                    path: Some(path.to_owned()),
                    message: format!("{}: Pflichtangabe", fields::label(path)),
                })
                .collect();
        }
        match message::write(&anzeige, &self.xpersonenstand) {
            Ok(_) => Vec::new(),
            Err(e) => vec![DispatchProblem {
                path: None,
                message: format!("Die Anzeige kann so nicht übermittelt werden: {e}"),
            }],
        }
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        Arc::new(message::Builder {
            settings: self.xpersonenstand.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        crate::module_layer::fields::assert_table_fits::<Geburtsanzeige>(fields::FIELDS, "");
    }
}
