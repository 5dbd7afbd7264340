//! `guardianship`: court messages of the electronic court mailbox (EGVP), and pre-filled court
//! forms (spec/03).
//!
//! Reading: the engine syncs every mailbox account in the store and hydrates each message into
//! a ZIP archive ([`archives`]); integrators list, download and acknowledge them ([`api`]).
//! Sending: a memento pre-fills one of three court forms; its submit builds an XJustiz
//! `nachricht.gds.uebermittlungSchriftgutobjekte.0005005` with the completed form as a PDF
//! ([`message`]) and the engine sends it through the mailbox account the memento names.

mod api;
mod archives;
mod fields;
mod message;
mod pdf;
mod settings;

use std::sync::Arc;

use actix_web::web;
use meldewerk_actors::{MailboxReading, MessageBuilder, ReadingSettings};
use meldewerk_storage::{MailboxAccountId, MailboxRefusal, Report, Store, StoreError};
use serde_json::{json, Map, Value};

use crate::module_layer::context::ModuleContext;
use crate::module_layer::errors::Violation;
use crate::module_layer::fields::{label, text_at};
use crate::module_layer::form::{self, index::FormIndex, index::IndexEntry};
use crate::module_layer::{
    Checked, Completed, DispatchProblem, ErrorStyle, Form, IdMember, LookUp, Module, ModuleInfo,
    ModuleSetup, SetupError, SignatureRule, Subject,
};
use archives::Archives;
use settings::GuardianshipSettings;

/// The job id the contract reserves for tests: always treated as used already.
pub(crate) const RESERVED_JOB_ID: &str = "00000000-0000-0000-0000-000000000001";

static FORMS: [Form; 3] = [
    Form::new(
        "/guardianship/BetreuungAnregung",
        "Anregung einer Betreuung",
        SignatureRule::Portal,
    )
    .report_type("Anregung einer rechtlichen Betreuung (§ 1814 BGB)"),
    Form::new(
        "/guardianship/UnterbringungAntrag",
        "Antrag auf Unterbringung",
        SignatureRule::Portal,
    )
    .report_type("Antrag auf Genehmigung einer Unterbringung (§ 1831 BGB)"),
    Form::new(
        "/guardianship/FreiheitsentzugAntrag",
        "Antrag auf Freiheitsentziehung",
        SignatureRule::Portal,
    )
    .report_type("Antrag auf Genehmigung freiheitsentziehender Maßnahmen (§ 1831 Abs. 4 BGB)"),
];

/// Where a magic link lands: the end user picks one of the three forms.
const INDEX: &str = "/guardianship/";

static INFO: ModuleInfo = ModuleInfo::new("guardianship", fields::FIELDS, &FORMS, "egvp")
    .identified_by(IdMember::Required("jobId"))
    .landing_at(INDEX);

/// The member the sending account's id is in.
const ACCOUNT_FIELD: &str = "absender.egvp_account_id";

/// What a form's submit needs beyond the field table's checks.
const MANDATORY: &[&str] = &[
    "absender.name",
    ACCOUNT_FIELD,
    "empfaenger.name",
    "empfaenger.type",
    "empfaenger.safeId",
    "betroffener.name.nachname",
];

/// The guardianship module.
struct Guardianship {
    archives: Archives,
    reading: ReadingSettings,
}

/// Builds the module from `[modules.guardianship]` ([`settings`]).
pub fn build(setup: &ModuleSetup) -> Result<Arc<dyn Module>, SetupError> {
    let settings: GuardianshipSettings = setup.settings(INFO.module)?;
    let setup_error = |reason| SetupError {
        module: INFO.module.to_owned(),
        reason,
    };
    let reading = settings.reading().map_err(setup_error)?;
    let folder = settings
        .archive_folder(setup.data_dir)
        .map_err(setup_error)?;
    Ok(Arc::new(Guardianship {
        archives: Archives::at(folder),
        reading,
    }))
}

/// The folder of the court messages' archives as `[modules.guardianship]` in `sections` names
/// it (or the data directory's), for the command line, which has no module built.
pub(crate) fn archive_folder(
    sections: &std::collections::BTreeMap<String, figment::value::Value>,
    data_dir: &std::path::Path,
) -> Result<std::path::PathBuf, SetupError> {
    let setup = ModuleSetup {
        sections,
        read: Default::default(),
        base_url: "",
        data_dir,
    };
    let settings: GuardianshipSettings = setup.settings(INFO.module)?;
    settings
        .archive_folder(data_dir)
        .map_err(|reason| SetupError {
            module: INFO.module.to_owned(),
            reason,
        })
}

#[async_trait::async_trait]
impl Module for Guardianship {
    fn info(&self) -> &'static ModuleInfo {
        &INFO
    }

    fn error_style(&self) -> &ErrorStyle {
        &ErrorStyle::Summarised
    }

    fn check_request(&self, request: &Map<String, Value>) -> Vec<Violation> {
        match request.get("jobId").and_then(Value::as_str) {
            Some(RESERVED_JOB_ID) => vec![Violation::at("/jobId", used(RESERVED_JOB_ID))],
            _ => Vec::new(),
        }
    }

    /// Every form takes every memento: the integrator picks the form by its URL.
    fn opens(&self, _form: &Form, _memento: &Value) -> bool {
        true
    }

    async fn look_up(
        &self,
        look_up: LookUp<'_>,
        mut subject: Subject<'_>,
    ) -> Result<Vec<DispatchProblem>, StoreError> {
        let mut problems = Vec::new();
        let form = subject.form();
        let used_by_user = look_up
            .store
            .reports_with_id(INFO.module, look_up.id)
            .await?
            .iter()
            .any(|key| key.owner == look_up.user.name);
        if used_by_user || look_up.id == RESERVED_JOB_ID {
            problems.push(DispatchProblem {
                path: Some("jobId".into()),
                message: match form {
                    None => used(look_up.id),
                    Some(_) => "Zu diesem Vorgang wurde bereits eine Nachricht gesendet; ein \
                                Vorgang sendet nur einmal."
                        .into(),
                },
            });
        }
        let account = subject
            .content()
            .get("absender")
            .and_then(|a| a.get("egvp_account_id"))
            .map(MailboxAccountId::from_json);
        let at = || Some(ACCOUNT_FIELD.to_owned());
        match (account, form) {
            // Optional at memento creation, required to send.
            (None, None) => {}
            (None, Some(_)) => problems.push(DispatchProblem {
                path: at(),
                message: format!("{}: Pflichtangabe", label(INFO.fields, ACCOUNT_FIELD)),
            }),
            // The field table has checked the number already.
            (Some(Err(_)), _) => {}
            (Some(Ok(id)), form) => {
                match look_up
                    .store
                    .resolve_sending_account(&look_up.user.name, id)
                    .await?
                {
                    Ok(account) => {
                        if let Subject::Submitted { form, content } = &mut subject {
                            content.insert(
                                message::SENDING.into(),
                                json!({"form": form.path, "safeId": account.safe_id.as_str()}),
                            );
                        }
                    }
                    Err(refusal) => problems.push(DispatchProblem {
                        path: at(),
                        message: match form {
                            None => refusal.message(),
                            Some(_) => refused_in_german(&refusal),
                        },
                    }),
                }
            }
        }
        Ok(problems)
    }

    fn mandatory_paths(&self, _form: &Form) -> Vec<String> {
        MANDATORY.iter().map(|p| (*p).to_owned()).collect()
    }

    /// Maps the message's case references in the sending account to its job, so that the
    /// court's replies quoting either are listed under the job.
    async fn before_dispatch(&self, store: &dyn Store, report: &Report) -> Result<(), StoreError> {
        let Some(content) = &report.submission else {
            return Ok(());
        };
        let account = content
            .get("absender")
            .and_then(|a| a.get("egvp_account_id"))
            .and_then(|id| MailboxAccountId::from_json(id).ok());
        let Some(account) = account else {
            return Ok(());
        };
        let job = &report.key.id;
        let own = message::own_reference(content, job);
        let court = text_at(content, "empfaenger.aktenzeichen");
        for reference in std::iter::once(own.as_str()).chain(court) {
            store.map_case_reference(account, reference, job).await?;
        }
        Ok(())
    }

    fn checked_message(&self, report: Completed<'_>) -> Checked {
        message::checked(report.form, report.id, report.content)
    }

    fn messages(&self) -> Arc<dyn MessageBuilder> {
        Arc::new(message::Builder)
    }

    fn routes(&self, cfg: &mut web::ServiceConfig, context: &web::Data<ModuleContext>) {
        let entries = FORMS
            .iter()
            .map(|form| IndexEntry {
                path: form.path,
                label: form.title,
                note: form.report_type,
                key: form.path.rsplit('/').next().unwrap_or_default(),
            })
            .collect();
        let index = FormIndex {
            title: "Nachricht an das Gericht",
            intro: "Bitte wählen Sie, was Sie dem Gericht übermitteln:",
            entries,
        };
        form::index::configure(cfg, context, INDEX, index);
    }

    fn api_routes(&self, cfg: &mut web::ServiceConfig) {
        api::configure(cfg, self.archives.clone());
    }

    fn document(&self, doc: &mut crate::module_layer::openapi::ModuleDocument) {
        api::document(doc);
    }

    fn reading(&self) -> Option<MailboxReading> {
        Some(MailboxReading {
            hydrator: Arc::new(self.archives.clone()),
            settings: self.reading.clone(),
        })
    }
}

/// Why the end user may not send through the account, as the form says it.
fn refused_in_german(refusal: &MailboxRefusal) -> String {
    let field = label(INFO.fields, ACCOUNT_FIELD);
    match refusal {
        MailboxRefusal::NotGranted(id) => {
            format!("{field}: Über das Postfach {id} dürfen Sie nicht senden.")
        }
        MailboxRefusal::Inactive(id) => {
            format!("{field}: Das Postfach {id} ist deaktiviert und sendet nichts.")
        }
    }
}

/// The error of a job id used already.
fn used(job_id: &str) -> String {
    format!(
        "jobId {} has been used already; a job id is used once",
        crate::telemetry::log_str(job_id)
    )
}
