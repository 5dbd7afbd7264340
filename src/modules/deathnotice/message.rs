//! The three death-notice messages: reading a slot into its model, and writing
//! `portal2StA.Sterbefall.084020`, `.084021` or `.084040` for a dispatched report.

use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_xml::xpersonenstand::{
    write_sterbefall_084020, write_sterbefall_084021, write_sterbefall_084040, SterbefallBestatter,
    SterbefallEinrichtung, Todesbescheinigung, XmlError,
};
use serde_json::{Map, Value};

use crate::xpersonenstand::XPersonenstandSettings;

/// The slot names, in the order of the module's forms.
pub(super) const SLOTS: [&str; 3] = ["Einrichtung", "Bestatter", "Todesbescheinigung"];

/// One death notice: the content of the slot that was given, as its typed model (the
/// undertaker's, much the largest, boxed).
pub(super) enum Meldung {
    /// Slot `Einrichtung`, message 084020.
    Einrichtung(SterbefallEinrichtung),
    /// Slot `Bestatter`, message 084021.
    Bestatter(Box<SterbefallBestatter>),
    /// Slot `Todesbescheinigung`, message 084040.
    Todesbescheinigung(Todesbescheinigung),
}

/// The slot `content` (a request, a memento or a form's content) carries, when it carries
/// exactly one.
pub(super) fn slot_in(content: &Value) -> Option<&'static str> {
    let mut given = SLOTS
        .into_iter()
        .filter(|slot| content.get(slot).is_some_and(Value::is_object));
    let slot = given.next()?;
    given.next().is_none().then_some(slot)
}

/// In the form a yes/no is a checkbox, which browsers send only when it is ticked. Where the
/// message needs the answer once a time is given (`todeszeit/@exakt`, `uhrzeit/@exakt`), an
/// unticked box beside a given time therefore means "not exact".
fn unticked_means_no(slot: &mut Map<String, Value>) {
    let pairs: [(&[&str], &str, &str); 2] = [
        (
            &["sterbefall", "todeszeitpunkt", "todestag"],
            "zeitpunkt",
            "uhrzeitExakt",
        ),
        (&["angabenLeichenschau"], "uhrzeit", "uhrzeitExakt"),
    ];
    for (at, time, flag) in pairs {
        let group = at.iter().try_fold(&mut *slot, |node, step| {
            node.get_mut(*step)?.as_object_mut()
        });
        if let Some(group) = group {
            if group.get(time).is_some_and(Value::is_string) && !group.contains_key(flag) {
                group.insert(flag.to_owned(), Value::Bool(false));
            }
        }
    }
}

impl Meldung {
    /// Reads the slot `slot` of a form's content; an absent slot is an empty one (a form posted
    /// with every input empty).
    pub(super) fn from_content(slot: &str, content: &Value) -> Result<Meldung, serde_json::Error> {
        let mut object = content
            .get(slot)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        unticked_means_no(&mut object);
        let value = Value::Object(object);
        Ok(match slot {
            "Einrichtung" => Meldung::Einrichtung(serde_json::from_value(value)?),
            "Bestatter" => Meldung::Bestatter(serde_json::from_value(value)?),
            _ => Meldung::Todesbescheinigung(serde_json::from_value(value)?),
        })
    }

    /// Paths (relative to the slot) of mandatory fields that are missing.
    pub(super) fn missing_for_dispatch(&self) -> Vec<&'static str> {
        match self {
            Meldung::Einrichtung(m) => m.missing_for_dispatch(),
            Meldung::Bestatter(m) => m.missing_for_dispatch(),
            Meldung::Todesbescheinigung(m) => m.missing_for_dispatch(),
        }
    }

    /// Writes the message with a fresh header; returns the message UUID and the XML. The
    /// death-notice contract names no registry office, so the configured one receives it.
    pub(super) fn write(
        &self,
        settings: &XPersonenstandSettings,
    ) -> Result<(String, String), XmlError> {
        let kopf = settings.header(None);
        let xml = match self {
            Meldung::Einrichtung(m) => write_sterbefall_084020(&kopf, m)?,
            Meldung::Bestatter(m) => write_sterbefall_084021(&kopf, m)?,
            Meldung::Todesbescheinigung(m) => write_sterbefall_084040(&kopf, m)?,
        };
        Ok((kopf.nachrichten_uuid.to_string(), xml))
    }
}

/// The engine's builder for `deathnotice` reports.
pub(super) struct Builder {
    /// Header addresses and flags.
    pub(super) settings: XPersonenstandSettings,
}

impl MessageBuilder for Builder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let content: Value = crate::module_layer::submission(report)?;
        let slot = slot_in(&content)
            .ok_or_else(|| BuildError("the submission carries no single report slot".into()))?;
        let meldung = Meldung::from_content(slot, &content)
            .map_err(|e| BuildError(format!("unreadable submission: {e}")))?;
        let (message_uuid, xml) = meldung
            .write(&self.settings)
            .map_err(|e| BuildError(format!("message could not be built: {e}")))?;
        Ok(BuiltMessage {
            message_uuid,
            content_type: "application/xml".into(),
            body: xml.into_bytes(),
        })
    }
}
