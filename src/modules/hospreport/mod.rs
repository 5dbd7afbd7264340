//! `hospreport`: the hospitalisation report to the reporting system (spec/02 §2.3, §2.4, §3,
//! §4.2), a COVID-19 notification of a hospital case (`NotificationBundleDisease`, see
//! `docs/fhir-demis.md`).
//!
//! The reporting system decides at once, and the form waits for it ([`AtOnce`]): accepted, the
//! browser goes to `/hospreport/hospitalisierungsmeldung/success` and the result can be read at
//! once; refused, the form comes again with 400 and the reason, and there is no report. Each
//! report needs the facility's certificate for the configured environment; without one the
//! form says so and sends nothing.

mod content;
mod fields;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use meldewerk_actors::MessageBuilder;
use meldewerk_storage::{Bsnr, Environment, ReportResult, ReportStatus};
use serde_json::{json, Map, Value};

use crate::demis::{self, Builder, Notifier};
use crate::module_layer::context::ModuleContext;
use crate::module_layer::form::message_page;
use crate::module_layer::openapi::{html_page, ModuleDocument};
use crate::module_layer::{
    rfc3339, Checked, Completed, Form, IdMember, Module, ModuleInfo, ModuleSetup, SetupError,
    SignatureRule,
};
use content::Meldung;

/// The form a magic link opens.
const FORM_PATH: &str = "/hospreport/hospitalisierungsmeldung";

/// Where an accepted submit goes (spec/02 §4.2): static and without parameters.
const SUCCESS_PATH: &str = "/hospreport/hospitalisierungsmeldung/success";

/// The one disease hospreport notifies, as results name it (`diseaseCode`).
const DISEASE_CODE: &str = "COVID-19";

/// What results say the report was (`description`).
const DESCRIPTION: &str = "Hospitalisierungsmeldung COVID-19 (§ 6 Abs. 1 IfSG)";

/// One form, unsigned: the reporting system knows the facility by its certificate, and the
/// physician is content, not a signatory (spec/02 §5).
static FORMS: [Form; 1] = [Form::new(
    FORM_PATH,
    "Hospitalisierungsmeldung",
    SignatureRule::SenderCertificate,
)
.report_type(DESCRIPTION)];

/// The module's identity; lazy only because its field table is.
static INFO: LazyLock<ModuleInfo> = LazyLock::new(|| {
    demis::module_info("hospreport", &fields::FIELDS, &FORMS)
        .identified_by(IdMember::Generated(content::MELDE_ID))
        .answering_at_once(SUCCESS_PATH)
});

/// Longest a submit may be configured to wait: a browser or an embedding client gives up
/// sooner (spec/02 §8 suggests 10 to 30 seconds).
const MAX_WAIT_SECS: u64 = 120;

/// `[modules.hospreport]` (beside the layer's `retention_secs`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct Settings {
    /// The reporting system's environment the reports go to, and so the facility certificate
    /// they need: `test` (the default) or `production`.
    environment: Environment,
    /// How long a submit waits for the reporting system's answer, in seconds (default 20).
    answer_wait_secs: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            environment: Environment::Test,
            answer_wait_secs: 20,
        }
    }
}

/// The hospitalisation-report module.
struct Hospreport {
    /// The reporting facility of a report and the configured environment: the certificate its
    /// messages are sent with.
    notifier: Notifier,
    wait: Duration,
}

/// Builds the module from `[modules.hospreport]`.
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings = setup.settings::<Settings>(INFO.module)?;
    if !(1..=MAX_WAIT_SECS).contains(&settings.answer_wait_secs) {
        return Err(SetupError {
            module: INFO.module.into(),
            reason: format!("answer_wait_secs must be from 1 to {MAX_WAIT_SECS}"),
        });
    }
    Ok(Arc::new(Hospreport {
        notifier: Notifier::meldende_einrichtung(settings.environment),
        wait: Duration::from_secs(settings.answer_wait_secs),
    }))
}

/// `GET /hospreport/hospitalisierungsmeldung/success`: the page an accepted submit leads to.
async fn success() -> HttpResponse {
    message_page(
        StatusCode::OK,
        "Hospitalisierungsmeldung übermittelt",
        "Das Meldesystem hat die Meldung angenommen. Die Eingangsbestätigung liegt Ihrem \
         System vor; Sie können dieses Fenster schließen.",
    )
}

impl Module for Hospreport {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        demis::checked_message::<Meldung>(report.content, report.form.prefix)
            .map(|message| self.notifier.stamp(message, report.content))
    }

    fn mandatory_paths(&self, _form: &Form) -> Vec<String> {
        [
            "Patient.Vorname",
            "Patient.Name",
            "KlinischeAngaben.Hospitalisiert",
            "MeldendeEinrichtung.Name",
            "MeldendeEinrichtung.BSNR",
        ]
        .map(String::from)
        .to_vec()
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        Builder::<Meldung>::sent_as(self.notifier)
    }

    fn result_members(&self, _form: &Form, _content: &Value) -> Map<String, Value> {
        let mut members = Map::new();
        members.insert("diseaseCode".into(), json!(DISEASE_CODE));
        members.insert("description".into(), json!(DESCRIPTION));
        members
    }

    /// spec/02 §2.4. Only successful reports are read (the layer answers 404 for others).
    fn result_body(&self, id: &str, result: &ReportResult) -> Option<Value> {
        let member = |name: &str| result.result_members.get(name).cloned();
        Some(json!({
            "reportId": id,
            // The layer answers only successful reports of this module; the state is the
            // result's all the same, so that a body never says more than the store.
            "status": result.status,
            "module": INFO.module,
            "diseaseCode": member("diseaseCode"),
            "description": member("description"),
            "submittedAt": rfc3339(result.submitted_at),
            "receiptPdf": (result.status == ReportStatus::Success)
                .then_some(result.receipt_base64.as_deref())
                .flatten(),
        }))
    }

    fn answer_wait(&self) -> Duration {
        self.wait
    }

    fn required_certificate(&self, content: &Value) -> Option<(Bsnr, Environment)> {
        let sender = self.notifier.sender(content)?;
        Some((sender.bsnr, sender.environment))
    }

    fn routes(&self, cfg: &mut web::ServiceConfig, _context: &web::Data<ModuleContext>) {
        cfg.route(SUCCESS_PATH, web::get().to(success));
    }

    fn document(&self, doc: &mut ModuleDocument) {
        let mut result = demis::result_schema(INFO.module);
        // spec/02 §2.4: only successful reports are results, and they carry no failure.
        result["properties"]["status"] = json!({"const": "SUCCESS"});
        if let Some(properties) = result["properties"].as_object_mut() {
            properties.remove("failureReason");
        }
        let not_found =
            "Not found: also while no submission of the id was accepted, and past retention.";
        demis::document_result(doc, result, not_found);
        doc.operation(
            "get",
            SUCCESS_PATH,
            json!({
                "operationId": "hospreport_success",
                "summary": "Where an accepted report's form leads",
                "responses": {"200": {"description": "The report was accepted.", "content": html_page()}},
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_success_page_is_the_forms_own_and_parameterless() {
        assert_eq!(INFO.at_once.unwrap().success, SUCCESS_PATH);
        assert!(SUCCESS_PATH.starts_with(FORM_PATH));
    }
}
