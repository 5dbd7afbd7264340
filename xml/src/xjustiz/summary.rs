//! The typed summary of one incoming message: what the index and the archive's metadata keep.

use serde::Serialize;

/// What [`read_message`](super::read_message) found in a message. Every field the message lacks
/// is `None` or empty; an absent part is never an error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSummary {
    /// Local name of the root element, e.g. `nachricht.gds.uebermittlungSchriftgutobjekte.0005005`.
    pub nachrichtentyp: String,
    /// The case reference: the recipient's free-text reference, else the sender's.
    pub aktenzeichen: Option<String>,
    /// Where [`Self::aktenzeichen`] came from; `None` when there is none.
    pub aktenzeichen_source: Option<AktenzeichenSource>,
    /// `nachrichtenkopf/absender/eigeneNachrichtenID`: the sender's id of this message.
    pub nachrichten_id: Option<String>,
    /// `nachrichtenkopf/erstellungszeitpunkt` as written (an `xs:dateTime`, not reinterpreted).
    pub erstellungszeitpunkt: Option<String>,
    /// The parties of `grunddaten/verfahrensdaten/beteiligung`, in message order.
    pub beteiligte: Vec<Beteiligter>,
    /// The documents of `schriftgutobjekte`, in message order (also those inside an `akte`).
    pub dokumente: Vec<Dokument>,
}

/// Which header element carried the case reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AktenzeichenSource {
    /// `empfaenger/auswahl_aktenzeichen/aktenzeichen.freitext`.
    Empfaenger,
    /// `absender/aktenzeichen` (the recipient's reference was `neu`, `unbekannt` or absent).
    Absender,
}

/// One `beteiligung`: the party's role and name as far as the Grunddatensatz carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Beteiligter {
    /// `beteiligter/beteiligtennummer`.
    pub beteiligtennummer: Option<String>,
    /// The code of the first `rolle/rollenbezeichnung` (code list GDS.Rollenbezeichnung).
    pub rolle: Option<String>,
    /// A natural person's `vorname nachname`, or an organisation's or law firm's
    /// `bezeichnung.aktuell`.
    pub name: Option<String>,
}

/// One `dokument` of the `schriftgutobjekte`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dokument {
    /// `identifikation/id` (a UUID as the sender wrote it).
    pub id: Option<String>,
    /// `xjustiz.fachspezifischeDaten/anzeigename`: the document's title.
    pub anzeigename: Option<String>,
    /// The code of `xjustiz.fachspezifischeDaten/dokumentklasse`.
    pub dokumentklasse: Option<String>,
    /// Every `datei/dateiname`, in message order: the names the message gives its files. Never
    /// trusted as paths; the archive derives its own stored names.
    pub dateinamen: Vec<String>,
}
