//! `bedreport`: the bed occupancy report of a hospital location to the reporting system (DEMIS
//! `ReportBundle` with `StatisticInformationBedOccupancy`), in two ways: a memento that
//! pre-fills the form `/bedreport/pm/De/Bettenbelegung`, which the end user sends, or a direct
//! submission (`POST /api/bedreport/v1/report`) answered with the reporting system's decision.
//! Results are read at `GET /api/bedreport/v1/status/{reportId}` ([`api`]).

mod api;
mod content;
mod fields;

use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use meldewerk_actors::MessageBuilder;
use meldewerk_storage::ReportResult;
use serde_json::Value;

use crate::demis;
use crate::module_layer::fields::label;
use crate::module_layer::openapi::ModuleDocument;
use crate::module_layer::{
    Checked, Completed, DispatchProblem, Form, IdMember, Module, ModuleInfo, ModuleSetup,
    SetupError, SignatureRule,
};
use content::{missing, Bettenbelegung};

/// The name of the form, and of every bed occupancy report in results (`formName`).
const FORM_NAME: &str = "Bettenbelegung";

/// One form, unsigned: the reporting system knows the sender by the client certificate the
/// transport presents (the service's own: bedreport sends as no facility).
static FORMS: [Form; 1] = [Form::new(
    "/bedreport/pm/De/Bettenbelegung",
    "Bettenbelegung",
    SignatureRule::SenderCertificate,
)
.report_type("Bericht (Krankenhausbettenbelegungsstatistik)")];

static INFO: ModuleInfo = demis::module_info("bedreport", fields::FIELDS, &FORMS)
    .identified_by(IdMember::Required("reportId"))
    .answering_memento_only();

/// `[modules.bedreport]`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct BedreportSettings {
    /// How long `POST /report` waits for the reporting system's decision before it answers 202
    /// (the report goes on in the engine), in seconds. Default 20: inside the 10 to 30 seconds
    /// the contract suggests as a client's timeout.
    answer_wait_secs: u64,
}

impl Default for BedreportSettings {
    fn default() -> Self {
        BedreportSettings {
            answer_wait_secs: 20,
        }
    }
}

/// Longest `answer_wait_secs`: past five minutes every client and proxy has given up, and the
/// request would only hold a connection.
const MAX_ANSWER_WAIT_SECS: u64 = 300;

/// The bed occupancy module.
struct Bedreport {
    /// How long a direct submission waits for the decision.
    answer_wait: Duration,
}

/// Builds the module from `[modules.bedreport]` (`answer_wait_secs`, and the layer's
/// `retention_secs`).
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings: BedreportSettings = setup.settings(INFO.module)?;
    // Not 0 either: a submission that never waits would always answer 202, even for a
    // decision the reporting system gives at once.
    if !(1..=MAX_ANSWER_WAIT_SECS).contains(&settings.answer_wait_secs) {
        return Err(SetupError {
            module: INFO.module.to_owned(),
            reason: format!("answer_wait_secs must be from 1 to {MAX_ANSWER_WAIT_SECS}"),
        });
    }
    Ok(Arc::new(Bedreport {
        answer_wait: Duration::from_secs(settings.answer_wait_secs),
    }))
}

impl Module for Bedreport {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        let problems: Vec<DispatchProblem> = missing(report.content)
            .into_iter()
            .map(|m| DispatchProblem {
                message: format!("{}: Pflichtangabe", label(INFO.fields, m.path)),
                path: Some(m.path.to_owned()),
            })
            .collect();
        if !problems.is_empty() {
            return Err(problems);
        }
        let general = |message: String| {
            vec![DispatchProblem {
                path: None,
                message: format!("Der Bericht kann so nicht übermittelt werden: {message}"),
            }]
        };
        let input = Bettenbelegung::read(report.content)
            .and_then(|content| content.report(report.id))
            .map_err(general)?;
        content::message(&input).map_err(general)
    }

    fn mandatory_paths(&self, _form: &Form) -> Vec<String> {
        fields::DETAILS
            .iter()
            .chain(fields::OCCUPIED.iter())
            .map(|path| (*path).to_owned())
            .collect()
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        Arc::new(content::Builder)
    }

    fn result_body(&self, id: &str, result: &ReportResult) -> Option<Value> {
        Some(api::status_body(id, result))
    }

    fn api_routes(&self, cfg: &mut web::ServiceConfig) {
        api::configure(cfg, self.answer_wait);
    }

    fn document(&self, doc: &mut ModuleDocument) {
        api::document(doc);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_wait_for_the_decision_is_bounded() {
        let wait = |secs: u64| {
            let mut section = figment::value::Dict::new();
            section.insert("answer_wait_secs".into(), secs.into());
            section.insert("retention_secs".into(), 60u64.into());
            let sections = [("bedreport".to_owned(), figment::value::Value::from(section))]
                .into_iter()
                .collect();
            let setup = ModuleSetup {
                sections: &sections,
                read: Default::default(),
                base_url: "http://localhost",
                data_dir: std::path::Path::new("data"),
            };
            build(&setup).map(|_| ()).map_err(|e| e.to_string())
        };
        assert_eq!(wait(1), Ok(()));
        assert_eq!(wait(300), Ok(()));
        for out in [0, 301] {
            assert_eq!(
                wait(out),
                Err("modules.bedreport: answer_wait_secs must be from 1 to 300".to_owned())
            );
        }
    }

    #[test]
    fn every_field_path_is_a_member_of_the_typed_model() {
        crate::module_layer::fields::assert_table_fits::<Bettenbelegung>(fields::FIELDS, "");
    }

    #[test]
    fn a_report_needs_the_location_and_the_occupied_beds_only() {
        let complete = json!({
            "StandortId": "987654", "IK_Nummer": "261101015", "Standortname": "Klinikum",
            "Strasse": "Weg", "Hausnummer": "1", "PLZ": "10115", "Ort": "Berlin",
            "numbers": {"kinder_betten_belegt": 0, "erwachsenen_betten_belegt": 3}
        });
        assert_eq!(missing(&complete), []);
        let paths =
            |value: &Value| -> Vec<&str> { missing(value).iter().map(|m| m.path).collect() };
        assert_eq!(
            paths(&json!({"Standortname": " ", "numbers": {"kinder_betten_belegt": 1}})),
            [
                "StandortId",
                "IK_Nummer",
                "Standortname",
                "Strasse",
                "Hausnummer",
                "PLZ",
                "Ort",
                "numbers.erwachsenen_betten_belegt"
            ]
        );
        assert!(missing(&json!({})).iter().any(|m| m.path == "numbers"));
    }
}
