//! Builds the xPersonenstand message `portal2StA.Geburt.081020` for a dispatched birth notice.

use meldewerk_actors::{BuildError, BuiltMessage, MessageBuilder};
use meldewerk_storage::Report;
use meldewerk_xml::xpersonenstand::{write_geburt_081020, Geburtsanzeige, XmlError};

use crate::xpersonenstand::XPersonenstandSettings;

/// Writes the notice with a fresh header; returns the message UUID and the XML.
pub(super) fn write(
    anzeige: &Geburtsanzeige,
    settings: &XPersonenstandSettings,
) -> Result<(String, String), XmlError> {
    let kopf = settings.header(anzeige.standesamt_kennung.as_deref());
    let xml = write_geburt_081020(&kopf, anzeige)?;
    Ok((kopf.nachrichten_uuid.to_string(), xml))
}

/// The engine's builder for `birthnotice` reports.
pub(super) struct Builder {
    /// Header addresses and flags.
    pub(super) settings: XPersonenstandSettings,
}

impl MessageBuilder for Builder {
    fn build(&self, report: &Report) -> Result<BuiltMessage, BuildError> {
        let anzeige: Geburtsanzeige = crate::module_layer::submission(report)?;
        let (message_uuid, xml) = write(&anzeige, &self.settings)
            .map_err(|e| BuildError(format!("message could not be built: {e}")))?;
        Ok(BuiltMessage {
            message_uuid,
            content_type: "application/xml".into(),
            body: xml.into_bytes(),
        })
    }
}
