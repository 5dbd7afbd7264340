//! Writing the outgoing XJustiz 3.6.2 message `nachricht.gds.uebermittlungSchriftgutobjekte.0005005`
//! a court form sends with its PDF ([`write_uebermittlung`]).
//!
//! The input is checked whole first (`check.rs`); only then is the XML written (`xml.rs`), so a
//! refusal never leaves half a message and names the field at fault. What goes where, the code
//! lists and the bounds are documented in docs/decisions.md ("XJustiz: the outgoing message
//! 0005005"); our own [`read_message`](super::read_message) reads back the case reference,
//! the parties and the documents.

mod check;
mod model;
mod xml;

pub use check::{WriteError, MAX_DOKUMENTE, MAX_MIME_TYPE_CHARS, MAX_TEXT_CHARS};
pub use model::{
    Absender, Anschrift, Betroffener, Dokumentangabe, Empfaenger, EmpfaengerArt, Familienstand,
    Nachricht, Uebermittlung,
};

/// Writes one 0005005 message (UTF-8 XML, valid against `xjustiz_0005_nachrichten_3_2.xsd`).
///
/// The same input always gives the same bytes: the documents' ids derive from the message id
/// and their position. Absent or blank optional input writes no element; anything the schema
/// would refuse, or that is beyond the bounds, is a [`WriteError`] naming the field.
pub fn write_uebermittlung(uebermittlung: &Uebermittlung) -> Result<Vec<u8>, WriteError> {
    let geprueft = check::pruefe(uebermittlung)?;
    xml::schreibe(&geprueft).map_err(|e| WriteError::Xml(e.to_string()))
}
