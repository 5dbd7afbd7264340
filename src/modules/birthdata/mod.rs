//! `birthdata`: the parents' supplementary birth data for the civil registry office
//! (xPersonenstand `portal2StA.Geburt.081021`), paired with the hospital's birth notice (081020)
//! through `zuordnungGeburtsanzeige`. Errors are RFC 9457 problem details.

mod fields;

use std::sync::{Arc, LazyLock};

use meldewerk_xml::xpersonenstand::Geburtsdaten;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::module_layer::fields::{at_most_one, label};
use crate::module_layer::{
    Checked, Completed, ErrorStyle, Form, Module, ModuleInfo, ModuleSetup, SetupError,
    SignatureRule, Violation,
};
use crate::xpersonenstand::{self as xps, Content, XPersonenstandSettings};

/// The parents' data carry no declaration of their own (the hospital's notice does): the portal
/// signs them as sender.
static FORMS: [Form; 1] = [Form::new(
    "/forms/birthdata",
    "Geburtsdaten der Eltern",
    SignatureRule::Portal,
)
.report_type("Geburtsdaten der Eltern (081021)")];

/// The module's identity; lazy only because its field table is.
static INFO: LazyLock<ModuleInfo> =
    LazyLock::new(|| xps::module_info("birthdata", &fields::FIELDS, &FORMS));

/// `[modules.birthdata]` (besides the layer's `retention_secs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Settings {
    /// Base of the problem type URIs (`{problems_base}/problems/validation-error`); the service's
    /// base URL when not set.
    problems_base: Option<String>,
}

/// The birth-data module.
struct Birthdata {
    xpersonenstand: XPersonenstandSettings,
    style: ErrorStyle,
}

/// Builds the module from its configuration section `[modules.birthdata]`.
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings: Settings = setup.settings(INFO.module)?;
    let base = settings
        .problems_base
        .unwrap_or_else(|| setup.base_url.to_owned());
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(SetupError {
            module: INFO.module.into(),
            reason: format!("problems_base must be an http(s) URL, got {base}"),
        });
    }
    Ok(Arc::new(Birthdata {
        xpersonenstand: XPersonenstandSettings::read(setup)?,
        style: ErrorStyle::Problem {
            base: base.trim_end_matches('/').to_owned(),
        },
    }))
}

impl Content for Geburtsdaten {
    fn read(content: &Value, _prefix: &str) -> Result<Self, String> {
        xps::read_whole(content)
    }
}

/// The choices of the schema: at most one branch each (the form asks for one before dispatch).
const CHOICES: &[(&str, &[&str])] = &[
    ("anschriftAutor", &["gebaeude", "postfach"]),
    (
        "zustaendigeElterngeldstelle.anschrift",
        &["gebaeude", "postfach"],
    ),
    (
        "mutter.staatsangehoerigkeit",
        &["code", "nichtGelisteterWert"],
    ),
    (
        "mutter.weitereStaatsangehoerigkeit",
        &["code", "nichtGelisteterWert"],
    ),
    (
        "elternteil2.staatsangehoerigkeit",
        &["code", "nichtGelisteterWert"],
    ),
    (
        "elternteil2.weitereStaatsangehoerigkeit",
        &["code", "nichtGelisteterWert"],
    ),
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

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        let label = |path: &str| label(INFO.fields, path).to_owned();
        xps::checked_message::<Geburtsdaten>(report, INFO.fields, label, &self.xpersonenstand)
    }

    xps::message_methods!(Geburtsdaten, xpersonenstand);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        crate::module_layer::fields::assert_table_fits::<Geburtsdaten>(&fields::FIELDS, "");
    }
}
