//! What the civil-registry modules share, written once: the header addresses from configuration
//! (`[xpersonenstand]`) and the header built from them, the checks before dispatch (mandatory
//! fields, then the build of the message to deliver) and the engine's message builder.
//! A module supplies only its typed [`Content`].

use std::marker::PhantomData;
use std::sync::Arc;

use chrono::Utc;
use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_xml::xpersonenstand::{
    Behoerde, Erreichbarkeit, Nachricht, Nachrichtenkopf, Produkt, XmlError,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use crate::module_layer::DispatchProblem;

/// Addresses written into the header of every XPersonenstand message (`[xpersonenstand]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct XPersonenstandSettings {
    /// DVDV identifier of the receiving civil registry office (`leser`).
    pub standesamt_kennung: String,
    /// Name of the receiving civil registry office.
    pub standesamt_name: String,
    /// DVDV identifier of this portal (`autor`).
    pub portal_kennung: String,
    /// Name of this portal.
    pub portal_name: String,
    /// Contact channel of this portal, code of the XÖV list `erreichbarkeit` (`01` e-mail).
    pub portal_kanal: String,
    /// Contact address on that channel, for queries by the registry office.
    pub portal_kontakt: String,
    /// Whether messages carry `test="test"` (marks them as test messages for the office).
    pub test_messages: bool,
}

impl Default for XPersonenstandSettings {
    fn default() -> Self {
        XPersonenstandSettings {
            standesamt_kennung: "psw:11000000".into(),
            standesamt_name: "Standesamt (simuliert)".into(),
            portal_kennung: "sap:000000001".into(),
            portal_name: "meldewerk".into(),
            portal_kanal: "01".into(),
            portal_kontakt: "poststelle@meldewerk.invalid".into(),
            test_messages: true,
        }
    }
}

impl XPersonenstandSettings {
    /// A fresh header (new message UUID, current time). `standesamt_kennung` names another office
    /// than the configured one when a request chose it; its configured name would then be wrong,
    /// so that office is named by its identifier.
    pub fn header(&self, standesamt_kennung: Option<&str>) -> Nachrichtenkopf {
        Nachrichtenkopf {
            nachrichten_uuid: uuid::Uuid::new_v4(),
            erstellungszeitpunkt: Utc::now(),
            leser: match standesamt_kennung {
                Some(kennung) => Behoerde {
                    kennung: kennung.to_owned(),
                    name: format!("Standesamt {kennung}"),
                    erreichbarkeit: Vec::new(),
                },
                None => Behoerde {
                    kennung: self.standesamt_kennung.clone(),
                    name: self.standesamt_name.clone(),
                    erreichbarkeit: Vec::new(),
                },
            },
            autor: Behoerde {
                kennung: self.portal_kennung.clone(),
                name: self.portal_name.clone(),
                erreichbarkeit: vec![Erreichbarkeit {
                    kanal: self.portal_kanal.clone(),
                    kennung: self.portal_kontakt.clone(),
                }],
            },
            produkt: Produkt {
                name: "meldewerk".into(),
                hersteller: "meldewerk".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            test: self.test_messages,
        }
    }
}

/// The typed content of one kind of civil-registry report: an XPersonenstand [`Nachricht`] that
/// can be read from a form's or a stored submission's JSON.
pub trait Content: Nachricht + Sized {
    /// Reads the content of a form (`prefix` as the form's) or of a stored submission (`""`).
    fn read(content: &Value, prefix: &str) -> Result<Self, String>;
}

/// [`Content::read`] for a model that is the form's whole content.
pub fn read_whole<T: DeserializeOwned>(content: &Value) -> Result<T, String> {
    serde_json::from_value(content.clone()).map_err(|e| e.to_string())
}

/// Writes `content` with a fresh header; returns the message UUID and the XML.
pub fn write<C: Content>(
    content: &C,
    settings: &XPersonenstandSettings,
) -> Result<(String, String), XmlError> {
    let kopf = settings.header(content.standesamt_kennung());
    let xml = content.schreibe(&kopf)?;
    Ok((kopf.nachrichten_uuid.to_string(), xml))
}

/// The checks before dispatch: the content reads, every mandatory field is there, and the
/// message builds; the message built is the one to deliver. `label` names a field by its full
/// path (the form's prefix included).
pub fn checked_message<C: Content>(
    content: &Value,
    prefix: &str,
    label: impl Fn(&str) -> String,
    settings: &XPersonenstandSettings,
) -> Result<BuiltMessage, Vec<DispatchProblem>> {
    let content = C::read(content, prefix).map_err(|e| {
        vec![DispatchProblem {
            path: None,
            message: format!("Die Angaben passen nicht zusammen: {e}"),
        }]
    })?;
    let missing = content.pflichtfelder_offen();
    if !missing.is_empty() {
        return Err(missing
            .into_iter()
            .map(|path| {
                let path = format!("{prefix}{path}");
                DispatchProblem {
                    message: format!("{}: Pflichtangabe", label(&path)),
                    path: Some(path),
                }
            })
            .collect());
    }
    match write(&content, settings) {
        Ok((message_uuid, xml)) => Ok(xml_message(message_uuid, xml)),
        // Header fields (`kopf.*`) are configuration, not the end user's to mend.
        Err(XmlError::InvalidValue { field, reason }) if !field.starts_with("kopf.") => {
            let path = format!("{prefix}{field}");
            Err(vec![DispatchProblem {
                message: format!("{}: {reason}", label(&path)),
                path: Some(path),
            }])
        }
        Err(e) => Err(vec![DispatchProblem {
            path: None,
            message: format!("Die Meldung kann so nicht übermittelt werden: {e}"),
        }]),
    }
}

fn xml_message(message_uuid: String, xml: String) -> BuiltMessage {
    BuiltMessage {
        message_uuid,
        content_type: "application/xml".into(),
        body: xml.into_bytes(),
    }
}

/// The engine's builder for the messages of one kind of content.
pub struct Builder<C> {
    settings: XPersonenstandSettings,
    content: PhantomData<fn() -> C>,
}

impl<C: Content> Builder<C> {
    /// A builder writing under the configured header addresses.
    pub fn shared(settings: &XPersonenstandSettings) -> Arc<dyn MessageBuilder> {
        Arc::new(Builder::<C> {
            settings: settings.clone(),
            content: PhantomData,
        })
    }
}

impl<C: Content> MessageBuilder for Builder<C> {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let stored: Value = crate::module_layer::submission(report)?;
        let content =
            C::read(&stored, "").map_err(|e| BuildError(format!("unreadable submission: {e}")))?;
        let (message_uuid, xml) = write(&content, &self.settings)
            .map_err(|e| BuildError(format!("message could not be built: {e}")))?;
        Ok(xml_message(message_uuid, xml))
    }
}
