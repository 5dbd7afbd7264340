//! The outgoing court message of a form: an XJustiz `0005005` naming the person concerned, the
//! sender and the recipient, with the completed form as a PDF, packed for the court mailbox
//! (from the sending account's SAFE-ID to the recipient's).
//!
//! The form's submit builds it once ([`checked`]); the engine delivers the stored bytes.
//! [`Builder`] builds the same from a stored submission, for a report stored without its
//! message.

use chrono::{DateTime, FixedOffset, NaiveDate, Utc};
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_transports::egvp::{MessagePackage, MEDIA_TYPE};
use meldewerk_transports::mailbox::MailboxFile;
use meldewerk_xml::xjustiz::{
    write_uebermittlung, Absender, Anschrift, Betroffener, Dokumentangabe, Empfaenger,
    EmpfaengerArt, Familienstand, Nachricht, Uebermittlung, WriteError,
};
use serde_json::Value;

use super::{pdf, ACCOUNT_FIELD, FORMS, INFO, MANDATORY};
use crate::module_layer::fields::{label, text_at};
use crate::module_layer::{DispatchProblem, Form};

/// The member of a submission holding what the look-up found for sending: the form's path
/// and the sending account's SAFE-ID (`{"form": …, "safeId": …}`).
pub(super) const SENDING: &str = "sending";

/// A SAFE-ID standing in for an unknown sender while the rest of a submission is checked;
/// never sent.
const UNKNOWN_SENDER: &str = "DE.Justiz.unbekannt";

fn owned(content: &Value, path: &str) -> Option<String> {
    text_at(content, path).map(str::to_owned)
}

fn address(content: &Value, prefix: &str) -> Option<Anschrift> {
    let anschrift = Anschrift {
        strasse: owned(content, &format!("{prefix}.strasse")),
        plz: owned(content, &format!("{prefix}.plz")),
        stadt: owned(content, &format!("{prefix}.stadt")),
    };
    (anschrift != Anschrift::default()).then_some(anschrift)
}

/// The case reference the sender gives: the memento's, or else the job id, so that every
/// message carries one a court's reply can quote.
pub(super) fn own_reference(content: &Value, job_id: &str) -> String {
    owned(content, "absender.aktenzeichen").unwrap_or_else(|| job_id.to_owned())
}

/// The file name of a form's PDF: the form's name (`BetreuungAnregung.pdf`).
fn pdf_name(form: &Form) -> String {
    format!("{}.pdf", form.path.rsplit('/').next().unwrap_or("Formular"))
}

/// Builds the message of `form` for the job `job_id` from the completed `content`, created at
/// `at`; every problem at its field.
fn build(
    form: &Form,
    job_id: &str,
    content: &Value,
    at: DateTime<Utc>,
    message_uuid: &str,
) -> Result<BuiltMessage, Vec<DispatchProblem>> {
    let general = |message: String| DispatchProblem {
        path: None,
        message,
    };
    // Without the sending account (the look-up said why, at its field) the rest is checked
    // all the same, so that one submit names every problem.
    let sending = text_at(content, &format!("{SENDING}.safeId"));
    let from = sending.unwrap_or(UNKNOWN_SENDER);
    let pdf_name = pdf_name(form);
    let uebermittlung = Uebermittlung {
        nachricht: Nachricht {
            eigene_nachrichten_id: message_uuid.to_owned(),
            erstellungszeitpunkt: at.with_timezone(&FixedOffset::east_opt(0).expect("UTC")),
        },
        absender: Absender {
            name: owned(content, "absender.name").unwrap_or_default(),
            aktenzeichen: Some(own_reference(content, job_id)),
            safe_id: from.to_owned(),
        },
        empfaenger: Empfaenger {
            name: owned(content, "empfaenger.name").unwrap_or_default(),
            art: match text_at(content, "empfaenger.type") {
                Some("Sonstige") => EmpfaengerArt::Sonstige,
                _ => EmpfaengerArt::Gericht { xjustiz_id: None },
            },
            safe_id: owned(content, "empfaenger.safeId").unwrap_or_default(),
            aktenzeichen: owned(content, "empfaenger.aktenzeichen"),
            adresse: address(content, "empfaenger.adresse"),
        },
        betroffener: Betroffener {
            vorname: owned(content, "betroffener.name.vorname"),
            nachname: owned(content, "betroffener.name.nachname").unwrap_or_default(),
            geburtsdatum: text_at(content, "betroffener.geburtsdatum")
                .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok()),
            familienstand: match text_at(content, "betroffener.familienstand") {
                Some("Ledig") => Some(Familienstand::Ledig),
                Some("Verheiratet") => Some(Familienstand::Verheiratet),
                Some("Geschieden") => Some(Familienstand::Geschieden),
                Some("Verwitwet") => Some(Familienstand::Verwitwet),
                _ => None,
            },
            anschrift: address(content, "betroffener.anschrift"),
            telefon: owned(content, "betroffener.anschriftTelefon"),
            gegenwaertiger_aufenthalt: owned(content, "betroffener.gegenwaertigerAufenthalt"),
        },
        dokumente: vec![Dokumentangabe {
            dateiname: pdf_name.clone(),
            mime_type: "application/pdf".into(),
            bezeichnung: form.title.to_owned(),
        }],
        melde_zeitpunkt: text_at(content, "meldeZeitpunkt")
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok()),
    };
    let xml = write_uebermittlung(&uebermittlung).map_err(|e| vec![problem(&e)])?;
    if sending.is_none() {
        // At the account's field, where the look-up has already said why: a field shows its
        // first problem only, so the cause is not listed a second time, away from its field.
        return Err(vec![DispatchProblem {
            path: Some(ACCOUNT_FIELD.to_owned()),
            message: format!(
                "{}: Das absendende Postfach ist nicht bekannt; die Nachricht wird nicht gesendet.",
                label(INFO.fields, ACCOUNT_FIELD)
            ),
        }]);
    }
    let attachment = MailboxFile {
        name: pdf_name,
        content: pdf::render(form, job_id, content, at),
    };
    let package = MessagePackage::new(
        from,
        &uebermittlung.empfaenger.safe_id,
        xml,
        vec![attachment],
    )
    .map_err(|problems| problems.into_iter().map(general).collect::<Vec<_>>())?;
    Ok(BuiltMessage {
        message_uuid: message_uuid.to_owned(),
        content_type: MEDIA_TYPE.to_owned(),
        body: package.to_bytes(),
        sender: None,
    })
}

/// A writer's refusal as the form shows it, at its field where it has one.
fn problem(error: &WriteError) -> DispatchProblem {
    let path = error.field().map(str::to_owned);
    let name = path
        .as_deref()
        .map(|p| label(INFO.fields, p).to_owned())
        .unwrap_or_default();
    let message = match error {
        WriteError::Missing { .. } => format!("{name}: Pflichtangabe"),
        WriteError::TooLong { max, .. } => format!("{name}: höchstens {max} Zeichen"),
        WriteError::Character { character, .. } => format!(
            "{name}: Das Zeichen „{character}“ ist im elektronischen Rechtsverkehr nicht \
             zulässig."
        ),
        WriteError::Invalid { reason, .. } => format!("{name}: ungültig ({reason})"),
        other => format!("Die Nachricht kann so nicht gebildet werden: {other}"),
    };
    DispatchProblem { path, message }
}

/// The form's check at submit: the message, or every problem.
pub(super) fn checked(
    form: &Form,
    job_id: &str,
    content: &Value,
) -> Result<BuiltMessage, Vec<DispatchProblem>> {
    // Every mandatory field at once; the writer's own checks name one problem at a time.
    let missing: Vec<DispatchProblem> = MANDATORY
        .iter()
        .filter(|path| **path != ACCOUNT_FIELD && text_at(content, path).is_none())
        .map(|path| DispatchProblem {
            path: Some((*path).to_owned()),
            message: format!("{}: Pflichtangabe", label(INFO.fields, path)),
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    build(
        form,
        job_id,
        content,
        Utc::now(),
        &uuid::Uuid::new_v4().to_string(),
    )
}

/// Builds the message of a stored report (one stored without its message).
pub(super) struct Builder;

impl MessageBuilder for Builder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let content = report
            .submission
            .as_ref()
            .ok_or_else(|| BuildError("the report's submission is gone".into()))?;
        let path = text_at(content, &format!("{SENDING}.form"));
        let form = FORMS
            .iter()
            .find(|f| Some(f.path) == path)
            .ok_or_else(|| BuildError("the report names no court form it was sent from".into()))?;
        build(
            form,
            &report.key.id,
            content,
            report.submitted_at,
            &uuid::Uuid::new_v4().to_string(),
        )
        .map_err(|problems| {
            let messages: Vec<String> = problems.into_iter().map(|p| p.message).collect();
            BuildError(messages.join("; "))
        })
    }
}
