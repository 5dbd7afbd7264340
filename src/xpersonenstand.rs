//! What the civil-registry modules share, written once: the header addresses from configuration
//! (`[xpersonenstand]`) and the header built from them, the checks before dispatch (mandatory
//! fields and the build of the message to deliver, every problem in one pass) and the engine's
//! message builder.
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
use serde_json::{Map, Value};

use crate::module_layer::{
    sample, Checked, Completed, DispatchProblem, Field, Form, ModuleInfo, ModuleSetup, SetupError,
    TextPattern,
};

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

/// A time of day as XPersonenstand writes it: `^[0-2][0-9AB]:[0-5][0-9]$`.
pub static UHRZEIT: TextPattern = TextPattern {
    fits: meldewerk_xml::formate::ist_uhrzeit_xpersonenstand,
    rule: "must match the pattern ^[0-2][0-9AB]:[0-5][0-9]$",
    hint: "Uhrzeit im Format HH:MM",
    sample: "10:15",
    pattern: "^[0-2][0-9AB]:[0-5][0-9]$",
    max_length: None,
};

/// The transport of every civil-registry module: the civil-registry office.
pub const TRANSPORT: &str = "xpersonenstand";

/// A civil-registry module's identity: delivered to the civil-registry office, 410
/// `report-expired` after 30 days, no mock ids and no `clientReference` unless added.
pub const fn module_info(
    module: &'static str,
    fields: &'static [Field],
    forms: &'static [Form],
) -> ModuleInfo {
    ModuleInfo::new(module, fields, forms, TRANSPORT)
}

impl XPersonenstandSettings {
    /// The header addresses, `[modules.xpersonenstand]`: one section the civil-registry modules
    /// share.
    pub fn read(setup: &ModuleSetup<'_>) -> Result<Self, SetupError> {
        setup.settings(TRANSPORT)
    }

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

/// The methods of a civil-registry module's `Module` impl that its message type `$message`
/// decides alone: the fields its forms mark mandatory, and the builder of its messages (with
/// the module's settings in `self.$settings`).
macro_rules! message_methods {
    ($message:ty, $settings:tt) => {
        fn mandatory_paths(&self, form: &$crate::module_layer::Form) -> Vec<String> {
            $crate::xpersonenstand::mandatory_paths::<$message>(form.prefix)
        }

        fn messages(&self) -> std::sync::Arc<dyn meldewerk_actors::MessageBuilder> {
            $crate::xpersonenstand::Builder::<$message>::shared(&self.$settings)
        }
    };
}
pub(crate) use message_methods;

/// The checks before dispatch, all in one pass: the content reads, every mandatory field is
/// there, and the message builds; the message built is the one to deliver. Every problem is
/// reported at once, the missing fields together with every value the writer refuses (see
/// [`value_problems`]). `fields` is the module's table, `label` names a field by its full path
/// (the form's prefix included).
pub fn checked_message<C: Content>(
    report: Completed<'_>,
    fields: &[Field],
    label: impl Fn(&str) -> String,
    settings: &XPersonenstandSettings,
) -> Checked {
    let (content, prefix) = (report.content, report.form.prefix);
    let read = C::read(content, prefix).map_err(|e| {
        vec![DispatchProblem {
            path: None,
            message: format!("Die Angaben passen nicht zusammen: {e}"),
        }]
    })?;
    let mut problems: Vec<DispatchProblem> = read
        .pflichtfelder_offen()
        .into_iter()
        .map(|path| {
            let path = format!("{prefix}{path}");
            DispatchProblem {
                message: format!("{}: Pflichtangabe", label(&path)),
                path: Some(path),
            }
        })
        .collect();
    if problems.is_empty() {
        match write(&read, settings) {
            Ok((message_uuid, xml)) => return Ok(xml_message(message_uuid, xml)),
            Err(e) => match refused_value(e, prefix, &label) {
                Ok(problem) => problems.push(problem),
                Err(problem) => return Err(vec![problem]),
            },
        }
    }
    let Value::Object(object) = content else {
        return Err(problems);
    };
    value_problems::<C>(
        object.clone(),
        prefix,
        fields,
        &label,
        settings,
        &mut problems,
    );
    Err(problems)
}

/// Most times the writer looks again at one submit's copy: every field at most once, and then
/// some for what is filled.
const MAX_LOOKS: usize = 64;

/// The values the writer refuses besides those in `problems`, added to them. The writer stops at
/// its first problem and does not start while a mandatory field is missing, so it looks at a
/// copy of the content (never delivered) where each missing field has a sample value of its kind
/// and each refused value has been taken out, again until it builds. A problem at a sample is
/// not the end user's and ends the search.
fn value_problems<C: Content>(
    mut copy: Map<String, Value>,
    prefix: &str,
    fields: &[Field],
    label: impl Fn(&str) -> String,
    settings: &XPersonenstandSettings,
    problems: &mut Vec<DispatchProblem>,
) {
    // What the first look refused is taken out before the writer looks again.
    for path in problems.iter().filter_map(|p| p.path.as_deref()) {
        sample::remove(&mut copy, path);
    }
    let mut filled: Vec<String> = Vec::new();
    for _ in 0..MAX_LOOKS {
        let Ok(read) = C::read(&Value::Object(copy.clone()), prefix) else {
            return;
        };
        let missing = read.pflichtfelder_offen();
        if !missing.is_empty() {
            let mut added = false;
            for path in missing {
                let path = format!("{prefix}{path}");
                if sample::fill(&mut copy, &path, fields) {
                    added = true;
                    filled.push(path);
                }
            }
            if !added {
                return;
            }
            continue;
        }
        let problem = match write(&read, settings) {
            Ok(_) => return,
            Err(e) => match refused_value(e, prefix, &label) {
                Ok(problem) => problem,
                Err(_) => return,
            },
        };
        let Some(path) = problem.path.clone() else {
            return;
        };
        let known = problems.iter().any(|p| p.path.as_ref() == Some(&path));
        if known
            || filled
                .iter()
                .any(|f| path.starts_with(f.as_str()) || f.starts_with(&path))
        {
            return;
        }
        problems.push(problem);
        if !sample::remove(&mut copy, &path) {
            return;
        }
    }
}

/// A value the writer refused, as the end user's problem at its field; anything else (a header
/// field, which is configuration, or a writer failure) as a problem of the whole report.
fn refused_value(
    error: XmlError,
    prefix: &str,
    label: impl Fn(&str) -> String,
) -> Result<DispatchProblem, DispatchProblem> {
    match error {
        XmlError::InvalidValue { field, reason } if !field.starts_with("kopf.") => {
            let path = format!("{prefix}{field}");
            Ok(DispatchProblem {
                message: format!("{}: {reason}", label(&path)),
                path: Some(path),
            })
        }
        e => Err(DispatchProblem {
            path: None,
            message: format!("Die Meldung kann so nicht übermittelt werden: {e}"),
        }),
    }
}

/// The paths (the form's prefix included) of the fields and groups mandatory however the form
/// is filled in: those an empty content lacks.
pub fn mandatory_paths<C: Content>(prefix: &str) -> Vec<String> {
    C::read(&Value::Object(Map::new()), prefix)
        .map(|empty| {
            empty
                .pflichtfelder_offen()
                .into_iter()
                .map(|path| format!("{prefix}{path}"))
                .collect()
        })
        .unwrap_or_default()
}

fn xml_message(message_uuid: String, xml: String) -> BuiltMessage {
    BuiltMessage {
        message_uuid,
        content_type: "application/xml".into(),
        body: xml.into_bytes(),
        sender: None,
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use meldewerk_xml::xpersonenstand::nachrichtentyp_in_worten;

    use super::*;

    /// Every civil-registry form names its report type as the message-type list does, so that the
    /// confirmation page and the office's receipt say the same.
    #[test]
    fn the_forms_name_their_report_type_as_the_message_type_list_does() {
        let sections = BTreeMap::new();
        let setup = ModuleSetup {
            sections: &sections,
            read: Default::default(),
            base_url: "http://localhost",
            data_dir: std::path::Path::new("data"),
        };
        let mut checked = 0;
        for build in crate::modules::MODULES {
            let module = build(&setup).unwrap();
            if module.info().transport != TRANSPORT {
                continue;
            }
            for form in module.info().forms {
                let words = form
                    .report_type
                    .expect("a civil-registry form has a report type");
                let code = words
                    .rsplit_once('(')
                    .and_then(|(_, code)| code.strip_suffix(')'))
                    .expect("the code in parentheses");
                assert_eq!(words, nachrichtentyp_in_worten(code), "{}", form.path);
                checked += 1;
            }
        }
        assert_eq!(
            checked, 5,
            "birthnotice, birthdata and the three deathnotice forms"
        );
    }
}
