//! `labreport`: a laboratory's notification of a pathogen detection to the national
//! infectious-disease reporting system (spec/02, contract 0.3.0), as DEMIS'
//! `NotificationBundleLaboratory`.
//!
//! The memento is disease-agnostic (patient, reporting facility, dates, `reportId`); its magic
//! link lands on the disease index `/labreport/?m=…` (the layer's form index), where the end user picks one
//! of the four disease forms `/labreport/<Disease>/?m=…`, each adding that disease's findings.
//! The reporting facility (`MeldendeEinrichtung.BSNR`) must resolve in the facility registry,
//! within the scope of the API user's customer, at memento creation and again at the submit;
//! its name and address come from the registry. Results (§2.2) are kept 3 days, then 404.
//!
//! Reports are sent as their laboratory: the certificate deposited for
//! `MeldendeEinrichtung.BSNR` in `[modules.labreport] environment`. Unlike `hospreport`'s
//! form, the submit does not check that one is deposited: the report is queued, and a missing
//! certificate is the delivery's error, retried until one is deposited or the attempts run out
//! (docs/decisions.md, "The laboratory's certificate, and the bed report's").

mod content;
mod fields;

use std::sync::{Arc, LazyLock};

use actix_web::{web, HttpResponse};
use meldewerk_actors::MessageBuilder;
use meldewerk_fhir::codes::Disease;
use meldewerk_storage::{ReportResult, ReportStatus, StoreError};
use serde_json::{json, Map, Value};

use crate::demis::{self, Notifier, SendingSettings};
use crate::facilities::{resolve, Unresolved};
use crate::module_layer::context::ModuleContext;
use crate::module_layer::errors::ModuleError;
use crate::module_layer::form::index::{FormIndex, IndexEntry};
use crate::module_layer::openapi::ModuleDocument;
use crate::module_layer::{
    rfc3339, ApiError, Checked, Completed, DispatchProblem, ErrorStyle, Form, IdMember, LookUp,
    Module, ModuleInfo, ModuleSetup, SetupError, SignatureRule, Subject, Violation,
};
use content::{mixed_patient, Laborbefund, KRANKHEIT, MANDATORY, REGISTER, REPORT_ID};

/// The module's name and path segment.
const MODULE: &str = "labreport";

/// Where magic links land: the disease index.
const INDEX: &str = "/labreport/";

/// The path of each disease's form, in the order of [`Disease::ALL`].
const FORM_PATHS: [&str; 4] = [
    "/labreport/Influenza/",
    "/labreport/Rsv/",
    "/labreport/Norovirus/",
    "/labreport/Sarscov2/",
];

/// The heading of each disease's form, in the order of [`Disease::ALL`].
const TITLES: [&str; 4] = [
    "Erregernachweis Influenza",
    "Erregernachweis RSV",
    "Erregernachweis Norovirus",
    "Erregernachweis SARS-CoV-2",
];

/// One form per disease, unsigned: the reporting system attributes each notification to the
/// facility through its certificate, and the report names its reporting person (spec/02 §5); no
/// personal signature is asked of the end user.
static FORMS: LazyLock<[Form; 4]> = LazyLock::new(|| {
    std::array::from_fn(|i| {
        Form::new(FORM_PATHS[i], TITLES[i], SignatureRule::SenderCertificate)
            .report_type("Erregernachweismeldung (§ 7 IfSG)")
            .with_own_fields(fields::FINDINGS[i])
    })
});

/// The module's identity; lazy only because its forms are.
static INFO: LazyLock<ModuleInfo> = LazyLock::new(|| {
    demis::module_info(MODULE, fields::FIELDS, &*FORMS)
        .identified_by(IdMember::Required("reportId"))
        .landing_at(INDEX)
});

/// The laboratory-report module.
struct Labreport {
    /// The base of its problem types (the 409 of a used `reportId`).
    problems_base: String,
    /// The laboratory of a report and the configured environment: the certificate its
    /// messages are sent with.
    notifier: Notifier,
}

/// Builds the module from `[modules.labreport]` (`environment`, beside the layer's
/// `retention_secs`).
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings = setup.settings::<SendingSettings>(MODULE)?;
    Ok(Arc::new(Labreport {
        problems_base: setup.base_url.trim_end_matches('/').to_owned(),
        notifier: Notifier::meldende_einrichtung(settings.environment),
    }))
}

/// The disease of a form of the module.
fn disease_of(form: &Form) -> Option<Disease> {
    let index = FORMS.iter().position(|f| std::ptr::eq(f, form))?;
    Some(Disease::ALL[index])
}

/// The member holding a submission's disease, and where the report id goes: both are added at
/// the submit, never taken from a request.
fn complete(content: &mut Map<String, Value>, id: &str, disease: Disease) {
    content.insert(REPORT_ID.into(), json!(id));
    content.insert(KRANKHEIT.into(), json!(disease.code()));
}

#[async_trait::async_trait]
impl Module for Labreport {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn check_request(&self, request: &Map<String, Value>) -> Vec<Violation> {
        let patient = request.get("Patient").and_then(Value::as_object);
        let given = |member: &str| {
            patient
                .and_then(|p| p.get(member))
                .is_some_and(|v| !v.is_null())
        };
        let anonymous = patient
            .and_then(|p| p.get("IsAnonym"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        mixed_patient(anonymous, given("Standard"), given("Anonym"))
            .map(|(member, rule)| {
                Violation::at(
                    format!("/{}", member.replace('.', "/")),
                    format!("{member} {rule}"),
                )
            })
            .into_iter()
            .collect()
    }

    fn form_for(&self, data: &Value) -> Option<&'static Form> {
        // A submission says its disease; a memento has none and opens the first form (its
        // link lands on the index, see `landing_at`).
        let disease = data[KRANKHEIT].as_str().and_then(Disease::from_code);
        let index = disease.map_or(0, |d| {
            Disease::ALL.iter().position(|x| *x == d).unwrap_or(0)
        });
        FORMS.get(index)
    }

    fn opens(&self, form: &Form, _memento: &Value) -> bool {
        // The memento is disease-agnostic: the end user picks the form.
        disease_of(form).is_some()
    }

    async fn look_up(
        &self,
        look_up: LookUp<'_>,
        mut subject: Subject<'_>,
    ) -> Result<Vec<DispatchProblem>, StoreError> {
        if let Subject::Submitted { form, content } = &mut subject {
            if let Some(disease) = disease_of(form) {
                complete(content, look_up.id, disease);
            }
            content.remove(REGISTER);
        }
        let bsnr = subject
            .content()
            .get("MeldendeEinrichtung")
            .and_then(|e| e.get("BSNR"))
            .and_then(Value::as_str);
        let Some(bsnr) = bsnr else {
            return Ok(Vec::new());
        };
        let path = meldewerk_storage::REPORTING_FACILITY_FIELD;
        match resolve(look_up.store, look_up.user, bsnr).await {
            Ok(facility) => {
                if let Subject::Submitted { content, .. } = &mut subject {
                    content.insert(
                        REGISTER.into(),
                        json!({
                            "Name": facility.name,
                            "IK": facility.ik.as_str(),
                            "Adresse": {
                                "Strasse": facility.address.street,
                                "PLZ": facility.address.postal_code,
                                "Stadt": facility.address.city,
                                "Land": facility.address.country,
                            },
                        }),
                    );
                }
                Ok(Vec::new())
            }
            Err(Unresolved::Refused(message)) => Ok(vec![DispatchProblem {
                path: Some(path.to_owned()),
                message: match subject.form() {
                    // The API's entry names the field (spec/02 §5); the form says it in German.
                    None => message,
                    Some(_) => format!(
                        "Betriebsstättennummer (BSNR): Für diese Einrichtung kann über Ihren \
                         Zugang nicht gemeldet werden ({message})"
                    ),
                },
            }]),
            Err(Unresolved::Store(e)) => Err(e),
        }
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        // The content carries its `reportId` already (added at the look-up, so that the stored
        // submission has it for the engine's builder too).
        demis::checked_message::<Laborbefund>(report.content, "")
            .map(|message| self.notifier.stamp(message, report.content))
    }

    fn mandatory_paths(&self, _form: &Form) -> Vec<String> {
        MANDATORY.iter().map(|p| (*p).to_owned()).collect()
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        demis::Builder::<Laborbefund>::sent_as(self.notifier)
    }

    fn result_members(&self, form: &Form, _content: &Value) -> Map<String, Value> {
        let mut members = Map::new();
        if let Some(disease) = disease_of(form) {
            members.insert("diseaseCode".into(), json!(disease.code()));
        }
        members
    }

    fn pending_is_a_result(&self) -> bool {
        // A result exists once the reporting system decided (spec/02 §3): before, 404.
        false
    }

    fn result_body(&self, id: &str, result: &ReportResult) -> Option<Value> {
        let disease = result.result_members.get("diseaseCode").cloned();
        let description = disease
            .as_ref()
            .and_then(Value::as_str)
            .and_then(Disease::from_code)
            .and_then(|d| Disease::ALL.iter().position(|x| *x == d))
            .map(|i| TITLES[i]);
        let success = result.status == ReportStatus::Success;
        let failure = result.status == ReportStatus::Failure;
        Some(json!({
            "reportId": id,
            "status": result.status,
            "module": MODULE,
            "diseaseCode": disease,
            "description": description,
            "submittedAt": rfc3339(result.submitted_at),
            "receiptPdf": if success { result.receipt_base64.as_deref() } else { None },
            "failureReason": if failure { result.failure_reason.as_deref() } else { None },
        }))
    }

    fn duplicate_answer(&self, id: &str, request_path: &str) -> Option<HttpResponse> {
        // The form answers the layer's problem of a used id, as a JSON API of the module would.
        let problem = ModuleError {
            error: ApiError::Duplicate(id.to_owned()),
            style: ErrorStyle::Problem {
                base: self.problems_base.clone(),
            },
            module: MODULE,
            instance: request_path.to_owned(),
        };
        Some(actix_web::ResponseError::error_response(&problem))
    }

    fn routes(&self, cfg: &mut web::ServiceConfig, context: &web::Data<ModuleContext>) {
        let entries = Disease::ALL
            .iter()
            .enumerate()
            .map(|(i, disease)| IndexEntry {
                path: FORM_PATHS[i],
                label: TITLES[i],
                note: None,
                key: disease.code(),
            })
            .collect();
        let index = FormIndex {
            title: "Erregernachweis melden",
            intro: "Bitte wählen Sie den Erreger, dessen Nachweis Sie melden:",
            entries,
        };
        crate::module_layer::form::index::configure(cfg, context, INDEX, index);
    }

    fn document(&self, doc: &mut ModuleDocument) {
        let mut result = demis::result_schema(MODULE);
        result["required"]
            .as_array_mut()
            .expect("required members")
            .push(json!("failureReason"));
        result["properties"]["diseaseCode"]["enum"] = Disease::ALL
            .iter()
            .map(|d| json!(d.code()))
            .chain([Value::Null])
            .collect();
        // A result exists once the reporting system decided: before, 404 (not PENDING).
        let not_found = "Not found: also while the reporting system has not decided.";
        demis::document_result(doc, result, not_found);
    }
}

#[cfg(test)]
mod tests {
    use meldewerk_storage::Environment;

    use super::*;

    fn module() -> Labreport {
        Labreport {
            problems_base: String::new(),
            notifier: Notifier::meldende_einrichtung(Environment::Test),
        }
    }

    #[test]
    fn each_disease_has_its_form_in_the_order_of_the_index() {
        for (i, disease) in Disease::ALL.into_iter().enumerate() {
            assert_eq!(disease_of(&FORMS[i]), Some(disease));
            assert_eq!(FORMS[i].path, format!("/labreport/{}/", disease.code()));
            let submission = json!({ KRANKHEIT: disease.code() });
            let module = module();
            assert!(std::ptr::eq(
                module.form_for(&submission).unwrap(),
                &FORMS[i]
            ));
        }
    }

    #[test]
    fn a_request_mixing_the_patients_two_shapes_names_the_member() {
        let module = module();
        let check = |v: Value| module.check_request(v.as_object().unwrap());
        assert!(check(json!({"Patient": {"Standard": {}}})).is_empty());
        assert!(check(json!({"Patient": {"IsAnonym": true, "Anonym": {}}})).is_empty());
        let mixed = check(json!({"Patient": {"IsAnonym": true, "Standard": {}}}));
        assert_eq!(mixed[0].pointer.as_deref(), Some("/Patient/Standard"));
        let anonym = check(json!({"Patient": {"Anonym": {}}}));
        assert!(anonym[0]
            .detail
            .starts_with("Patient.Anonym must not be given"));
    }
}
