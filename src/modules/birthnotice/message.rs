//! Builds the xPersonenstand message `portal2StA.Geburt.081020` for a dispatched birth notice.

use chrono::Utc;
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_xml::xpersonenstand::{
    write_geburt_081020, Behoerde, Erreichbarkeit, Geburtsanzeige, Nachrichtenkopf, Produkt,
};
use serde::{Deserialize, Serialize};

use crate::configuration::CivilRegistrySettings;

/// What the engine keeps of a dispatched birth notice: the notice and, without a seal, the end
/// user's signature act.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Submission {
    /// The completed notice.
    pub anzeige: Geburtsanzeige,
    /// `{name, signedAt}` of the person who signed in the form; absent when a seal applies.
    pub end_user_signature: Option<serde_json::Value>,
}

fn header(anzeige: &Geburtsanzeige, settings: &CivilRegistrySettings) -> Nachrichtenkopf {
    Nachrichtenkopf {
        nachrichten_uuid: uuid::Uuid::new_v4(),
        erstellungszeitpunkt: Utc::now(),
        // A request may name another office than the configured one; its configured name would
        // then be wrong, so that office is named by its identifier.
        leser: match &anzeige.standesamt_kennung {
            Some(kennung) => Behoerde {
                kennung: kennung.clone(),
                name: format!("Standesamt {kennung}"),
                erreichbarkeit: Vec::new(),
            },
            None => Behoerde {
                kennung: settings.standesamt_kennung.clone(),
                name: settings.standesamt_name.clone(),
                erreichbarkeit: Vec::new(),
            },
        },
        autor: Behoerde {
            kennung: settings.portal_kennung.clone(),
            name: settings.portal_name.clone(),
            erreichbarkeit: vec![Erreichbarkeit {
                kanal: settings.portal_kanal.clone(),
                kennung: settings.portal_kontakt.clone(),
            }],
        },
        produkt: Produkt {
            name: "meldewerk".into(),
            hersteller: "meldewerk".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        test: settings.test_messages,
    }
}

/// Writes the notice once without keeping the result, so that the form refuses what the engine
/// could not build (instead of a report that can only fail).
pub fn trial_build(
    anzeige: &Geburtsanzeige,
    settings: &CivilRegistrySettings,
) -> Result<(), String> {
    write_geburt_081020(&header(anzeige, settings), anzeige)
        .map(|_| ())
        .map_err(|e| format!("Die Anzeige kann so nicht übermittelt werden: {e}"))
}

/// The engine's builder for `birthnotice` reports.
pub struct BirthnoticeMessages {
    /// Header addresses and flags.
    pub settings: CivilRegistrySettings,
}

impl MessageBuilder for BirthnoticeMessages {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let submission: Submission = report
            .submission
            .clone()
            .ok_or_else(|| BuildError("the report has no payload any more".into()))
            .and_then(|s| {
                serde_json::from_value(s)
                    .map_err(|e| BuildError(format!("unreadable submission: {e}")))
            })?;
        let kopf = header(&submission.anzeige, &self.settings);
        let xml = write_geburt_081020(&kopf, &submission.anzeige)
            .map_err(|e| BuildError(format!("message could not be built: {e}")))?;
        Ok(BuiltMessage {
            message_uuid: kopf.nachrichten_uuid.to_string(),
            content_type: "application/xml".into(),
            body: xml.into_bytes(),
        })
    }
}
