//! Contact entries (`KommunikationType`), written the same way wherever a message has them.

use super::werte::gesetzt;
use super::xml_out::XmlOut;
use super::{Kontakt, XmlError};
use crate::codelisten::ERREICHBARKEIT;

/// JSON paths of a list of contacts and of its members, for error messages.
pub(crate) struct KontaktPfade {
    /// The list itself (reported when a mandatory list is empty).
    pub(crate) liste: &'static str,
    /// `kanal` of an entry.
    pub(crate) kanal: &'static str,
    /// `kennung` of an entry.
    pub(crate) kennung: &'static str,
    /// `zusatz` of an entry.
    pub(crate) zusatz: &'static str,
}

/// Contact entries under the element name `element`; untouched entries are skipped (the
/// mandatory-field check guarantees a filled entry where the schema needs one).
pub(crate) fn schreibe_kontakte(
    out: &mut XmlOut,
    element: &str,
    liste: Option<&[Kontakt]>,
    p: &KontaktPfade,
) -> Result<(), XmlError> {
    for k in liste.unwrap_or_default().iter().filter(|k| k.angegeben()) {
        let kanal = gesetzt(&k.kanal).unwrap_or_default();
        ERREICHBARKEIT.pruefe(p.kanal, kanal)?;
        out.start(element, &[])?;
        out.code("kanal", &ERREICHBARKEIT, kanal)?;
        out.text(
            "kennung",
            p.kennung,
            gesetzt(&k.kennung).unwrap_or_default(),
        )?;
        if let Some(zusatz) = gesetzt(&k.zusatz) {
            out.text("zusatz", p.zusatz, zusatz)?;
        }
        out.end(element)?;
    }
    Ok(())
}
