//! `birthnotice`: birth notification by a hospital to the civil registry office
//! (xPersonenstand `portal2StA.Geburt.081020`), signed or sealed.

mod fields;

use std::sync::Arc;

use meldewerk_xml::xpersonenstand::Geburtsanzeige;
use serde_json::Value;

use crate::module_layer::fields::label;
use crate::module_layer::{
    Checked, Completed, Form, Module, ModuleInfo, ModuleSetup, NoSettings, SetupError,
    SignatureRule,
};
use crate::xpersonenstand::{self as xps, Content, XPersonenstandSettings};

static FORMS: [Form; 1] = [Form::new(
    "/forms/birthnotice",
    "Geburtsanzeige",
    SignatureRule::SealOrEndUser,
)
.report_type("Geburtsanzeige (081020)")];

static INFO: ModuleInfo = xps::module_info("birthnotice", fields::FIELDS, &FORMS)
    .with_mock_ids("BIRTHNOTICE")
    .echoing_client_reference();

/// The birth-notice module.
struct Birthnotice(XPersonenstandSettings);

/// Builds the module (`[modules.birthnotice]` has only the layer's `retention_secs`).
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    setup.settings::<NoSettings>(INFO.module)?;
    Ok(Arc::new(Birthnotice(XPersonenstandSettings::read(setup)?)))
}

impl Content for Geburtsanzeige {
    fn read(content: &Value, _prefix: &str) -> Result<Self, String> {
        xps::read_whole(content)
    }
}

impl Module for Birthnotice {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        let label = |path: &str| label(INFO.fields, path).to_owned();
        xps::checked_message::<Geburtsanzeige>(report, INFO.fields, label, &self.0)
    }

    xps::message_methods!(Geburtsanzeige, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        crate::module_layer::fields::assert_table_fits::<Geburtsanzeige>(fields::FIELDS, "");
    }
}
